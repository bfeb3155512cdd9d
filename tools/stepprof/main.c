/* main.c: `stepprof COMMAND ...`, the command-line tool over saved results:
 * summary tables, format conversion, a file overview, a before/after
 * comparison (and regression gate), a diagnosis of the steps and an HTML
 * report, the merge of a job's ranks; and `stepprof run`, which profiles a
 * program. See cli.h for exit codes. */
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: stepprof COMMAND [OPTIONS] FILE...\n"
    "\n"
    "Reads results saved by stepprof or paddle.profiler: protobuf (.pb, paddle's\n"
    "NodeTreesProto), Chrome-trace JSON (.json, .json.gz; stepprof's or paddle's)\n"
    "or a crash dump. FILE may be a pipe or a FIFO, and - reads standard input.\n"
    "\n"
    "commands:\n"
    "  summary FILE          paddle's summary tables (sorting, views, time unit, ...)\n"
    "  convert FILE -o OUT   write FILE as .json, .json.gz or .pb\n"
    "  info FILE             span, threads, event counts, dropped counts, time range\n"
    "  diff A B              per-phase and per-operator B - A, or a regression gate\n"
    "  diagnose FILE         what limits the steps: verdicts, evidence, advice\n"
    "  report FILE -o OUT    a self-contained HTML report (tables, charts, timeline)\n"
    "  merge TRACE... -o OUT one trace of a job's ranks, their clocks aligned\n"
    "  run [OPTIONS] -- CMD  run CMD with profiling switched on, no code change\n"
    "\n"
    "options:\n"
    "  -h, --help            this text; `stepprof COMMAND --help` describes a command\n"
    "  --version             print stepprof's version and exit\n"
    "\n"
    "An option's value may follow it or be joined to it: --time-unit us or\n"
    "--time-unit=us. Exit codes: 0 success, 1 bad input or output file, 2 wrong\n"
    "usage.\n";

int cli_is_help(const char *arg) { return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0; }

int cli_usage_error(const char *command, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("stepprof: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    if (command)
        fprintf(stderr, "Run 'stepprof %s --help' for usage.\n", command);
    else
        fputs("Run 'stepprof --help' for usage.\n", stderr);
    return CLI_USAGE;
}

int cli_option(int argc, char **argv, int *i, const char *name, const char **value)
{
    const char *a = argv[*i];
    size_t n = strlen(name);
    if (strncmp(a, name, n) != 0) return 0;
    if (a[n] == '=') {
        *value = a + n + 1;
        return 1;
    }
    if (a[n] != '\0') return 0;
    *value = *i + 1 < argc ? argv[++*i] : NULL;
    return 1;
}

int cli_missing_value(const char *command, const char *name, const char *what)
{
    return cli_usage_error(command, "%s needs a value: %s %s (or %s=%s)", name, name, what, name,
                           what);
}

int cli_unknown_option(const char *command, const char *arg, const char *const *flags)
{
    const char *eq = strchr(arg, '=');
    if (eq)
        for (const char *const *f = flags; *f; f++)
            if (strlen(*f) == (size_t)(eq - arg) && strncmp(arg, *f, (size_t)(eq - arg)) == 0)
                return cli_usage_error(command, "%s takes no value, got '%s'", *f, arg);
    return cli_usage_error(command, "unknown option '%s'", arg);
}

static int run(const char *cmd, int argc, char **argv)
{
    if (strcmp(cmd, "summary") == 0) return cli_summary(argc, argv);
    if (strcmp(cmd, "convert") == 0) return cli_convert(argc, argv);
    if (strcmp(cmd, "info") == 0) return cli_info(argc, argv);
    if (strcmp(cmd, "diff") == 0) return cli_diff(argc, argv);
    if (strcmp(cmd, "diagnose") == 0) return cli_diagnose(argc, argv);
    if (strcmp(cmd, "report") == 0) return cli_report(argc, argv);
    if (strcmp(cmd, "merge") == 0) return cli_merge(argc, argv);
    if (strcmp(cmd, "run") == 0) return cli_run(argc, argv);
    return cli_usage_error(NULL, "unknown command '%s'", cmd);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage, stderr);
        return CLI_USAGE;
    }
    const char *cmd = argv[1];
    if (cli_is_help(cmd) || (strcmp(cmd, "help") == 0 && argc == 2)) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        char *help[] = {(char *)"--help", NULL};
        return run(argv[2], 1, help);
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("stepprof %s\n", SP_VERSION_STRING);
        return CLI_OK;
    }
    return run(cmd, argc - 2, argv + 2);
}

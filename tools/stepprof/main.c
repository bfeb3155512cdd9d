/* main.c: `stepprof COMMAND ...`, the command-line tool over saved results:
 * summary tables, format conversion, a file overview and a before/after
 * comparison. See cli.h for exit codes. */
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
    "  diff A B              per-phase and per-operator time differences, B - A\n"
    "\n"
    "`stepprof COMMAND --help` describes a command. Exit codes: 0 success, 1 bad\n"
    "input or output file, 2 wrong usage.\n";

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

static int run(const char *cmd, int argc, char **argv)
{
    if (strcmp(cmd, "summary") == 0) return cli_summary(argc, argv);
    if (strcmp(cmd, "convert") == 0) return cli_convert(argc, argv);
    if (strcmp(cmd, "info") == 0) return cli_info(argc, argv);
    if (strcmp(cmd, "diff") == 0) return cli_diff(argc, argv);
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

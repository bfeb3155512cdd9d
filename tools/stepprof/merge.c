/* merge.c: `stepprof merge TRACE... -o OUT`, one trace of a job's ranks
 * (sp_trace_merge): parses the options and prints what the merge did. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char merge_help[] =
    "usage: stepprof merge [OPTIONS] TRACE... -o OUT\n"
    "\n"
    "Merges the Chrome-trace files of a job's ranks (.json or .json.gz, one per\n"
    "rank) into one trace with one process per rank, in rank order. Ranks that\n"
    "name one host share its clock and are left as they are; other hosts' clocks\n"
    "are shifted onto the lowest rank's by the ends of their matched collectives,\n"
    "and the offsets and the residual are printed. The files are streamed, so\n"
    "memory stays small whatever the number of ranks. A file cut short is merged\n"
    "up to its last complete event, a missing rank is merged without; files of\n"
    "different jobs or world sizes, or two files of one rank, are refused.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT     the merged trace: .json, .json.gz (gzip), or .pb\n"
    "                       (paddle's protobuf, each thread tagged with its rank;\n"
    "                       holds every rank's result in memory once)\n"
    "  --align              align every rank, even ranks that name one host\n"
    "  --no-align           leave every clock as it is\n"
    "  --drift              solve a clock drift per host as well as an offset\n"
    "  --force              merge files of different jobs or world sizes anyway\n"
    "\n"
    "Exit codes: 0 written, 1 a bad input or output file, 2 wrong usage.\n";

static void print_line(void *ctx, int warning, const char *line)
{
    (void)ctx;
    if (warning)
        fprintf(stderr, "stepprof: warning: %s\n", line);
    else
        printf("stepprof: %s\n", line);
}

int cli_merge(int argc, char **argv)
{
    const char *out = NULL;
    sp_merge_options o;
    sp_merge_options_init(&o);
    o.log = print_line;
    int align = 0, no_align = 0;
    const char **files = calloc((size_t)argc + 1, sizeof *files);
    size_t n = 0;
    if (!files) {
        fputs("stepprof: out of memory\n", stderr);
        return CLI_BAD_INPUT;
    }
    int rc = CLI_OK;
    for (int i = 0; i < argc && rc == CLI_OK; i++) {
        const char *a = argv[i], *v = NULL;
        if (cli_is_help(a)) {
            fputs(merge_help, stdout);
            free(files);
            return CLI_OK;
        }
        if (cli_option(argc, argv, &i, "-o", &v) || cli_option(argc, argv, &i, "--output", &v)) {
            if (!v) rc = cli_missing_value("merge", a, "OUT");
            out = v;
        } else if (strcmp(a, "--align") == 0) {
            align = 1;
        } else if (strcmp(a, "--no-align") == 0) {
            no_align = 1;
        } else if (strcmp(a, "--drift") == 0) {
            o.drift = 1;
        } else if (strcmp(a, "--force") == 0) {
            o.force = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            static const char *const flags[] = {"--align", "--no-align", "--drift", "--force",
                                                NULL};
            rc = cli_unknown_option("merge", a, flags);
        } else {
            files[n++] = a;
        }
    }
    if (rc == CLI_OK && n == 0)
        rc = cli_usage_error("merge", "TRACE missing: give each rank's trace file");
    if (rc == CLI_OK && !out) rc = cli_usage_error("merge", "no output file: -o OUT");
    if (rc == CLI_OK && align && no_align)
        rc = cli_usage_error("merge", "--align and --no-align contradict");
    if (rc == CLI_OK) {
        o.align = align      ? SP_MERGE_ALIGN_FORCE
                  : no_align ? SP_MERGE_ALIGN_OFF
                             : SP_MERGE_ALIGN_AUTO;
        fflush(stdout);
        if (sp_trace_merge(files, n, out, &o) != SP_OK) {
            fprintf(stderr, "stepprof: %s\n", sp_last_error());
            rc = CLI_BAD_INPUT;
        }
    }
    free(files);
    return rc;
}

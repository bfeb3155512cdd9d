/* report.c: `stepprof report FILE -o OUT.html [--baseline OTHER]`, the
 * self-contained HTML report of a saved result (sp_result_report). */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char report_help[] =
    "usage: stepprof report [OPTIONS] FILE -o OUT.html\n"
    "\n"
    "Writes one self-contained HTML page about a saved result: the diagnosis, a\n"
    "stacked bar of each step's phases, the summary tables (sortable), the top\n"
    "operators and kernels, GPU utilisation over time, a zoomable timeline of the\n"
    "median step, and the memory curve. The page needs no network and opens from\n"
    "disk in any browser.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT     the HTML file to write (required)\n"
    "  --baseline OTHER     compare with another result: each figure is shown\n"
    "                       beside the baseline's, with its change\n"
    "  --title TEXT         the page's title (default: the program's name)\n"
    "\n"
    "Exit codes: 0 written, 1 a bad input or output file, 2 wrong usage.\n";

int cli_report(int argc, char **argv)
{
    const char *file = NULL, *out = NULL, *baseline = NULL, *title = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (cli_is_help(a)) {
            fputs(report_help, stdout);
            return CLI_OK;
        }
        if (cli_option(argc, argv, &i, "-o", &v) || cli_option(argc, argv, &i, "--output", &v)) {
            if (!v) return cli_missing_value("report", a, "OUT.html");
            out = v;
        } else if (cli_option(argc, argv, &i, "--baseline", &v)) {
            if (!v) return cli_missing_value("report", "--baseline", "OTHER");
            baseline = v;
        } else if (cli_option(argc, argv, &i, "--title", &v)) {
            if (!v) return cli_missing_value("report", "--title", "TEXT");
            title = v;
        } else if (a[0] == '-' && a[1] != '\0') {
            static const char *const flags[] = {NULL};
            return cli_unknown_option("report", a, flags);
        } else if (file) {
            return cli_usage_error("report", "one file expected, got a second: '%s'", a);
        } else {
            file = a;
        }
    }
    if (!file) return cli_usage_error("report", "FILE missing");
    if (!out) return cli_usage_error("report", "no output file: -o OUT.html");
    sp_result *r = NULL, *b = NULL;
    int rc = cli_load(file, &r);
    if (rc == CLI_OK && baseline) rc = cli_load(baseline, &b);
    if (rc == CLI_OK) {
        sp_report_options o;
        sp_report_options_init(&o);
        o.baseline = b;
        o.title = title;
        o.source = file;
        o.baseline_source = baseline;
        if (sp_result_report(r, &o, out) != SP_OK) {
            fprintf(stderr, "stepprof: %s: %s\n", out, sp_last_error());
            rc = CLI_BAD_INPUT;
        } else {
            printf("stepprof: report written to %s\n", out);
        }
    }
    sp_result_release(b);
    sp_result_release(r);
    return rc;
}

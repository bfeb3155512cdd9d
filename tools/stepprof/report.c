/* report.c: `stepprof report FILE... -o OUT.html [--baseline OTHER]`, the
 * self-contained HTML report of a saved result (sp_result_report); with
 * one file per rank, the page also compares the ranks. */
#include "cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char report_help[] =
    "usage: stepprof report [OPTIONS] FILE... -o OUT.html\n"
    "\n"
    "Writes one self-contained HTML page about a saved result: the diagnosis, a\n"
    "stacked bar of each step's phases, throughput, the summary tables\n"
    "(sortable), the top operators and kernels, GPU utilisation over time, a\n"
    "zoomable timeline of the median step, and the memory curve. The page needs\n"
    "no network and opens from disk in any browser. Given one file per rank of a\n"
    "distributed job (in rank order), or one trace that `stepprof merge` wrote,\n"
    "it also compares the ranks and names the stragglers; the rest of the page\n"
    "is about the first rank.\n"
    "\n"
    "options:\n"
    "  -o, --output OUT     the HTML file to write (required)\n"
    "  --baseline OTHER     compare with another result: each figure is shown\n"
    "                       beside the baseline's, with its change\n"
    "  --title TEXT         the page's title (default: the program's name)\n"
    "  --tokens-per-sample N, --flops-per-step F, --peak-tflops T\n"
    "                       throughput inputs, as `stepprof summary` takes them\n"
    "\n"
    "Exit codes: 0 written, 1 a bad input or output file, 2 wrong usage.\n";

typedef struct report_args {
    const char **files;
    size_t nfiles;
    const char *out, *baseline, *title;
    double tokens, flops, peak;
} report_args;

static int parse(int argc, char **argv, report_args *a)
{
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i], *v = NULL;
        int rc = CLI_OK;
        if (cli_option(argc, argv, &i, "-o", &v) || cli_option(argc, argv, &i, "--output", &v)) {
            if (!v) return cli_missing_value("report", arg, "OUT.html");
            a->out = v;
        } else if (cli_option(argc, argv, &i, "--baseline", &v)) {
            if (!v) return cli_missing_value("report", "--baseline", "OTHER");
            a->baseline = v;
        } else if (cli_option(argc, argv, &i, "--title", &v)) {
            if (!v) return cli_missing_value("report", "--title", "TEXT");
            a->title = v;
        } else if (cli_option(argc, argv, &i, "--tokens-per-sample", &v)) {
            if (!v) return cli_missing_value("report", "--tokens-per-sample", "N");
            rc = cli_parse_figure("report", "--tokens-per-sample", v, 1e12, &a->tokens);
        } else if (cli_option(argc, argv, &i, "--flops-per-step", &v)) {
            if (!v) return cli_missing_value("report", "--flops-per-step", "F");
            rc = cli_parse_figure("report", "--flops-per-step", v, 1e30, &a->flops);
        } else if (cli_option(argc, argv, &i, "--peak-tflops", &v)) {
            if (!v) return cli_missing_value("report", "--peak-tflops", "T");
            rc = cli_parse_figure("report", "--peak-tflops", v, 1e9, &a->peak);
        } else if (arg[0] == '-' && arg[1] != '\0') {
            static const char *const flags[] = {NULL};
            return cli_unknown_option("report", arg, flags);
        } else {
            a->files[a->nfiles++] = arg;
        }
        if (rc != CLI_OK) return rc;
    }
    if (!a->nfiles) return cli_usage_error("report", "FILE missing");
    if (!a->out) return cli_usage_error("report", "no output file: -o OUT.html");
    return CLI_OK;
}

int cli_report(int argc, char **argv)
{
    for (int i = 0; i < argc; i++)
        if (cli_is_help(argv[i])) {
            fputs(report_help, stdout);
            return CLI_OK;
        }
    report_args a = {0};
    a.files = calloc((size_t)argc + 1, sizeof *a.files);
    sp_result **ranks = calloc((size_t)argc + 1, sizeof *ranks);
    if (!a.files || !ranks) {
        free(a.files);
        free(ranks);
        fputs("stepprof: out of memory\n", stderr);
        return CLI_BAD_INPUT;
    }
    int rc = parse(argc, argv, &a);
    sp_result *b = NULL;
    /* One file may be a merged trace: its ranks are the rank files. */
    sp_result **merged = NULL;
    size_t nmerged = 0;
    if (rc == CLI_OK && a.nfiles == 1) rc = cli_load_ranks(a.files[0], &merged, &nmerged);
    for (size_t i = 0; rc == CLI_OK && !merged && i < a.nfiles; i++)
        rc = cli_load(a.files[i], &ranks[i]);
    sp_result **all = merged ? merged : ranks;
    size_t nall = merged ? nmerged : a.nfiles;
    if (rc == CLI_OK && a.baseline) rc = cli_load(a.baseline, &b);
    if (rc == CLI_OK) {
        sp_report_options o;
        sp_report_options_init(&o);
        o.baseline = b;
        o.title = a.title;
        o.source = a.files[0];
        o.baseline_source = a.baseline;
        o.ranks = (const sp_result *const *)all;
        o.rank_count = nall;
        o.tokens_per_sample = a.tokens;
        o.flops_per_step = a.flops;
        o.peak_tflops = a.peak;
        if (sp_result_report(all[0], &o, a.out) != SP_OK) {
            fprintf(stderr, "stepprof: %s: %s\n", a.out, sp_last_error());
            rc = CLI_BAD_INPUT;
        } else {
            printf("stepprof: report written to %s\n", a.out);
        }
    }
    sp_result_release(b);
    sp_results_release(merged, nmerged);
    for (size_t i = 0; i < a.nfiles; i++)
        sp_result_release(ranks[i]);
    free(ranks);
    free(a.files);
    return rc;
}

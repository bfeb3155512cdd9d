/* diagnose.c: `stepprof diagnose FILE`, the verdicts on a result's steps
 * (sp_result_diagnose) as text or JSON. */
#include "cli.h"

#include <stdio.h>
#include <string.h>

static const char diagnose_help[] =
    "usage: stepprof diagnose [OPTIONS] FILE\n"
    "\n"
    "Names what limits the recorded steps, each verdict with its evidence (the\n"
    "numbers and the steps they come from) and a recommendation:\n"
    "  dataloader-bound       Dataloader is 20% or more of step time\n"
    "  host- or launch-bound  the GPU idles 30% or more of step time outside data\n"
    "                         loading (with kernel counts, kernels under 10 us,\n"
    "                         runtime against kernel time as evidence)\n"
    "  sync-bound             waits (synchronize, blocking copies, item()) are\n"
    "                         10% or more of step time\n"
    "  communication-bound    communication not overlapped with computation is\n"
    "                         15% or more of step time\n"
    "  optimizer-bound        Optimization is 10% or more of step time and 50% or\n"
    "                         more of Backward's time\n"
    "  slow steps             steps over 1.5x the median step (5 steps or more),\n"
    "                         periodic or not, and what grew in them\n"
    "  no dominant bottleneck when no rule fires\n"
    "\n"
    "The GPU figures need device records (kernels, copies, memsets, runtime\n"
    "calls), which stepprof's JSON, a .pb and paddle's JSON all keep.\n"
    "\n"
    "options:\n"
    "  --json             one JSON object instead of text (see stepprof(1))\n"
    "\n"
    "Exit codes: 0 diagnosed, 1 the file is bad or has no steps, 2 wrong usage.\n";

int cli_diagnose(int argc, char **argv)
{
    const char *file = NULL;
    int json = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (cli_is_help(a)) {
            fputs(diagnose_help, stdout);
            return CLI_OK;
        }
        if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            static const char *const flags[] = {"--json", NULL};
            return cli_unknown_option("diagnose", a, flags);
        } else if (file) {
            return cli_usage_error("diagnose", "one file expected, got a second: '%s'", a);
        } else {
            file = a;
        }
    }
    if (!file) return cli_usage_error("diagnose", "FILE missing");
    sp_result *r = NULL;
    int rc = cli_load(file, &r);
    if (rc != CLI_OK) return rc;
    sp_status s = sp_result_diagnose(r, json ? SP_DIAGNOSE_JSON : SP_DIAGNOSE_TEXT, stdout);
    if (s != SP_OK) {
        fprintf(stderr, "stepprof: %s: %s\n", file, sp_last_error());
        rc = CLI_BAD_INPUT;
    }
    sp_result_release(r);
    if (rc == CLI_OK && fflush(stdout) != 0) rc = CLI_BAD_INPUT;
    return rc;
}

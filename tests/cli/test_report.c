/* test_report.c: `stepprof report` as a user runs it
 * (tools/stepprof/report.c): usage errors exit 2, a bad input or an
 * unwritable output exits 1 and writes nothing, a result becomes a page
 * that names its source, with --baseline and --title too, from JSON and
 * .pb alike, and several files become one page comparing the ranks. The page itself is tested in tests/report. */
#include "cli/cli_harness.h"

#define US 1000ll

static char page[1 << 20];

static void make_files(void)
{
    static const fixture_range steps[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US},
        {"DataLoader", SP_EVENT_DATALOADER, 0, 60 * US},
        {"matmul", SP_EVENT_OPERATOR, 60 * US, 90 * US},
        {"ProfileStep#1", SP_EVENT_PROFILE_STEP, 100 * US, 220 * US},
        {"DataLoader", SP_EVENT_DATALOADER, 100 * US, 160 * US},
        {"matmul", SP_EVENT_OPERATOR, 160 * US, 210 * US},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", steps, 6);
    save(r, "run.json", SP_FORMAT_JSON);
    r = sp__result_new();
    fixture_add_thread(r, 1, "main", steps, 3);
    save(r, "base.pb", SP_FORMAT_AUTO);
    char path[300];
    snprintf(path, sizeof path, "%s/corrupt.json", cli_dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("{\"traceEvents\": [ {\"ph\": \"X\", \"name\"", f);
        fclose(f);
    }
}

static void test_report_cli_usage(void)
{
    CHECK_EQ(2, cli("report"));
    CHECK(strstr(err_text, "FILE missing") != NULL);
    CHECK_EQ(2, cli("report run.json"));
    CHECK(strstr(err_text, "no output file: -o OUT.html") != NULL);
    CHECK_EQ(2, cli("report run.json -o"));
    CHECK(strstr(err_text, "-o needs a value") != NULL);
    CHECK_EQ(2, cli("report --bogus run.json -o x.html"));
    CHECK_EQ(2, cli("report --tokens-per-sample 0 run.json -o x.html"));
    CHECK(strstr(err_text, "--tokens-per-sample: '0' is not a number above 0") != NULL);
    CHECK_EQ(2, cli("report --peak-tflops=lots run.json -o x.html"));
    CHECK_EQ(0, cli("report --help"));
    CHECK(strncmp(out_text, "usage: stepprof report", 22) == 0);
    CHECK_EQ(0, cli("--help"));
    CHECK(strstr(out_text, "  report FILE -o OUT") != NULL);
    slurp("x.html", page, sizeof page); /* no usage error wrote a page */
    CHECK_STR_EQ("", page);
}

static void test_report_cli_pages(void)
{
    CHECK_EQ(0, cli("report run.json -o run.html"));
    CHECK_STR_EQ("stepprof: report written to run.html\n", out_text);
    slurp("run.html", page, sizeof page);
    CHECK(strncmp(page, "<!DOCTYPE html>", 15) == 0);
    CHECK(strstr(page, "\"run\": {\"source\": \"run.json\"") != NULL);
    CHECK(strstr(page, "\"baseline\": null") != NULL);

    CHECK_EQ(0, cli("report --baseline base.pb --title 'A & B' --output=cmp.html run.json"));
    slurp("cmp.html", page, sizeof page);
    CHECK(strstr(page, "<title>A &amp; B - stepprof report</title>") != NULL);
    CHECK(strstr(page, "\"baseline\": {\"source\": \"base.pb\"") != NULL);

    /* One file per rank: the cross-rank tables. */
    CHECK_EQ(0, cli("report run.json run.json -o ranks.html --tokens-per-sample 128"));
    slurp("ranks.html", page, sizeof page);
    CHECK(strstr(page, "\"ranks\": {\"ids\": [0, 1], \"tables\": ") != NULL);
    CHECK(strstr(page, "\"throughput\": {\"samples_per_s\": ") != NULL);

    CHECK_EQ(1, cli("report missing.json -o m.html"));
    CHECK(strstr(err_text, "missing.json") != NULL);
    CHECK_EQ(1, cli("report corrupt.json -o c.html"));
    CHECK(strstr(err_text, "corrupt.json") != NULL);
    CHECK_EQ(1, cli("report run.json --baseline corrupt.json -o c.html"));
    slurp("c.html", page, sizeof page);
    CHECK_STR_EQ("", page);
    CHECK_EQ(1, cli("report run.json -o no/such/dir/r.html"));
    CHECK(strstr(err_text, "stepprof: no/such/dir/r.html: ") != NULL);
}

int main(void)
{
    cli_harness_start();
    make_files();
    RUN_TEST(test_report_cli_usage);
    RUN_TEST(test_report_cli_pages);
    cli_harness_end();
    return TEST_SUMMARY();
}

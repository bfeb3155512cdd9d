/* test_diagnose.c: `stepprof diagnose` as a user runs it
 * (tools/stepprof/diagnose.c): usage errors exit 2, a result without steps
 * (host ranges only, or GPU records only) exits 1 saying so, a result with
 * steps exits 0 with text or JSON. The verdicts themselves are tested in
 * tests/analyze/test_diagnose.c. */
#include "cli/cli_harness.h"

#define US 1000ll

static void make_files(void)
{
    static const fixture_range steps[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US},
        {"DataLoader", SP_EVENT_DATALOADER, 0, 60 * US},
        {"ProfileStep#1", SP_EVENT_PROFILE_STEP, 100 * US, 200 * US},
        {"DataLoader", SP_EVENT_DATALOADER, 100 * US, 160 * US},
    };
    static const fixture_range no_steps[] = {{"matmul", SP_EVENT_OPERATOR, 0, 100 * US}};
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", steps, 4);
    save(r, "steps.json", SP_FORMAT_JSON);
    r = sp__result_new();
    fixture_add_thread(r, 1, "main", no_steps, 1);
    save(r, "no_steps.json", SP_FORMAT_JSON);
    r = sp__result_new();
    fixture_add_device(r, "gemm", SP_EVENT_KERNEL, 10 * US, 20 * US, 0, 7, 1);
    save(r, "gpu_only.pb", SP_FORMAT_AUTO);
}

static void test_diagnose_cli_usage(void)
{
    CHECK_EQ(2, cli("diagnose"));
    CHECK(strstr(err_text, "FILE missing") != NULL);
    CHECK_EQ(2, cli("diagnose --bogus steps.json"));
    CHECK_EQ(2, cli("diagnose --json=yes steps.json"));
    CHECK(strstr(err_text, "--json takes no value") != NULL);
    CHECK_EQ(2, cli("diagnose steps.json steps.json"));
    CHECK_EQ(0, cli("diagnose --help"));
    CHECK(strncmp(out_text, "usage: stepprof diagnose", 24) == 0);
    CHECK_EQ(0, cli("--help"));
    CHECK(strstr(out_text, "  diagnose FILE") != NULL);
}

static void test_diagnose_cli_results(void)
{
    CHECK_EQ(0, cli("diagnose steps.json"));
    CHECK(strstr(out_text, "Diagnosis of 2 steps (#0 to #1)") != NULL);
    CHECK(strstr(out_text, "\ndataloader-bound\n") != NULL);
    CHECK_EQ(0, cli("diagnose --json steps.json"));
    CHECK(strncmp(out_text, "{\"steps\": 2,", 12) == 0);
    CHECK(strstr(out_text, "\"id\": \"dataloader_bound\"") != NULL);
    CHECK_EQ(1, cli("diagnose no_steps.json"));
    CHECK(strstr(err_text, "no_steps.json: no steps recorded") != NULL);
    CHECK_EQ('\0', out_text[0]);
    CHECK_EQ(1, cli("diagnose --json gpu_only.pb"));
    CHECK(strstr(err_text, "gpu_only.pb: no steps recorded") != NULL);
    CHECK_EQ('\0', out_text[0]);
    CHECK_EQ(1, cli("diagnose missing.json"));
}

int main(void)
{
    cli_harness_start();
    make_files();
    RUN_TEST(test_diagnose_cli_usage);
    RUN_TEST(test_diagnose_cli_results);
    cli_harness_end();
    return TEST_SUMMARY();
}

/* test_step_compare.c: the regression gate's judgement
 * (sp_result_compare_steps) and `stepprof diff --fail-above` on synthetic
 * runs of one program (synth_steps.h). "Noise" is a fixed pseudo-random
 * jitter per step, so every run of the test sees the same numbers. */
#include "synth_steps.h"

#include <sys/wait.h>

#define US 1000ll

/* A run of n steps: matmul is 700 us of an 800 us Forward, times
 * (1 + slowdown); every phase gets up to +-jitter of noise. */
static sp_result *run(size_t n, uint64_t seed, double jitter, double slowdown)
{
    synth_step *v = calloc(n, sizeof *v);
    uint64_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        double u = (double)(x >> 11) / 9007199254740992.0 * 2 - 1; /* [-1, 1) */
        double f = 1 + jitter * u;
        int64_t matmul = (int64_t)(700 * US * f * (1 + slowdown));
        v[i] = (synth_step){.dl = (int64_t)(50 * US * f),
                            .fwd = matmul + (int64_t)(100 * US * f),
                            .matmul = matmul,
                            .bwd = (int64_t)(100 * US * f),
                            .opt = (int64_t)(50 * US * f),
                            .other = 20 * US,
                            .other_name = "relu"};
    }
    sp_result *r = synth_build(v, n, 10);
    free(v);
    return r;
}

static void test_step_compare_same_program_passes(void)
{
    sp_result *a = run(20, 1, 0.03, 0), *b = run(20, 2, 0.03, 0);
    sp_step_comparison c;
    CHECK_EQ(SP_OK, sp_result_compare_steps(a, b, NULL, 0.05, &c));
    CHECK_EQ(20, c.base_steps);
    CHECK_EQ(20, c.new_steps);
    CHECK(c.tested);
    CHECK(!c.regression);
    CHECK(c.change < 0.05 && c.change > -0.05);
    /* Even a gate at 0%: a difference within the noise is not significant. */
    CHECK_EQ(SP_OK, sp_result_compare_steps(a, b, "step", 0.0, &c));
    CHECK(c.p_value >= 0.01);
    CHECK(!c.regression);
    sp_result_release(a);
    sp_result_release(b);
}

static void test_step_compare_slow_op_fails(void)
{
    sp_result *a = run(20, 1, 0.03, 0), *b = run(20, 2, 0.03, 0.10);
    sp_step_comparison c;
    /* Step time: matmul is ~70% of it, so +10% there is ~+7% of the step. */
    CHECK_EQ(SP_OK, sp_result_compare_steps(a, b, "step", 0.05, &c));
    CHECK(c.regression);
    CHECK(c.change > 0.05 && c.change < 0.09);
    CHECK(c.p_value < 0.01);
    CHECK_EQ(SP_OK, sp_result_compare_steps(a, b, "op:matmul", 0.05, &c));
    CHECK(c.regression);
    CHECK(c.change > 0.08 && c.change < 0.12);
    CHECK_EQ(SP_OK, sp_result_compare_steps(a, b, "phase:Forward", 0.05, &c));
    CHECK(c.regression);
    /* What did not change passes. */
    CHECK_EQ(SP_OK, sp_result_compare_steps(a, b, "op:relu", 0.05, &c));
    CHECK(!c.regression);
    CHECK_EQ(SP_OK, sp_result_compare_steps(a, b, "phase:Dataloader", 0.05, &c));
    CHECK(!c.regression);
    /* A threshold above the change passes. */
    CHECK_EQ(SP_OK, sp_result_compare_steps(a, b, "op:matmul", 0.15, &c));
    CHECK(!c.regression);
    /* Faster is never a regression. */
    CHECK_EQ(SP_OK, sp_result_compare_steps(b, a, "step", 0.05, &c));
    CHECK(!c.regression);
    sp_result_release(a);
    sp_result_release(b);
}

static void test_step_compare_noise_does_not_fail(void)
{
    /* +-40% noise over 6 steps: the medians may differ by over 5% with no
     * real change, and the rank test says so. */
    int regressions = 0, medians_over = 0;
    for (uint64_t seed = 1; seed <= 20; seed++) {
        sp_result *a = run(6, seed, 0.4, 0), *b = run(6, seed + 100, 0.4, 0);
        sp_step_comparison c;
        CHECK_EQ(SP_OK, sp_result_compare_steps(a, b, "step", 0.05, &c));
        regressions += c.regression;
        medians_over += c.change > 0.05;
        sp_result_release(a);
        sp_result_release(b);
    }
    CHECK_EQ(0, regressions);
    /* The medians alone would have failed some of these runs (8 of 20). */
    CHECK(medians_over >= 4);
}

static void test_step_compare_kernels(void)
{
    synth_step s = {.fwd = 500 * US, .bwd = 500 * US, .kernels = 4, .kernel_ns = 100 * US};
    synth_step v[5] = {s, s, s, s, s};
    sp_result *a = synth_build(v, 5, 0);
    for (int i = 0; i < 5; i++)
        v[i].kernel_ns = 120 * US;
    sp_result *b = synth_build(v, 5, 0);
    sp_step_comparison c;
    CHECK_EQ(SP_OK, sp_result_compare_steps(a, b, "kernel:gemm_kernel", 0.05, &c));
    CHECK_EQ(400 * US, (int64_t)c.base_median_ns);
    CHECK_EQ(480 * US, (int64_t)c.new_median_ns);
    CHECK(c.regression);
    sp_result_release(a);
    sp_result_release(b);
}

static void test_step_compare_bad_input(void)
{
    sp_result *a = run(5, 1, 0, 0), *none = sp__result_new();
    sp_step_comparison c;
    CHECK_EQ(SP_ENODATA, sp_result_compare_steps(a, none, "step", 0.05, &c));
    CHECK_EQ(SP_ENODATA, sp_result_compare_steps(a, a, "op:nothing_by_this_name", 0.05, &c));
    CHECK_EQ(SP_EINVAL, sp_result_compare_steps(a, a, "phase:Nope", 0.05, &c));
    CHECK_EQ(SP_EINVAL, sp_result_compare_steps(a, a, "bogus", 0.05, &c));
    CHECK_EQ(SP_EINVAL, sp_result_compare_steps(a, a, "step", -1, &c));
    CHECK_EQ(SP_EINVAL, sp_result_compare_steps(NULL, a, "step", 0.05, &c));
    /* One step a side: no spread test, the medians decide. */
    sp_result *one = run(1, 1, 0, 0), *one_slow = run(1, 1, 0, 0.2);
    CHECK_EQ(SP_OK, sp_result_compare_steps(one, one_slow, "step", 0.05, &c));
    CHECK(!c.tested);
    CHECK(c.regression);
    CHECK_EQ(SP_OK, sp_result_compare_steps(one, one, "step", 0.05, &c));
    CHECK(!c.regression);
    sp_result_release(one);
    sp_result_release(one_slow);
    sp_result_release(a);
    sp_result_release(none);
}

static char dir[] = "/tmp/sp_gate_XXXXXX";
static char out_text[1 << 16];

static int cli(const char *args)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s && %s %s >out 2>err", dir, SP_CLI, args);
    int status = system(cmd);
    char path[300];
    snprintf(path, sizeof path, "%s/out", dir);
    FILE *f = fopen(path, "rb");
    size_t n = f ? fread(out_text, 1, sizeof out_text - 1, f) : 0;
    if (f) fclose(f);
    out_text[n] = '\0';
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void save(sp_result *r, const char *name)
{
    char path[300];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    CHECK_EQ(SP_OK, sp_result_export(r, path, SP_FORMAT_JSON));
    sp_result_release(r);
}

/* The command: passes two runs of the same program, fails the slowed one
 * and names matmul as the biggest mover. */
static void test_step_compare_cli_gate(void)
{
    CHECK(mkdtemp(dir) != NULL);
    save(run(20, 1, 0.03, 0), "base.json");
    save(run(20, 2, 0.03, 0), "same.json");
    save(run(20, 3, 0.03, 0.10), "slow.json");
    CHECK_EQ(0, cli("diff base.json same.json --fail-above 5%"));
    CHECK(strstr(out_text, "Result: pass") != NULL);
    CHECK_EQ(1, cli("diff base.json slow.json --fail-above 5%"));
    CHECK(strstr(out_text, "Result: REGRESSION") != NULL);
    const char *movers = strstr(out_text, "Biggest movers");
    CHECK(movers != NULL);
    if (movers) { /* the first row after the header names matmul */
        const char *row = strchr(strchr(movers, '\n') + 1, '\n') + 1;
        CHECK(strncmp(row, "op     matmul", 13) == 0);
    }
    CHECK_EQ(1, cli("diff base.json slow.json --fail-above=5 --metric op:matmul"));
    CHECK_EQ(0, cli("diff base.json slow.json --fail-above 5% --metric op:relu"));
    CHECK_EQ(0, cli("diff base.json slow.json --fail-above 20%"));
    CHECK_EQ(2, cli("diff base.json slow.json --fail-above five"));
    CHECK_EQ(2, cli("diff base.json slow.json --metric op:matmul"));
    CHECK_EQ(2, cli("diff base.json slow.json --fail-above 5 --metric weird"));
    CHECK_EQ(1, cli("diff base.json slow.json --fail-above 5 --metric op:absent"));
    /* One step with a dropped event a side: a caution, and the medians decide. */
    CHECK_EQ(0, cli("diff " SP_SOURCE_DIR "/tests/fuzz/seeds/trace.json " SP_SOURCE_DIR
                    "/tests/fuzz/seeds/trace.json --fail-above 5"));
    CHECK(strstr(out_text, "Caution: A dropped 1 events or records") != NULL);
    CHECK(strstr(out_text, "Spread: not tested (1 and 1 steps") != NULL);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ(0, system(cmd));
}

int main(void)
{
    RUN_TEST(test_step_compare_same_program_passes);
    RUN_TEST(test_step_compare_slow_op_fails);
    RUN_TEST(test_step_compare_noise_does_not_fail);
    RUN_TEST(test_step_compare_kernels);
    RUN_TEST(test_step_compare_bad_input);
    RUN_TEST(test_step_compare_cli_gate);
    return TEST_SUMMARY();
}

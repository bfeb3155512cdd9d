/* test_throughput.c: the throughput and MFU figures (throughput.h) on
 * synthetic results whose every figure is known in advance: samples/s and
 * tokens/s per step and over steps, recorded FLOPs summed per step, MFU
 * from a given peak and from the table, the reasons given when a figure is
 * unknown, and edges (zero-length steps, no steps, steps without
 * num_samples, absurd inputs) that must never give nan or inf. */
#include "fixture.h"
#include "throughput_text.h"

#include <math.h>

#define MS 1000000ll

static int near(double expected, double actual)
{
    return fabs(expected - actual) <= 1e-9 * fabs(expected) + 1e-12;
}

#define CHECK_NEAR(expected, actual)                                                            \
    do {                                                                                        \
        double e_ = (expected), a_ = (actual);                                                  \
        if (!near(e_, a_)) CHECK_FAIL_("CHECK_NEAR(%s, %s): %.17g != %.17g", #expected, #actual, e_, a_); \
    } while (0)

/* Steps #0 [0, 100 ms] 32 samples, #1 [100, 300 ms] 32 samples, #2 zero-length at
 * 300 ms with 32 samples, #3 [300, 400 ms] without num_samples; an op
 * inside step #0 so that FLOPs can be attached to thread 1. */
static sp_result *four_steps(void)
{
    static const fixture_range v[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * MS},
        {"matmul", SP_EVENT_OPERATOR, 10 * MS, 20 * MS},
        {"ProfileStep#1", SP_EVENT_PROFILE_STEP, 100 * MS, 300 * MS},
        {"ProfileStep#2", SP_EVENT_PROFILE_STEP, 300 * MS, 300 * MS},
        {"ProfileStep#3", SP_EVENT_PROFILE_STEP, 300 * MS, 400 * MS},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", v, sizeof v / sizeof *v);
    for (size_t i = 0; i < r->threads[0].count; i++) {
        sp__event *e = &r->threads[0].events[i];
        const char *name = sp__result_name(r, e->name);
        if (e->type == SP_EVENT_PROFILE_STEP && strcmp(name, "ProfileStep#3") != 0) {
            e->flags |= SP_EVENT_FLAG_SAMPLES;
            e->value = 32;
        }
    }
    return r;
}

static void add_flops(sp_result *r, int64_t ts, uint64_t flops)
{
    sp__thread *t = &r->threads[0];
    fixture_add_op(r, t, ts, "matmul", "", "X:float32:8x8");
    t->ops[t->op_count - 1].flops = flops;
}

static void add_gpu(sp_result *r, uint32_t id, const char *name)
{
    sp__device_props *p = sp__realloc(r->device_props, sizeof *p * (r->device_prop_count + 1));
    CHECK(p != NULL);
    if (!p) return;
    r->device_props = p;
    memset(&p[r->device_prop_count], 0, sizeof *p);
    p[r->device_prop_count].id = id;
    snprintf(p[r->device_prop_count].name, sizeof p->name, "%s", name);
    r->device_prop_count++;
}

static void test_throughput_samples_and_tokens(void)
{
    sp_result *r = four_steps();
    sp__tput_opts o = {128, 0, 0};
    sp__throughput t;
    CHECK_EQ(0, sp__throughput_build(r, &o, &t));
    CHECK_EQ(4, t.step_count);
    CHECK_EQ(2, t.steps[2].number);
    CHECK_NEAR(320, t.steps[0].samples_per_s);
    CHECK_NEAR(160, t.steps[1].samples_per_s);
    CHECK_NEAR(32, t.steps[2].num_samples);
    CHECK_NEAR(-1, t.steps[2].samples_per_s); /* zero length: no rate */
    CHECK_NEAR(-1, t.steps[3].num_samples);   /* unknown, not 0 */
    CHECK_NEAR(-1, t.steps[3].samples_per_s);
    CHECK_NEAR(320 * 128, t.steps[0].tokens_per_s);
    CHECK_EQ(2, t.samples_per_s.count);
    CHECK_NEAR(240, t.samples_per_s.median);
    CHECK_NEAR(64 / 0.3, t.samples_per_s.mean); /* total samples over total time */
    CHECK_NEAR(240 * 128, t.tokens_per_s.median);
    CHECK_NEAR(64 / 0.3 * 128, t.tokens_per_s.mean);
    CHECK_EQ(4, t.step_ns.count);
    CHECK_NEAR(100 * MS, t.step_ns.median);
    CHECK_NEAR(100 * MS, t.step_ns.mean);
    CHECK(t.samples_unknown == NULL);
    CHECK(t.tokens_unknown == NULL);
    /* Neither FLOPs nor a GPU: MFU unknown, saying why. */
    CHECK_EQ(SP__TPUT_FLOPS_NONE, t.flops_source);
    CHECK_EQ(0, t.mfu.count);
    CHECK_NEAR(-1, t.mfu.median);
    CHECK(t.mfu_unknown && strstr(t.mfu_unknown, "FLOPs"));
    CHECK(t.peak_unknown && strstr(t.peak_unknown, "device properties"));
    sp__throughput_fini(&t);
    /* Without tokens per sample, tokens/s is unknown and says so. */
    CHECK_EQ(0, sp__throughput_build(r, NULL, &t));
    CHECK_EQ(0, t.tokens_per_s.count);
    CHECK_NEAR(-1, t.steps[0].tokens_per_s);
    CHECK(t.tokens_unknown && strstr(t.tokens_unknown, "tokens per sample"));
    sp__throughput_fini(&t);
    sp_result_release(r);
}

static void test_throughput_recorded_flops_and_given_peak(void)
{
    sp_result *r = four_steps();
    add_flops(r, 10 * MS, 1000000000000ull);
    add_flops(r, 50 * MS, 2000000000000ull);
    add_flops(r, 150 * MS, 4000000000000ull);
    add_flops(r, 350 * MS, 1000000000000ull);
    add_flops(r, 500 * MS, 9000000000000ull); /* after every step: counts nowhere */
    sp__tput_opts o = {0, 0, 100};
    sp__throughput t;
    CHECK_EQ(0, sp__throughput_build(r, &o, &t));
    CHECK_EQ(SP__TPUT_FLOPS_RECORDED, t.flops_source);
    CHECK_NEAR(3e12, t.steps[0].flops);
    CHECK_NEAR(4e12, t.steps[1].flops);
    CHECK_NEAR(0, t.steps[2].flops);
    CHECK_NEAR(1e12, t.steps[3].flops);
    CHECK_NEAR(3e13, t.steps[0].flops_per_s);
    CHECK_NEAR(-1, t.steps[2].flops_per_s);
    CHECK_NEAR(2e12, t.flops.median);
    CHECK_NEAR(2e12, t.flops.mean);
    CHECK_NEAR(2e13, t.flops_per_s.median);
    CHECK_NEAR(8e12 / 0.4, t.flops_per_s.mean);
    CHECK_EQ(1, t.peak_given);
    CHECK_NEAR(1e14, t.peak_flops);
    CHECK_NEAR(0.3, t.steps[0].mfu);
    CHECK_NEAR(0.1, t.steps[3].mfu);
    CHECK_EQ(3, t.mfu.count);
    CHECK_NEAR(0.2, t.mfu.median);
    CHECK_NEAR(0.2, t.mfu.mean);
    CHECK(t.mfu_unknown == NULL);
    sp__throughput_fini(&t);
    /* Given FLOPs per step win over the recorded ones. */
    o.flops_per_step = 5e12;
    CHECK_EQ(0, sp__throughput_build(r, &o, &t));
    CHECK_EQ(SP__TPUT_FLOPS_GIVEN, t.flops_source);
    CHECK_NEAR(5e12, t.steps[2].flops);
    CHECK_NEAR(5e13 / 1e14, t.steps[0].mfu);
    sp__throughput_fini(&t);
    sp_result_release(r);
}

static void test_throughput_peak_from_the_table(void)
{
    sp_result *r = four_steps();
    add_flops(r, 10 * MS, 3000000000000ull);
    add_gpu(r, 0, "NVIDIA H100 80GB HBM3");
    add_gpu(r, 1, "NVIDIA H100 80GB HBM3");
    sp__throughput t;
    /* No kernel recorded: the first device's peak. */
    CHECK_EQ(0, sp__throughput_build(r, NULL, &t));
    CHECK_EQ(0, t.peak_given);
    CHECK_EQ(1, t.peak_devices);
    CHECK_NEAR(989.4e12, t.peak_flops);
    CHECK_STR_EQ("H100 SXM", t.peak_row);
    CHECK_STR_EQ("NVIDIA H100 80GB HBM3", t.device_name);
    CHECK_NEAR(3e13 / 989.4e12, t.steps[0].mfu);
    sp__throughput_fini(&t);
    /* Kernels on both devices: their peaks add up. */
    fixture_add_device(r, "gemm", SP_EVENT_KERNEL, 1 * MS, 2 * MS, 0, 7, 1);
    fixture_add_device(r, "gemm", SP_EVENT_KERNEL, 1 * MS, 2 * MS, 1, 7, 2);
    CHECK_EQ(0, sp__throughput_build(r, NULL, &t));
    CHECK_EQ(2, t.peak_devices);
    CHECK_NEAR(2 * 989.4e12, t.peak_flops);
    sp__throughput_fini(&t);
    /* A device the table does not know: unknown, with the reason. */
    snprintf(r->device_props[1].name, sizeof r->device_props[1].name, "NVIDIA GeForce GTX 1080");
    CHECK_EQ(0, sp__throughput_build(r, NULL, &t));
    CHECK_NEAR(-1, t.peak_flops);
    CHECK_EQ(0, t.mfu.count);
    CHECK_NEAR(-1, t.steps[0].mfu);
    CHECK(t.mfu_unknown && strstr(t.mfu_unknown, "not in the table"));
    CHECK_STR_EQ("NVIDIA GeForce GTX 1080", t.device_name);
    sp__throughput_fini(&t);
    sp_result_release(r);
}

static void test_throughput_table_rows(void)
{
    static const struct {
        const char *name, *row;
        double tflops;
    } cases[] = {
        {"NVIDIA H100 80GB HBM3", "H100 SXM", 989.4},
        {"NVIDIA H100 PCIe", "H100 PCIe", 756},
        {"NVIDIA H100 NVL", "H100 NVL", 835},
        {"NVIDIA H200", "H200 SXM", 989},
        {"NVIDIA GH200 480GB", "GH200", 989.4},
        {"NVIDIA A100-SXM4-80GB", "A100", 312},
        {"NVIDIA A100 80GB PCIe", "A100", 312},
        {"NVIDIA A10", "A10", 125},
        {"NVIDIA L4", "L4", 121},
        {"NVIDIA L40S", "L40S", 362.05},
        {"Tesla V100-SXM2-16GB", "V100 SXM2", 125},
        {"Tesla V100-PCIE-32GB", "V100 PCIe", 112},
        {"Tesla V100S-PCIE-32GB", "V100S", 130},
        {"Tesla T4", "T4", 65},
        {"NVIDIA GeForce RTX 4090", "RTX 4090", 165.2},
        {"NVIDIA A10G", "", -1}, /* not A10: a whole word only */
        {"NVIDIA GeForce RTX 4090 D", "RTX 4090", 165.2},
        {"", "", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        const char *row;
        double v = sp__tput_peak_tflops(cases[i].name, &row);
        CHECK_NEAR(cases[i].tflops, v);
        CHECK_STR_EQ(cases[i].row, row);
    }
}

static void test_throughput_no_steps(void)
{
    static const fixture_range v[] = {{"forward", SP_EVENT_FORWARD, 0, 10 * MS}};
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", v, 1);
    sp__tput_opts o = {16, 1e9, 10};
    sp__throughput t;
    CHECK_EQ(0, sp__throughput_build(r, &o, &t));
    CHECK_EQ(0, t.step_count);
    CHECK_EQ(0, t.step_ns.count);
    CHECK_NEAR(-1, t.step_ns.median);
    CHECK_NEAR(-1, t.samples_per_s.mean);
    CHECK(t.samples_unknown && strstr(t.samples_unknown, "no recorded steps"));
    CHECK(t.mfu_unknown && strstr(t.mfu_unknown, "no recorded steps"));
    sp__throughput_fini(&t);
    CHECK_EQ(0, sp__throughput_build(NULL, NULL, &t));
    CHECK_EQ(0, t.step_count);
    sp__throughput_fini(&t);
    sp_result_release(r);
}

static void test_throughput_steps_without_samples(void)
{
    sp_result *r = four_steps();
    for (size_t i = 0; i < r->threads[0].count; i++) r->threads[0].events[i].flags &= (uint8_t)~SP_EVENT_FLAG_SAMPLES;
    sp__throughput t;
    CHECK_EQ(0, sp__throughput_build(r, NULL, &t));
    CHECK_EQ(0, t.samples_per_s.count);
    CHECK_NEAR(-1, t.samples_per_s.median);
    CHECK(t.samples_unknown && strstr(t.samples_unknown, "no step has num_samples"));
    sp__throughput_fini(&t);
    /* Only the zero-length step has it. */
    for (size_t i = 0; i < r->threads[0].count; i++)
        if (strcmp(sp__result_name(r, r->threads[0].events[i].name), "ProfileStep#2") == 0)
            r->threads[0].events[i].flags |= SP_EVENT_FLAG_SAMPLES;
    CHECK_EQ(0, sp__throughput_build(r, NULL, &t));
    CHECK_EQ(0, t.samples_per_s.count);
    CHECK(t.samples_unknown && strstr(t.samples_unknown, "zero length"));
    sp__throughput_fini(&t);
    sp_result_release(r);
}

static void test_throughput_absurd_inputs(void)
{
    sp_result *r = four_steps();
    sp__throughput t;
    char msg[160];
    const sp__tput_opts bad[] = {{-1, 0, 0}, {NAN, 0, 0}, {1e13, 0, 0}, {0, -5, 0},
                                 {0, INFINITY, 0}, {0, 0, 1e10}, {0, 0, -0.5}};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *m = sp__tput_opts_check(&bad[i], msg, sizeof msg);
        CHECK(m != NULL && strstr(m, "must be a number above 0"));
        CHECK_EQ(1, sp__throughput_build(r, &bad[i], &t));
        CHECK_EQ(0, t.step_count);
        sp__throughput_fini(&t);
    }
    CHECK(sp__tput_opts_check(&(sp__tput_opts){1e12, 1e30, 1e9}, msg, sizeof msg) == NULL);
    /* The largest inputs, on a 1 ns step, stay finite. */
    r->threads[0].events[0].end_ns = 1;
    r->threads[0].events[0].value = SP__STEP_SAMPLES_MAX;
    sp__tput_opts big = {1e12, 1e30, 1e-3};
    CHECK_EQ(0, sp__throughput_build(r, &big, &t));
    const sp__tput_step *s = &t.steps[0];
    double all[] = {s->samples_per_s, s->tokens_per_s, s->flops_per_s, s->mfu,
                    t.samples_per_s.mean, t.tokens_per_s.mean, t.flops_per_s.mean, t.mfu.mean};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++) CHECK(isfinite(all[i]) && all[i] > 0);
    sp__throughput_fini(&t);
    sp_result_release(r);
}

/* The text names the table row, the device and the FLOPs' source, and
 * flags an MFU above 100%. */
static void test_throughput_text_notes(void)
{
    sp_result *r = four_steps();
    add_flops(r, 10 * MS, 3000000000000ull);
    add_gpu(r, 0, "NVIDIA H100 80GB HBM3");
    sp__throughput t;
    CHECK_EQ(0, sp__throughput_build(r, NULL, &t));
    sp__buf b;
    sp__buf_init(&b);
    CHECK_EQ(0, sp__throughput_render(&t, "ms", &b));
    const char *s = sp__buf_cstr(&b);
    CHECK(strstr(s, "Peak: 989.40 TFLOP/s: 1 x NVIDIA H100 80GB HBM3 (table row H100 SXM, dense BF16/FP16).\n"));
    CHECK(strstr(s, "FLOPs per step: recorded (with_flops)"));
    CHECK(strstr(s, "MFU (%)                   0.00             0.76             \n"));
    CHECK(strstr(s, "above 100%") == NULL);
    sp__throughput_fini(&t);
    sp__buf_fini(&b);
    sp__buf_init(&b);
    sp__tput_opts tiny = {0, 0, 1e-3}; /* 1 GFLOP/s: MFU far above 100% */
    CHECK_EQ(0, sp__throughput_build(r, &tiny, &t));
    CHECK_EQ(0, sp__throughput_render(&t, "ms", &b));
    CHECK(strstr(sp__buf_cstr(&b), "MFU above 100%: the FLOPs per step or the peak is wrong.\n"));
    sp__throughput_fini(&t);
    sp__buf_fini(&b);
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_throughput_text_notes);
    RUN_TEST(test_throughput_samples_and_tokens);
    RUN_TEST(test_throughput_recorded_flops_and_given_peak);
    RUN_TEST(test_throughput_peak_from_the_table);
    RUN_TEST(test_throughput_table_rows);
    RUN_TEST(test_throughput_no_steps);
    RUN_TEST(test_throughput_steps_without_samples);
    RUN_TEST(test_throughput_absurd_inputs);
    return TEST_SUMMARY();
}

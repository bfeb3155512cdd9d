/* test_diagnose.c: each rule of diagnose.h on synthetic steps made to
 * trigger it and on steps made not to (synth_steps.h), the per-step
 * breakdown's figures, and sp_result_diagnose on bad input: no steps, one
 * step, drops, only GPU records, names with odd bytes. Times are exact, so
 * nothing depends on a clock. */
#include "diagnose.h"
#include "synth_steps.h"

#define US 1000ll

/* A balanced step: nothing reaches a threshold. 1000 us. */
static const synth_step balanced = {.dl = 100 * US,
                                    .fwd = 300 * US,
                                    .bwd = 400 * US,
                                    .opt = 100 * US,
                                    .other = 100 * US,
                                    .other_name = "misc"};

static int diagnose(sp_result *r, sp__diagnosis *d)
{
    sp__model m;
    CHECK_EQ(0, sp__model_build(&m, r));
    int rc = sp__diagnose(&m, d);
    sp__model_fini(&m);
    return rc;
}

/* The verdict of rule in d, or NULL. */
static const sp__verdict *find(const sp__diagnosis *d, int rule)
{
    for (size_t i = 0; i < d->count; i++)
        if (d->v[i].rule == rule) return &d->v[i];
    return NULL;
}

/* Runs the rules on r (released) and says whether `rule` fired. */
static int fires(sp_result *r, int rule)
{
    sp__diagnosis d;
    CHECK_EQ(0, diagnose(r, &d));
    int yes = find(&d, rule) != NULL;
    sp__diagnosis_fini(&d);
    sp_result_release(r);
    return yes;
}

static void test_diagnose_breakdown_figures(void)
{
    synth_step s = balanced;
    s.wait = 50 * US;
    s.comm = 50 * US;
    sp_result *r = synth_same(s, 4);
    sp__model m;
    sp__steps st;
    CHECK_EQ(0, sp__model_build(&m, r));
    CHECK_EQ(0, sp__steps_build(&m, &st));
    CHECK_EQ(4, st.n);
    CHECK_EQ(3, st.v[3].number);
    CHECK_EQ(1100 * US, st.v[0].end_ns - st.v[0].start_ns);
    CHECK_EQ(100 * US, st.v[1].phase_ns[SP__PHASE_DATALOADER]);
    CHECK_EQ(300 * US, st.v[1].phase_ns[SP__PHASE_FORWARD]);
    CHECK_EQ(400 * US, st.v[1].phase_ns[SP__PHASE_BACKWARD]);
    CHECK_EQ(100 * US, st.v[1].phase_ns[SP__PHASE_OPTIMIZATION]);
    CHECK_EQ(50 * US, st.v[1].phase_ns[SP__PHASE_COMMUNICATION]);
    CHECK_EQ(150 * US, st.v[1].phase_ns[SP__PHASE_OTHER]); /* the wait and misc */
    CHECK_EQ(50 * US, st.v[1].sync_ns);
    CHECK_EQ(50 * US, st.v[1].exposed_comm_ns);
    CHECK_EQ(0, st.has_gpu);
    CHECK_EQ(0, st.v[1].idle_ns);
    sp__steps_fini(&st);
    sp__model_fini(&m);
    sp_result_release(r);
}

static void test_diagnose_dataloader(void)
{
    synth_step s = balanced;
    s.dl = 250 * US; /* 250 / 1150 = 21.7% */
    CHECK(fires(synth_same(s, 6), SP__RULE_DATALOADER));
    s.dl = 150 * US; /* 150 / 1050 = 14.3% */
    CHECK(!fires(synth_same(s, 6), SP__RULE_DATALOADER));
}

static void test_diagnose_launch_bound(void)
{
    synth_step s = balanced;
    s.kernels = 100; /* 100 x 3 us kernels in 700 us of compute: the GPU mostly idles */
    s.kernel_ns = 3 * US;
    sp_result *r = synth_same(s, 5);
    sp__diagnosis d;
    CHECK_EQ(0, diagnose(r, &d));
    const sp__verdict *v = find(&d, SP__RULE_LAUNCH);
    CHECK(v != NULL);
    if (v) {
        CHECK_EQ(500, v->kernels);
        CHECK_EQ(500, v->short_kernels);
        CHECK_EQ(500 * 3 * US, v->kernel_ns);
        CHECK(v->value > 0.5);
    }
    sp__diagnosis_fini(&d);
    sp_result_release(r);
    /* Negative: 7 kernels of 99 us keep the GPU busy through compute. */
    s.kernels = 7;
    s.kernel_ns = 99 * US;
    s.dl = 0;
    s.opt = 50 * US;
    s.other = 50 * US;
    CHECK(!fires(synth_same(s, 5), SP__RULE_LAUNCH));
    /* A GPU that waits for data is the data loader's verdict, not this one. */
    s.dl = 600 * US;
    CHECK(!fires(synth_same(s, 5), SP__RULE_LAUNCH));
    CHECK(fires(synth_same(s, 5), SP__RULE_DATALOADER));
    /* No GPU: the rule has nothing to judge. */
    CHECK(!fires(synth_same(balanced, 5), SP__RULE_LAUNCH));
}

static void test_diagnose_sync(void)
{
    synth_step s = balanced;
    s.wait = 150 * US; /* 150 / 1150 = 13% */
    CHECK(fires(synth_same(s, 5), SP__RULE_SYNC));
    s.wait = 50 * US; /* 4.8% */
    CHECK(!fires(synth_same(s, 5), SP__RULE_SYNC));
    /* A synchronize runtime call counts as a wait as well. */
    sp_result *r = synth_same(balanced, 5);
    for (int i = 0; i < 5; i++) {
        int64_t at = 1000000 + i * 1000 * US + 850 * US;
        fixture_add_runtime(r, &r->threads[0], "cudaDeviceSynchronize", at, at + 140 * US,
                            9000 + (uint32_t)i);
    }
    CHECK_EQ(0, sp__attribute(r));
    CHECK(fires(r, SP__RULE_SYNC));
}

static void test_diagnose_communication(void)
{
    synth_step s = balanced;
    s.comm = 200 * US; /* 200 / 1200 = 16.7%, nothing overlaps it */
    CHECK(fires(synth_same(s, 5), SP__RULE_COMM));
    s.comm = 100 * US; /* 9% */
    CHECK(!fires(synth_same(s, 5), SP__RULE_COMM));
    /* Negative: 200 us of communication hidden under one long compute
     * kernel launched in Forward. */
    s = balanced;
    s.comm = 200 * US;
    s.opt = s.other = 0;
    s.dl = 0;
    sp_result *r = synth_same(s, 5);
    for (int i = 0; i < 5; i++) {
        int64_t step0 = 1000000 + i * 900 * US;
        fixture_add_runtime(r, &r->threads[0], "cudaLaunchKernel", step0 + 10 * US, step0 + 11 * US,
                            5000 + (uint32_t)i);
        fixture_add_device(r, "big_gemm", SP_EVENT_KERNEL, step0 + 20 * US, step0 + 900 * US, 0, 7,
                           5000 + (uint32_t)i);
    }
    CHECK_EQ(0, sp__attribute(r));
    CHECK(!fires(r, SP__RULE_COMM));
}

static void test_diagnose_optimizer(void)
{
    synth_step s = balanced;
    s.opt = 300 * US; /* 25% of the step, 75% of Backward */
    CHECK(fires(synth_same(s, 5), SP__RULE_OPTIMIZER));
    /* The evidence gives both measures against their own thresholds. */
    static char out[1 << 14];
    sp_result *r = synth_same(s, 5);
    FILE *f = tmpfile();
    CHECK_EQ(SP_OK, sp_result_diagnose(r, SP_DIAGNOSE_TEXT, f));
    rewind(f);
    out[fread(out, 1, sizeof out - 1, f)] = '\0';
    fclose(f);
    CHECK(strstr(out, "Optimization is 25.0% of step time (threshold 10.0%), 300.0 us per step") !=
          NULL);
    CHECK(strstr(out, "It is 75.0% of Backward's time (threshold 50.0%).") != NULL);
    sp_result_release(r);
    s.opt = 150 * US; /* 14% of the step but 37.5% of Backward */
    CHECK(!fires(synth_same(s, 5), SP__RULE_OPTIMIZER));
}

static void test_diagnose_slow_steps(void)
{
    synth_step v[12];
    for (int i = 0; i < 12; i++)
        v[i] = balanced;
    v[6].other = 1100 * US; /* one slow step, in "misc" */
    sp_result *r = synth_build(v, 12, 20);
    sp__diagnosis d;
    CHECK_EQ(0, diagnose(r, &d));
    const sp__verdict *sv = find(&d, SP__RULE_SLOW_STEPS);
    CHECK(sv != NULL);
    if (sv) {
        CHECK_EQ(1, sv->slow_count);
        CHECK_EQ(26, sv->step[0]);
        CHECK_EQ(0, sv->period);
        CHECK_EQ(SP__PHASE_OTHER, sv->phase);
        CHECK_EQ(1000 * US, sv->phase_excess_ns);
        CHECK(sv->name >= 0 && strcmp(sp__result_name(r, (uint32_t)sv->name), "misc") == 0);
        CHECK_EQ(1000 * US, sv->name_excess_ns);
    }
    sp__diagnosis_fini(&d);
    sp_result_release(r);
    /* Periodic: every 4th step spends 1 ms more in the data loader. */
    for (int i = 0; i < 12; i++)
        v[i] = balanced;
    for (int i = 1; i < 12; i += 4)
        v[i].dl += 1000 * US;
    r = synth_build(v, 12, 0);
    CHECK_EQ(0, diagnose(r, &d));
    sv = find(&d, SP__RULE_SLOW_STEPS);
    CHECK(sv != NULL);
    if (sv) {
        CHECK_EQ(3, sv->slow_count);
        CHECK_EQ(4, sv->period);
        CHECK_EQ(SP__PHASE_DATALOADER, sv->phase);
    }
    sp__diagnosis_fini(&d);
    sp_result_release(r);
    /* Negative: steps within +-20% of each other. */
    for (int i = 0; i < 12; i++) {
        v[i] = balanced;
        v[i].other = (int64_t)(i % 5) * 50 * US;
    }
    CHECK(!fires(synth_build(v, 12, 0), SP__RULE_SLOW_STEPS));
    /* Negative: too few steps to call one slow. */
    for (int i = 0; i < 4; i++)
        v[i] = balanced;
    v[2].other = 5000 * US;
    CHECK(!fires(synth_build(v, 4, 0), SP__RULE_SLOW_STEPS));
}

static void test_diagnose_no_dominant_bottleneck(void)
{
    sp_result *r = synth_same(balanced, 6);
    sp__diagnosis d;
    CHECK_EQ(0, diagnose(r, &d));
    CHECK_EQ(1, d.count);
    CHECK_EQ(SP__RULE_NONE, d.v[0].rule);
    CHECK_EQ(SP__PHASE_BACKWARD, d.v[0].phase);
    sp__diagnosis_fini(&d);
    sp_result_release(r);
    /* And it is absent whenever a rule fires. */
    synth_step s = balanced;
    s.dl = 400 * US;
    CHECK(!fires(synth_same(s, 6), SP__RULE_NONE));
}

/* sp_result_diagnose's output for r in format, into buf. */
static sp_status diagnose_text(const sp_result *r, sp_diagnose_format format, char *buf,
                               size_t size)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    sp_status s = sp_result_diagnose(r, format, f);
    rewind(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
    return s;
}

static void test_diagnose_bad_input(void)
{
    static char out[1 << 16];
    /* No steps at all, and only GPU records: ENODATA, nothing written. */
    sp_result *r = sp__result_new();
    CHECK_EQ(SP_ENODATA, diagnose_text(r, SP_DIAGNOSE_TEXT, out, sizeof out));
    CHECK_EQ('\0', out[0]);
    fixture_add_device(r, "k", SP_EVENT_KERNEL, 10, 20, 0, 7, 1);
    CHECK_EQ(SP_ENODATA, diagnose_text(r, SP_DIAGNOSE_JSON, out, sizeof out));
    CHECK_EQ('\0', out[0]);
    sp_result_release(r);
    CHECK_EQ(SP_EINVAL, sp_result_diagnose(NULL, SP_DIAGNOSE_TEXT, stdout));
    /* One step: diagnosed, with a note that slow steps need more. */
    synth_step s = balanced;
    s.dl = 500 * US;
    r = synth_same(s, 1);
    CHECK_EQ(SP_OK, diagnose_text(r, SP_DIAGNOSE_TEXT, out, sizeof out));
    CHECK(strstr(out, "dataloader-bound") != NULL);
    CHECK(strstr(out, "needs 5 steps; this trace has 1") != NULL);
    /* Drops: a caution line names the counter. */
    r->counters[SP_COUNTER_HOST_DROPPED] = 7;
    CHECK_EQ(SP_OK, diagnose_text(r, SP_DIAGNOSE_TEXT, out, sizeof out));
    CHECK(strstr(out, "Caution: events were dropped (host_dropped 7)") != NULL);
    CHECK_EQ(SP_OK, diagnose_text(r, SP_DIAGNOSE_JSON, out, sizeof out));
    CHECK(strstr(out, "\"host_dropped\": 7") != NULL);
    sp_result_release(r);
}

/* A slow step spent in a range whose name holds a quote, a newline,
 * </script>, a backslash and an invalid UTF-8 byte: the text shows it on
 * one line, and the JSON is valid and reads the name back. */
static void test_diagnose_odd_names(void)
{
    static char out[1 << 16];
    static const char odd[] = "a\"b\nc</script>\\d\xff";
    synth_step v[6];
    for (int i = 0; i < 6; i++)
        v[i] = balanced;
    v[3].other = 2000 * US;
    v[3].other_name = odd;
    sp_result *r = synth_build(v, 6, 0);
    CHECK_EQ(SP_OK, diagnose_text(r, SP_DIAGNOSE_TEXT, out, sizeof out));
    CHECK(strstr(out, "'a\"b?c</script>\\d\xef\xbf\xbd'") != NULL);
    char path[] = "/tmp/sp_diag_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    CHECK_EQ(SP_OK, sp_result_diagnose(r, SP_DIAGNOSE_JSON, f));
    fclose(f);
    char script[] = "/tmp/sp_diag_py_XXXXXX";
    int sfd = mkstemp(script);
    CHECK(sfd >= 0);
    FILE *py = fdopen(sfd, "w");
    fputs("import json, sys\n"
          "d = json.load(open(sys.argv[1], encoding='utf-8'))\n"
          "v = [x for x in d['verdicts'] if x['id'] == 'slow_steps'][0]\n"
          "sys.exit(0 if v['name'] == 'a\"b\\nc</script>\\\\d\\ufffd' else 1)\n",
          py);
    fclose(py);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s -B %s %s", SP_PYTHON, script, path);
    CHECK_EQ(0, system(cmd));
    remove(script);
    remove(path);
    sp_result_release(r);
}

/* Every allocation of a diagnosis (model, steps, rules, printing) failing
 * in turn: SP_ENOMEM or a complete answer, never a crash or a leak (ASan). */
static void test_diagnose_survives_allocation_failure(void)
{
    synth_step v[6];
    for (int i = 0; i < 6; i++)
        v[i] = balanced;
    v[2].other = 3000 * US;
    v[2].kernels = 3;
    v[2].kernel_ns = 5 * US;
    sp_result *r = synth_build(v, 6, 0);
    FILE *f = tmpfile();
    CHECK(f != NULL);
    sp__alloc_fail_at(0);
    CHECK_EQ(SP_OK, sp_result_diagnose(r, SP_DIAGNOSE_JSON, f));
    uint64_t total = sp__alloc_fail_at(0);
    CHECK(total > 5);
    for (uint64_t n = 1; n <= total; n++) {
        sp__alloc_fail_at(n);
        sp_status s = sp_result_diagnose(r, n % 2 ? SP_DIAGNOSE_JSON : SP_DIAGNOSE_TEXT, f);
        sp__alloc_fail_at(0);
        CHECK(s == SP_OK || s == SP_ENOMEM);
        sp_step_comparison c;
        sp__alloc_fail_at(n);
        s = sp_result_compare_steps(r, r, "op:misc", 0.05, &c);
        sp__alloc_fail_at(0);
        CHECK(s == SP_OK || s == SP_ENOMEM);
    }
    fclose(f);
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_diagnose_breakdown_figures);
    RUN_TEST(test_diagnose_dataloader);
    RUN_TEST(test_diagnose_launch_bound);
    RUN_TEST(test_diagnose_sync);
    RUN_TEST(test_diagnose_communication);
    RUN_TEST(test_diagnose_optimizer);
    RUN_TEST(test_diagnose_slow_steps);
    RUN_TEST(test_diagnose_no_dominant_bottleneck);
    RUN_TEST(test_diagnose_bad_input);
    RUN_TEST(test_diagnose_odd_names);
    RUN_TEST(test_diagnose_survives_allocation_failure);
    return TEST_SUMMARY();
}

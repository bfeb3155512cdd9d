/* test_summary.c: the whole summary as sp_result_summary prints it, for
 * hand-built spans, against reviewed golden files in tests/golden/. The
 * figures in each golden file are worked out by hand in the fixture's
 * comment. Also: the defaults, option validation, views, the notice for an
 * empty span and the note for a span without ProfileStep. */
#include "fixture.h"
#include "stepprof/stepprof.h"

#define MS 1000000ll

/* Two training steps on one thread (times in ms; T = union of the steps =
 * [0, 20] = 20 ms):
 *   ProfileStep#0 [0,10]: DataLoader [0,4], forward [4,7] (matmul [4.5,6.5]),
 *                         backward [7,9], sgd [9,10]
 *   ProfileStep#1 [10,20]: DataLoader [10,11], forward [11,15] (matmul [12,14]),
 *                          backward [15,18], sgd [18,19], log [19,19.5]
 * Overview (time, ratio = time / 20 ms), sorted by time, ties by type value:
 *   ProfileStep 2 calls 20.00 100.00; Forward 2 7.00 35.00 (3 + 4);
 *   Dataloader 2 5.00 25.00 (4 + 1; type 1 before Backward's 10);
 *   Backward 2 5.00 25.00 (2 + 3); Operator 2 4.00 20.00; Optimization 2 2.00
 *   10.00; PythonUserDefined 1 0.50 2.50.
 * Model (total / avg / max / min / ratio; no GPU so GPU cells are 0.00):
 *   ProfileStep 20.00 / 10.00 / 10.00 / 10.00 / 100.00
 *   Dataloader 5.00 / 2.50 / 4.00 / 1.00 / 25.00; Forward 7.00 / 3.50 / 4.00 /
 *   3.00 / 35.00; Backward 5.00 / 2.50 / 3.00 / 2.00 / 25.00; Optimization
 *   2.00 / 1.00 / 1.00 / 1.00 / 10.00; Others 20 - 19 = 1.00, 5.00 %. */
static sp_result *two_steps(void)
{
    static const fixture_range main_thread[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 10 * MS},
        {"DataLoader", SP_EVENT_DATALOADER, 0, 4 * MS},
        {"forward", SP_EVENT_FORWARD, 4 * MS, 7 * MS},
        {"matmul", SP_EVENT_OPERATOR, 4500000, 6500000},
        {"backward", SP_EVENT_BACKWARD, 7 * MS, 9 * MS},
        {"sgd", SP_EVENT_OPTIMIZATION, 9 * MS, 10 * MS},
        {"ProfileStep#1", SP_EVENT_PROFILE_STEP, 10 * MS, 20 * MS},
        {"DataLoader", SP_EVENT_DATALOADER, 10 * MS, 11 * MS},
        {"forward", SP_EVENT_FORWARD, 11 * MS, 15 * MS},
        {"matmul", SP_EVENT_OPERATOR, 12 * MS, 14 * MS},
        {"backward", SP_EVENT_BACKWARD, 15 * MS, 18 * MS},
        {"sgd", SP_EVENT_OPTIMIZATION, 18 * MS, 19 * MS},
        {"log", SP_EVENT_PYTHON_USER_DEFINED, 19 * MS, 19500000},
    };
    sp_result *r = sp__result_new();
    CHECK(r != NULL);
    if (!r) return NULL;
    r->span_start_ns = 0;
    r->span_end_ns = 20 * MS;
    fixture_add_thread(r, 100, "main", main_thread, sizeof main_thread / sizeof *main_thread);
    return r;
}

/* Prints the summary of r into a string (static buffer). */
static const char *summary_text(const sp_result *r, const sp_summary_options *o, sp_status *status)
{
    static char text[1 << 16];
    FILE *f = fmemopen(text, sizeof text, "w");
    CHECK(f != NULL);
    if (!f) return "";
    *status = sp_result_summary(r, o, f);
    fclose(f);
    return text;
}

static void test_summary_overview_and_model_golden(void)
{
    sp_result *r = two_steps();
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.views = (1u << SP_VIEW_OVERVIEW) | (1u << SP_VIEW_MODEL);
    sp_status s;
    const char *text = summary_text(r, &o, &s);
    CHECK_OK(s);
    fixture_check_golden("summary_two_steps.txt", text);
    CHECK(strstr(text, "nan") == NULL && strstr(text, "inf") == NULL);
    sp_result_release(r);
}

static void test_summary_time_unit_us(void)
{
    sp_result *r = two_steps();
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.views = 1u << SP_VIEW_MODEL;
    o.time_unit = "us";
    sp_status s;
    const char *text = summary_text(r, &o, &s);
    CHECK_OK(s);
    CHECK(strstr(text, "Time unit: us") != NULL);
    CHECK(strstr(text, "20000.00 / 10000.00 / 10000.00 / 10000.00 / 100.00") != NULL);
    sp_result_release(r);
}

static void test_summary_rejects_bad_options(void)
{
    sp_result *r = two_steps();
    sp_summary_options o;
    sp_summary_options_init(&o);
    sp_status s;
    o.time_unit = "hours";
    summary_text(r, &o, &s);
    CHECK_EQ(SP_EINVAL, s);
    CHECK_STR_EQ("time_unit must be one of s, ms, us, ns", sp_last_error());
    sp_summary_options_init(&o);
    o.sorted_by = (sp_sorted_key)8;
    summary_text(r, &o, &s);
    CHECK_EQ(SP_EINVAL, s);
    sp_summary_options_init(&o);
    o.views = 1u << 9;
    summary_text(r, &o, &s);
    CHECK_EQ(SP_EINVAL, s);
    CHECK_EQ(SP_EINVAL, sp_result_summary(NULL, NULL, stdout));
    sp_result_release(r);
}

static void test_summary_empty_span_prints_one_notice(void)
{
    sp_result *r = sp__result_new();
    sp_status s;
    const char *text = summary_text(r, NULL, &s);
    CHECK_OK(s);
    CHECK_STR_EQ("No events were recorded in this span: there is nothing to summarize.\n", text);
    r->counters[SP_COUNTER_HOST_DROPPED] = 7;
    text = summary_text(r, NULL, &s);
    CHECK(strstr(text, "Counters: host_dropped=7\n") != NULL);
    sp_result_release(r);
}

static void test_summary_without_profile_step_notes_the_window(void)
{
    static const fixture_range ops[] = {
        {"matmul", SP_EVENT_OPERATOR, 0, 2 * MS},
        {"relu", SP_EVENT_OPERATOR, 3 * MS, 4 * MS},
    };
    sp_result *r = sp__result_new();
    r->span_start_ns = 0;
    r->span_end_ns = 8 * MS; /* T falls back to the window: 8 ms */
    fixture_add_thread(r, 7, "worker", ops, 2);
    r->counters[SP_COUNTER_OVERLAP] = 1;
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.views = 1u << SP_VIEW_OVERVIEW;
    sp_status s;
    const char *text = summary_text(r, &o, &s);
    CHECK_OK(s);
    static const char note[] =
        "Note: no ProfileStep in this span; ratios are relative to the recorded window.\n";
    CHECK(strncmp(text, note, strlen(note)) == 0);
    /* Operator: 2 calls, 3.00 ms merged, 3 / 8 = 37.50 % */
    CHECK(strstr(text, "Operator                   2                          3.00                       37.50") != NULL);
    CHECK(strstr(text, "Counters: overlap=1\n") != NULL);
    sp_result_release(r);
}

static void test_summary_tables_as_data(void)
{
    sp_result *r = two_steps();
    sp_summary_table *t = NULL;
    CHECK_OK(sp_result_summary_table(r, SP_VIEW_MODEL, NULL, &t));
    CHECK(t != NULL);
    CHECK_EQ(4, sp_summary_table_columns(t));
    CHECK_EQ(SP_LINE_TITLE, sp_summary_table_line_kind(t, 0));
    CHECK_STR_EQ("Model Summary", sp_summary_table_cell(t, 0, 0));
    CHECK_STR_EQ("Time unit: ms", sp_summary_table_cell(t, 1, 0));
    size_t rows = 0;
    for (size_t i = 0; i < sp_summary_table_lines(t); i++) {
        if (sp_summary_table_line_kind(t, i) != SP_LINE_ROW) continue;
        if (rows == 1) { /* the second row is the Dataloader item worked out above */
            CHECK_STR_EQ("  Dataloader", sp_summary_table_cell(t, i, 0));
            CHECK_STR_EQ("2", sp_summary_table_cell(t, i, 1));
            CHECK_STR_EQ("5.00 / 2.50 / 4.00 / 1.00 / 25.00", sp_summary_table_cell(t, i, 2));
        }
        rows++;
    }
    CHECK_EQ(6, rows); /* ProfileStep, four phases, Others */
    CHECK_STR_EQ("", sp_summary_table_cell(t, 999, 0));
    CHECK_EQ(SP_LINE_BLANK, sp_summary_table_line_kind(t, 999));
    sp_summary_table_destroy(t);
    /* a view with no table for this span, and bad arguments */
    CHECK_OK(sp_result_summary_table(r, SP_VIEW_KERNEL, NULL, &t));
    CHECK(t == NULL);
    CHECK_EQ(SP_EINVAL, sp_result_summary_table(r, (sp_summary_view)42, NULL, &t));
    CHECK_EQ(SP_EINVAL, sp_result_summary_table(NULL, SP_VIEW_MODEL, NULL, &t));
    sp_summary_table_destroy(NULL);
    sp_result_release(r);
}

/* One step with GPU work (us), as in test_model_gpu.c: ProfileStep [0,100]
 * > matmul [10,50] > inner [20,30]; relu [60,80]; 5 runtime calls (3 + 15 +
 * 1 + 5 + 10 = 34 us, disjoint); kernels k1 [30,40], k2 [70,75], k4
 * [165,170] and unattributed k9 [1,2] on device 1: 21 us in 4 records; one
 * memcpy [95,99]: 4 us. T = 100 us. Overview rows (time, ratio):
 *   ProfileStep 1 100.00 100.00; Operator 2 60.00 60.00 (40 + 20);
 *   CudaRuntime 5 34.00 34.00; OperatorInner 1 10.00 10.00;
 *   GPU: Kernel 4 21.00 21.00; Memcpy 1 4.00 4.00.
 * The Model Summary has a single item (ProfileStep): not printed. */
static void test_summary_overview_with_gpu_golden(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100000},
        {"matmul", SP_EVENT_OPERATOR, 10000, 50000},
        {"inner", SP_EVENT_OPERATOR_INNER, 20000, 30000},
        {"relu", SP_EVENT_OPERATOR, 60000, 80000},
    };
    sp_result *r = sp__result_new();
    r->span_end_ns = 200000;
    fixture_add_thread(r, 10, "main", host, 4);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "cudaLaunchKernel", 22000, 25000, 1);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 40000, 55000, 2);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 62000, 63000, 2);
    fixture_add_runtime(r, t, "cudaMemcpyAsync", 85000, 90000, 3);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 150000, 160000, 4);
    fixture_add_device(r, "k1", SP_EVENT_KERNEL, 30000, 40000, 0, 7, 1);
    fixture_add_device(r, "k2", SP_EVENT_KERNEL, 70000, 75000, 0, 8, 2);
    fixture_add_device(r, "m3", SP_EVENT_MEMCPY, 95000, 99000, 0, 7, 3);
    fixture_add_device(r, "k4", SP_EVENT_KERNEL, 165000, 170000, 0, 7, 4);
    fixture_add_device(r, "k9", SP_EVENT_KERNEL, 1000, 2000, 1, 7, 9);
    CHECK_EQ(0, sp__attribute(r));
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.views = (1u << SP_VIEW_OVERVIEW) | (1u << SP_VIEW_MODEL);
    o.time_unit = "us";
    sp_status s;
    const char *text = summary_text(r, &o, &s);
    CHECK_OK(s);
    fixture_check_golden("summary_gpu_overview.txt", text);
    sp_result_release(r);
}

static void test_summary_torch_table_public(void)
{
    sp_result *r = two_steps();
    static char text[1 << 14];
    FILE *f = fmemopen(text, sizeof text, "w");
    CHECK_OK(sp_result_table_torch(r, "cpu_time_total", 3, f));
    fclose(f);
    /* ProfilerStep* groups the two steps: CPU total 20 ms, first by cpu_time_total */
    CHECK(strstr(text, "ProfilerStep*") != NULL);
    CHECK(strstr(text, "20.000ms") != NULL);
    CHECK(strstr(text, "Self CPU time total: 20.000ms") != NULL);
    f = fmemopen(text, sizeof text, "w");
    CHECK_EQ(SP_EINVAL, sp_result_table_torch(r, "flops", 3, f));
    fclose(f);
    CHECK_STR_EQ("unknown sort_by 'flops'", sp_last_error());
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_summary_torch_table_public);
    RUN_TEST(test_summary_overview_with_gpu_golden);
    RUN_TEST(test_summary_tables_as_data);
    RUN_TEST(test_summary_overview_and_model_golden);
    RUN_TEST(test_summary_time_unit_us);
    RUN_TEST(test_summary_rejects_bad_options);
    RUN_TEST(test_summary_empty_span_prints_one_notice);
    RUN_TEST(test_summary_without_profile_step_notes_the_window);
    return TEST_SUMMARY();
}

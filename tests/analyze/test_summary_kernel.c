/* test_summary_kernel.c: the GPU parts of the Device Summary (GPU<id> rows,
 * semantics.md §6.1) and the Kernel Summary (§6.6) on hand-built results
 * with synthetic device records, attributed by sp__attribute like the
 * collector does (a kernel whose correlation id has no runtime call stays
 * unattributed and still counts, §9). Whole tables are compared with golden
 * files in tests/golden/kernel_*.txt (SP_UPDATE_GOLDEN=1 rewrites them);
 * every number in them is worked out by hand in the comments below.
 *
 * Kernel Summary layout: columns 90 + 6 + 40, so L = 92 + 8 + 42 - 2 = 140
 * and the title has (140 - 14) / 2 = 63 dashes each side. */
#include "fixture.h"

#include "summary.h"

#define US 1000ll

static void add_runtime(sp_result *r, int64_t start, int64_t end, uint32_t correlation)
{
    sp__thread *t = &r->threads[0];
    sp__runtime *rt = sp__realloc(t->runtimes, sizeof *rt * (t->runtime_count + 1));
    CHECK(rt != NULL);
    if (!rt) return;
    t->runtimes = rt;
    rt[t->runtime_count++] =
        (sp__runtime){start, end, sp__names_from_ptr(&r->names, "cudaLaunchKernel_v7000"),
                      correlation, 211, 0, -2, 0};
}

static void add_device(sp_result *r, const char *name, sp_event_type type, uint32_t device,
                       uint32_t stream, int64_t start, int64_t end, uint32_t correlation)
{
    sp__device_rec *d = sp__realloc(r->devices, sizeof *d * (r->device_count + 1));
    CHECK(d != NULL);
    if (!d) return;
    r->devices = d;
    d[r->device_count++] = (sp__device_rec){.start_ns = start, .end_ns = end,
                                            .name = sp__names_from_ptr(&r->names, name),
                                            .type = (uint8_t)type, .device = device, .context = 1,
                                            .stream = stream, .correlation = correlation,
                                            .thread = -2, .runtime = -2};
}

static char *render(const sp__table *t)
{
    static char text[1 << 16];
    sp__buf b;
    sp__buf_init(&b);
    sp__table_render(t, &b);
    CHECK_EQ(0, b.failed);
    snprintf(text, sizeof text, "%s", sp__buf_cstr(&b));
    sp__buf_fini(&b);
    CHECK(strstr(text, "nan") == NULL);
    CHECK(strstr(text, "inf") == NULL);
    return text;
}

static void check_table(sp__table_fn fn, const sp__model *m, int sorted_by, const char *golden)
{
    sp__summary_opts o = {sorted_by, 1, 0, "us"};
    sp__table *t = NULL;
    CHECK_OK(fn(m, &o, &t));
    CHECK(t != NULL);
    if (t) fixture_check_golden(golden, render(t));
    sp__table_free(t);
}

/* Thread 1: ProfileStep [0, 1000] us, so T = 1000 us. Device records (us):
 *   GPU0 stream 7: kA [100, 300], kA [600, 700]; stream 8: kB [200, 400]
 *        (overlaps kA on the other stream); memcpy [800, 900] (not a kernel)
 *   GPU1 stream 7: kC [100, 150], kC [140, 160] (unattributed: correlation
 *        99 has no runtime call)
 *   GPU3: only a memset [0, 500].
 * GPU0 union: [100, 300] u [200, 400] = [100, 400] (300) + [600, 700] (100)
 *   = 400 us -> 400 / 1000 = 40.00.
 * GPU1 union: [100, 160] = 60 us -> 6.00 (the unattributed one counts).
 * GPU3: seen (a device record), no kernel -> 0.00.
 * CPU rows: 0.5 -> 50.00, 0.25 -> 25.00. Rows in ascending id, although
 * GPU3's record comes first. */
static sp_result *devices_result(void)
{
    static const fixture_range host[] = {{"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 1000 * US}};
    sp_result *r = sp__result_new();
    r->meta.cpu_process = 0.5;
    r->meta.cpu_system = 0.25;
    fixture_add_thread(r, 1, "main", host, 1);
    for (uint32_t c = 1; c <= 4; c++) add_runtime(r, (int64_t)c * 10 * US, (int64_t)c * 10 * US + 5, c);
    add_device(r, "set", SP_EVENT_MEMSET, 3, 1, 0, 500 * US, 1);
    add_device(r, "kA", SP_EVENT_KERNEL, 0, 7, 100 * US, 300 * US, 1);
    add_device(r, "kB", SP_EVENT_KERNEL, 0, 8, 200 * US, 400 * US, 2);
    add_device(r, "kA", SP_EVENT_KERNEL, 0, 7, 600 * US, 700 * US, 3);
    add_device(r, "MEMCPY_HtoD", SP_EVENT_MEMCPY, 0, 7, 800 * US, 900 * US, 4);
    add_device(r, "kC", SP_EVENT_KERNEL, 1, 7, 100 * US, 150 * US, 2);
    add_device(r, "kC", SP_EVENT_KERNEL, 1, 7, 140 * US, 160 * US, 99);
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

static void test_summary_kernel_device_gpu_rows(void)
{
    sp_result *r = devices_result();
    CHECK_EQ(-1, r->devices[6].thread); /* correlation 99: unattributed */
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    CHECK_EQ(1000 * US, m.T);
    check_table(sp__summary_device, &m, SP__SORT_CPU_TOTAL, "kernel_device_rows.txt");
    sp__model_fini(&m);
    sp_result_release(r);
}

/* Kernels (us), T irrelevant (ratio = item total / sum over all kernels):
 *   "void gemm<float, 128>(float const*, int)": 30, 10, 20 -> calls 3,
 *       total 60, avg 20, max 30, min 10; display "void gemm<float, 128>"
 *   "relu_kernel(float*)": 45 -> 1 call, total = avg = max = min = 45;
 *       no template: shown whole
 *   "ncclAllReduce": 5 (attributed), 35 (UNATTRIBUTED, correlation 77) ->
 *       calls 2, total 40, avg 20, max 35, min 5
 *   plus a memcpy of 500 us that is not a kernel.
 * Sum = 60 + 45 + 40 = 145. Ratios: 60/145 = 41.379 -> 41.38;
 *   45/145 = 31.034 -> 31.03; 40/145 = 27.586 -> 27.59.
 * Orders:
 *   total desc (CPUTotal, GPUTotal, and any CPU key): gemm 60, relu 45, nccl 40
 *   GPUAvg desc: relu 45, gemm 20, nccl 20 (tie: gemm appears first)
 *   GPUMax desc: relu 45, nccl 35, gemm 30
 *   GPUMin asc:  nccl 5, gemm 10, relu 45
 * Rows (us): gemm "3  60.00 / 20.00 / 30.00 / 10.00 / 41.38",
 *   relu "1  45.00 / 45.00 / 45.00 / 45.00 / 31.03",
 *   nccl "2  40.00 / 20.00 / 35.00 / 5.00 / 27.59". */
static sp_result *kernels_result(void)
{
    static const fixture_range host[] = {{"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 1000 * US}};
    static const char gemm[] = "void gemm<float, 128>(float const*, int)";
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", host, 1);
    for (uint32_t c = 1; c <= 6; c++) add_runtime(r, (int64_t)c * 10 * US, (int64_t)c * 10 * US + 5, c);
    add_device(r, gemm, SP_EVENT_KERNEL, 0, 7, 100 * US, 130 * US, 1);
    add_device(r, "ncclAllReduce", SP_EVENT_KERNEL, 0, 9, 100 * US, 105 * US, 2);
    add_device(r, "relu_kernel(float*)", SP_EVENT_KERNEL, 0, 7, 200 * US, 245 * US, 3);
    add_device(r, gemm, SP_EVENT_KERNEL, 0, 7, 300 * US, 310 * US, 4);
    add_device(r, "MEMCPY_DtoH", SP_EVENT_MEMCPY, 0, 7, 400 * US, 900 * US, 5);
    add_device(r, gemm, SP_EVENT_KERNEL, 0, 8, 300 * US, 320 * US, 6);
    add_device(r, "ncclAllReduce", SP_EVENT_KERNEL, 0, 9, 500 * US, 535 * US, 77);
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

static void test_summary_kernel_sort_keys(void)
{
    sp_result *r = kernels_result();
    CHECK_EQ(-1, r->devices[6].thread); /* correlation 77: unattributed */
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    check_table(sp__summary_kernel, &m, SP__SORT_CPU_TOTAL, "kernel_sort_total.txt");
    check_table(sp__summary_kernel, &m, SP__SORT_GPU_TOTAL, "kernel_sort_total.txt");
    check_table(sp__summary_kernel, &m, SP__SORT_CPU_AVG, "kernel_sort_total.txt");
    check_table(sp__summary_kernel, &m, SP__SORT_CPU_MIN, "kernel_sort_total.txt");
    check_table(sp__summary_kernel, &m, SP__SORT_GPU_AVG, "kernel_sort_avg.txt");
    check_table(sp__summary_kernel, &m, SP__SORT_GPU_MAX, "kernel_sort_max.txt");
    check_table(sp__summary_kernel, &m, SP__SORT_GPU_MIN, "kernel_sort_min.txt");
    sp__model_fini(&m);
    sp_result_release(r);
}

/* Display names, one kernel each (1, 2, 3, 4, 5, 6 us so the total-desc
 * order is the reverse of this list; sum 21):
 *   L100: 100 characters, no parentheses -> first 87 + "..." (90 wide)
 *   L90:  exactly 90 characters -> kept whole
 *   "op<int>": no parameter list after '>' -> whole
 *   "a<b>(c)d<e>(f)": last '>' followed by "(...)" -> "a<b>(c)d<e>"
 *   "<x>(y)": '<' at index 0 (Paddle's (.+?) needs one character) -> whole
 *   "void k<T, (ns::Layout)2>(float const*)" -> "void k<T, (ns::Layout)2>"
 * Ratios: 6/21 = 28.57, 5/21 = 23.81, 4/21 = 19.05, 3/21 = 14.29,
 *   2/21 = 9.52, 1/21 = 4.76. */
static void test_summary_kernel_display_names(void)
{
    static const char l100[] = "long_kernel_name_0123456789012345678901234567890123456789"
                               "0123456789012345678901234567890123456789abc";
    static const char l90[] = "kernel_of_ninety_chars_0123456789012345678901234567890123456789"
                              "012345678901234567890123456";
    static const char *const names[] = {l100, l90, "op<int>", "a<b>(c)d<e>(f)", "<x>(y)",
                                        "void k<T, (ns::Layout)2>(float const*)"};
    CHECK_EQ(100, strlen(l100));
    CHECK_EQ(90, strlen(l90));
    sp_result *r = sp__result_new();
    for (size_t i = 0; i < 6; i++)
        add_device(r, names[i], SP_EVENT_KERNEL, 0, 7, 0, (int64_t)(i + 1) * US, (uint32_t)i);
    CHECK_EQ(0, sp__attribute(r)); /* no threads: all unattributed */
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    check_table(sp__summary_kernel, &m, SP__SORT_GPU_TOTAL, "kernel_display_names.txt");
    sp__summary_opts o = {SP__SORT_GPU_TOTAL, 1, 0, "us"};
    sp__table *t = NULL;
    CHECK_OK(sp__summary_kernel(&m, &o, &t));
    if (t) {
        /* lines: title, unit, sep, header, sep, rows 5..10 */
        CHECK_STR_EQ("void k<T, (ns::Layout)2>", sp__table_cell(t, 5, 0));
        CHECK_STR_EQ("<x>(y)", sp__table_cell(t, 6, 0));
        CHECK_STR_EQ("a<b>(c)d<e>", sp__table_cell(t, 7, 0));
        CHECK_STR_EQ("op<int>", sp__table_cell(t, 8, 0));
        CHECK_STR_EQ(l90, sp__table_cell(t, 9, 0));
        CHECK_EQ(90, strlen(sp__table_cell(t, 10, 0)));
        CHECK(strncmp(sp__table_cell(t, 10, 0), l100, 87) == 0);
        CHECK_STR_EQ("...", sp__table_cell(t, 10, 0) + 87);
        CHECK_EQ(90, sp__table_width(t, 0));
    }
    sp__table_free(t);
    sp__model_fini(&m);
    sp_result_release(r);
}

/* Two zero-length kernels and no host events: span wall time 0, so T = 0.
 * Kernel row: calls 2, "0.00 / 0.00 / 0.00 / 0.00 / 0.00" (sum 0 -> ratio
 * 0.00). Device: GPU0 union length 0, T 0 -> 0.00. No nan/inf anywhere. */
static void test_summary_kernel_zero_length(void)
{
    sp_result *r = sp__result_new();
    add_device(r, "void z<int>(int)", SP_EVENT_KERNEL, 0, 7, 50 * US, 50 * US, 1);
    add_device(r, "void z<int>(int)", SP_EVENT_KERNEL, 0, 8, 60 * US, 60 * US, 2);
    CHECK_EQ(0, sp__attribute(r));
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    CHECK_EQ(0, m.T);
    check_table(sp__summary_kernel, &m, SP__SORT_GPU_AVG, "kernel_zero_length.txt");
    check_table(sp__summary_device, &m, SP__SORT_CPU_TOTAL, "kernel_zero_length_device.txt");
    sp__model_fini(&m);
    sp_result_release(r);
}

/* Only a memcpy and a memset: no kernel items, so no table; the same for a
 * model of a NULL result. The Device Summary still lists GPU0 (seen) at
 * 0.00, checked through its cells. */
static void test_summary_kernel_none_is_null(void)
{
    sp_result *r = sp__result_new();
    add_device(r, "MEMCPY_HtoD", SP_EVENT_MEMCPY, 0, 7, 0, 10 * US, 1);
    add_device(r, "MEMSET", SP_EVENT_MEMSET, 0, 7, 20 * US, 30 * US, 2);
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    sp__summary_opts o = {SP__SORT_CPU_TOTAL, 1, 0, "ms"};
    sp__table *t = (sp__table *)&m;
    CHECK_OK(sp__summary_kernel(&m, &o, &t));
    CHECK(t == NULL);
    CHECK_OK(sp__summary_device(&m, &o, &t));
    CHECK(t != NULL);
    if (t) {
        CHECK_STR_EQ("GPU0", sp__table_cell(t, 6, 0));
        CHECK_STR_EQ("0.00", sp__table_cell(t, 6, 1));
    }
    sp__table_free(t);
    sp__model_fini(&m);
    sp_result_release(r);

    CHECK_OK(sp__model_build(&m, NULL));
    t = (sp__table *)&m;
    CHECK_OK(sp__summary_kernel(&m, &o, &t));
    CHECK(t == NULL);
    sp__model_fini(&m);
}

/* Fails each allocation of fn in turn: -1 with *out NULL, or 0 with the
 * same text as without failures. */
static void check_alloc_failures(sp__table_fn fn, const sp__model *m)
{
    sp__summary_opts o = {SP__SORT_GPU_MIN, 1, 0, "ms"};
    sp__table *want = NULL;
    sp__alloc_fail_at(0);
    CHECK_OK(fn(m, &o, &want));
    uint64_t made = sp__alloc_fail_at(0);
    CHECK(want != NULL && made > 0);
    if (!want) return;
    sp__buf wb;
    sp__buf_init(&wb);
    sp__table_render(want, &wb);
    int failures = 0;
    for (uint64_t k = 1; k <= made + 1; k++) {
        sp__table *t = NULL;
        sp__alloc_fail_at(k);
        int rc = fn(m, &o, &t);
        sp__alloc_fail_at(0);
        if (rc == 0) {
            CHECK(t != NULL);
            if (t) CHECK_STR_EQ(sp__buf_cstr(&wb), render(t));
        } else {
            CHECK_EQ(-1, rc);
            CHECK(t == NULL);
            failures++;
        }
        sp__table_free(t);
    }
    CHECK(failures > 0);
    sp__buf_fini(&wb);
    sp__table_free(want);
}

static void test_summary_kernel_alloc_failure(void)
{
    sp_result *r = devices_result();
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    check_alloc_failures(sp__summary_kernel, &m);
    check_alloc_failures(sp__summary_device, &m);
    sp__model_fini(&m);
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_summary_kernel_device_gpu_rows);
    RUN_TEST(test_summary_kernel_sort_keys);
    RUN_TEST(test_summary_kernel_display_names);
    RUN_TEST(test_summary_kernel_zero_length);
    RUN_TEST(test_summary_kernel_none_is_null);
    RUN_TEST(test_summary_kernel_alloc_failure);
    return TEST_SUMMARY();
}

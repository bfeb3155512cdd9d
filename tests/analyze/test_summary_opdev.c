/* test_summary_opdev.c: the device rows of the Operator Summary (semantics.md
 * §6.5; table_operator.c, table_opdev.c) on synthetic runtime and device
 * records, compared whole with goldens in tests/golden/opdev_*.txt. Every
 * figure in those goldens is worked out by hand in the comment beside its
 * fixture. All times are in us (the table is printed with time unit "us",
 * so a duration of n us prints as "n.00"). */
#include "fixture.h"
#include "model.h"
#include "summary.h"

#define US 1000ll

/* Renders the Operator Summary of r, checks it against golden `name`
 * (when given) and returns the text (caller frees with sp__free), or NULL
 * when no table was printed. */
static char *render(const sp_result *r, int sorted_by, int op_detail, const char *golden)
{
    sp__model m;
    sp__summary_opts o = {sorted_by, op_detail, 0, "us"};
    sp__table *t = NULL;
    char *text = NULL;
    CHECK_EQ(0, sp__model_build(&m, r));
    CHECK_EQ(0, sp__summary_operator(&m, &o, &t));
    CHECK(t != NULL);
    if (t) {
        sp__buf b;
        sp__buf_init(&b);
        sp__table_render(t, &b);
        const char *s = sp__buf_cstr(&b);
        CHECK(strstr(s, "nan") == NULL && strstr(s, "inf") == NULL);
        if (golden) fixture_check_golden(golden, s);
        text = sp__alloc(strlen(s) + 1);
        if (text) memcpy(text, s, strlen(s) + 1);
        sp__buf_fini(&b);
        sp__table_free(t);
    }
    sp__model_fini(&m);
    return text;
}

/* Thread 1 (us): step [0,1000] > matmul (Operator) [100,400] >
 * matmul::compute (OperatorInner) [200,300]; relu (Operator) [600,700].
 * Runtime calls (correlation): a [110,120] (1), b [130,140] (2), d [320,330]
 * (4) in matmul itself; c [210,220] (3) in matmul::compute; e [610,620] (5)
 * in relu; f [1100,1110] (6) on the thread root.
 * Devices: gemm kernel [400,440] (1) = 40 and gemm kernel [450,470] (2) = 20,
 * MEMCPY_HtoD memcpy [480,490] (4) = 10: matmul's own; inner_kernel kernel
 * [500,530] (3) = 30: the inner item's; relu_kernel kernel [700,705] (5) = 5;
 * root_kernel [1120,1130] (6, root call) and lost_kernel [1,2] (99, no
 * runtime): nobody's, so no row anywhere.
 * Nodes: matmul cpu 300, ggpu 40 + 20 + 10 + 30 = 100; matmul::compute cpu
 * 100, ggpu 30; relu cpu 100, ggpu 5.
 * First-seen: relu, then matmul (last-starting child first); CPUTotal sort:
 * matmul (300) before relu (100). Group sums: cpu 400, ggpu 105.
 *   matmul  1  300.00 x4 / 300/400 = 75.00   100.00 x4 / 100/105 = 95.24
 *   "  matmul::compute" 1  100.00 x4 / 100/300 = 33.33   30.00 x4 / 30/100 = 30.00
 *   "    inner_kernel"  1  - x5   30.00 x4 / 30/30 (inner.ggpu) = 100.00
 *   "  gemm"            2  - x5   60.00 / 30.00 / 40.00 / 20.00 / 60/100 = 60.00
 *   "  MEMCPY_HtoD"     1  - x5   10.00 x4 / 10/100 = 10.00
 *   relu    1  100.00 x4 / 100/400 = 25.00   5.00 x4 / 5/105 = 4.76
 *   "  relu_kernel"     1  - x5   5.00 x4 / 5/5 = 100.00
 * Own devices come after the inner items; gemm before MEMCPY_HtoD (a and b
 * start before d). */
static sp_result *span_two_levels(void)
{
    static const fixture_range host[] = {
        {"step", SP_EVENT_PROFILE_STEP, 0, 1000 * US},
        {"matmul", SP_EVENT_OPERATOR, 100 * US, 400 * US},
        {"matmul::compute", SP_EVENT_OPERATOR_INNER, 200 * US, 300 * US},
        {"relu", SP_EVENT_OPERATOR, 600 * US, 700 * US},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", host, 4);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "cudaLaunchKernel", 110 * US, 120 * US, 1);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 130 * US, 140 * US, 2);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 210 * US, 220 * US, 3);
    fixture_add_runtime(r, t, "cudaMemcpyAsync", 320 * US, 330 * US, 4);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 610 * US, 620 * US, 5);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 1100 * US, 1110 * US, 6);
    fixture_add_device(r, "gemm", SP_EVENT_KERNEL, 400 * US, 440 * US, 0, 7, 1);
    fixture_add_device(r, "gemm", SP_EVENT_KERNEL, 450 * US, 470 * US, 0, 7, 2);
    fixture_add_device(r, "inner_kernel", SP_EVENT_KERNEL, 500 * US, 530 * US, 0, 7, 3);
    fixture_add_device(r, "MEMCPY_HtoD", SP_EVENT_MEMCPY, 480 * US, 490 * US, 0, 8, 4);
    fixture_add_device(r, "relu_kernel", SP_EVENT_KERNEL, 700 * US, 705 * US, 0, 7, 5);
    fixture_add_device(r, "root_kernel", SP_EVENT_KERNEL, 1120 * US, 1130 * US, 0, 7, 6);
    fixture_add_device(r, "lost_kernel", SP_EVENT_KERNEL, 1 * US, 2 * US, 0, 7, 99);
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

static void test_summary_opdev_two_levels(void)
{
    sp_result *r = span_two_levels();
    char *s = render(r, SP__SORT_CPU_TOTAL, 1, "opdev_two_levels.txt");
    CHECK(s && strstr(s, "root_kernel") == NULL && strstr(s, "lost_kernel") == NULL);
    sp__free(s);
    sp_result_release(r);
}

/* The same span with op_detail off: only the op rows matmul and relu (as in
 * opdev_two_levels.txt), no inner and no device rows. */
static void test_summary_opdev_detail_off(void)
{
    sp_result *r = span_two_levels();
    char *s = render(r, SP__SORT_CPU_TOTAL, 0, "opdev_detail_off.txt");
    CHECK(s && strstr(s, "gemm") == NULL && strstr(s, "  matmul::compute") == NULL);
    sp__free(s);
    sp_result_release(r);
}

/* Thread 1 (us): step [0,1000] > gpu_heavy [100,200], cpu_heavy [400,700].
 * gpu_heavy's call [110,115] (1) launches k_big kernel [300,350] = 50;
 * cpu_heavy's call [410,415] (2) a MEMSET memset [750,760] = 10.
 * First-seen: cpu_heavy (starts last), gpu_heavy. Sums: cpu 400, ggpu 60.
 *   cpu_heavy  300.00 x4 / 75.00   10.00 x4 / 10/60 = 16.67; "  MEMSET" 10.00 x4 / 10/10 = 100.00
 *   gpu_heavy  100.00 x4 / 25.00   50.00 x4 / 50/60 = 83.33; "  k_big"  50.00 x4 / 50/50 = 100.00
 * CPUTotal: cpu_heavy, gpu_heavy; GPUTotal (ggpu 50 > 10): gpu_heavy,
 * cpu_heavy, each op with its device row under it. */
static sp_result *span_sort(void)
{
    static const fixture_range host[] = {
        {"step", SP_EVENT_PROFILE_STEP, 0, 1000 * US},
        {"gpu_heavy", SP_EVENT_OPERATOR, 100 * US, 200 * US},
        {"cpu_heavy", SP_EVENT_OPERATOR, 400 * US, 700 * US},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", host, 3);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "cudaLaunchKernel", 110 * US, 115 * US, 1);
    fixture_add_runtime(r, t, "cudaMemsetAsync", 410 * US, 415 * US, 2);
    fixture_add_device(r, "k_big", SP_EVENT_KERNEL, 300 * US, 350 * US, 0, 7, 1);
    fixture_add_device(r, "MEMSET", SP_EVENT_MEMSET, 750 * US, 760 * US, 0, 7, 2);
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

static void test_summary_opdev_sort_gpu_total(void)
{
    sp_result *r = span_sort();
    char *cpu = render(r, SP__SORT_CPU_TOTAL, 1, "opdev_sort_cpu_total.txt");
    char *gpu = render(r, SP__SORT_GPU_TOTAL, 1, "opdev_sort_gpu_total.txt");
    CHECK(cpu && strstr(cpu, "cpu_heavy") < strstr(cpu, "gpu_heavy"));
    CHECK(gpu && strstr(gpu, "gpu_heavy") < strstr(gpu, "cpu_heavy"));
    sp__free(cpu);
    sp__free(gpu);
    sp_result_release(r);
}

/* A 60-character kernel name (LONG) in both detail levels. Thread 1 (us):
 * step [0,1000] > conv [100,500] > conv::im2col (inner) [200,300].
 * Call [210,215] (1) in the inner launches LONG [600,620] = 20; conv's own
 * call [400,405] (2) launches LONG [630,640] = 10.
 * conv: cpu 400 / 400 = 100.00, ggpu 30 / 30 = 100.00.
 * "  conv::im2col": cpu 100 / 100/400 = 25.00, ggpu 20 / 20/30 = 66.67.
 * "    " + first 45 chars of LONG + "..." (52 wide): 20.00 x4 / 20/20 = 100.00.
 * "  " + first 47 chars of LONG + "..." (52 wide): 10.00 x4 / 10/30 = 33.33. */
#define LONG "kernel_long_name_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG"

static void test_summary_opdev_long_names_cut(void)
{
    static const fixture_range host[] = {
        {"step", SP_EVENT_PROFILE_STEP, 0, 1000 * US},
        {"conv", SP_EVENT_OPERATOR, 100 * US, 500 * US},
        {"conv::im2col", SP_EVENT_OPERATOR_INNER, 200 * US, 300 * US},
    };
    CHECK_EQ(60, (long long)strlen(LONG));
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "main", host, 3);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "cudaLaunchKernel", 210 * US, 215 * US, 1);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 400 * US, 405 * US, 2);
    fixture_add_device(r, LONG, SP_EVENT_KERNEL, 600 * US, 620 * US, 0, 7, 1);
    fixture_add_device(r, LONG, SP_EVENT_KERNEL, 630 * US, 640 * US, 0, 7, 2);
    CHECK_EQ(0, sp__attribute(r));
    char *s = render(r, SP__SORT_CPU_TOTAL, 1, "opdev_long_names.txt");
    /* 45 = "kernel_long_name_0123456789abcdefghijklmnopqr", 47 adds "st". */
    CHECK(s && strstr(s, "\n    kernel_long_name_0123456789abcdefghijklmnopqr...  1 ") != NULL);
    CHECK(s && strstr(s, "\n  kernel_long_name_0123456789abcdefghijklmnopqrst...  1 ") != NULL);
    sp__free(s);
    sp_result_release(r);
}

/* Every allocation failure inside the table returns -1 (or 0 when the
 * failure hit the model) and leaks nothing (checked by the sanitizer build). */
static void test_summary_opdev_survives_allocation_failure(void)
{
    sp_result *r = span_two_levels();
    sp__summary_opts o = {SP__SORT_CPU_TOTAL, 1, 0, "us"};
    sp__model m0;
    sp__table *t0 = NULL;
    sp__alloc_fail_at(0);
    CHECK_EQ(0, sp__model_build(&m0, r));
    CHECK_EQ(0, sp__summary_operator(&m0, &o, &t0));
    uint64_t total = sp__alloc_fail_at(0); /* model + table, device index included */
    sp__table_free(t0);
    sp__model_fini(&m0);
    CHECK(total > 10);
    for (uint64_t n = 1; n <= total; n++) {
        sp__model m;
        sp__table *t = NULL;
        sp__alloc_fail_at(n);
        int mrc = sp__model_build(&m, r);
        int rc = sp__summary_operator(&m, &o, &t);
        sp__alloc_fail_at(0);
        CHECK(mrc == 0 || mrc == -1);
        CHECK(rc == 0 || rc == -1);
        CHECK(rc == 0 || t == NULL);
        sp__table_free(t);
        sp__model_fini(&m);
    }
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_summary_opdev_two_levels);
    RUN_TEST(test_summary_opdev_detail_off);
    RUN_TEST(test_summary_opdev_sort_gpu_total);
    RUN_TEST(test_summary_opdev_long_names_cut);
    RUN_TEST(test_summary_opdev_survives_allocation_failure);
    return TEST_SUMMARY();
}

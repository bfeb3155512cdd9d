/* test_summary_comm.c: the GPU side of the Distribution Summary and the
 * Overview's GPU Communication row (semantics.md §6.2, §6.4, §9) on
 * hand-built results with runtime and device records. Each case prints the
 * Overview and Distributed views through sp_result_summary (time unit us)
 * into tests/golden/comm_<case>.txt; the figures are worked out by hand in
 * the comment above each case. All cases have ProfileStep#0 [0, 100] us, so
 * T = 100 us and every ratio equals the time in us. Every case also checks
 * sp__summary_gpu_comm directly, and the last test fails every allocation in
 * turn (run the sanitizer build for leaks). */
#include "fixture.h"
#include "stepprof/stepprof.h"
#include "summary.h"
#include "sys.h"

/* Defined in table_distributed.c, declared there and in table_overview.c
 * (not in summary.h): the GPU communication kernels, unmerged. */

#define US 1000ll
#define K SP_EVENT_KERNEL

/* Prints the Overview and Distributed views of r into a static string. */
static const char *comm_text(const sp_result *r)
{
    static char text[1 << 16];
    memset(text, 0, sizeof text);
    FILE *f = fmemopen(text, sizeof text, "w");
    CHECK(f != NULL);
    if (!f) return "";
    sp_summary_options o;
    sp_summary_options_init(&o);
    o.views = (1u << SP_VIEW_OVERVIEW) | (1u << SP_VIEW_DISTRIBUTED);
    o.time_unit = "us";
    CHECK_OK(sp_result_summary(r, &o, f));
    fclose(f);
    CHECK(strstr(text, "nan") == NULL);
    CHECK(strstr(text, "inf") == NULL);
    return text;
}

/* sp__summary_gpu_comm of r: checks the record count (unmerged), the
 * distinct count and the merged length (ns). */
static void check_gpu_comm(const sp_result *r, size_t n, size_t distinct, int64_t length)
{
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    sp__spans s;
    sp__spans_init(&s);
    CHECK_OK(sp__summary_gpu_comm(&m, &s));
    CHECK_EQ(n, s.n);
    CHECK_EQ(distinct, sp__spans_distinct(&s));
    sp__spans_merge(&s);
    CHECK_EQ(length, sp__spans_length(&s));
    sp__spans_fini(&s);
    sp__model_fini(&m);
}

/* Communication overlapping computation on two streams (us):
 *   thread 1: ProfileStep#0 [0,100] > "nccl:all_reduce" Communication [10,30],
 *             "matmul" Operator [40,60].
 *   runtimes: [12,14] corr 1 in nccl:all_reduce; [42,44] corr 2 and [46,47]
 *             corr 3 in matmul.
 *   devices:  "ncclKernel_AllReduce" [50,80] stream 2 (corr 1, rule 1: GPU
 *             comm); "volta_sgemm_128x64_nn" [45,70] stream 1 (corr 2, rule 3
 *             computation); "MEMCPY_HtoD" memcpy [70,90] stream 1 (corr 3:
 *             neither).
 * Distributed: CPU comm [10,30] = 20; GPU comm [50,80] = 30; communication
 *   [10,30] u [50,80] = 50 -> 50.00 / 50.00; computation [45,70] = 25 ->
 *   25.00; overlap [50,70] = 20 -> 20.00 (the memcpy [70,90] adds nothing).
 * Overview CPU: ProfileStep 1 100.00; Operator 1 20.00 and Communication 1
 *   20.00 tie -> enum order: Operator (0) before Communication (12);
 *   CudaRuntime 3 calls 2 + 2 + 1 = 5.00.
 * Overview GPU: Kernel 2 calls [45,80] = 35.00; Memcpy 1 20.00;
 *   Communication 1 call 30.00. */
static sp_result *overlap_result(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US},
        {"nccl:all_reduce", SP_EVENT_COMMUNICATION, 10 * US, 30 * US},
        {"matmul", SP_EVENT_OPERATOR, 40 * US, 60 * US},
    };
    sp_result *r = sp__result_new();
    r->span_end_ns = 200 * US;
    fixture_add_thread(r, 1, "main", host, 3);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "cudaLaunchKernel", 12 * US, 14 * US, 1);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 42 * US, 44 * US, 2);
    fixture_add_runtime(r, t, "cudaMemcpyAsync", 46 * US, 47 * US, 3);
    fixture_add_device(r, "ncclKernel_AllReduce", K, 50 * US, 80 * US, 0, 2, 1);
    fixture_add_device(r, "volta_sgemm_128x64_nn", K, 45 * US, 70 * US, 0, 1, 2);
    fixture_add_device(r, "MEMCPY_HtoD", SP_EVENT_MEMCPY, 70 * US, 90 * US, 0, 1, 3);
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

static void test_summary_comm_overlap_two_streams(void)
{
    sp_result *r = overlap_result();
    check_gpu_comm(r, 1, 1, 30 * US);
    fixture_check_golden("comm_overlap_two_streams.txt", comm_text(r));
    sp_result_release(r);
}

/* Rule 3 outside any communication node (us):
 *   thread 1: ProfileStep#0 [0,100] > "matmul" Operator [10,40]; span [0,200].
 *   runtimes: [11,12] corr 1 and [13,14] corr 2 in matmul; [101,102] corr 3
 *             on the thread root.
 *   devices:  "ncclKernel_Broadcast_RING" [20,30] stream 3 (corr 1: name has
 *             nccl -> GPU comm); "gemm_kernel" [25,45] stream 1 (corr 2:
 *             computation); "XcclAllGather" [110,120] (corr 3, root: "xccl"
 *             case-insensitively -> GPU comm).
 * No CPU comm. Distributed: communication [20,30] u [110,120] = 20 -> 20.00;
 *   computation [25,45] = 20 -> 20.00; overlap [25,30] = 5 -> 5.00.
 * Overview CPU: ProfileStep 1 100.00; Operator 1 30.00; CudaRuntime 3 calls
 *   1 + 1 + 1 = 3.00. GPU: Kernel 3 calls [20,45] u [110,120] = 35.00;
 *   Communication 2 calls 20.00. */
static void test_summary_comm_nccl_kernel_from_plain_operator(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US},
        {"matmul", SP_EVENT_OPERATOR, 10 * US, 40 * US},
    };
    sp_result *r = sp__result_new();
    r->span_end_ns = 200 * US;
    fixture_add_thread(r, 1, "main", host, 2);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "cudaLaunchKernel", 11 * US, 12 * US, 1);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 13 * US, 14 * US, 2);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 101 * US, 102 * US, 3);
    fixture_add_device(r, "ncclKernel_Broadcast_RING", K, 20 * US, 30 * US, 0, 3, 1);
    fixture_add_device(r, "gemm_kernel", K, 25 * US, 45 * US, 0, 1, 2);
    fixture_add_device(r, "XcclAllGather", K, 110 * US, 120 * US, 0, 1, 3);
    CHECK_EQ(0, sp__attribute(r));
    check_gpu_comm(r, 2, 2, 20 * US);
    fixture_check_golden("comm_nccl_from_operator.txt", comm_text(r));
    sp_result_release(r);
}

/* A computation kernel under a communication node is communication, not
 * computation (§9; Paddle would count it as both and inflate Overlap) (us):
 *   thread 1: ProfileStep#0 [0,100] > "c_allreduce_sum" Operator [10,50]
 *             (rule 2) > "compute" OperatorInner [20,30]; "relu" Operator
 *             [60,80].
 *   runtimes: [12,13] corr 2 and [14,15] corr 3 in c_allreduce_sum; [21,22]
 *             corr 1 in compute; [61,62] corr 4 in relu.
 *   devices:  "gemm_kernel" [30,60] stream 1 (corr 1: under the allreduce ->
 *             GPU comm although its name has no nccl); "ncclKernel" [40,70]
 *             stream 2 (corr 2: GPU comm); "MEMCPY_DtoD" memcpy [70,90]
 *             (corr 3: neither); "relu_kernel" [65,75] stream 1 (corr 4:
 *             computation).
 * Distributed: CPU comm [10,50]; GPU comm [30,60] u [40,70] = [30,70];
 *   communication [10,70] = 60 -> 60.00; computation [65,75] = 10 -> 10.00;
 *   overlap [65,70] = 5 -> 5.00 (Paddle's rule would add gemm: 35.00).
 * Overview CPU: ProfileStep 1 100.00; Operator 2 [10,50] u [60,80] = 60.00;
 *   OperatorInner 1 10.00; CudaRuntime 4 calls 4.00; no CPU Communication
 *   row (a row per host type present, and no node has type Communication). GPU: Kernel 3 calls [30,75] = 45.00; Memcpy 1
 *   20.00; Communication 2 calls [30,70] = 40.00. */
static sp_result *under_comm_result(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US},
        {"c_allreduce_sum", SP_EVENT_OPERATOR, 10 * US, 50 * US},
        {"compute", SP_EVENT_OPERATOR_INNER, 20 * US, 30 * US},
        {"relu", SP_EVENT_OPERATOR, 60 * US, 80 * US},
    };
    sp_result *r = sp__result_new();
    r->span_end_ns = 200 * US;
    fixture_add_thread(r, 1, "main", host, 4);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "cudaLaunchKernel", 12 * US, 13 * US, 2);
    fixture_add_runtime(r, t, "cudaMemcpyAsync", 14 * US, 15 * US, 3);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 21 * US, 22 * US, 1);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 61 * US, 62 * US, 4);
    fixture_add_device(r, "gemm_kernel", K, 30 * US, 60 * US, 0, 1, 1);
    fixture_add_device(r, "ncclKernel", K, 40 * US, 70 * US, 0, 2, 2);
    fixture_add_device(r, "MEMCPY_DtoD", SP_EVENT_MEMCPY, 70 * US, 90 * US, 0, 1, 3);
    fixture_add_device(r, "relu_kernel", K, 65 * US, 75 * US, 0, 1, 4);
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

static void test_summary_comm_kernel_under_communication_node(void)
{
    sp_result *r = under_comm_result();
    check_gpu_comm(r, 2, 2, 40 * US);
    fixture_check_golden("comm_kernel_under_comm.txt", comm_text(r));
    sp_result_release(r);
}

/* Unattributed kernels follow rule 3 and the table prints without any host
 * communication (us):
 *   thread 1: ProfileStep#0 [0,100]; no runtime calls.
 *   devices (no runtime has their correlation): "ncclKernel_AllReduce"
 *   [10,30] on stream 2 (corr 99) and again [10,30] on stream 3 (corr 97:
 *   same range, one distinct call); "elementwise_kernel" [20,40] (corr 98:
 *   computation); "MEMSET" memset [0,50] (corr 96: neither).
 * Distributed: communication [10,30] = 20 -> 20.00; computation [20,40] =
 *   20 -> 20.00; overlap [20,30] = 10 -> 10.00.
 * Overview CPU: ProfileStep 1 100.00. GPU: Kernel 3 calls [10,40] = 30.00;
 *   Memset 1 50.00; Communication 1 call (distinct) 20.00. sp_result_summary
 *   then prints "Counters: unattributed=4" (all four device records). */
static void test_summary_comm_unattributed_nccl_kernel(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US},
    };
    sp_result *r = sp__result_new();
    r->span_end_ns = 200 * US;
    fixture_add_thread(r, 1, "main", host, 1);
    fixture_add_device(r, "ncclKernel_AllReduce", K, 10 * US, 30 * US, 0, 2, 99);
    fixture_add_device(r, "ncclKernel_AllReduce", K, 10 * US, 30 * US, 0, 3, 97);
    fixture_add_device(r, "elementwise_kernel", K, 20 * US, 40 * US, 0, 1, 98);
    fixture_add_device(r, "MEMSET", SP_EVENT_MEMSET, 0, 50 * US, 0, 1, 96);
    CHECK_EQ(0, sp__attribute(r));
    CHECK_EQ(-1, r->devices[0].thread);
    check_gpu_comm(r, 2, 1, 20 * US);
    fixture_check_golden("comm_unattributed.txt", comm_text(r));
    sp_result_release(r);
}

/* Only a memcpy under a communication node and no nccl names: GPU
 * communication stays empty, so no GPU Communication row; the Distributed
 * table still prints for the CPU range alone:
 *   ProfileStep#0 [0,100] > "send" Communication [10,20] with runtime [11,12]
 *   corr 1 -> "MEMCPY_PtoP" memcpy [20,40].
 * Distributed: communication 10.00; computation 0.00; overlap 0.00.
 * Overview CPU: ProfileStep 100.00; Communication 1 10.00; CudaRuntime 1
 *   1.00. GPU: Memcpy 1 20.00, no Communication row. */
static void test_summary_comm_memcpy_ignored(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US},
        {"send", SP_EVENT_COMMUNICATION, 10 * US, 20 * US},
    };
    sp_result *r = sp__result_new();
    r->span_end_ns = 200 * US;
    fixture_add_thread(r, 1, "main", host, 2);
    fixture_add_runtime(r, &r->threads[0], "cudaMemcpyAsync", 11 * US, 12 * US, 1);
    fixture_add_device(r, "MEMCPY_PtoP", SP_EVENT_MEMCPY, 20 * US, 40 * US, 0, 1, 1);
    CHECK_EQ(0, sp__attribute(r));
    check_gpu_comm(r, 0, 0, 0);
    fixture_check_golden("comm_memcpy_ignored.txt", comm_text(r));
    sp_result_release(r);
}

/* Fails each allocation of fn in turn: -1 (any table it left is freed), or
 * 0 with the same text as without failures; then the same for
 * sp__summary_gpu_comm (empty and failed on -1). */
static void check_alloc_failures(sp__table_fn fn, const sp__model *m)
{
    sp__summary_opts o = {SP__SORT_CPU_TOTAL, 1, 0, "us"};
    sp__table *want = NULL;
    sp__alloc_fail_at(0);
    CHECK_OK(fn(m, &o, &want));
    uint64_t made = sp__alloc_fail_at(0);
    CHECK(want != NULL && made > 0);
    sp__buf wb, gb;
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
            sp__buf_init(&gb);
            if (t) sp__table_render(t, &gb);
            CHECK_STR_EQ(sp__buf_cstr(&wb), sp__buf_cstr(&gb));
            sp__buf_fini(&gb);
        } else {
            CHECK_EQ(-1, rc);
            failures++;
        }
        sp__table_free(t);
    }
    CHECK(failures > 0);
    sp__buf_fini(&wb);
    sp__table_free(want);

    sp__spans s;
    sp__spans_init(&s);
    failures = 0;
    for (uint64_t k = 1; k <= 8; k++) {
        sp__alloc_fail_at(k);
        int rc = sp__summary_gpu_comm(m, &s);
        sp__alloc_fail_at(0);
        if (rc != 0) {
            CHECK_EQ(-1, rc);
            CHECK_EQ(0, s.n);
            CHECK_EQ(1, s.failed);
            failures++;
        }
        sp__spans_fini(&s);
    }
    CHECK(failures > 0);
}

static void test_summary_comm_alloc_failure(void)
{
    sp_result *r = under_comm_result();
    sp__model m;
    CHECK_OK(sp__model_build(&m, r));
    check_alloc_failures(sp__summary_distributed, &m);
    check_alloc_failures(sp__summary_overview, &m);
    sp__model_fini(&m);
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_summary_comm_overlap_two_streams);
    RUN_TEST(test_summary_comm_nccl_kernel_from_plain_operator);
    RUN_TEST(test_summary_comm_kernel_under_communication_node);
    RUN_TEST(test_summary_comm_unattributed_nccl_kernel);
    RUN_TEST(test_summary_comm_memcpy_ignored);
    RUN_TEST(test_summary_comm_alloc_failure);
    return TEST_SUMMARY();
}

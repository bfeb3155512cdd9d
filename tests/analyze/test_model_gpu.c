/* test_model_gpu.c: the GPU half of the analysis model (semantics.md §5.2,
 * §6.0) on synthetic records, every figure worked out by hand below. */
#include "fixture.h"
#include "model.h"

#define US 1000ll

/* Thread 10 (us): ProfileStep [0,100] > matmul [10,50] > inner [20,30];
 * relu [60,80] under the step. Runtime calls (correlation): a [22,25] (1) in
 * inner; b [40,55] (2) in matmul; e [62,63] (2 again: wins) in relu; c [85,90]
 * (3) in the step; d [150,160] (4) on the root. Devices on device 0 unless
 * said: k1 kernel [30,40] (1 -> a, inner); k2 kernel [70,75] (2 -> e, relu);
 * m3 memcpy [95,99] (3 -> c, step); k4 kernel [165,170] (4 -> d, root);
 * k9 kernel [1,2] (9: unattributed) on device 1.
 * Nodes: inner gpu 10 self_gpu 10 ggpu 10, self_cpu 10 - 3 = 7;
 *   matmul gpu 10 (from inner) self_gpu 0 (b launched nothing) ggpu 10,
 *   self_cpu 40 - 10 (inner) - 15 (b) = 15;
 *   relu gpu 5 self_gpu 5 ggpu 5, self_cpu 20 - 1 = 19;
 *   step gpu 15 self_gpu 0 ggpu 10 + 5 + 4 = 19, self_cpu 100 - 40 - 20 - 5 = 35.
 * Root: gpu 15 + 5 (d) = 20, ggpu 19 + 5 = 24 (unattributed k9 is nobody's).
 * Ranges: kernel union 10 + 5 + 5 + 1 = 21 (4 records), memcpy 4 (1), memset 0;
 *   devices 0 (kernels 10 + 5 + 5 = 20) and 1 (1); CudaRuntime 3 + 15 + 1 + 5 +
 *   10 = 34, 5 calls. */
static sp_result *span_with_gpu(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US},
        {"matmul", SP_EVENT_OPERATOR, 10 * US, 50 * US},
        {"inner", SP_EVENT_OPERATOR_INNER, 20 * US, 30 * US},
        {"relu", SP_EVENT_OPERATOR, 60 * US, 80 * US},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 10, "main", host, 4);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "cudaLaunchKernel", 22 * US, 25 * US, 1);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 40 * US, 55 * US, 2);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 62 * US, 63 * US, 2);
    fixture_add_runtime(r, t, "cudaMemcpyAsync", 85 * US, 90 * US, 3);
    fixture_add_runtime(r, t, "cudaLaunchKernel", 150 * US, 160 * US, 4);
    fixture_add_device(r, "k1", SP_EVENT_KERNEL, 30 * US, 40 * US, 0, 7, 1);
    fixture_add_device(r, "k2", SP_EVENT_KERNEL, 70 * US, 75 * US, 0, 8, 2);
    fixture_add_device(r, "m3", SP_EVENT_MEMCPY, 95 * US, 99 * US, 0, 7, 3);
    fixture_add_device(r, "k4", SP_EVENT_KERNEL, 165 * US, 170 * US, 0, 7, 4);
    fixture_add_device(r, "k9", SP_EVENT_KERNEL, 1 * US, 2 * US, 1, 7, 9);
    CHECK_EQ(0, sp__attribute(r));
    return r;
}

static const sp__node *node_named(const sp__model *m, const char *name)
{
    const sp__thread_model *t = &m->threads[0];
    for (size_t k = 0; k < t->count; k++)
        if (strcmp(sp__result_name(m->result, t->thread->events[t->nodes[k].event].name), name) == 0)
            return &t->nodes[k];
    return NULL;
}

#define CHECK_NODE(m, name, g_us, sg_us, gg_us, sc_us)                         \
    do {                                                                       \
        const sp__node *n_ = node_named(m, name);                              \
        CHECK(n_ != NULL);                                                     \
        if (n_) {                                                              \
            CHECK_EQ((g_us) * US, n_->gpu);                                    \
            CHECK_EQ((sg_us) * US, n_->self_gpu);                              \
            CHECK_EQ((gg_us) * US, n_->ggpu);                                  \
            CHECK_EQ((sc_us) * US, n_->self_cpu);                              \
        }                                                                      \
    } while (0)

static void test_model_gpu_node_sums(void)
{
    sp_result *r = span_with_gpu();
    sp__model m;
    CHECK_EQ(0, sp__model_build(&m, r));
    CHECK_NODE(&m, "inner", 10, 10, 10, 7);
    CHECK_NODE(&m, "matmul", 10, 0, 10, 15);
    CHECK_NODE(&m, "relu", 5, 5, 5, 19);
    CHECK_NODE(&m, "ProfileStep#0", 15, 0, 19, 35);
    CHECK_EQ(20 * US, m.threads[0].root_gpu);
    CHECK_EQ(24 * US, m.threads[0].root_ggpu);
    sp__model_fini(&m);
    sp_result_release(r);
}

static void test_model_gpu_time_ranges(void)
{
    sp_result *r = span_with_gpu();
    sp__model m;
    CHECK_EQ(0, sp__model_build(&m, r));
    CHECK_EQ(21 * US, m.gpu_sum[0]);
    CHECK_EQ(4, m.gpu_calls[0]);
    CHECK_EQ(4 * US, m.gpu_sum[1]);
    CHECK_EQ(1, m.gpu_calls[1]);
    CHECK_EQ(0, m.gpu_sum[2]);
    CHECK_EQ(2, m.device_count);
    CHECK_EQ(0, m.device_ids[0]);
    CHECK_EQ(20 * US, m.device_kernel_sum[0]);
    CHECK_EQ(1, m.device_ids[1]);
    CHECK_EQ(1 * US, m.device_kernel_sum[1]);
    CHECK_EQ(34 * US, m.cpu_sum[SP_EVENT_CUDA_RUNTIME]);
    CHECK_EQ(5, m.calls[SP_EVENT_CUDA_RUNTIME]);
    CHECK_EQ(100 * US, m.T);
    sp__model_fini(&m);
    sp_result_release(r);
}

static void test_model_gpu_survives_allocation_failure(void)
{
    sp_result *r = span_with_gpu();
    sp__alloc_fail_at(0);
    sp__model m;
    CHECK_EQ(0, sp__model_build(&m, r));
    sp__model_fini(&m);
    uint64_t total = sp__alloc_fail_at(0);
    for (uint64_t n = 1; n <= total; n++) {
        sp__alloc_fail_at(n);
        int rc = sp__model_build(&m, r);
        sp__alloc_fail_at(0);
        CHECK(rc == 0 || rc == -1);
        sp__model_fini(&m);
    }
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_model_gpu_node_sums);
    RUN_TEST(test_model_gpu_time_ranges);
    RUN_TEST(test_model_gpu_survives_allocation_failure);
    return TEST_SUMMARY();
}

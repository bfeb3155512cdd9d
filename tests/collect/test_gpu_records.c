/* test_gpu_records.c: a GPU recorder batch moved into a result
 * (sp__collect_gpu) with synthetic records: API calls go to their threads,
 * a thread seen only through CUDA calls is added in tid order, device
 * records keep their launch details, records starting outside the span are
 * dropped and counted, tick times go through the span's tick map, the
 * recorder's drop counts reach the result's counters, external ids go
 * through the tick map, and attribution then links kernels to the ranges
 * that launched them. */
#include "fixture.h"

#define US 1000ll
#define T0 1000000000000ll

static sp__gpu_record api(uint64_t start, uint64_t end, uint64_t tid, uint32_t correlation, int driver)
{
    return (sp__gpu_record){.start = start, .end = end, .name = driver ? "cuLaunchKernel" : "cudaLaunchKernel_v7000",
                            .kind = driver ? SP__GPU_DRIVER : SP__GPU_RUNTIME, .correlation = correlation,
                            .cbid = 211, .tid = tid};
}

static sp__gpu_record device(sp__gpu_kind kind, const char *name, uint64_t start, uint64_t end,
                             uint32_t correlation)
{
    return (sp__gpu_record){.start = start, .end = end, .name = name, .kind = (uint8_t)kind,
                            .correlation = correlation, .device = 0, .context = 1, .stream = 7};
}

/* Thread 10 ran "step" [0, 100] > "matmul" [10, 50] (us after T0). */
static sp_result *host_span(void)
{
    static const fixture_range host[] = {
        {"step", SP_EVENT_PROFILE_STEP, T0, T0 + 100 * US},
        {"matmul", SP_EVENT_OPERATOR, T0 + 10 * US, T0 + 50 * US},
    };
    sp_result *r = sp__result_new();
    r->span_start_ns = T0;
    r->span_end_ns = T0 + 200 * US;
    fixture_add_thread(r, 10, "main", host, 2);
    return r;
}

static void test_gpu_records_realtime_batch(void)
{
    sp_result *r = host_span();
    sp__gpu_record records[] = {
        api(T0 + 20 * US, T0 + 22 * US, 10, 1, 0),
        device(SP__GPU_KERNEL, "gemm", T0 + 30 * US, T0 + 60 * US, 1),
        api(T0 + 150 * US, T0 + 151 * US, 5, 2, 1), /* a thread with no host range */
        device(SP__GPU_MEMCPY, "MEMCPY_HtoD", T0 + 152 * US, T0 + 153 * US, 2),
        api(T0 - 5 * US, T0 - 4 * US, 10, 3, 0),   /* before the span */
        device(SP__GPU_MEMSET, "MEMSET", T0 + 250 * US, T0 + 251 * US, 3), /* after it */
    };
    records[1].detail.kernel = (sp__kernel_detail){.grid = {4, 1, 1}, .block = {128, 1, 1}, .registers = 32};
    records[3].bytes = 4096;
    records[3].detail.copy = (sp__copy_detail){0, 0, 2};
    sp__device_props props = {.id = 0, .name = "GPU", .num_sms = 132, .warp_size = 32};
    sp__gpu_batch b = {.records = records, .count = 6, .clock = SP__GPU_CLOCK_REALTIME, .cupti_dropped = 3,
                       .discarded_records = 4, .zero_timestamp = 5, .devices = &props, .device_count = 1};
    sp__tick_map unused = {0};
    CHECK_EQ(0, sp__collect_gpu(r, &b, &unused));
    CHECK_EQ(0, sp__attribute(r));
    CHECK_EQ(3, r->counters[SP_COUNTER_CUPTI_DROPPED]);
    CHECK_EQ(4, r->counters[SP_COUNTER_DISCARDED_RECORDS]);
    CHECK_EQ(5, r->counters[SP_COUNTER_ZERO_TIMESTAMP]);
    CHECK_EQ(2, r->counters[SP_COUNTER_OUT_OF_WINDOW]);
    /* Thread 5 was added before thread 10, with its driver call. */
    CHECK_EQ(2, r->thread_count);
    CHECK_EQ(5, r->threads[0].tid);
    CHECK_EQ(10, r->threads[1].tid);
    CHECK_EQ(1, r->threads[0].runtime_count);
    CHECK_EQ(1, r->threads[0].runtimes[0].driver);
    CHECK_STR_EQ("cuLaunchKernel", sp__result_name(r, r->threads[0].runtimes[0].name));
    CHECK_EQ(1, r->threads[1].runtime_count);
    CHECK_EQ(1, r->threads[1].runtimes[0].host); /* inside matmul */
    /* Two device records kept, with their details, linked to their calls. */
    CHECK_EQ(2, r->device_count);
    CHECK_EQ(SP_EVENT_KERNEL, r->devices[0].type);
    CHECK_EQ(T0 + 30 * US, r->devices[0].start_ns);
    CHECK_EQ(128, r->devices[0].detail.kernel.block[0]);
    CHECK_EQ(1, r->devices[0].thread);
    CHECK_EQ(0, r->devices[0].runtime);
    CHECK_EQ(SP_EVENT_MEMCPY, r->devices[1].type);
    CHECK_EQ(4096, r->devices[1].bytes);
    CHECK_EQ(2, r->devices[1].detail.copy.dst_kind);
    CHECK_EQ(0, r->devices[1].thread);
    CHECK_EQ(1, r->device_prop_count);
    CHECK_EQ(132, r->device_props[0].num_sms);
    CHECK_EQ(0, r->counters[SP_COUNTER_UNATTRIBUTED]);
    sp__result_free(r);
}

static void test_gpu_records_tick_clock(void)
{
    sp_result *r = host_span();
    /* 2 ticks per ns, tick 1000 = T0. */
    sp__tick_map map = {.anchor_ticks = 1000, .anchor_real_ns = T0, .ns_per_tick = 0.5};
    sp__gpu_record records[] = {
        api(1000 + 2 * 20 * US, 1000 + 2 * 21 * US, 10, 9, 0),
        device(SP__GPU_KERNEL, "k", 1000 + 2 * 40 * US, 1000 + 2 * 45 * US, 9),
    };
    sp__gpu_batch b = {.records = records, .count = 2, .clock = SP__GPU_CLOCK_TICKS};
    CHECK_EQ(0, sp__collect_gpu(r, &b, &map));
    CHECK_EQ(T0 + 20 * US, r->threads[0].runtimes[0].start_ns);
    CHECK_EQ(T0 + 21 * US, r->threads[0].runtimes[0].end_ns);
    CHECK_EQ(T0 + 40 * US, r->devices[0].start_ns);
    CHECK_EQ(T0 + 45 * US, r->devices[0].end_ns);
    CHECK_EQ(0, r->counters[SP_COUNTER_OUT_OF_WINDOW]);
    sp__result_free(r);
}

/* A call's external id is host ticks even in a CLOCK_REALTIME batch: it
 * goes through the tick map, so it equals the start of the range it names
 * ("matmul" at T0 + 10 us), and attribution follows it although the call's
 * own REALTIME times, 3 ms off, lie in no range (a clock mismatch). */
static void test_gpu_records_external_ids_use_the_tick_map(void)
{
    sp_result *r = host_span();
    sp__tick_map map = {.anchor_ticks = 1000, .anchor_real_ns = T0, .ns_per_tick = 0.5};
    sp__gpu_record records[] = {
        api(T0 + 3020 * US, T0 + 3021 * US, 10, 9, 0),
        device(SP__GPU_KERNEL, "k", T0 + 3040 * US, T0 + 3045 * US, 9),
        api(T0 + 30 * US, T0 + 31 * US, 10, 10, 0), /* untagged: by time, also "matmul" */
    };
    r->span_end_ns = T0 + 5000 * US;
    records[0].external = 1000 + 2 * 10 * US;
    sp__gpu_batch b = {.records = records, .count = 3, .clock = SP__GPU_CLOCK_REALTIME};
    CHECK_EQ(0, sp__collect_gpu(r, &b, &map));
    const sp__thread *t = &r->threads[0];
    CHECK_EQ(T0 + 10 * US, t->runtimes[0].external_ns);
    CHECK_EQ(0, t->runtimes[1].external_ns);
    CHECK_EQ(0, sp__attribute(r));
    CHECK_STR_EQ("matmul", sp__result_name(r, t->events[t->runtimes[0].host].name));
    CHECK_STR_EQ("matmul", sp__result_name(r, t->events[t->runtimes[1].host].name));
    CHECK_EQ(0, r->devices[0].thread);
    CHECK_U64_EQ(1, r->counters[SP_COUNTER_CLOCK_MISMATCH]);
    sp__result_free(r);
}

static void test_gpu_records_many_calls_and_empty_batch(void)
{
    sp_result *r = host_span();
    sp__gpu_batch empty = {0};
    sp__tick_map unused = {0};
    CHECK_EQ(0, sp__collect_gpu(r, &empty, &unused));
    CHECK_EQ(1, r->thread_count);
    CHECK_EQ(0, r->device_count);
    /* Enough calls to grow a thread's array several times. */
    enum { N = 1000 };
    static sp__gpu_record records[N];
    for (int i = 0; i < N; i++) records[i] = api(T0 + (uint64_t)i * 100, T0 + (uint64_t)i * 100 + 50, 10, (uint32_t)i, 0);
    sp__gpu_batch b = {.records = records, .count = N, .clock = SP__GPU_CLOCK_REALTIME};
    CHECK_EQ(0, sp__collect_gpu(r, &b, &unused));
    CHECK_EQ(N, r->threads[0].runtime_count);
    CHECK_EQ(T0 + (N - 1) * 100, r->threads[0].runtimes[N - 1].start_ns);
    sp__result_free(r);
}

int main(void)
{
    RUN_TEST(test_gpu_records_realtime_batch);
    RUN_TEST(test_gpu_records_tick_clock);
    RUN_TEST(test_gpu_records_external_ids_use_the_tick_map);
    RUN_TEST(test_gpu_records_many_calls_and_empty_batch);
    return TEST_SUMMARY();
}

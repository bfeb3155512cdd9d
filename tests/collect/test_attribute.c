/* test_attribute.c: GPU attribution with synthetic CUPTI-like records
 * (semantics.md §5.1): runtime calls attach to the innermost host range
 * containing their start (also when they end after it: straddling, counted),
 * calls outside every range go to the thread root, device records find their
 * runtime call by correlation id (duplicates: the last wins, counted), and a
 * device record with no runtime call stays in the result, unattributed and
 * counted. A call tagged with an external correlation id goes to the range
 * the tag names. */
#include "fixture.h"

#define US 1000ll


/* Thread 10: ProfileStep [0,100] > matmul [10,50] > inner [20,30];
 * relu [60,80] (us). Runtime calls (correlation): a [22,25] (1) inside inner;
 * b [40,55] (2) starts in matmul, ends after it (straddles); c [85,90] (3)
 * in the step only; d [150,160] (4) outside every range; e [62,63] (2 again,
 * a duplicate: wins over b). Device records: k1 (1), k2 (2 -> e), m3 (3),
 * k4 (4), k9 (9: no runtime call). */
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
    fixture_add_runtime(r, t, "cudaLaunchKernel_v7000", 150 * US, 160 * US, 4);
    fixture_add_runtime(r, t, "cudaLaunchKernel_v7000", 22 * US, 25 * US, 1);
    fixture_add_runtime(r, t, "cudaLaunchKernel_v7000", 40 * US, 55 * US, 2);
    fixture_add_runtime(r, t, "cudaMemcpyAsync_v3020", 85 * US, 90 * US, 3);
    fixture_add_runtime(r, t, "cudaLaunchKernel_v7000", 62 * US, 63 * US, 2);
    fixture_add_device(r, "k1", SP_EVENT_KERNEL, 30 * US, 40 * US, 0, 7, 1);
    fixture_add_device(r, "k2", SP_EVENT_KERNEL, 70 * US, 75 * US, 0, 8, 2);
    fixture_add_device(r, "m3", SP_EVENT_MEMCPY, 95 * US, 99 * US, 0, 7, 3);
    fixture_add_device(r, "k4", SP_EVENT_KERNEL, 165 * US, 170 * US, 0, 7, 4);
    fixture_add_device(r, "k9", SP_EVENT_KERNEL, 1 * US, 2 * US, 0, 7, 9);
    return r;
}

static const char *host_name(const sp_result *r, const sp__runtime *rt)
{
    return rt->host < 0 ? "root" : sp__result_name(r, r->threads[0].events[rt->host].name);
}

static void test_attribute_runtimes_to_innermost_range(void)
{
    sp_result *r = span_with_gpu();
    CHECK_EQ(0, sp__attribute(r));
    const sp__thread *t = &r->threads[0];
    CHECK_EQ(5, t->runtime_count);
    /* sorted by start: a(22) b(40) e(62) c(85) d(150) */
    CHECK_STR_EQ("inner", host_name(r, &t->runtimes[0]));
    CHECK_STR_EQ("matmul", host_name(r, &t->runtimes[1])); /* ends at 55 > 50: straddles */
    CHECK_STR_EQ("relu", host_name(r, &t->runtimes[2]));
    CHECK_STR_EQ("ProfileStep#0", host_name(r, &t->runtimes[3]));
    CHECK_STR_EQ("root", host_name(r, &t->runtimes[4]));
    CHECK_U64_EQ(1, r->counters[SP_COUNTER_STRADDLING_RUNTIME]);
    sp_result_release(r);
}

static void test_attribute_devices_by_correlation(void)
{
    sp_result *r = span_with_gpu();
    CHECK_EQ(0, sp__attribute(r));
    const sp__device_rec *d = r->devices;
    CHECK_EQ(0, d[0].thread);
    CHECK_EQ(0, d[0].runtime); /* k1 -> a */
    CHECK_EQ(2, d[1].runtime); /* k2 -> e: the duplicate id 2 was last */
    CHECK_EQ(3, d[2].runtime); /* m3 -> c */
    CHECK_EQ(4, d[3].runtime); /* k4 -> d, on the root */
    CHECK_EQ(-1, d[4].thread); /* k9: unattributed, kept */
    CHECK_EQ(-1, d[4].runtime);
    CHECK_U64_EQ(1, r->counters[SP_COUNTER_UNATTRIBUTED]);
    CHECK_U64_EQ(1, r->counters[SP_COUNTER_DUPLICATE_CORRELATION]);
    CHECK_EQ(5, r->device_count);
    sp_result_release(r);
}

static void test_attribute_without_gpu_records_does_nothing(void)
{
    static const fixture_range host[] = {{"op", SP_EVENT_OPERATOR, 0, 10}};
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "t", host, 1);
    CHECK_EQ(0, sp__attribute(r));
    for (int c = 0; c < SP_COUNTER_COUNT; c++) CHECK_U64_EQ(0, r->counters[c]);
    sp_result_release(r);
}

static void test_attribute_skips_instants_and_ended_siblings(void)
{
    static const fixture_range host[] = {
        {"outer", SP_EVENT_OPERATOR, 0, 100},
        {"first", SP_EVENT_OPERATOR, 10, 20},
        {"second", SP_EVENT_OPERATOR, 30, 40},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 1, "t", host, 3);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "cudaLaunchKernel", 45, 46, 1); /* after both children: outer */
    fixture_add_runtime(r, t, "cudaLaunchKernel", 20, 21, 2); /* at first's end: outer */
    fixture_add_runtime(r, t, "cudaLaunchKernel", 30, 31, 3); /* at second's start: second */
    CHECK_EQ(0, sp__attribute(r));
    CHECK_STR_EQ("outer", sp__result_name(r, t->events[t->runtimes[0].host].name));
    CHECK_STR_EQ("second", sp__result_name(r, t->events[t->runtimes[1].host].name));
    CHECK_STR_EQ("outer", sp__result_name(r, t->events[t->runtimes[2].host].name));
    sp_result_release(r);
}

static void test_attribute_survives_allocation_failure(void)
{
    sp_result *r = span_with_gpu();
    sp__alloc_fail_at(1);
    int rc = sp__attribute(r);
    sp__alloc_fail_at(0);
    CHECK_EQ(-1, rc);
    CHECK_EQ(0, sp__attribute(r)); /* and works again afterwards, counting once */
    CHECK_EQ(0, sp__attribute(r));
    CHECK_U64_EQ(1, r->counters[SP_COUNTER_STRADDLING_RUNTIME]);
    CHECK_U64_EQ(1, r->counters[SP_COUNTER_UNATTRIBUTED]);
    sp_result_release(r);
}

/* Calls tagged with an external id (the start of the range they were made
 * in) go to that range whatever their times say: a call that the GPU clock
 * puts 1 ms late still belongs to "inner", and is counted as a clock
 * mismatch; a tag that names no range (an earlier span's) falls back to
 * time; of two ranges that start together, the one containing the call
 * wins, else the outer one. */
static void test_attribute_prefers_external_ids(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#0", SP_EVENT_PROFILE_STEP, 0, 100 * US},
        {"matmul", SP_EVENT_OPERATOR, 10 * US, 50 * US},
        {"inner", SP_EVENT_OPERATOR_INNER, 20 * US, 30 * US},
        {"outer", SP_EVENT_OPERATOR, 60 * US, 90 * US},
        {"first", SP_EVENT_OPERATOR_INNER, 60 * US, 70 * US},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 10, "main", host, 5);
    sp__thread *t = &r->threads[0];
    fixture_add_runtime(r, t, "late", 1022 * US, 1023 * US, 1);   /* made in inner, clock 1 ms off */
    fixture_add_runtime(r, t, "on_time", 24 * US, 25 * US, 2);    /* made in inner, clock right */
    fixture_add_runtime(r, t, "stale", 40 * US, 41 * US, 3);      /* a tag from an earlier span */
    fixture_add_runtime(r, t, "untagged", 42 * US, 43 * US, 4);
    fixture_add_runtime(r, t, "in_first", 65 * US, 66 * US, 5);   /* starts shared by outer, first */
    fixture_add_runtime(r, t, "after_first", 75 * US, 76 * US, 6);
    fixture_add_runtime(r, t, "far_off", 500 * US, 501 * US, 7);  /* start shared, contains neither */
    static const int64_t tags[] = {20 * US, 20 * US, 5 * US, 0, 60 * US, 60 * US, 60 * US};
    for (size_t k = 0; k < t->runtime_count; k++) t->runtimes[k].external_ns = tags[k];
    CHECK_EQ(0, sp__attribute(r));
    /* sorted by start: on_time(24) stale(40) untagged(42) in_first(65) after_first(75) far_off(500) late(1022) */
    static const char *const want[] = {"inner", "matmul", "matmul", "first", "outer", "outer", "inner"};
    for (size_t k = 0; k < t->runtime_count; k++) CHECK_STR_EQ(want[k], host_name(r, &t->runtimes[k]));
    CHECK_U64_EQ(2, r->counters[SP_COUNTER_CLOCK_MISMATCH]); /* late, far_off */
    CHECK_U64_EQ(0, r->counters[SP_COUNTER_STRADDLING_RUNTIME]);
    CHECK_EQ(0, sp__attribute(r)); /* recounted, not added */
    CHECK_U64_EQ(2, r->counters[SP_COUNTER_CLOCK_MISMATCH]);
    sp_result_release(r);
}

/* Issue 17: 12 allocations made inside fwd [100,200] (us) of
 * ProfileStep#6 [0,1000], at 100, 109, ..., 199 and the last at exactly
 * 200, fwd's end (a coarse clock, or the end read in the same ns): every
 * one belongs to fwd (§5.1 step 7: [start, end] contains). One at 250 goes
 * to the step, and an op supplement at 200 to fwd as well. */
static void test_attribute_memory_at_range_end_stays_inside(void)
{
    static const fixture_range host[] = {
        {"ProfileStep#6", SP_EVENT_PROFILE_STEP, 0, 1000 * US},
        {"fwd", SP_EVENT_FORWARD, 100 * US, 200 * US},
    };
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 10, "main", host, 2);
    sp__thread *t = &r->threads[0];
    for (int i = 0; i < 11; i++)
        fixture_add_mem(r, t, (100 + 9 * i) * US, SP_MEM_ALLOCATE, "Place(cpu)", (uint64_t)i + 1, 64, 0, 0, 0, 0);
    fixture_add_mem(r, t, 200 * US, SP_MEM_ALLOCATE, "Place(cpu)", 12, 64, 0, 0, 0, 0);
    fixture_add_mem(r, t, 250 * US, SP_MEM_ALLOCATE, "Place(cpu)", 13, 64, 0, 0, 0, 0);
    fixture_add_op(r, t, 200 * US, "matmul", "", "X:float32:2x2");
    CHECK_EQ(0, sp__attribute(r));
    int in_fwd = 0;
    for (size_t k = 0; k < 12; k++) in_fwd += t->mems[k].host == 1;
    CHECK_EQ(12, in_fwd);
    CHECK_EQ(0, t->mems[12].host);
    CHECK_EQ(1, t->ops[0].host);
    sp_result_release(r);
}

int main(void)
{
    RUN_TEST(test_attribute_runtimes_to_innermost_range);
    RUN_TEST(test_attribute_devices_by_correlation);
    RUN_TEST(test_attribute_without_gpu_records_does_nothing);
    RUN_TEST(test_attribute_skips_instants_and_ended_siblings);
    RUN_TEST(test_attribute_survives_allocation_failure);
    RUN_TEST(test_attribute_prefers_external_ids);
    RUN_TEST(test_attribute_memory_at_range_end_stays_inside);
    return TEST_SUMMARY();
}

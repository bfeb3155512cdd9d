/* test_cap_ends.c: what the memory cap must never drop (src/record/record.c):
 * the end of a range whose begin was kept, however many ranges are open when
 * the cap is reached, and the ProfileStep ranges, even on a stepping thread
 * that records nothing else. Every count is exact: kept + dropped ==
 * recorded, no kept range is left unclosed, and no end is unmatched. A range
 * dropped at the cap and ended while nothing records does not keep the
 * thread dropping in the next recorded span. */
#include "check.h"
#include "record.h"
#include "stepprof/stepprof.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static sp_profiler *begin_profiling(size_t cap_bytes)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.buffer_cap_bytes = cap_bytes;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    return p;
}

static size_t count_named(const sp_result *r, const char *name, size_t *flagged_unclosed)
{
    size_t n = 0;
    sp_event_info e;
    for (size_t t = 0; t < sp_result_thread_count(r); t++)
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++) {
            if (strcmp(e.name, name) != 0) continue;
            n++;
            if (flagged_unclosed && (e.flags & SP_EVENT_FLAG_UNCLOSED)) (*flagged_unclosed)++;
        }
    return n;
}

static uint64_t thread_drops(const sp_result *r)
{
    uint64_t sum = 0;
    sp_thread_info info;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        CHECK_OK(sp_result_thread(r, t, &info));
        sum += info.dropped;
    }
    return sum;
}

static void check_closed_and_exact(const sp_result *r)
{
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNMATCHED_ENDS));
    CHECK_U64_EQ(sp_result_counter(r, SP_COUNTER_HOST_DROPPED), thread_drops(r));
}

/* 10,000 ranges open, then the cap is filled inside them: the 10,000 keep
 * their ends; the pairs inside are kept or dropped, and counted. */
static void test_cap_ends_10000_open_ranges_keep_their_ends(void)
{
    enum { OPEN = 10000, INNER = 100000 };
    sp_profiler *p = begin_profiling((size_t)1 << 20);
    for (int i = 0; i < OPEN; i++) sp_range_begin(SP_EVENT_FORWARD, "open");
    for (int i = 0; i < INNER; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, "inner");
        sp_range_end();
    }
    for (int i = 0; i < OPEN; i++) sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    size_t unclosed = 0;
    CHECK_EQ(OPEN, count_named(r, "open", &unclosed));
    CHECK_EQ(0, unclosed);
    uint64_t inner = count_named(r, "inner", NULL);
    uint64_t dropped = sp_result_counter(r, SP_COUNTER_HOST_DROPPED);
    CHECK(dropped > 0);
    CHECK_U64_EQ(INNER, inner + dropped);
    check_closed_and_exact(r);
    sp_profiler_destroy(p);
}

/* Ranges opened one inside the other until far past the cap: every begin
 * kept has its end, every begin dropped is counted once. */
static void test_cap_ends_nesting_past_the_cap(void)
{
    enum { DEPTH = 100000 };
    sp_profiler *p = begin_profiling((size_t)1 << 20);
    for (int i = 0; i < DEPTH; i++) sp_range_begin(SP_EVENT_OPERATOR, "deep");
    sp_instant(SP_EVENT_USER_DEFINED, "at the bottom");
    for (int i = 0; i < DEPTH; i++) sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    size_t unclosed = 0;
    uint64_t kept = count_named(r, "deep", &unclosed) + count_named(r, "at the bottom", NULL);
    uint64_t dropped = sp_result_counter(r, SP_COUNTER_HOST_DROPPED);
    CHECK(dropped > 0);
    CHECK(kept > 10000);
    CHECK_EQ(0, unclosed);
    CHECK_U64_EQ(DEPTH + 1, kept + dropped);
    check_closed_and_exact(r);
    sp_profiler_destroy(p);
}

enum { FILLERS = 100000 }; /* 2.4 MB of ranges: more than the 1 MiB cap holds */

static void *fill_the_cap(void *arg)
{
    (void)arg;
    for (int i = 0; i < FILLERS; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, "filler");
        sp_range_end();
    }
    return NULL;
}

static int steps_kept(const sp_result *r, int steps)
{
    char name[48];
    int kept = 0;
    for (int s = 0; s <= steps; s++) {
        snprintf(name, sizeof name, "ProfileStep#%d", s);
        kept += count_named(r, name, NULL) == 1;
    }
    return kept;
}

/* Another thread fills the cap; the stepping thread, which records nothing
 * of its own, still gets every ProfileStep. */
static void test_cap_ends_steps_survive_on_a_thread_without_events(void)
{
    enum { STEPS = 2000 };
    sp_profiler *p = begin_profiling((size_t)1 << 20);
    pthread_t t;
    pthread_create(&t, NULL, fill_the_cap, NULL);
    pthread_join(t, NULL);
    for (int s = 0; s < STEPS; s++) CHECK_OK(sp_profiler_step(p, 0));
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK(sp_result_counter(r, SP_COUNTER_HOST_DROPPED) > 0);
    CHECK_EQ(STEPS + 1, steps_kept(r, STEPS));
    uint64_t fillers = count_named(r, "filler", NULL);
    CHECK_U64_EQ(FILLERS, fillers + sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    check_closed_and_exact(r);
    sp_profiler_destroy(p);
}

/* The stepping thread itself fills the cap and goes on recording: its
 * steps outlast the end reserve of its last chunk. */
static void test_cap_ends_steps_survive_on_a_thread_at_the_cap(void)
{
    enum { STEPS = 2000 };
    sp_profiler *p = begin_profiling((size_t)1 << 20);
    fill_the_cap(NULL);
    for (int s = 0; s < STEPS; s++) {
        sp_range_begin(SP_EVENT_FORWARD, "step work");
        sp_range_end();
        CHECK_OK(sp_profiler_step(p, 0));
    }
    /* Past the cap only by the steps' small chunks. */
    CHECK(sp__record_bytes_in_use() <= ((size_t)1 << 20) + ((size_t)256 << 10));
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK_EQ(STEPS + 1, steps_kept(r, STEPS));
    uint64_t kept = count_named(r, "filler", NULL) + count_named(r, "step work", NULL);
    CHECK_U64_EQ(FILLERS + STEPS, kept + sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    check_closed_and_exact(r);
    sp_profiler_destroy(p);
}

static sp_state closed_on_odd_steps(int64_t step, void *user)
{
    (void)user;
    return step % 2 ? SP_STATE_CLOSED : SP_STATE_RECORD;
}

static void quiet(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

/* A range dropped at the cap ends at a CLOSED step, where no end reaches the
 * library: the next recorded span must not go on dropping for it. */
static void test_cap_ends_dropped_range_ended_while_closed(void)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.buffer_cap_bytes = (size_t)1 << 20;
    o.log = quiet;
    CHECK_OK(sp_scheduler_custom(&o.scheduler, closed_on_odd_steps, NULL));
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    fill_the_cap(NULL);
    sp_range_begin(SP_EVENT_FORWARD, "dropped at the cap");
    CHECK_OK(sp_profiler_step(p, 0)); /* step 1: CLOSED */
    CHECK(!sp_is_recording());
    sp_range_end();
    CHECK_OK(sp_profiler_step(p, 0)); /* step 2: RECORD */
    CHECK(sp_is_recording());
    sp_range_begin(SP_EVENT_FORWARD, "after");
    sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK_EQ(1, count_named(r, "after", NULL));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    check_closed_and_exact(r);
    sp_profiler_destroy(p);
}

int main(void)
{
    RUN_TEST(test_cap_ends_10000_open_ranges_keep_their_ends);
    RUN_TEST(test_cap_ends_nesting_past_the_cap);
    RUN_TEST(test_cap_ends_steps_survive_on_a_thread_without_events);
    RUN_TEST(test_cap_ends_steps_survive_on_a_thread_at_the_cap);
    RUN_TEST(test_cap_ends_dropped_range_ended_while_closed);
    return TEST_SUMMARY();
}

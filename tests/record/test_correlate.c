/* test_correlate.c: the correlator that GPU tracing sets (correlate.h),
 * with a correlator of the test's own that logs each thread's pushes and
 * pops: every recorded begin pushes its tick count and its end pops it, in
 * nesting order, also for copied names; nothing is pushed without
 * recording or without a correlator; an end whose begin came before the
 * correlator, or under an earlier one, pops nothing; begins dropped at the
 * cap push nothing and their ends pop nothing, so the kept ranges stay
 * balanced; nesting deeper than 64 is not pushed; threads are independent;
 * a forked child forgets the correlator. */
#include "check.h"
#include "correlate.h"
#include "record.h"
#include "stepprof/stepprof.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

enum { LOG_MAX = 1 << 16 };

static _Thread_local struct {
    uint64_t stack[LOG_MAX]; /* what the tracer's own stack would hold */
    size_t depth, pushes, pops, underflows;
    uint64_t last_id;
    int out_of_order;
} log_;

static void log_push(uint64_t id)
{
    if (id < log_.last_id) log_.out_of_order = 1;
    log_.last_id = id;
    if (log_.depth < LOG_MAX) log_.stack[log_.depth] = id;
    log_.depth++;
    log_.pushes++;
}

static void log_pop(void)
{
    if (log_.depth == 0)
        log_.underflows++;
    else
        log_.depth--;
    log_.pops++;
}

static const sp__correlator logger = {log_push, log_pop};
static const sp__correlator other_logger = {log_push, log_pop};

static void log_reset(void) { memset(&log_, 0, sizeof log_); }

static sp_profiler *start(size_t cap_bytes)
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

static void stop(sp_profiler *p)
{
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
}

static void test_correlate_pushes_each_range_in_nesting_order(void)
{
    log_reset();
    sp_profiler *p = start(0);
    sp__record_set_correlator(&logger);
    CHECK(sp__active_bits() & SP__ACTIVE_CORRELATE);
    uint64_t before = sp__ticks();
    sp_range_begin(SP_EVENT_FORWARD, "forward");
    CHECK_EQ(1, log_.depth);
    CHECK(log_.stack[0] >= before);
    uint64_t forward_id = log_.stack[0];
    sp_range_begin_copy(SP_EVENT_OPERATOR, "matmul", 6);
    CHECK_EQ(2, log_.depth);
    CHECK(log_.stack[1] >= forward_id);
    sp_range_end();
    CHECK_EQ(1, log_.depth);
    CHECK_U64_EQ(forward_id, log_.stack[0]); /* the enclosing range is on top again */
    sp_range_begin(SP_EVENT_BACKWARD, "backward"); /* a sibling inside forward */
    sp_range_end();
    sp_range_end();
    sp__record_set_correlator(NULL);
    CHECK(!(sp__active_bits() & SP__ACTIVE_CORRELATE));
    sp_range_begin(SP_EVENT_OPTIMIZATION, "after");
    sp_range_end();
    stop(p);
    CHECK_EQ(3, log_.pushes);
    CHECK_EQ(3, log_.pops);
    CHECK_EQ(0, log_.depth);
    CHECK_EQ(0, log_.underflows);
    CHECK_EQ(0, log_.out_of_order);
}

static void test_correlate_needs_recording(void)
{
    log_reset();
    sp__record_set_correlator(&logger);
    sp__range_begin(SP_EVENT_FORWARD, "not recorded"); /* called as the inline would */
    sp__range_end();
    sp__record_set_correlator(NULL);
    CHECK_EQ(0, log_.pushes);
    CHECK_EQ(0, log_.pops);
}

static void test_correlate_ends_of_earlier_begins_pop_nothing(void)
{
    log_reset();
    sp_profiler *p = start(0);
    sp_range_begin(SP_EVENT_FORWARD, "before");  /* fast path: not seen */
    sp__record_set_correlator(&logger);
    sp_range_begin(SP_EVENT_OPERATOR, "inside");
    sp_range_end();
    sp_range_end(); /* "before" */
    CHECK_EQ(1, log_.pushes);
    CHECK_EQ(1, log_.pops);
    /* A range begun under one correlator and ended under the next. */
    sp_range_begin(SP_EVENT_BACKWARD, "old");
    sp__record_set_correlator(NULL);
    sp__record_set_correlator(&other_logger);
    sp_range_end();
    CHECK_EQ(2, log_.pushes);
    CHECK_EQ(1, log_.pops); /* "old" stays on the tracer's stack, as documented */
    sp__record_set_correlator(NULL);
    stop(p);
    CHECK_EQ(0, log_.underflows);
}

static void test_correlate_dropped_begins_push_nothing(void)
{
    log_reset();
    sp_profiler *p = start(256 << 10);
    sp__record_set_correlator(&logger);
    sp_range_begin(SP_EVENT_PROFILE_STEP, "outer");
    uint64_t outer_id = log_.stack[0];
    enum { PAIRS = 40000 }; /* 40000 x 24 B: well over the cap */
    for (int i = 0; i < PAIRS; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, "op");
        sp_range_end();
    }
    CHECK_EQ(1, log_.depth);
    CHECK_U64_EQ(outer_id, log_.stack[0]); /* the dropped pairs left it on top */
    sp_range_end();
    sp__record_set_correlator(NULL);
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    sp_event_info e;
    size_t ops = 0;
    for (size_t t = 0; t < sp_result_thread_count(r); t++)
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++) ops += strcmp(e.name, "op") == 0;
    CHECK(sp_result_counter(r, SP_COUNTER_HOST_DROPPED) > 0);
    CHECK_EQ(ops + 1, log_.pushes); /* the kept ops and outer */
    CHECK_EQ(log_.pushes, log_.pops);
    CHECK_EQ(0, log_.underflows);
    sp_profiler_destroy(p);
}

static void test_correlate_deep_nesting_is_cut_at_64(void)
{
    log_reset();
    sp_profiler *p = start(0);
    sp__record_set_correlator(&logger);
    for (int i = 0; i < 70; i++) sp_range_begin(SP_EVENT_USER_DEFINED, "deep");
    CHECK_EQ(64, log_.pushes);
    for (int i = 0; i < 70; i++) sp_range_end();
    CHECK_EQ(64, log_.pops);
    CHECK_EQ(0, log_.depth);
    sp__record_set_correlator(NULL);
    stop(p);
}

static void *thread_ranges(void *arg)
{
    log_reset();
    for (int i = 0; i < 1000; i++) {
        sp_range_begin(SP_EVENT_FORWARD, "t");
        sp_range_begin(SP_EVENT_OPERATOR, "op");
        sp_range_end();
        sp_range_end();
    }
    size_t *out = arg;
    out[0] = log_.pushes, out[1] = log_.pops, out[2] = log_.underflows, out[3] = (size_t)log_.out_of_order;
    return NULL;
}

static void test_correlate_threads_are_independent(void)
{
    sp_profiler *p = start(0);
    sp__record_set_correlator(&logger);
    pthread_t th[4];
    size_t counts[4][4];
    for (int i = 0; i < 4; i++) CHECK_EQ(0, pthread_create(&th[i], NULL, thread_ranges, counts[i]));
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK_EQ(2000, counts[i][0]);
        CHECK_EQ(2000, counts[i][1]);
        CHECK_EQ(0, counts[i][2]);
        CHECK_EQ(0, counts[i][3]);
    }
    sp__record_set_correlator(NULL);
    stop(p);
}

static void test_correlate_forked_child_forgets(void)
{
    log_reset();
    sp_profiler *p = start(0);
    sp__record_set_correlator(&logger);
    sp_range_begin(SP_EVENT_FORWARD, "parent");
    pid_t pid = fork();
    if (pid == 0) {
        size_t pushes = log_.pushes;
        sp__range_begin(SP_EVENT_OPERATOR, "child");
        sp__range_end();
        _exit(log_.pushes == pushes && log_.pops == 0 && !(sp__active_bits() & SP__ACTIVE_CORRELATE) ? 0 : 1);
    }
    CHECK(pid > 0);
    int status = 0;
    CHECK_EQ(pid, waitpid(pid, &status, 0));
    CHECK(WIFEXITED(status));
    CHECK_EQ(0, WEXITSTATUS(status));
    sp_range_end();
    CHECK_EQ(1, log_.pops);
    sp__record_set_correlator(NULL);
    stop(p);
}

int main(void)
{
    RUN_TEST(test_correlate_pushes_each_range_in_nesting_order);
    RUN_TEST(test_correlate_needs_recording);
    RUN_TEST(test_correlate_ends_of_earlier_begins_pop_nothing);
    RUN_TEST(test_correlate_dropped_begins_push_nothing);
    RUN_TEST(test_correlate_deep_nesting_is_cut_at_64);
    RUN_TEST(test_correlate_threads_are_independent);
    RUN_TEST(test_correlate_forked_child_forgets);
    return TEST_SUMMARY();
}

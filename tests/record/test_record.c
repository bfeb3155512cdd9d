/* test_record.c: the recording hot path and its collection, through the
 * public API: names (static and copied), unmatched ends and unclosed begins,
 * bad arguments, instants and counters, threads that start, record and exit
 * during a span, the memory cap's exact drop accounting, and one million
 * events on two threads exported and parsed back by Python. */
#include "check.h"
#include "record.h"
#include "stepprof/stepprof.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

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

static const sp_result *end_profiling(sp_profiler *p)
{
    CHECK_OK(sp_profiler_stop(p));
    return sp_profiler_result(p);
}

/* Counts a thread's events with a given name (NULL: every non-step event). */
static size_t count_named(const sp_result *r, size_t t, const char *name)
{
    sp_event_info e;
    size_t n = 0;
    for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++)
        if (name ? strcmp(e.name, name) == 0 : e.type != SP_EVENT_PROFILE_STEP) n++;
    return n;
}

static size_t total_events(const sp_result *r)
{
    size_t n = 0;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) n += count_named(r, t, NULL);
    return n;
}

static void test_record_copied_name_survives_freed_buffer(void)
{
    sp_profiler *p = begin_profiling(0);
    char *name = malloc(32);
    strcpy(name, "dynamic name");
    sp_range_begin_copy(SP_EVENT_OPERATOR, name, strlen(name));
    memset(name, 'X', 31);
    free(name);
    sp_range_end();
    const sp_result *r = end_profiling(p);
    CHECK_EQ(1, count_named(r, 0, "dynamic name"));
    sp_profiler_destroy(p);
}

static void test_record_unmatched_end_and_unclosed_begin(void)
{
    sp_profiler *p = begin_profiling(0);
    sp_range_end(); /* nothing open */
    sp_range_begin(SP_EVENT_FORWARD, "outer");
    sp_range_begin(SP_EVENT_OPERATOR, "never ended");
    const sp_result *r = end_profiling(p);
    CHECK_U64_EQ(1, sp_result_counter(r, SP_COUNTER_UNMATCHED_ENDS));
    CHECK_U64_EQ(2, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    int64_t span_end;
    sp_result_span(r, NULL, &span_end);
    sp_event_info e;
    size_t flagged = 0;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        if (!(e.flags & SP_EVENT_FLAG_UNCLOSED)) continue;
        flagged++;
        CHECK_EQ(span_end, e.end_ns);
    }
    CHECK_EQ(2, flagged);
    CHECK_EQ(1, count_named(r, 0, "never ended"));
    sp_profiler_destroy(p);
}

static void test_record_bad_type_and_null_name(void)
{
    sp_profiler *p = begin_profiling(0);
    sp_range_begin((sp_event_type)99, "bad type");
    sp_range_end();
    sp_range_begin(SP_EVENT_OPERATOR, NULL);
    sp_range_end();
    sp_range_add(SP_EVENT_OPERATOR, "backwards", 9, 100, 50);
    const sp_result *r = end_profiling(p);
    CHECK_U64_EQ(2, sp_result_counter(r, SP_COUNTER_MISUSE));
    sp_event_info e;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        if (strcmp(e.name, "bad type") == 0) CHECK_EQ(SP_EVENT_USER_DEFINED, e.type);
        if (strcmp(e.name, "backwards") == 0) CHECK_EQ(e.start_ns, e.end_ns);
    }
    CHECK_EQ(1, count_named(r, 0, "(null)"));
    sp_profiler_destroy(p);
}

static void test_record_instants_counters_and_added_ranges(void)
{
    sp_profiler *p = begin_profiling(0);
    sp_range_begin(SP_EVENT_FORWARD, "forward");
    sp_instant(SP_EVENT_USER_DEFINED, "checkpoint");
    sp_counter("queue depth", 3.5);
    sp_counter("bad value", 0.0 / 0.0);
    uint64_t t0 = sp_clock_ticks();
    uint64_t t1 = sp_clock_ticks();
    sp_range_end();
    /* Far past forward's end, so the test does not hang on two clock reads
     * being ordered (on a VM, back-to-back TSC reads on two vCPUs can be). */
    uint64_t t2 = t1 + 1000000000u;
    sp_range_add(SP_EVENT_OPERATOR, "straddles forward", 17, t0, t2); /* partial overlap */
    sp_range_add(SP_EVENT_OPERATOR, "inside forward", 14, t0, t1);
    const sp_result *r = end_profiling(p);
    CHECK_U64_EQ(1, sp_result_counter(r, SP_COUNTER_OVERLAP));
    CHECK_U64_EQ(1, sp_result_counter(r, SP_COUNTER_MISUSE)); /* the NaN */
    sp_event_info e;
    int64_t forward = -1;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        if (strcmp(e.name, "forward") == 0) forward = (int64_t)i;
        if (strcmp(e.name, "checkpoint") == 0) {
            CHECK(e.flags & SP_EVENT_FLAG_INSTANT);
            CHECK_EQ(forward, e.parent);
        }
        if (strcmp(e.name, "queue depth") == 0) {
            CHECK(e.flags & SP_EVENT_FLAG_COUNTER);
            CHECK(e.value == 3.5);
        }
        if (strcmp(e.name, "bad value") == 0) CHECK(e.value == 0.0);
        if (strcmp(e.name, "straddles forward") == 0) CHECK(e.flags & SP_EVENT_FLAG_OVERLAP);
        if (strcmp(e.name, "inside forward") == 0) CHECK(!(e.flags & SP_EVENT_FLAG_OVERLAP));
    }
    sp_profiler_destroy(p);
}

/* A range added whole after the ranges inside it ended (as ProfileStep is)
 * still becomes their parent, and unclosed ranges keep their place. */
static void test_record_added_range_encloses_earlier_ranges(void)
{
    sp_profiler *p = begin_profiling(0);
    uint64_t t0 = sp_clock_ticks();
    sp_range_begin(SP_EVENT_FORWARD, "forward");
    sp_range_begin(SP_EVENT_OPERATOR, "matmul");
    sp_range_end();
    sp_range_end();
    sp_range_begin(SP_EVENT_BACKWARD, "left open");
    uint64_t t1 = sp_clock_ticks() + 1000000000u;
    sp_range_add(SP_EVENT_USER_DEFINED, "whole", 5, t0, t1);
    const sp_result *r = end_profiling(p);
    sp_event_info e;
    int64_t whole = -1, forward = -1;
    int seen = 0;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        if (strcmp(e.name, "whole") == 0) whole = (int64_t)i, seen |= 1;
        if (strcmp(e.name, "forward") == 0) {
            CHECK_EQ(whole, e.parent);
            forward = (int64_t)i;
            seen |= 2;
        }
        if (strcmp(e.name, "matmul") == 0) {
            CHECK_EQ(forward, e.parent);
            seen |= 4;
        }
        if (strcmp(e.name, "left open") == 0) {
            CHECK(e.flags & SP_EVENT_FLAG_UNCLOSED);
            CHECK_EQ(whole, e.parent);
            seen |= 8;
        }
    }
    CHECK_EQ(15, seen);
    sp_profiler_destroy(p);
}

typedef struct worker_arg {
    int ranges;
    int depth;
    char name[16];
} worker_arg;

static void *worker(void *arg)
{
    worker_arg *w = arg;
    prctl(PR_SET_NAME, w->name, 0, 0, 0);
    for (int i = 0; i < w->ranges; i++) {
        for (int d = 0; d < w->depth; d++) sp_range_begin(SP_EVENT_OPERATOR, "work");
        for (int d = 0; d < w->depth; d++) sp_range_end();
    }
    return NULL;
}

static void test_record_threads_that_exit_during_the_span(void)
{
    sp_profiler *p = begin_profiling(0);
    enum { THREADS = 8 };
    pthread_t th[THREADS];
    worker_arg args[THREADS];
    for (int i = 0; i < THREADS; i++) {
        args[i] = (worker_arg){1000 + i, 1 + i % 3, ""};
        snprintf(args[i].name, sizeof args[i].name, "worker-%d", i);
        pthread_create(&th[i], NULL, worker, &args[i]);
        if (i % 2) pthread_join(th[i], NULL); /* some exit before others start */
    }
    for (int i = 0; i < THREADS; i += 2) pthread_join(th[i], NULL);
    sp_range_begin(SP_EVENT_FORWARD, "main");
    sp_range_end();
    const sp_result *r = end_profiling(p);
    size_t expected = 1;
    for (int i = 0; i < THREADS; i++) expected += (size_t)args[i].ranges * (size_t)args[i].depth;
    CHECK_EQ(expected, total_events(r));
    CHECK_EQ(THREADS + 1, sp_result_thread_count(r));
    sp_thread_info info;
    int named = 0;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        CHECK_OK(sp_result_thread(r, t, &info));
        named += strncmp(info.name, "worker-", 7) == 0;
        if (t > 0) {
            sp_thread_info prev;
            sp_result_thread(r, t - 1, &prev);
            CHECK(prev.tid < info.tid);
        }
        sp_event_info e;
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++)
            if (e.parent >= 0) {
                sp_event_info parent;
                sp_result_event(r, t, (size_t)e.parent, &parent);
                CHECK(parent.start_ns <= e.start_ns && e.end_ns <= parent.end_ns);
                CHECK_EQ(parent.depth + 1, e.depth);
            }
    }
    CHECK_EQ(THREADS, named);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    sp_profiler_destroy(p);
}

/* Records `ranges` nested pairs (depth 2) plus instants on `threads`
 * threads under a cap and checks that every event is either kept or
 * counted as dropped, and that kept ranges are never left unclosed. */
static void check_cap_accounting(size_t cap, int threads, int ranges)
{
    sp_profiler *p = begin_profiling(cap);
    pthread_t th[4];
    worker_arg arg = {ranges, 2, "capped"};
    for (int i = 0; i < threads; i++) pthread_create(&th[i], NULL, worker, &arg);
    for (int i = 0; i < threads; i++) pthread_join(th[i], NULL);
    const sp_result *r = end_profiling(p);
    uint64_t kept = total_events(r);
    uint64_t dropped = sp_result_counter(r, SP_COUNTER_HOST_DROPPED);
    CHECK_U64_EQ((uint64_t)threads * (uint64_t)ranges * 2, kept + dropped);
    CHECK(dropped > 0);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNMATCHED_ENDS));
    uint64_t per_thread = 0;
    sp_thread_info info;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        sp_result_thread(r, t, &info);
        per_thread += info.dropped;
    }
    CHECK_U64_EQ(dropped, per_thread);
    CHECK(sp__record_bytes_in_use() <= cap + ((size_t)1 << 20));
    sp_profiler_destroy(p);
}

static void test_record_cap_drops_are_exact_one_thread(void)
{
    check_cap_accounting((size_t)1 << 20, 1, 200000);
}

static void test_record_cap_drops_are_exact_two_threads(void)
{
    check_cap_accounting((size_t)2 << 20, 2, 300000);
}

static void test_record_recovers_after_cap_when_next_span_starts(void)
{
    check_cap_accounting((size_t)1 << 20, 1, 200000);
    sp_profiler *p = begin_profiling((size_t)1 << 20);
    worker_arg arg = {100, 2, "after"};
    worker(&arg);
    const sp_result *r = end_profiling(p);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    CHECK_EQ(200, total_events(r));
    sp_profiler_destroy(p);
}

/* Counts complete events in a trace file with Python's json module, and
 * reads its host_dropped counter. */
static long python_count_x_events(const char *path, long *dropped)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "%s -c \"import json,sys; d=json.load(open(sys.argv[1])); "
             "print(sum(1 for e in d['traceEvents'] if e.get('ph')=='X' and e.get('cat')!='Trace' "
             "and not e['name'].startswith('ProfilerStep')), "
             "d['stepprof_counters']['host_dropped'])\" %s",
             SP_PYTHON, path);
    FILE *f = popen(cmd, "r");
    long n = -1;
    *dropped = -1;
    if (f) {
        if (fscanf(f, "%ld %ld", &n, dropped) != 2) n = -1;
        pclose(f);
    }
    return n;
}

static void million_events(size_t cap, int expect_drops)
{
    sp_profiler *p = begin_profiling(cap);
    pthread_t th[2];
    worker_arg arg = {250000, 2, "million"}; /* 2 threads x 250k x 2 = 1M events */
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, worker, &arg);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    const sp_result *r = end_profiling(p);
    uint64_t kept = total_events(r), dropped = sp_result_counter(r, SP_COUNTER_HOST_DROPPED);
    CHECK_U64_EQ(1000000, kept + dropped);
    if (!expect_drops) CHECK_U64_EQ(0, dropped);
    if (expect_drops) CHECK(dropped > 0);
    char path[] = "/tmp/stepprof-million-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    close(fd);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_JSON));
    long file_dropped;
    CHECK_EQ((long)kept, python_count_x_events(path, &file_dropped));
    CHECK_EQ((long)dropped, file_dropped);
    if (!expect_drops) { /* the full structural check once; it is the slow part */
        char check[1024];
        snprintf(check, sizeof check, "%s -B %s/tests/trace/tracecheck.py %s >/dev/null",
                 SP_PYTHON, SP_SOURCE_DIR, path);
        CHECK_EQ(0, system(check));
    }
    unlink(path);
    sp_profiler_destroy(p);
}

static void test_record_million_events_two_threads_none_lost(void)
{
    million_events(0, 0);
}

static void test_record_million_events_two_threads_exact_drops(void)
{
    million_events((size_t)8 << 20, 1);
}

typedef struct added {
    const char *name;
    uint64_t begin, end;
} added;

static void *add_one(void *arg)
{
    const added *a = arg;
    sp_range_add(SP_EVENT_USER_DEFINED, a->name, strlen(a->name), a->begin, a->end);
    return NULL;
}

/* sp_range_add with ticks no span can hold: before the span's start (0
 * included), far ahead of the clock (UINT64_MAX, INT64_MAX), or an end before
 * the begin. Each call counts one misuse; the range is kept, moved inside
 * what the span can hold, and the trace is valid. Each range is added on a
 * thread of its own: moved, they overlap each other partially. */
static void test_record_added_range_extreme_ticks(void)
{
    uint64_t before_start = sp_clock_ticks();
    sp_profiler *p = begin_profiling(0);
    uint64_t t0 = sp_clock_ticks(), t1 = sp_clock_ticks();
    static const struct {
        const char *name;
        int bad;
    } cases[] = {{"fine", 0},         {"zero begin", 1},     {"zero both", 1},    {"max both", 1},
                 {"int64 max", 1},    {"one to max", 1},     {"backwards", 1},    {"before start", 1},
                 {"far after", 1}};
    uint64_t ticks[][2] = {{t0, t1},
                           {0, t1},
                           {0, 0},
                           {UINT64_MAX, UINT64_MAX},
                           {INT64_MAX, INT64_MAX},
                           {1, UINT64_MAX},
                           {t1, t0 - 1},
                           {before_start, t1},
                           {t0, t1 + (UINT64_C(1) << 40)}};
    enum { CASES = sizeof cases / sizeof cases[0] };
    int bad = 0;
    for (int i = 0; i < CASES; i++) {
        added a = {cases[i].name, ticks[i][0], ticks[i][1]};
        pthread_t t;
        pthread_create(&t, NULL, add_one, &a);
        pthread_join(t, NULL);
        bad += cases[i].bad;
    }
    const sp_result *r = end_profiling(p);
    CHECK_U64_EQ(bad, sp_result_counter(r, SP_COUNTER_MISUSE));
    int64_t span_start, span_end;
    sp_result_span(r, &span_start, &span_end);
    CHECK_EQ(CASES, total_events(r));
    sp_event_info e;
    for (size_t t = 0; t < sp_result_thread_count(r); t++)
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++) {
            if (e.type == SP_EVENT_PROFILE_STEP) continue;
            CHECK(e.start_ns <= e.end_ns);
            CHECK(e.start_ns >= span_start - 1000000000); /* the drain before the start */
            CHECK(e.end_ns <= span_end);
        }
    char path[] = "/tmp/stepprof-extreme-XXXXXX.json";
    int fd = mkstemps(path, 5);
    CHECK(fd >= 0);
    close(fd);
    CHECK_OK(sp_profiler_export(p, path, SP_FORMAT_JSON));
    char check[1024];
    snprintf(check, sizeof check, "%s -B %s/tests/trace/tracecheck.py %s >/dev/null", SP_PYTHON,
             SP_SOURCE_DIR, path);
    CHECK_EQ(0, system(check));
    unlink(path);
    sp_profiler_destroy(p);
}

/* A range costs 24 bytes of buffer (a 2-word begin, a 1-word end), so a cap
 * holds more than cap/28 of them even with chunk headers and end reserves;
 * at 32 bytes per range it could not. */
static void test_record_a_range_takes_24_bytes(void)
{
    size_t cap = (size_t)8 << 20;
    sp_profiler *p = begin_profiling(cap);
    for (int i = 0; i < 500000; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, "r");
        sp_range_end();
    }
    const sp_result *r = end_profiling(p);
    size_t kept = total_events(r);
    CHECK(kept > cap / 28);
    CHECK(kept <= cap / 24);
    size_t steps = count_named(r, 0, "ProfileStep#0"); /* recorded at stop, when the cap is full */
    CHECK(kept + steps + sp_result_counter(r, SP_COUNTER_HOST_DROPPED) == 500000 + 1);
    sp_profiler_destroy(p);
}

/* An end carries only the low 61 bits of its time; the previous event's time
 * restores the rest, also across a carry into the high bits. */
static void test_record_end_ticks_restored_from_previous_event(void)
{
    uint64_t low = SP__REC_END_TICKS_MASK;
    /* Two words each, though an end is one: gcc's -Warray-bounds cannot see
     * that sp__event_ticks reads no second word of an end. */
    sp__word end[2] = {SP__REC_END_WORD(UINT64_C(0x2000000000000005)), 0};
    CHECK(sp__event_ticks(end, UINT64_C(0x2000000000000001)) == UINT64_C(0x2000000000000005));
    CHECK(sp__event_ticks(end, UINT64_C(0x1FFFFFFFFFFFFFF0)) == UINT64_C(0x2000000000000005));
    sp__word small[2] = {SP__REC_END_WORD(UINT64_C(7)), 0};
    CHECK(sp__event_ticks(small, 3) == 7);
    CHECK(sp__event_ticks(small, 7) == 7);
    CHECK((sp__event_ticks(end, 0) & low) == 5);
    sp__word begin[2] = {SP__REC_WORD(SP__REC_BEGIN, 0, 0), UINT64_C(0xF000000000000000)};
    CHECK(sp__event_ticks(begin, 0) == UINT64_C(0xF000000000000000));
    CHECK(sp__event_words(begin) == 2 && sp__event_words(end) == 1);
}

int main(void)
{
    RUN_TEST(test_record_copied_name_survives_freed_buffer);
    RUN_TEST(test_record_unmatched_end_and_unclosed_begin);
    RUN_TEST(test_record_bad_type_and_null_name);
    RUN_TEST(test_record_instants_counters_and_added_ranges);
    RUN_TEST(test_record_added_range_encloses_earlier_ranges);
    RUN_TEST(test_record_added_range_extreme_ticks);
    RUN_TEST(test_record_threads_that_exit_during_the_span);
    RUN_TEST(test_record_cap_drops_are_exact_one_thread);
    RUN_TEST(test_record_cap_drops_are_exact_two_threads);
    RUN_TEST(test_record_recovers_after_cap_when_next_span_starts);
    RUN_TEST(test_record_million_events_two_threads_none_lost);
    RUN_TEST(test_record_million_events_two_threads_exact_drops);
    RUN_TEST(test_record_a_range_takes_24_bytes);
    RUN_TEST(test_record_end_ticks_restored_from_previous_event);
    return TEST_SUMMARY();
}

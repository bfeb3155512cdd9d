/* test_ring.c: the overwrite policy at the memory cap
 * (sp_options.overwrite_oldest, src/record/ring.c). Threads record counters
 * whose values number them 0, 1, 2, ..., so a result shows exactly which
 * events it kept: under the policy a thread keeps a gapless run ending at
 * its newest event, and every event not kept is counted as that thread's
 * drop. Also: ranges whose begins were overwritten end without counting as
 * unmatched, a thread that starts when the cap is full takes the oldest
 * chunk of another, concurrent threads and a concurrent stream stay exact
 * (this test also runs under TSan), and the policy is recorded in the
 * JSON, protobuf and crash-dump metadata and read back. */
#include "check.h"
#include "record.h"
#include "stepprof/stepprof.h"
#include "stream.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SMALL_CAP ((size_t)64 << 10)

static char dir[] = "/tmp/stepprof-ring-XXXXXX";

static void quiet(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

static void init_options(sp_options *o, size_t cap, bool overwrite)
{
    sp_options_init(o);
    o->on_trace_ready = sp_handler_none();
    o->log = quiet;
    o->buffer_cap_bytes = cap;
    o->overwrite_oldest = overwrite;
}

static sp_profiler *start_with(const sp_options *o)
{
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(o, &p));
    CHECK_OK(sp_profiler_start(p));
    return p;
}

static sp_profiler *start(size_t cap, bool overwrite)
{
    sp_options o;
    init_options(&o, cap, overwrite);
    return start_with(&o);
}

static const sp_result *stop(sp_profiler *p)
{
    CHECK_OK(sp_profiler_stop(p));
    return sp_profiler_result(p);
}

static void *count_up(void *arg)
{
    long n = *(const long *)arg;
    for (long i = 0; i < n; i++) sp_counter("seq", (double)i);
    return NULL;
}

/* What one thread of a result kept of its "seq" counters. */
typedef struct kept_run {
    uint64_t tid;
    long count, first, last;
    int gapless;   /* each value one more than the one before */
    uint64_t dropped;
} kept_run;

static kept_run kept_of(const sp_result *r, size_t t)
{
    sp_thread_info info;
    CHECK_OK(sp_result_thread(r, t, &info));
    kept_run k = {info.tid, 0, -1, -1, 1, info.dropped};
    sp_event_info e;
    for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++) {
        if (!(e.flags & SP_EVENT_FLAG_COUNTER) || strcmp(e.name, "seq") != 0) continue;
        long v = (long)e.value;
        if (k.count == 0)
            k.first = v;
        else if (v != k.last + 1)
            k.gapless = 0;
        k.last = v;
        k.count++;
    }
    return k;
}

/* How many threads of r recorded "seq" counters (the main thread also
 * holds the steps). */
static size_t counting_threads(const sp_result *r)
{
    size_t n = 0;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        kept_run k = kept_of(r, t);
        if (k.count > 0 || k.dropped > 0) n++;
    }
    return n;
}

/* The thread of r with the given tid. */
static kept_run kept_by_tid(const sp_result *r, uint64_t tid)
{
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        kept_run k = kept_of(r, t);
        if (k.tid == tid) return k;
    }
    kept_run none = {tid, 0, -1, -1, 1, 0};
    return none;
}

/* n counters on one thread: the newest are kept, the rest counted. */
static void check_one_thread_keeps_its_end(long n)
{
    sp_profiler *p = start(SMALL_CAP, true);
    count_up(&n);
    const sp_result *r = stop(p);
    CHECK_EQ(1, counting_threads(r));
    kept_run k = kept_of(r, 0);
    CHECK(k.dropped > 0);
    CHECK(k.gapless);
    CHECK_EQ(n - 1, k.last);
    CHECK_U64_EQ((uint64_t)n, (uint64_t)k.count + k.dropped);
    CHECK_U64_EQ(k.dropped, sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    CHECK(sp__record_bytes_in_use() <= SMALL_CAP + ((size_t)1 << 20));
    sp_profiler_destroy(p);
}

static void test_ring_keeps_the_newest_events(void) { check_one_thread_keeps_its_end(200000); }

/* The default policy on the same load keeps the oldest instead. */
static void test_ring_off_keeps_the_oldest_events(void)
{
    long n = 200000;
    sp_profiler *p = start(SMALL_CAP, false);
    count_up(&n);
    const sp_result *r = stop(p);
    kept_run k = kept_of(r, 0);
    CHECK(k.dropped > 0);
    CHECK(k.gapless);
    CHECK_EQ(0, k.first);
    CHECK_U64_EQ((uint64_t)n, (uint64_t)k.count + k.dropped);
    sp_profiler_destroy(p);
}

/* An outer range open across the whole span loses its begin to the ring;
 * its end, and the ends of inner ranges cut at a chunk boundary, are not
 * unmatched, nothing is left unclosed, and begins kept + dropped = begun. */
static void test_ring_ends_of_overwritten_begins_are_not_unmatched(void)
{
    const long n = 100000;
    sp_profiler *p = start(SMALL_CAP, true);
    sp_range_begin(SP_EVENT_FORWARD, "outer");
    for (long i = 0; i < n; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, "op");
        sp_range_begin(SP_EVENT_OPERATOR_INNER, "inner");
        sp_range_end();
        sp_range_end();
    }
    sp_range_end();
    const sp_result *r = stop(p);
    uint64_t kept = 0, outer = 0, parented_inner = 0;
    sp_event_info e;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        if (e.type == SP_EVENT_PROFILE_STEP) continue;
        kept++;
        if (strcmp(e.name, "outer") == 0) outer++;
        if (strcmp(e.name, "inner") == 0 && e.parent >= 0) parented_inner++;
    }
    CHECK_EQ(0, outer);
    CHECK(parented_inner + 1 >= kept / 2); /* at most one inner lost its op */
    CHECK_U64_EQ((uint64_t)(2 * n + 1), kept + sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNMATCHED_ENDS));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    sp_profiler_destroy(p);
}

/* A thread started once the cap is nearly full records all its events by
 * taking the oldest chunks, of a thread that has exited, then its own;
 * without the policy it keeps only what the cap had left. */
static void check_late_thread(bool overwrite)
{
    long first_n = 100000, late_n = 1000;
    sp_profiler *p = start(SMALL_CAP, overwrite);
    pthread_t a, b;
    pthread_create(&a, NULL, count_up, &first_n);
    pthread_join(a, NULL);
    pthread_create(&b, NULL, count_up, &late_n);
    pthread_join(b, NULL);
    const sp_result *r = stop(p);
    CHECK_EQ(2, counting_threads(r));
    uint64_t all = 0;
    int late_found = 0;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        kept_run k = kept_of(r, t);
        if (k.count == 0 && k.dropped == 0) continue; /* the steps' thread */
        CHECK(k.gapless);
        all += (uint64_t)k.count + k.dropped;
        if (k.count + (long)k.dropped == late_n) {
            late_found = 1;
            if (overwrite)
                CHECK_EQ(late_n, k.count);
            else
                CHECK(k.count < late_n && k.first <= 0); /* what the cap had left */
        }
    }
    CHECK(late_found);
    CHECK_U64_EQ((uint64_t)(first_n + late_n), all);
    sp_profiler_destroy(p);
}

static void test_ring_late_thread_takes_an_exited_threads_chunk(void) { check_late_thread(true); }

static void test_ring_off_late_thread_keeps_what_was_left(void) { check_late_thread(false); }

/* Four threads at once under a cap that leaves chunks to reuse: each keeps
 * a gapless run ending at its newest event, or nothing when it finished
 * early and its chunks were the oldest, and the counts are exact. */
static void test_ring_concurrent_threads_stay_exact(void)
{
    long n = 300000;
    sp_profiler *p = start((size_t)8 << 20, true);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, count_up, &n);
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    const sp_result *r = stop(p);
    CHECK_EQ(4, counting_threads(r));
    uint64_t dropped = 0;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        kept_run k = kept_of(r, t);
        if (k.count == 0 && k.dropped == 0) continue; /* the steps' thread */
        CHECK(k.gapless);
        if (k.count > 0) CHECK_EQ(n - 1, k.last);
        CHECK_U64_EQ((uint64_t)n, (uint64_t)k.count + k.dropped);
        dropped += k.dropped;
    }
    CHECK(dropped > 0 && dropped < 4 * (uint64_t)n);
    CHECK_U64_EQ(dropped, sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    CHECK(sp__record_bytes_in_use() <= ((size_t)8 << 20) + ((size_t)1 << 20));
    sp_profiler_destroy(p);
}

static _Atomic int flushing;

static void *flush_often(void *arg)
{
    (void)arg;
    while (atomic_load(&flushing)) sp__stream_flush();
    return NULL;
}

/* The stream copies chunks while the ring reuses them: the streamed file
 * and the result both hold each thread's events in order, nothing else,
 * and the file holds all that the result kept. */
static void test_ring_with_a_concurrent_stream(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/ring.spdump", dir);
    sp_options o;
    init_options(&o, (size_t)256 << 10, true);
    o.save_on_crash = true;
    o.stream_to_disk = true;
    o.crash_path = path;
    sp_profiler *p = start_with(&o);
    long n = 200000;
    pthread_t flusher, th[2];
    atomic_store(&flushing, 1);
    pthread_create(&flusher, NULL, flush_often, NULL);
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, count_up, &n);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    atomic_store(&flushing, 0);
    pthread_join(flusher, NULL);
    CHECK_EQ(0, sp__stream_flush());

    sp_result *streamed = NULL;
    CHECK_OK(sp_result_load(path, NULL, &streamed));
    const sp_result *r = stop(p);
    CHECK_EQ(2, counting_threads(r));
    for (size_t t = 0; streamed && t < sp_result_thread_count(r); t++) {
        kept_run live = kept_of(r, t);
        if (live.count == 0 && live.dropped == 0) continue;
        CHECK(live.gapless);
        CHECK_U64_EQ((uint64_t)n, (uint64_t)live.count + live.dropped);
        if (live.count == 0) continue;
        CHECK_EQ(n - 1, live.last);
        /* The last pass copied all that was still kept, and what earlier
         * passes copied before a reuse stays in the file. */
        kept_run disk = kept_by_tid(streamed, live.tid);
        CHECK(disk.count >= live.count);
        CHECK_EQ(n - 1, disk.last);
    }
    /* The file's values are the thread's own, in order (gaps allowed). */
    for (size_t t = 0; streamed && t < sp_result_thread_count(streamed); t++) {
        sp_event_info e;
        double prev = -1;
        for (size_t i = 0; sp_result_event(streamed, t, i, &e) == SP_OK; i++) {
            if (!(e.flags & SP_EVENT_FLAG_COUNTER)) continue;
            CHECK(e.value > prev && e.value < (double)n);
            prev = e.value;
        }
    }
    sp_result_release(streamed);
    sp_profiler_destroy(p);
    CHECK(access(path, F_OK) != 0); /* removed at stop */
}

static int file_has(const char *path, const char *needle)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return strstr(text, needle) != NULL;
}

/* The summary of r, as text. */
static void summary_of(const sp_result *r, char *out, size_t size)
{
    FILE *f = fmemopen(out, size, "w");
    sp_summary_options so;
    sp_summary_options_init(&so);
    CHECK_OK(sp_result_summary(r, &so, f));
    fclose(f);
}

/* Saved as JSON and as protobuf, a ring span says so, and loads back
 * saying so; the summary names the drops as the oldest. */
static void test_ring_policy_is_in_the_saved_metadata(void)
{
    long n = 100000;
    sp_profiler *p = start(SMALL_CAP, true);
    count_up(&n);
    const sp_result *r = stop(p);
    static char text[1 << 16];
    summary_of(r, text, sizeof text);
    CHECK(strstr(text, "Dropped events by thread id (the oldest, overwritten): ") != NULL);
    const char *names[2] = {"ring.json", "ring.pb"};
    sp_format formats[2] = {SP_FORMAT_JSON, SP_FORMAT_PROTOBUF};
    for (int i = 0; i < 2; i++) {
        char path[300];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        CHECK_OK(sp_result_export(r, path, formats[i]));
        if (i == 0) CHECK(file_has(path, "\"overwrite_oldest\":\"1\""));
        sp_result *back = NULL;
        CHECK_OK(sp_result_load(path, NULL, &back));
        if (!back) continue;
        summary_of(back, text, sizeof text);
        CHECK(strstr(text, "Dropped events by thread id (the oldest, overwritten): ") != NULL);
        CHECK_U64_EQ(sp_result_counter(r, SP_COUNTER_HOST_DROPPED),
                     sp_result_counter(back, SP_COUNTER_HOST_DROPPED));
        sp_result_release(back);
        unlink(path);
    }
    sp_profiler_destroy(p);
}

/* A streamed dump of a ring span carries the policy in its META flags. */
static void test_ring_policy_is_in_the_dump(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/flags.spdump", dir);
    sp_options o;
    init_options(&o, SMALL_CAP, true);
    o.save_on_crash = true;
    o.stream_to_disk = true;
    o.crash_path = path;
    sp_profiler *p = start_with(&o);
    long n = 100000;
    count_up(&n);
    CHECK_EQ(0, sp__stream_flush());
    sp_result *back = NULL;
    CHECK_OK(sp_result_load(path, NULL, &back));
    if (back) {
        static char text[1 << 16];
        summary_of(back, text, sizeof text);
        CHECK(strstr(text, "Dropped events by thread id (the oldest, overwritten): ") != NULL);
        sp_result_release(back);
    }
    (void)stop(p);
    sp_profiler_destroy(p);
}

int main(void)
{
    if (!mkdtemp(dir)) return 1;
    RUN_TEST(test_ring_keeps_the_newest_events);
    RUN_TEST(test_ring_off_keeps_the_oldest_events);
    RUN_TEST(test_ring_ends_of_overwritten_begins_are_not_unmatched);
    RUN_TEST(test_ring_late_thread_takes_an_exited_threads_chunk);
    RUN_TEST(test_ring_off_late_thread_keeps_what_was_left);
    RUN_TEST(test_ring_concurrent_threads_stay_exact);
    RUN_TEST(test_ring_with_a_concurrent_stream);
    RUN_TEST(test_ring_policy_is_in_the_saved_metadata);
    RUN_TEST(test_ring_policy_is_in_the_dump);
    rmdir(dir);
    return TEST_SUMMARY();
}

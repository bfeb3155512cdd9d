/* test_span_jobs.c: the span collected on the writer thread while the next
 * one records (semantics.md §3.3). A hook holds the collection on the writer
 * thread until the test lets it go, so the overlap is certain, not a matter
 * of timing: records of the next span, on this thread and on others, made
 * while the last one waits to be drained, land in the next span only, and
 * the discards and trims of later steps queue behind the collection. */
#include "api.h"
#include "check.h"
#include "chunks.h"
#include "record.h"
#include "stepprof/stepprof.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sem_t collecting, go_on;
static int hold_next; /* holds the next collection that begins */

static void hold(void)
{
    if (!hold_next) return;
    hold_next = 0;
    sem_post(&collecting);
    sem_wait(&go_on);
}

/* Holds the next queued collection: returns once it has begun. */
static void expect_held(void)
{
    sem_wait(&collecting);
}

static void let_go(void) { sem_post(&go_on); }

typedef struct ranges {
    const char *name;
    int count;
} ranges;

static void record(const char *name, int count)
{
    for (int i = 0; i < count; i++) {
        sp_range_begin_copy(SP_EVENT_USER_DEFINED, name, strlen(name));
        sp_range_end();
    }
}

static void *record_thread(void *arg)
{
    const ranges *r = arg;
    record(r->name, r->count);
    return NULL;
}

/* Records count ranges named name on a new thread, and waits for it. */
static void record_on_thread(const char *name, int count)
{
    ranges r = {name, count};
    pthread_t t;
    CHECK_EQ(0, pthread_create(&t, NULL, record_thread, &r));
    pthread_join(t, NULL);
}

static int count_named(const sp_result *r, const char *name)
{
    int n = 0;
    sp_event_info e;
    for (size_t t = 0; r && t < sp_result_thread_count(r); t++)
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++)
            if (strcmp(e.name, name) == 0) n++;
    return n;
}

static void count_ready(sp_profiler *p, void *user)
{
    (void)p; /* reads nothing: the result would wait for the held collection */
    ++*(int *)user;
}

static sp_profiler *make(int64_t closed, int64_t ready, int64_t record_steps, int64_t repeat,
                         int *calls)
{
    sp_options o;
    sp_options_init(&o);
    CHECK_OK(sp_scheduler_make(&o.scheduler, closed, ready, record_steps, repeat, 0));
    o.on_trace_ready = (sp_trace_handler){count_ready, calls, NULL};
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    return p;
}

static void test_span_jobs_next_span_records_while_the_last_is_collected(void)
{
    int calls = 0;
    sp_profiler *p = make(0, 0, 1, 2, &calls); /* two spans of one step each */
    CHECK_OK(sp_profiler_start(p));
    record("first", 1000);
    record_on_thread("first_thread", 1000);
    hold_next = 1;
    CHECK_OK(sp_profiler_step(p, 1));
    CHECK_EQ(1, calls); /* on_trace_ready fires in the step that ends the span */
    expect_held();
    /* The second span records while the first one's records still wait. */
    record("second", 500);
    record_on_thread("second_thread", 500);
    let_go();
    sp_result *first = sp_result_retain(sp_profiler_result(p));
    CHECK(first != NULL);
    CHECK_EQ(1000, count_named(first, "first"));
    CHECK_EQ(1000, count_named(first, "first_thread"));
    CHECK_EQ(0, count_named(first, "second"));
    CHECK_EQ(0, count_named(first, "second_thread"));
    CHECK_EQ(1, count_named(first, "ProfileStep#0"));
    CHECK_OK(sp_profiler_step(p, 1));
    CHECK_EQ(2, calls);
    const sp_result *second = sp_profiler_result(p);
    CHECK(second != first);
    CHECK_EQ(0, count_named(second, "first"));
    CHECK_EQ(0, count_named(second, "first_thread"));
    CHECK_EQ(500, count_named(second, "second"));
    CHECK_EQ(500, count_named(second, "second_thread"));
    CHECK_EQ(1, count_named(second, "ProfileStep#1"));
    CHECK_EQ(0, count_named(second, "ProfileStep#0"));
    CHECK_U64_EQ(0, sp_result_counter(second, SP_COUNTER_HOST_DROPPED));
    CHECK_U64_EQ(0, sp_result_counter(second, SP_COUNTER_UNMATCHED_ENDS));
    sp_result_release(first);
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
}

/* The next span records into what the cap leaves while the last one
 * waits: its excess is dropped (or, with overwrite_oldest, its own oldest
 * records overwritten) and counted, the last one stays whole, and the
 * buffers never pass the cap. */
static void cap_covers_both_spans(int overwrite_oldest)
{
    int calls = 0;
    sp_options o;
    sp_options_init(&o);
    CHECK_OK(sp_scheduler_make(&o.scheduler, 0, 0, 1, 2, 0));
    o.on_trace_ready = (sp_trace_handler){count_ready, &calls, NULL};
    o.buffer_cap_bytes = (size_t)2 << 20;
    o.overwrite_oldest = overwrite_oldest;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    record("first", 40000); /* about 1 MiB of records */
    hold_next = 1;
    CHECK_OK(sp_profiler_step(p, 1));
    expect_held();
    record("second", 60000); /* as much again and a half: past the cap */
    CHECK(sp__record_bytes_in_use() <= o.buffer_cap_bytes);
    let_go();
    sp_result *first = sp_result_retain(sp_profiler_result(p));
    CHECK_EQ(40000, count_named(first, "first"));
    CHECK_U64_EQ(0, sp_result_counter(first, SP_COUNTER_HOST_DROPPED));
    CHECK_OK(sp_profiler_step(p, 1));
    const sp_result *second = sp_profiler_result(p);
    int kept = count_named(second, "second");
    CHECK(kept > 0 && kept < 60000);
    CHECK(sp_result_counter(second, SP_COUNTER_HOST_DROPPED) > 0);
    sp_result_release(first);
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
}

static void test_span_jobs_the_cap_covers_both_spans(void) { cap_covers_both_spans(0); }

static void test_span_jobs_overwrite_spares_the_span_awaiting_its_drain(void)
{
    cap_covers_both_spans(1);
}

static void test_span_jobs_discards_and_trims_queue_behind_the_collection(void)
{
    int calls = 0;
    /* Steps: 0 CLOSED, 1 READY, 2 RECORD_AND_RETURN, 3 CLOSED, 4 READY, 5 ... */
    sp_profiler *p = make(1, 1, 1, 2, &calls);
    CHECK_OK(sp_profiler_start(p));
    static const char *names[] = {"s0", "s1", "s2", "s3", "s4", "s5"};
    sp_result *first = NULL;
    /* Step 2's span fills several chunks, pooled once drained. */
    for (int step = 0; step < 6; step++) {
        record(names[step], step == 2 ? 200000 : 100);
        if (step == 2) hold_next = 1;
        CHECK_OK(sp_profiler_step(p, 1));
        if (step == 2) expect_held();
        /* Held through step 3's release (a discard and a trim) and step 4's
         * READY, whose records the start of step 5's span discards. */
        if (step == 4) {
            let_go();
            first = sp_result_retain(sp_profiler_result(p));
        }
    }
    CHECK_EQ(2, calls);
    const sp_result *second = sp_profiler_result(p);
    for (int step = 0; step < 6; step++) {
        CHECK_EQ(step == 2 ? 200000 : 0, count_named(first, names[step]));
        CHECK_EQ(step == 5 ? 100 : 0, count_named(second, names[step]));
    }
    sp_result_release(first);
    CHECK_OK(sp_profiler_stop(p));
    /* A stopped profiler holds nothing of its spans' records: what is left
     * is this thread's current chunk, not the pooled ones. */
    CHECK(sp__record_bytes_in_use() <= SP__CHUNK_MAX_BYTES);
    sp_profiler_destroy(p);
}

static void test_span_jobs_next_owner_waits_for_the_last_collection(void)
{
    /* A's span ends, and A gives the tracers up, while its collection is
     * queued; B takes them at once. B's first discard must not overtake
     * A's collection, nor A's drain take B's records. */
    int a_calls = 0, b_calls = 0;
    sp_profiler *a = make(0, 0, 1, 1, &a_calls);
    sp_profiler *b = make(0, 0, 1, 1, &b_calls);
    CHECK_OK(sp_profiler_start(a));
    record("a", 200000);
    CHECK_OK(sp_profiler_step(a, 1)); /* queued, then released: CLOSED */
    CHECK_OK(sp_profiler_start(b));
    record("b", 300);
    CHECK_OK(sp_profiler_step(b, 1));
    CHECK_EQ(200000, count_named(sp_profiler_result(a), "a"));
    CHECK_EQ(0, count_named(sp_profiler_result(a), "b"));
    CHECK_EQ(300, count_named(sp_profiler_result(b), "b"));
    CHECK_EQ(0, count_named(sp_profiler_result(b), "a"));
    CHECK_OK(sp_profiler_stop(b));
    CHECK_OK(sp_profiler_stop(a));
    sp_profiler_destroy(b);
    sp_profiler_destroy(a);
}

static _Atomic int let_go_done;

static void *let_go_later(void *arg)
{
    (void)arg;
    usleep(200 * 1000);
    atomic_store(&let_go_done, 1);
    let_go();
    return NULL;
}

static void test_span_jobs_at_most_two_spans_in_flight(void)
{
    /* Every step ends a span. With the first collection held, the second
     * span queues behind it, and the step that ends a third waits for the
     * first: it can return only after the collection was let go. */
    int calls = 0;
    sp_profiler *p = make(0, 0, 1, 0, &calls);
    CHECK_OK(sp_profiler_start(p));
    record("one", 10);
    hold_next = 1;
    CHECK_OK(sp_profiler_step(p, 1));
    expect_held();
    record("two", 10);
    CHECK_OK(sp_profiler_step(p, 1)); /* queued behind the held one */
    CHECK_EQ(0, atomic_load(&let_go_done));
    record("three", 10);
    pthread_t t;
    CHECK_EQ(0, pthread_create(&t, NULL, let_go_later, NULL));
    CHECK_OK(sp_profiler_step(p, 1)); /* waits for the first */
    CHECK_EQ(1, atomic_load(&let_go_done));
    pthread_join(t, NULL);
    CHECK_EQ(3, calls);
    CHECK_EQ(10, count_named(sp_profiler_result(p), "three"));
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
}

static void test_span_jobs_export_of_a_span_being_collected(void)
{
    /* The built-in handler queues its export behind the collection: the
     * file holds the span though the step returned before it was drained. */
    char dir[] = "/tmp/sp_span_jobs_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    sp_options o;
    sp_options_init(&o);
    CHECK_OK(sp_scheduler_make(&o.scheduler, 0, 0, 1, 1, 0));
    CHECK_OK(sp_handler_chrome_tracing(&o.on_trace_ready, dir, "worker"));
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    record("exported", 50);
    hold_next = 1;
    CHECK_OK(sp_profiler_step(p, 1));
    expect_held();
    const char *path = sp_profiler_trace_path(p);
    CHECK(path != NULL);
    char copy[4096];
    snprintf(copy, sizeof copy, "%s", path ? path : "");
    let_go();
    CHECK_OK(sp_profiler_stop(p));
    sp_result *loaded = NULL;
    CHECK_OK(sp_result_load(copy, NULL, &loaded));
    CHECK_EQ(50, count_named(loaded, "exported"));
    sp_result_release(loaded);
    unlink(copy);
    rmdir(dir);
    sp_profiler_destroy(p);
}

int main(void)
{
    sem_init(&collecting, 0, 0);
    sem_init(&go_on, 0, 0);
    sp__span_collect_hook = hold;
    RUN_TEST(test_span_jobs_next_span_records_while_the_last_is_collected);
    RUN_TEST(test_span_jobs_the_cap_covers_both_spans);
    RUN_TEST(test_span_jobs_overwrite_spares_the_span_awaiting_its_drain);
    RUN_TEST(test_span_jobs_discards_and_trims_queue_behind_the_collection);
    RUN_TEST(test_span_jobs_next_owner_waits_for_the_last_collection);
    RUN_TEST(test_span_jobs_at_most_two_spans_in_flight);
    RUN_TEST(test_span_jobs_export_of_a_span_being_collected);
    return TEST_SUMMARY();
}

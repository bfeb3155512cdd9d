/* test_collect_hooks.c: sp_collect_hook_add. A hook follows the spans of
 * every profiler (BEGIN, then COLLECT or DISCARD), after the profiler's own
 * span_hook; a hook hands over collective records that another thread
 * buffered, as an MPI wrapper does, and they join that thread's range; adding
 * refuses NULL, adds a pair once, is safe from many threads while a profiler
 * runs, and stops at SP_COLLECT_HOOK_MAX. Hooks cannot be removed, so every
 * hook here stays harmless for the tests after its own. */
#include "added_events.h"
#include "check.h"
#include "collect.h"
#include "stepprof/stepprof.h"

#include <pthread.h>
#include <string.h>
#include <unistd.h>

typedef struct hook_log {
    pthread_mutex_t lock;
    char seq[64];
    size_t n;
    int on; /* logs only while the test that owns it runs */
} hook_log;

static hook_log shared_log = {PTHREAD_MUTEX_INITIALIZER, "", 0, 0};

static void log_event(hook_log *h, char c)
{
    pthread_mutex_lock(&h->lock);
    if (h->on && h->n + 1 < sizeof h->seq) {
        h->seq[h->n++] = c;
        h->seq[h->n] = '\0';
    }
    pthread_mutex_unlock(&h->lock);
}

static void global_hook(sp_profiler *prof, sp_span_event event, void *user)
{
    (void)prof;
    log_event(user, "BCD"[event]);
}

static void own_hook(sp_profiler *prof, sp_span_event event, void *user)
{
    (void)prof;
    log_event(user, "bcd"[event]);
}

/* R, A (collected), R, C (discarded), W, A, then stop (collected). */
static sp_state schedule(int64_t step, void *user)
{
    (void)user;
    static const sp_state s[] = {SP_STATE_RECORD, SP_STATE_RECORD_AND_RETURN,
                                 SP_STATE_RECORD, SP_STATE_CLOSED,
                                 SP_STATE_READY,  SP_STATE_RECORD_AND_RETURN};
    return step < 6 ? s[step] : SP_STATE_CLOSED;
}

static void test_collect_hooks_follow_every_profiler(void)
{
    shared_log.on = 1;
    CHECK_OK(sp_collect_hook_add(global_hook, &shared_log));
    for (int own = 0; own < 2; own++) {
        shared_log.n = 0;
        shared_log.seq[0] = '\0';
        sp_options o;
        sp_options_init(&o);
        if (own) {
            o.span_hook = own_hook;
            o.span_hook_user = &shared_log;
        }
        CHECK_OK(sp_scheduler_custom(&o.scheduler, schedule, NULL));
        sp_profiler *p = make_quiet(&o);
        CHECK_OK(sp_profiler_start(p));
        for (int i = 0; i < 5; i++)
            sp_profiler_step(p, 1);
        CHECK_OK(sp_profiler_stop(p));
        /* The profiler's own hook runs first, then the process-wide one. */
        CHECK_STR_EQ(own ? "bBcCbBdDbBcC" : "BCBDBC", shared_log.seq);
        sp_profiler_destroy(p);
    }
    shared_log.on = 0;
}

/* What an MPI wrapper keeps: records of its collectives, made on the
 * program's threads, handed over by the thread that collects. */
typedef struct comm_buffer {
    pthread_mutex_t lock;
    sp_comm_info recs[4];
    size_t n;
    int armed;
    sp_status handed;
} comm_buffer;

static comm_buffer buffered = {PTHREAD_MUTEX_INITIALIZER, {{0}}, 0, 0, SP_EINVAL};

static void comm_hook(sp_profiler *prof, sp_span_event event, void *user)
{
    comm_buffer *b = user;
    pthread_mutex_lock(&b->lock);
    if (event == SP_SPAN_BEGIN) b->armed = 1;
    if (event == SP_SPAN_COLLECT && b->n)
        b->handed = sp_profiler_add_comm_info(prof, b->recs, b->n);
    if (event != SP_SPAN_BEGIN) {
        b->n = 0;
        b->armed = 0;
    }
    pthread_mutex_unlock(&b->lock);
}

static void *collective_thread(void *arg)
{
    comm_buffer *b = arg;
    sp_range_begin(SP_EVENT_COMMUNICATION, "MPI_Allreduce");
    pthread_mutex_lock(&b->lock);
    if (b->armed && b->n < 4)
        b->recs[b->n++] = (sp_comm_info){
            (uint64_t)gettid(), realtime_ns(), "allreduce", 9, "MPI_COMM_WORLD", 14, 4, 16384, 7};
    pthread_mutex_unlock(&b->lock);
    sp_range_end();
    return NULL;
}

/* The record attached to the range named name, or NULL. */
static const sp__comm *comm_of(const sp_result *r, const char *name)
{
    for (size_t i = 0; i < r->thread_count; i++) {
        const sp__thread *t = &r->threads[i];
        for (size_t k = 0; k < t->comm_count; k++) {
            int32_t h = t->comms[k].host;
            if (h >= 0 && strcmp(sp__result_name(r, t->events[h].name), name) == 0)
                return &t->comms[k];
        }
    }
    return NULL;
}

static void test_collect_hooks_hand_over_records_of_other_threads(void)
{
    CHECK_OK(sp_collect_hook_add(comm_hook, &buffered));
    sp_profiler *p = make_quiet(NULL);
    CHECK_OK(sp_profiler_start(p));
    pthread_t t;
    CHECK_EQ(0, pthread_create(&t, NULL, collective_thread, &buffered));
    CHECK_EQ(0, pthread_join(t, NULL));
    CHECK_EQ(1, (int)buffered.n);
    CHECK_OK(sp_profiler_stop(p));
    CHECK_OK(buffered.handed);
    CHECK_EQ(0, (int)buffered.n);
    const sp__comm *c = comm_of(sp_profiler_result(p), "MPI_Allreduce");
    CHECK(c != NULL);
    if (c) {
        const sp_result *r = sp_profiler_result(p);
        CHECK_STR_EQ("allreduce", sp__result_name(r, c->collective));
        CHECK_STR_EQ("MPI_COMM_WORLD", sp__result_name(r, c->group));
        CHECK_EQ(4, c->group_size);
        CHECK_EQ(16384, c->bytes);
        CHECK_EQ(7, c->seq);
    }
    sp_profiler_destroy(p);
    /* Outside a span the buffer stays empty: nothing is recorded for nobody. */
    CHECK_EQ(0, pthread_create(&t, NULL, collective_thread, &buffered));
    CHECK_EQ(0, pthread_join(t, NULL));
    CHECK_EQ(0, (int)buffered.n);
}

static void counting_hook(sp_profiler *prof, sp_span_event event, void *user)
{
    (void)prof;
    if (event == SP_SPAN_BEGIN) (*(int *)user)++;
}

static void test_collect_hooks_refuse_null_and_add_a_pair_once(void)
{
    CHECK_EQ(SP_EINVAL, sp_collect_hook_add(NULL, NULL));
    static int begins;
    CHECK_OK(sp_collect_hook_add(counting_hook, &begins));
    CHECK_OK(sp_collect_hook_add(counting_hook, &begins));
    sp_profiler *p = make_quiet(NULL);
    CHECK_OK(sp_profiler_start(p));
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
    CHECK_EQ(1, begins);
}

/* Hooks added by several threads while another drives a profiler (a
 * library constructor may run on any thread): each is added once, and the
 * spans after the adding see all of them. */
enum { ADDERS = 3 };
static int adder_begins[ADDERS];

static void *adder(void *arg)
{
    int *slot = arg;
    CHECK_OK(sp_collect_hook_add(counting_hook, slot));
    return NULL;
}

static void test_collect_hooks_added_from_threads_while_profiling(void)
{
    sp_profiler *p = make_quiet(NULL);
    pthread_t t[ADDERS];
    for (int i = 0; i < ADDERS; i++)
        CHECK_EQ(0, pthread_create(&t[i], NULL, adder, &adder_begins[i]));
    for (int i = 0; i < 20; i++) {
        CHECK_OK(sp_profiler_start(p));
        CHECK_OK(sp_profiler_stop(p));
    }
    for (int i = 0; i < ADDERS; i++)
        CHECK_EQ(0, pthread_join(t[i], NULL));
    int before[ADDERS];
    memcpy(before, adder_begins, sizeof before);
    CHECK_OK(sp_profiler_start(p));
    CHECK_OK(sp_profiler_stop(p));
    for (int i = 0; i < ADDERS; i++)
        CHECK_EQ(before[i] + 1, adder_begins[i]);
    sp_profiler_destroy(p);
}

/* Runs last: fills the remaining slots. Added so far: global_hook, comm_hook,
 * counting_hook once plus ADDERS times. */
static void test_collect_hooks_stop_at_the_maximum(void)
{
    static int spare[SP_COLLECT_HOOK_MAX];
    int added = 3 + ADDERS, i = 0;
    for (; added < SP_COLLECT_HOOK_MAX; added++)
        CHECK_OK(sp_collect_hook_add(counting_hook, &spare[i++]));
    CHECK_EQ(SP_ENOMEM, sp_collect_hook_add(counting_hook, &spare[i]));
    CHECK_STR_EQ("sp_collect_hook_add: all 8 hook slots are taken", sp_last_error());
    CHECK_OK(sp_collect_hook_add(global_hook, &shared_log)); /* already there */
}

int main(void)
{
    RUN_TEST(test_collect_hooks_follow_every_profiler);
    RUN_TEST(test_collect_hooks_hand_over_records_of_other_threads);
    RUN_TEST(test_collect_hooks_refuse_null_and_add_a_pair_once);
    RUN_TEST(test_collect_hooks_added_from_threads_while_profiling);
    RUN_TEST(test_collect_hooks_stop_at_the_maximum);
    return TEST_SUMMARY();
}

/* test_external_events.c: sp_profiler_add_events on a live profiler: ranges
 * another tracer measured join the span's result on their threads, nested
 * with the ranges stepprof recorded and typed as given; they are refused
 * outside a span and with bad arguments (nothing added), and dropped with a
 * span that is discarded. */
#include "added_events.h"
#include "check.h"
#include "stepprof/stepprof.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

static sp_profiler *make(void) { return make_quiet(NULL); }

/* Index of the thread with this tid, or -1. */
static long thread_of(const sp_result *r, uint64_t tid)
{
    sp_thread_info info;
    for (size_t t = 0; sp_result_thread(r, t, &info) == SP_OK; t++)
        if (info.tid == tid) return (long)t;
    return -1;
}

static int find(const sp_result *r, long t, const char *name, sp_event_info *out)
{
    for (size_t i = 0; sp_result_event(r, (size_t)t, i, out) == SP_OK; i++)
        if (strcmp(out->name, name) == 0) return (int)i;
    return -1;
}

static void test_external_events_join_the_span(void)
{
    sp_profiler *p = make();
    CHECK_OK(sp_profiler_start(p));
    sp_range_begin(SP_EVENT_FORWARD, "forward");
    int64_t a = realtime_ns();
    usleep(2000);
    int64_t b = realtime_ns();
    sp_range_end();
    uint64_t me = (uint64_t)gettid();
    sp_external_event ev[] = {
        {me, SP_EVENT_OPERATOR, "matmul dygraph", 14, a + 100000, b - 100000},
        {me, SP_EVENT_OPERATOR_INNER, "matmul infer_meta", 17, a + 200000, a + 300000},
        {424242, SP_EVENT_DATALOADER, "_DataLoaderIterSingleProcess", 28, a, b},
    };
    CHECK_OK(sp_profiler_add_events(p, ev, 3));
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK(r != NULL);
    if (!r) return;
    long t = thread_of(r, me), w = thread_of(r, 424242);
    CHECK(t >= 0 && w >= 0);
    sp_event_info fwd, op, inner, dl;
    int ifwd = find(r, t, "forward", &fwd);
    int iop = find(r, t, "matmul dygraph", &op);
    CHECK(ifwd >= 0 && iop >= 0);
    CHECK(find(r, t, "matmul infer_meta", &inner) >= 0);
    CHECK(find(r, w, "_DataLoaderIterSingleProcess", &dl) >= 0);
    CHECK_EQ(SP_EVENT_OPERATOR, op.type);
    CHECK_EQ(ifwd, op.parent); /* nested in stepprof's own range */
    CHECK_EQ(iop, inner.parent);
    CHECK_EQ(SP_EVENT_DATALOADER, dl.type);
    /* On the span's time line: within 50 us of the realtime given. */
    CHECK(op.start_ns > a + 100000 - 50000 && op.start_ns < a + 100000 + 50000);
    CHECK_EQ(0, sp_result_counter(r, SP_COUNTER_OUT_OF_WINDOW));
    sp_profiler_destroy(p);
}

static void test_external_events_refused_outside_a_span(void)
{
    sp_profiler *p = make();
    sp_external_event ev = {1, SP_EVENT_OPERATOR, "x", 1, 0, 0};
    CHECK_EQ(SP_ESTATE, sp_profiler_add_events(p, &ev, 1));
    CHECK_OK(sp_profiler_start(p));
    CHECK_EQ(SP_EINVAL, sp_profiler_add_events(NULL, &ev, 1));
    CHECK_EQ(SP_EINVAL, sp_profiler_add_events(p, NULL, 1));
    CHECK_OK(sp_profiler_add_events(p, NULL, 0));
    sp_external_event bad[2] = {ev, {1, (sp_event_type)99, "y", 1, 0, 0}};
    CHECK_EQ(SP_EINVAL, sp_profiler_add_events(p, bad, 2));
    CHECK(strstr(sp_last_error(), "event 1") != NULL);
    sp_external_event noname = {1, SP_EVENT_OPERATOR, NULL, 3, 0, 0};
    CHECK_EQ(SP_EINVAL, sp_profiler_add_events(p, &noname, 1));
    sp_external_event step = {1, SP_EVENT_PROFILE_STEP, "ProfileStep#9", 13, 0, 0};
    CHECK_EQ(SP_EINVAL, sp_profiler_add_events(p, &step, 1));
    CHECK_STR_EQ("sp_profiler_add_events: event 0 is a ProfileStep; steps are the profiler's own "
                 "(sp_profiler_step)", sp_last_error());
    CHECK_OK(sp_profiler_stop(p));
    /* Nothing of the refused calls reached the result. */
    const sp_result *r = sp_profiler_result(p);
    sp_event_info e;
    CHECK(thread_of(r, 1) < 0 || find(r, thread_of(r, 1), "x", &e) < 0);
    CHECK_EQ(SP_ESTATE, sp_profiler_add_events(p, &ev, 1));
    sp_profiler_destroy(p);
}

static sp_state ready_then_record(int64_t step, void *user)
{
    (void)user;
    return step == 0 ? SP_STATE_READY : step == 1 ? SP_STATE_RECORD_AND_RETURN : SP_STATE_CLOSED;
}

static void test_external_events_of_a_discarded_span_are_dropped(void)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    CHECK_OK(sp_scheduler_custom(&o.scheduler, ready_then_record, NULL));
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p)); /* READY: no span is recorded */
    int64_t now = realtime_ns();
    sp_external_event ev = {(uint64_t)gettid(), SP_EVENT_OPERATOR, "ready op", 8, now, now + 10};
    CHECK_EQ(SP_ESTATE, sp_profiler_add_events(p, &ev, 1));
    CHECK_OK(sp_profiler_step(p, 1)); /* RECORD_AND_RETURN */
    now = realtime_ns();
    sp_external_event kept = {(uint64_t)gettid(), SP_EVENT_OPERATOR, "kept op", 7, now, now + 10};
    CHECK_OK(sp_profiler_add_events(p, &kept, 1));
    CHECK_OK(sp_profiler_step(p, 1)); /* collected */
    const sp_result *r = sp_profiler_result(p);
    sp_event_info e;
    long t = thread_of(r, (uint64_t)gettid());
    CHECK(t >= 0 && find(r, t, "kept op", &e) >= 0);
    CHECK(t >= 0 && find(r, t, "ready op", &e) < 0);
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
}

/* RECORD, then CLOSED (the span is discarded), then RECORD_AND_RETURN. */
static sp_state record_closed_record(int64_t step, void *user)
{
    (void)user;
    static const sp_state s[] = {SP_STATE_RECORD, SP_STATE_CLOSED, SP_STATE_RECORD_AND_RETURN};
    return step < 3 ? s[step] : SP_STATE_CLOSED;
}

/* Events added to a span that is then discarded go with it: the next span
 * does not inherit them. */
static void test_external_events_added_then_discarded_go_with_the_span(void)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    CHECK_OK(sp_scheduler_custom(&o.scheduler, record_closed_record, NULL));
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p)); /* RECORD */
    int64_t now = realtime_ns();
    sp_external_event gone = {(uint64_t)gettid(), SP_EVENT_OPERATOR, "discarded op", 12, now,
                              now + 10};
    CHECK_OK(sp_profiler_add_events(p, &gone, 1));
    CHECK_OK(sp_profiler_step(p, 1)); /* CLOSED: the span is discarded */
    CHECK(sp_profiler_result(p) == NULL);
    CHECK_OK(sp_profiler_step(p, 1)); /* RECORD_AND_RETURN: a new span */
    now = realtime_ns();
    sp_external_event kept = {(uint64_t)gettid(), SP_EVENT_OPERATOR, "kept op", 7, now, now + 10};
    CHECK_OK(sp_profiler_add_events(p, &kept, 1));
    CHECK_OK(sp_profiler_step(p, 1)); /* collected */
    const sp_result *r = sp_profiler_result(p);
    CHECK(r != NULL);
    sp_event_info e;
    long t = thread_of(r, (uint64_t)gettid());
    CHECK(t >= 0 && find(r, t, "kept op", &e) >= 0);
    CHECK(t >= 0 && find(r, t, "discarded op", &e) < 0);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_OUT_OF_WINDOW));
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
}

/* The span hook: a letter per call (B begin, C collect, D discard); at
 * COLLECT it adds one event, which must reach the result. */
typedef struct hook_log {
    char seq[32];
    int n;
    sp_status added;
} hook_log;

static void hook(sp_profiler *prof, sp_span_event event, void *user)
{
    hook_log *h = user;
    if (h->n < 31) h->seq[h->n++] = "BCD"[event];
    if (event == SP_SPAN_COLLECT) {
        int64_t now = realtime_ns();
        sp_external_event ev = {
            (uint64_t)gettid(), SP_EVENT_OPERATOR, "from hook", 9, now - 1000, now};
        h->added = sp_profiler_add_events(prof, &ev, 1);
    }
}

/* R, A (collected), R, C (discarded), W, A, then stop (collected). */
static sp_state hook_schedule(int64_t step, void *user)
{
    (void)user;
    static const sp_state s[] = {SP_STATE_RECORD, SP_STATE_RECORD_AND_RETURN,
                                 SP_STATE_RECORD, SP_STATE_CLOSED,
                                 SP_STATE_READY,  SP_STATE_RECORD_AND_RETURN};
    return step < 6 ? s[step] : SP_STATE_CLOSED;
}

static void test_external_events_span_hook_follows_the_spans(void)
{
    hook_log h = {{0}, 0, SP_EINVAL};
    sp_options o;
    sp_options_init(&o);
    CHECK(o.span_hook == NULL);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    o.span_hook = hook;
    o.span_hook_user = &h;
    CHECK_OK(sp_scheduler_custom(&o.scheduler, hook_schedule, NULL));
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    for (int i = 0; i < 5; i++)
        sp_profiler_step(p, 1);
    CHECK_STR_EQ("BCBDB", h.seq);
    CHECK_OK(h.added);
    CHECK_OK(sp_profiler_stop(p));
    CHECK_STR_EQ("BCBDBC", h.seq);
    CHECK_OK(h.added);
    const sp_result *r = sp_profiler_result(p);
    sp_event_info e;
    long t = thread_of(r, (uint64_t)gettid());
    CHECK(t >= 0 && find(r, t, "from hook", &e) >= 0);
    /* The hook's event lies after the span's last ProfileStep began. */
    CHECK(t >= 0 && find(r, t, "ProfileStep#5", &e) >= 0);
    sp_profiler_destroy(p);
}

/* The hook may not drive its own profiler (a transition inside another):
 * start, step and stop fail with SP_EBUSY and are counted; a destroy waits
 * until the call that ran the hook returns (under ASan a use after free
 * would show here). */
typedef struct driving {
    sp_status start, step, stop;
    int destroy;
} driving;

static void driving_hook(sp_profiler *prof, sp_span_event event, void *user)
{
    driving *d = user;
    if (event == SP_SPAN_BEGIN) {
        d->start = sp_profiler_start(prof);
        d->step = sp_profiler_step(prof, 1);
    }
    if (event == SP_SPAN_COLLECT) {
        d->stop = sp_profiler_stop(prof);
        if (d->destroy) sp_profiler_destroy(prof);
    }
}

static void test_external_events_span_hook_cannot_drive_its_profiler(void)
{
    driving d = {SP_OK, SP_OK, SP_OK, 0};
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    o.span_hook = driving_hook;
    o.span_hook_user = &d;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    CHECK_EQ(SP_EBUSY, d.start);
    CHECK_EQ(SP_EBUSY, d.step);
    CHECK_EQ(0, sp_profiler_step_num(p)); /* the hook's step changed nothing */
    CHECK_OK(sp_profiler_stop(p));
    CHECK_EQ(SP_EBUSY, d.stop);
    CHECK_U64_EQ(3, sp_profiler_misuse_count(p));
    CHECK(sp_profiler_result(p) != NULL);
    sp_profiler_destroy(p);

    d = (driving){SP_OK, SP_OK, SP_OK, 1};
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    CHECK_OK(sp_profiler_stop(p)); /* the hook destroys p; stop returns first */
    CHECK_EQ(SP_EBUSY, d.stop);
    CHECK_STR_EQ("sp_profiler_stop: called from span_hook; the profiler cannot be driven from its "
                 "own callback (call it after the callback returns)",
                 sp_last_error());
}

int main(void)
{
    RUN_TEST(test_external_events_join_the_span);
    RUN_TEST(test_external_events_refused_outside_a_span);
    RUN_TEST(test_external_events_of_a_discarded_span_are_dropped);
    RUN_TEST(test_external_events_added_then_discarded_go_with_the_span);
    RUN_TEST(test_external_events_span_hook_follows_the_spans);
    RUN_TEST(test_external_events_span_hook_cannot_drive_its_profiler);
    return TEST_SUMMARY();
}

/* test_reentry.c: recording from a signal handler that interrupts a
 * recording call on the same thread (src/record/record.c). The nested
 * call must not disturb the call it interrupted: its event is dropped and
 * counted as host_dropped, on the thread. Calls from a handler that
 * interrupts anything else are recorded as usual.
 *
 * Two ways in, and neither test depends on how many signals arrive:
 *  - deterministic: the record layer's chunk-switch hook raises a signal in
 *    the middle of every chunk switch, the moment where the thread is
 *    between two chunks (the heap overflow of issue 17); every event of that
 *    handler is nested, so all are dropped and counted;
 *  - a 10 kHz SIGPROF on the thread's own CPU clock, whose handler records
 *    ranges and instants wherever it lands, with and without the memory cap:
 *    whatever the number of signals, kept + dropped == recorded, per kind
 *    where only one kind can be dropped. */
#include "check.h"
#include "record.h"
#include "stepprof/stepprof.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* What the handler recorded: written only by the handler, read once the
 * signal is blocked again. */
static volatile sig_atomic_t handler_ranges, handler_instants, in_handler;

static void record_from_handler(int signo)
{
    (void)signo;
    in_handler = 1;
    sp_range_begin(SP_EVENT_USER_DEFINED, "handler range");
    sp_instant(SP_EVENT_USER_DEFINED, "handler instant");
    sp_range_begin_copy(SP_EVENT_USER_DEFINED, "handler copy", 12);
    sp_range_end();
    sp_range_end();
    handler_ranges += 2;
    handler_instants += 1;
    in_handler = 0;
}

static void install(int signo)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = record_from_handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    CHECK_EQ(0, sigaction(signo, &sa, NULL));
}

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

typedef struct tally {
    uint64_t main_ranges, handler_ranges, handler_instants, other;
} tally;

static tally count_kept(const sp_result *r)
{
    tally t = {0, 0, 0, 0};
    sp_event_info e;
    for (size_t th = 0; th < sp_result_thread_count(r); th++)
        for (size_t i = 0; sp_result_event(r, th, i, &e) == SP_OK; i++) {
            if (strcmp(e.name, "main range") == 0 || strcmp(e.name, "main copy") == 0)
                t.main_ranges++;
            else if (strcmp(e.name, "handler range") == 0 || strcmp(e.name, "handler copy") == 0)
                t.handler_ranges++;
            else if (strcmp(e.name, "handler instant") == 0)
                t.handler_instants++;
            else if (e.type != SP_EVENT_PROFILE_STEP)
                t.other++;
        }
    return t;
}

/* The main thread's work: nested pairs of both name kinds, and instants
 * that make chunk switches come at every kind of event. */
static void main_work(int pairs)
{
    for (int i = 0; i < pairs; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, "main range");
        sp_range_begin_copy(SP_EVENT_OPERATOR, "main copy", 9);
        sp_range_end();
        sp_range_end();
    }
}

/* A POSIX timer on clock that sends signo to the calling thread after
 * ns, and every ns after that when periodic. */
static timer_t signal_this_thread(int signo, clockid_t clock, long ns, int periodic)
{
    timer_t timer;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = signo;
    sev._sigev_un._tid = gettid();
    CHECK_EQ(0, timer_create(clock, &sev, &timer));
    struct itimerspec when = {{0, periodic ? ns : 0}, {0, ns}};
    CHECK_EQ(0, timer_settime(timer, 0, &when, NULL));
    return timer;
}

static void check_per_thread_drops(const sp_result *r)
{
    uint64_t per_thread = 0;
    sp_thread_info info;
    for (size_t t = 0; t < sp_result_thread_count(r); t++) {
        CHECK_OK(sp_result_thread(r, t, &info));
        per_thread += info.dropped;
    }
    CHECK_U64_EQ(sp_result_counter(r, SP_COUNTER_HOST_DROPPED), per_thread);
}

static volatile sig_atomic_t switches;

static void raise_in_switch(void)
{
    switches++;
    if (!in_handler) raise(SIGUSR1);
}

static void test_reentry_signal_during_every_chunk_switch(void)
{
    install(SIGUSR1);
    sp_profiler *p = begin_profiling(0);
    handler_ranges = handler_instants = 0;
    switches = 0;
    sp__record_switch_hook = raise_in_switch;
    main_work(100000); /* 400,000 events: a chunk switch every few thousand */
    sp__record_switch_hook = NULL;
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    tally kept = count_kept(r);
    CHECK(switches > 10);
    CHECK_EQ(switches, handler_ranges / 2);
    CHECK_U64_EQ(200000, kept.main_ranges);
    /* Every handler call was nested in a switch: all dropped and counted
     * (a range counts once, at its begin). */
    CHECK_U64_EQ(0, kept.handler_ranges + kept.handler_instants);
    CHECK_U64_EQ((uint64_t)handler_ranges + (uint64_t)handler_instants,
                 sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    CHECK_U64_EQ(0, kept.other);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNMATCHED_ENDS));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_MISUSE));
    check_per_thread_drops(r);
    sp_profiler_destroy(p);
}

/* A handler call that interrupts no recording call is recorded. */
static void test_reentry_handler_between_calls_is_recorded(void)
{
    install(SIGUSR1);
    sp_profiler *p = begin_profiling(0);
    handler_ranges = handler_instants = 0;
    main_work(10);
    raise(SIGUSR1);
    main_work(10);
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    tally kept = count_kept(r);
    CHECK_U64_EQ(40, kept.main_ranges);
    CHECK_U64_EQ(2, kept.handler_ranges);
    CHECK_U64_EQ(1, kept.handler_instants);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    sp_profiler_destroy(p);
}

/* A handler whose own events fill several chunks, as a sampling handler's
 * may: its chunk switches take memory without malloc (which the handler
 * may have interrupted; the TSan build reports any malloc in a handler), and
 * all its events are kept. */
static volatile sig_atomic_t filler_instants;

static void fill_chunks_from_handler(int signo)
{
    (void)signo;
    for (int i = 0; i < 20000; i++) {
        sp_instant(SP_EVENT_USER_DEFINED, "handler instant");
        filler_instants++;
    }
}

/* On a thread of its own, whose chunks start small and so must be taken
 * anew (the pool holds only the largest), with the handler inside. */
static void *work_with_a_filling_signal(void *unused)
{
    (void)unused;
    main_work(10);
    /* A timer's signal, taken in sigsuspend, is asynchronous, as a
     * sampling profiler's is (TSan checks only those). */
    sigset_t usr2, old, waiting;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    CHECK_EQ(0, pthread_sigmask(SIG_BLOCK, &usr2, &old));
    timer_t timer = signal_this_thread(SIGUSR2, CLOCK_MONOTONIC, 1000000, 0);
    waiting = old;
    sigdelset(&waiting, SIGUSR2);
    while (filler_instants == 0) sigsuspend(&waiting);
    timer_delete(timer);
    CHECK_EQ(0, pthread_sigmask(SIG_SETMASK, &old, NULL));
    main_work(10);
    return NULL;
}

static void test_reentry_handler_switching_chunks_is_recorded(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fill_chunks_from_handler;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ(0, sigaction(SIGUSR2, &sa, NULL));
    sp_profiler *p = begin_profiling(0);
    filler_instants = 0;
    pthread_t worker;
    CHECK_EQ(0, pthread_create(&worker, NULL, work_with_a_filling_signal, NULL));
    CHECK_EQ(0, pthread_join(worker, NULL));
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    tally kept = count_kept(r);
    CHECK_U64_EQ(40, kept.main_ranges);
    CHECK_U64_EQ(20000, filler_instants);
    CHECK_U64_EQ(20000, kept.handler_instants);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    sp_profiler_destroy(p);
}

/* Runs main_work under a 10 kHz SIGPROF of this thread's CPU clock until
 * 200 handler calls or 300,000 pairs, whichever comes first (the checks hold
 * for any number of signals), then checks the accounting. POSIX CPU timers
 * fire at the kernel's tick, so fewer than 10 kHz may arrive. */
static void sigprof_run(size_t cap, int expect_main_exact)
{
    install(SIGPROF);
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    sp_profiler *p = begin_profiling(cap);
    handler_ranges = handler_instants = 0;
    timer_t timer = signal_this_thread(SIGPROF, CLOCK_THREAD_CPUTIME_ID, 100000, 1); /* 10 kHz */
    uint64_t main_pairs = 0;
    for (int round = 0; round < 3000 && handler_ranges < 400; round++) {
        main_work(100);
        main_pairs += 100;
        for (volatile int spin = 0; spin < 60000; spin++) {
        } /* time outside recording calls, where the handler records */
    }
    pthread_sigmask(SIG_BLOCK, &prof, NULL);
    timer_delete(timer);
    uint64_t h_ranges = (uint64_t)handler_ranges, h_instants = (uint64_t)handler_instants;
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    tally kept = count_kept(r);
    uint64_t dropped = sp_result_counter(r, SP_COUNTER_HOST_DROPPED);
    printf("  %llu handler calls, %llu of %llu handler events kept, %llu dropped\n",
           (unsigned long long)(h_ranges / 2),
           (unsigned long long)(kept.handler_ranges + kept.handler_instants),
           (unsigned long long)(h_ranges + h_instants), (unsigned long long)dropped);
    if (expect_main_exact) {
        /* No cap: only nested handler events can be dropped. */
        CHECK_U64_EQ(main_pairs * 2, kept.main_ranges);
        CHECK_U64_EQ(h_ranges + h_instants, kept.handler_ranges + kept.handler_instants + dropped);
    } else {
        CHECK(dropped > 0);
        CHECK_U64_EQ(main_pairs * 2 + h_ranges + h_instants,
                     kept.main_ranges + kept.handler_ranges + kept.handler_instants + dropped);
    }
    CHECK_U64_EQ(0, kept.other);
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNMATCHED_ENDS));
    check_per_thread_drops(r);
    /* Every kept range closed inside its parent. */
    sp_event_info e, parent;
    for (size_t i = 0; sp_result_event(r, 0, i, &e) == SP_OK; i++) {
        if (e.parent < 0) continue;
        CHECK_OK(sp_result_event(r, 0, (size_t)e.parent, &parent));
        if (!(parent.start_ns <= e.start_ns && e.end_ns <= parent.end_ns)) {
            CHECK(parent.start_ns <= e.start_ns && e.end_ns <= parent.end_ns);
            break;
        }
    }
    pthread_sigmask(SIG_UNBLOCK, &prof, NULL);
    sp_profiler_destroy(p);
}

static void test_reentry_sigprof_10khz_counts_exact(void) { sigprof_run(0, 1); }

static void test_reentry_sigprof_10khz_at_the_cap_counts_exact(void)
{
    sigprof_run((size_t)1 << 20, 0);
}

int main(void)
{
    RUN_TEST(test_reentry_signal_during_every_chunk_switch);
    RUN_TEST(test_reentry_handler_between_calls_is_recorded);
    RUN_TEST(test_reentry_handler_switching_chunks_is_recorded);
    RUN_TEST(test_reentry_sigprof_10khz_counts_exact);
    RUN_TEST(test_reentry_sigprof_10khz_at_the_cap_counts_exact);
    return TEST_SUMMARY();
}

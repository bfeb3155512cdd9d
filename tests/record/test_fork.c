/* test_fork.c: fork() while a profiler records (fork.c and the inert
 * inherited profiler of profiler.c). The parent's trace holds exactly the
 * parent's events whatever the child records; the child's calls on the
 * inherited profiler return SP_ESTATE; a profiler the child creates records
 * the child's events only, and its benchmark timer times the child's own
 * Dataloader ranges; forks that land while another thread starts and stops
 * timers leave no lock held in the child. Each child checks with the usual CHECK macros and
 * leaves through _exit (status 0 when every check held), so a hang or a
 * crash in the child fails the parent's test. Children start no threads, as
 * ThreadSanitizer requires after a multi-threaded fork. */
#include "check.h"
#include "fork.h"
#include "record.h"
#include "stepprof/stepprof.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void quiet(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

static sp_profiler *start_profiler(sp_trace_handler handler, const sp_scheduler *sched)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = handler;
    o.log = quiet;
    if (sched) o.scheduler = *sched;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    return p;
}

/* Events named `name` over every thread of a result. */
static size_t count_named(const sp_result *r, const char *name)
{
    size_t n = 0;
    sp_event_info e;
    for (size_t t = 0; t < sp_result_thread_count(r); t++)
        for (size_t i = 0; sp_result_event(r, t, i, &e) == SP_OK; i++) n += strcmp(e.name, name) == 0;
    return n;
}

/* Forks; the child runs fn and leaves with _exit(0) if its checks held.
 * Returns the child's exit status (128 + signal if it was killed). */
static int in_child(void (*fn)(void *), void *arg)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        alarm(280); /* a child that hangs is killed and fails the test */
        check__failed_in_test = 0;
        fn(arg);
        _exit(check__failed_in_test ? 1 : 0);
    }
    int status = 0;
    if (waitpid(pid, &status, 0) != pid) return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A thread that records ranges until told to stop, so that the fork lands
 * while it writes. */
typedef struct spinner {
    pthread_t thread;
    _Atomic int stop;
    _Atomic long ranges;
} spinner;

static void *spin(void *arg)
{
    spinner *s = arg;
    while (!atomic_load(&s->stop)) {
        sp_range_begin(SP_EVENT_OPERATOR, "parent-worker");
        sp_range_begin_copy(SP_EVENT_USER_DEFINED, "parent-worker-copy", 18);
        sp_range_end();
        sp_range_end();
        atomic_fetch_add(&s->ranges, 1);
    }
    return NULL;
}

/* Records on every path of the hot path, as a child would by accident. */
static void record_child_events(int n)
{
    for (int i = 0; i < n; i++) {
        sp_range_begin(SP_EVENT_FORWARD, "child-range");
        sp_range_begin_copy(SP_EVENT_OPERATOR, "child-copy", 10);
        sp_instant(SP_EVENT_USER_DEFINED, "child-instant");
        sp_counter("child-counter", i);
        uint64_t t0 = sp_clock_ticks(), t1 = sp_clock_ticks();
        sp_range_add(SP_EVENT_OPERATOR, "child-added", 11, t0, t1);
        sp_range_end();
        sp_range_end();
    }
    sp_range_end(); /* unmatched: would be counted, were anything recorded */
    sp_range_begin(SP_EVENT_BACKWARD, "child-never-ended");
}

static void child_uses_inherited(void *arg)
{
    sp_profiler *p = arg;
    CHECK_EQ(0, sp_is_recording());
    CHECK(sp__record_fork_generation() > 0);
    CHECK_EQ(0, sp__record_bytes_in_use());
    record_child_events(1000);
    CHECK_EQ(0, sp__record_bytes_in_use()); /* nothing was recorded */
    CHECK_EQ(SP_STATE_CLOSED, sp_profiler_state(p));
    CHECK_EQ(SP_ESTATE, sp_profiler_step(p, 1));
    CHECK(strstr(sp_last_error(), "fork()") != NULL);
    CHECK_EQ(SP_ESTATE, sp_profiler_start(p));
    CHECK_EQ(SP_ESTATE, sp_profiler_stop(p));
    char info[128];
    CHECK_EQ(SP_ESTATE, sp_profiler_step_info(p, NULL, info, sizeof info));
    CHECK_EQ(SP_ESTATE, sp_profiler_export(p, "/tmp/stepprof-fork-never.json", SP_FORMAT_JSON));
    CHECK_EQ(0, access("/tmp/stepprof-fork-never.json", F_OK) == 0);
    CHECK_U64_EQ(5, sp_profiler_misuse_count(p));
    sp_profiler_destroy(p);
    CHECK_EQ(0, sp_is_recording());
}

static void test_fork_parent_trace_holds_only_its_own_events(void)
{
    sp_profiler *p = start_profiler(sp_handler_none(), NULL);
    spinner s = {0};
    CHECK_EQ(0, pthread_create(&s.thread, NULL, spin, &s));
    sp_range_begin(SP_EVENT_FORWARD, "parent-before");
    while (atomic_load(&s.ranges) < 1000) sched_yield();
    CHECK_EQ(0, in_child(child_uses_inherited, p)); /* forks mid-write of the spinner */
    sp_range_end();
    sp_range_begin(SP_EVENT_BACKWARD, "parent-after");
    sp_range_end();
    atomic_store(&s.stop, 1);
    pthread_join(s.thread, NULL);
    CHECK_OK(sp_profiler_step(p, 1)); /* the parent's profiler is untouched */
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK_EQ(1, count_named(r, "parent-before"));
    CHECK_EQ(1, count_named(r, "parent-after"));
    CHECK_EQ(atomic_load(&s.ranges), count_named(r, "parent-worker"));
    CHECK_EQ(atomic_load(&s.ranges), count_named(r, "parent-worker-copy"));
    CHECK_EQ(0, count_named(r, "child-range") + count_named(r, "child-copy") +
                    count_named(r, "child-instant") + count_named(r, "child-added") +
                    count_named(r, "child-never-ended"));
    CHECK_EQ(2, sp_result_thread_count(r));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNMATCHED_ENDS));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_UNCLOSED_RANGES));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_MISUSE));
    CHECK_U64_EQ(0, sp_result_counter(r, SP_COUNTER_HOST_DROPPED));
    CHECK_U64_EQ(0, sp_profiler_misuse_count(p));
    sp_profiler_destroy(p);
}

typedef struct own_child {
    sp_profiler *inherited;
    char path[64];
} own_child;

static void child_records_with_its_own_profiler(void *arg)
{
    own_child *c = arg;
    sp_profiler *p = start_profiler(sp_handler_none(), NULL); /* the tracers are free here */
    CHECK_EQ(SP_STATE_RECORD, sp_profiler_state(p));
    for (int i = 0; i < 100; i++) {
        sp_range_begin(SP_EVENT_FORWARD, "child-own");
        sp_range_end();
    }
    CHECK_EQ(SP_ESTATE, sp_profiler_step(c->inherited, 1)); /* still inert */
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK_EQ(1, sp_result_thread_count(r));
    sp_thread_info info;
    CHECK_OK(sp_result_thread(r, 0, &info));
    CHECK_U64_EQ((uint64_t)syscall(SYS_gettid), info.tid);
    CHECK_EQ(100, count_named(r, "child-own"));
    CHECK_EQ(0, count_named(r, "parent-before"));
    CHECK_EQ(101, info.event_count); /* and ProfileStep#0 */
    CHECK_OK(sp_profiler_export(p, c->path, SP_FORMAT_JSON));
    sp_profiler_destroy(p);
    sp_profiler_destroy(c->inherited);
}

static void test_fork_child_profiler_gets_its_own_trace(void)
{
    sp_profiler *p = start_profiler(sp_handler_none(), NULL);
    sp_range_begin(SP_EVENT_FORWARD, "parent-before");
    own_child c = {p, "/tmp/stepprof-fork-XXXXXX.json"};
    int fd = mkstemps(c.path, 5);
    CHECK(fd >= 0);
    close(fd);
    CHECK_EQ(0, in_child(child_records_with_its_own_profiler, &c));
    sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    const sp_result *r = sp_profiler_result(p);
    CHECK_EQ(1, count_named(r, "parent-before"));
    CHECK_EQ(0, count_named(r, "child-own"));
    sp_result *loaded = NULL;
    CHECK_OK(sp_result_load(c.path, NULL, &loaded));
    CHECK_EQ(100, count_named(loaded, "child-own"));
    CHECK_EQ(0, count_named(loaded, "parent-before"));
    sp_result_release(loaded);
    unlink(c.path);
    sp_profiler_destroy(p);
}

static void child_destroys_inherited(void *arg)
{
    sp_profiler_destroy(arg); /* must not wait for the parent's writer thread */
    sp_profiler *p = start_profiler(sp_handler_none(), NULL);
    sp_range_begin(SP_EVENT_FORWARD, "child-own");
    sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    CHECK_EQ(1, count_named(sp_profiler_result(p), "child-own"));
    sp_profiler_destroy(p);
}

/* The parent writes a file per step on its writer thread; the fork lands
 * while that thread may hold its lock or be mid-job. */
static void test_fork_child_destroys_inherited_profiler_with_busy_writer(void)
{
    char dir[] = "/tmp/stepprof-fork-dir-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    sp_trace_handler h;
    CHECK_OK(sp_handler_chrome_tracing(&h, dir, "parent"));
    sp_scheduler sched;
    CHECK_OK(sp_scheduler_make(&sched, 0, 0, 1, 0, 0)); /* every step is a span */
    sp_profiler *p = start_profiler(h, &sched);
    for (int i = 0; i < 3; i++) {
        for (int k = 0; k < 2000; k++) {
            sp_range_begin(SP_EVENT_OPERATOR, "parent-op");
            sp_range_end();
        }
        CHECK_OK(sp_profiler_step(p, 1));
        CHECK_EQ(0, in_child(child_destroys_inherited, p));
    }
    CHECK_OK(sp_profiler_stop(p));
    CHECK(sp_profiler_trace_path(p) != NULL);
    sp_profiler_destroy(p);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ(0, system(cmd));
}

static void child_forks_again(void *arg)
{
    (void)arg;
    sp_profiler *p = start_profiler(sp_handler_none(), NULL);
    sp_range_begin(SP_EVENT_FORWARD, "child");
    unsigned gen = sp__record_fork_generation();
    CHECK_EQ(0, in_child(child_uses_inherited, p)); /* a grandchild */
    CHECK_EQ(gen, sp__record_fork_generation());
    sp_range_end();
    CHECK_OK(sp_profiler_stop(p));
    CHECK_EQ(1, count_named(sp_profiler_result(p), "child"));
    CHECK_EQ(0, count_named(sp_profiler_result(p), "child-range"));
    sp_profiler_destroy(p);
}

static sp_profiler *start_timer_only(void)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.log = quiet;
    o.timer_only = true;
    sp_profiler *p = NULL;
    CHECK_OK(sp_profiler_create(&o, &p));
    CHECK_OK(sp_profiler_start(p));
    return p;
}

static void spin_ms(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do
        clock_gettime(CLOCK_MONOTONIC, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

/* A profiler of the child's own times the child's Dataloader ranges. */
static void child_times_its_reader(void *arg)
{
    (void)arg;
    sp_profiler *p = start_timer_only();
    for (int i = 0; i < 3; i++) {
        sp_range_begin(SP_EVENT_DATALOADER, "child-loader");
        spin_ms(2);
        sp_range_end();
        CHECK_OK(sp_profiler_step(p, 1));
    }
    char info[256] = "";
    double reader_cost = 0;
    CHECK_OK(sp_profiler_step_info(p, NULL, info, sizeof info));
    CHECK_EQ(1, sscanf(info, " reader_cost: %lf", &reader_cost));
    CHECK(reader_cost >= 0.0015); /* each step waited 2 ms for its loader */
    sp_profiler_destroy(p);
}

static void *start_timer_on_this_thread(void *arg)
{
    *(sp_profiler **)arg = start_timer_only();
    return NULL;
}

/* The parent's benchmark timer was started on a thread the child does not
 * have: the child's timer stack and Dataloader watch start empty, so its own
 * profiler's timer watches the child's thread. */
static void test_fork_child_benchmark_timer_starts_fresh(void)
{
    sp_profiler *parents = NULL;
    pthread_t t;
    pthread_create(&t, NULL, start_timer_on_this_thread, &parents);
    pthread_join(t, NULL);
    CHECK_EQ(0, in_child(child_times_its_reader, NULL));
    sp_profiler_destroy(parents);
}

typedef struct timer_churn {
    pthread_t thread;
    _Atomic int stop;
} timer_churn;

/* Starts and stops benchmark timers (the timer stack's lock) nonstop. */
static void *churn_timers(void *arg)
{
    timer_churn *c = arg;
    while (!atomic_load(&c->stop)) {
        sp_profiler *p = start_timer_only();
        sp_range_begin(SP_EVENT_DATALOADER, "churn-loader");
        sp_range_end();
        sp_profiler_step(p, 1);
        sp_profiler_destroy(p);
    }
    return NULL;
}

static void child_starts_a_timer(void *arg)
{
    (void)arg;
    sp_profiler *p = start_timer_only();
    CHECK_OK(sp_profiler_step(p, 1));
    sp_profiler_destroy(p);
}

/* Forks while another thread takes the timer stack's and the reader's
 * locks: the fork handlers hold them across fork(), so no child finds one
 * locked (a child that hangs is killed by its alarm and fails). */
static void test_fork_while_timers_start_and_stop(void)
{
    timer_churn c = {0};
    pthread_create(&c.thread, NULL, churn_timers, &c);
    for (int i = 0; i < 100; i++) CHECK_EQ(0, in_child(child_starts_a_timer, NULL));
    atomic_store(&c.stop, 1);
    pthread_join(c.thread, NULL);
}

static void test_fork_grandchild_is_clean_too(void)
{
    sp_profiler *p = start_profiler(sp_handler_none(), NULL);
    CHECK_EQ(0, in_child(child_forks_again, NULL));
    CHECK_EQ(0, sp__record_fork_generation());
    CHECK_OK(sp_profiler_stop(p));
    sp_profiler_destroy(p);
}

int main(void)
{
    RUN_TEST(test_fork_parent_trace_holds_only_its_own_events);
    RUN_TEST(test_fork_child_profiler_gets_its_own_trace);
    RUN_TEST(test_fork_child_destroys_inherited_profiler_with_busy_writer);
    RUN_TEST(test_fork_grandchild_is_clean_too);
    RUN_TEST(test_fork_child_benchmark_timer_starts_fresh);
    RUN_TEST(test_fork_while_timers_start_and_stop);
    return TEST_SUMMARY();
}

/* test_alloc.c: allocation failure. Every allocation goes through sp__alloc,
 * so this test makes the 1st, 2nd, ... Nth allocation of a whole profiling
 * cycle fail in turn (create, record on two threads, collect, export,
 * destroy) and checks that each failure gives an error code or a degraded
 * result, never a crash or a leak (the sanitizer build checks leaks); also
 * with the memory cap full under the overwrite policy. */
#include "check.h"
#include "stepprof/stepprof.h"
#include "sys.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static int pairs_per_call = 100;

static void *record_some(void *arg)
{
    (void)arg;
    for (int i = 0; i < pairs_per_call; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, "op");
        sp_range_begin_copy(SP_EVENT_USER_DEFINED, "copied \xff name", 14);
        sp_range_end();
        sp_range_end();
    }
    return NULL;
}

static void quiet(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)message;
    (void)user;
}

static bool ring; /* the cycle fills a 2 MiB cap and overwrites the oldest */

/* One full cycle; returns 1 if every step succeeded. */
static int cycle(const char *path)
{
    sp_options o;
    sp_options_init(&o);
    o.log = quiet;
    if (ring) {
        o.buffer_cap_bytes = (size_t)2 << 20;
        o.overwrite_oldest = true;
    }
    sp_scheduler_make(&o.scheduler, 0, 1, 2, 1, 0);
    if (sp_handler_tensorboard(&o.on_trace_ready, path, "alloc", true) != SP_OK) return 0;
    sp_profiler *p;
    if (sp_profiler_create(&o, &p) != SP_OK) return 0;
    int ok = sp_profiler_start(p) == SP_OK;
    for (int step = 0; step < 4; step++) {
        pthread_t t;
        int started = pthread_create(&t, NULL, record_some, NULL) == 0;
        record_some(NULL);
        if (started) pthread_join(t, NULL);
        ok &= sp_profiler_step(p, 8) == SP_OK;
    }
    ok &= sp_profiler_stop(p) == SP_OK;
    ok &= sp_profiler_trace_path(p) != NULL && access(sp_profiler_trace_path(p), R_OK) == 0;
    sp_profiler_destroy(p);
    return ok;
}

static void sweep(void)
{
    char dir[] = "/tmp/stepprof-alloc-XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    sp__alloc_fail_at(0);
    CHECK(cycle(dir)); /* without injection everything works */
    uint64_t total = sp__alloc_fail_at(0);
    CHECK(total > 10);
    printf("allocation points swept: %llu\n", (unsigned long long)total);
    int failures_seen = 0;
    for (uint64_t nth = 1; nth <= total + 5; nth++) {
        sp__alloc_fail_at(nth);
        failures_seen += !cycle(dir);
    }
    sp__alloc_fail_at(0);
    CHECK(failures_seen > 0);
    printf("cycles that reported a failure: %d\n", failures_seen);
    CHECK(cycle(dir)); /* and still works afterwards */
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK_EQ(0, system(cmd));
}

static void test_alloc_every_failure_point_is_survived(void) { sweep(); }

/* The same at the memory cap under the overwrite policy, where chunks move
 * between threads and an exited thread's last chunk may need a new stub. */
static void test_alloc_every_failure_point_is_survived_at_the_ring_cap(void)
{
    ring = true;
    pairs_per_call = 8000;
    sweep();
    ring = false;
    pairs_per_call = 100;
}

/* Chunk pages come zeroed, and the page after them is a guard: a write one
 * byte past the end faults (in a child, which must not survive it). */
static void test_alloc_pages_are_zeroed_and_guarded(void)
{
    size_t bytes = (size_t)16 << 10;
    unsigned char *p = sp__alloc_pages(bytes);
    CHECK(p != NULL);
    size_t nonzero = 0;
    for (size_t i = 0; i < bytes; i++) nonzero += p[i] != 0;
    CHECK_EQ(0, nonzero);
    p[0] = 1;
    p[bytes - 1] = 1;
    fflush(NULL);
    pid_t child = fork();
    CHECK(child >= 0);
    if (child == 0) {
        signal(SIGSEGV, SIG_DFL);
        ((volatile unsigned char *)p)[bytes] = 1;
        _exit(0); /* the guard did not fault */
    }
    int status = 0;
    CHECK_EQ(child, waitpid(child, &status, 0));
    /* The sanitizers catch the fault themselves and exit non-zero. */
    CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
    sp__free_pages(p, bytes);
    /* Failure injection covers page allocations too. */
    sp__alloc_fail_at(1);
    CHECK(sp__alloc_pages(bytes) == NULL);
    sp__alloc_fail_at(0);
}

int main(void)
{
    RUN_TEST(test_alloc_pages_are_zeroed_and_guarded);
    RUN_TEST(test_alloc_every_failure_point_is_survived);
    RUN_TEST(test_alloc_every_failure_point_is_survived_at_the_ring_cap);
    return TEST_SUMMARY();
}

/* test_cupti_flusher.c: the periodic flush thread of cupti_flusher.c
 * calls its function while it runs, stops and joins on request, can be
 * started again, and a stop without a start (or twice) is harmless. The
 * only wait is "until the first flush", with no bound of its own (ctest's
 * timeout ends a flusher that never flushes), so the test has no timing
 * threshold. Skipped without CUPTI's headers. */
#ifndef SP_HAVE_CUPTI
#include <stdio.h>

int main(void)
{
    printf("skip: built without CUPTI's headers\n");
    return 77;
}
#else

#include "check.h"
#include "cupti_load.h"

#include <dirent.h>
#include <stdatomic.h>
#include <time.h>

static atomic_int flushes;

static void count_flush(void) { atomic_fetch_add(&flushes, 1); }

static void wait_for_flush(int at_least)
{
    struct timespec tick = {0, 10 * 1000 * 1000};
    while (atomic_load(&flushes) < at_least) nanosleep(&tick, NULL);
}

static void test_cupti_flusher_flushes_until_stopped(void)
{
    atomic_store(&flushes, 0);
    sp__cupti_flusher_start(count_flush);
    wait_for_flush(1);
    sp__cupti_flusher_stop();
    int seen = atomic_load(&flushes);
    CHECK(seen >= 1);
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    CHECK_EQ(seen, atomic_load(&flushes)); /* joined: no flush after stop */
}

static void test_cupti_flusher_restarts(void)
{
    atomic_store(&flushes, 0);
    sp__cupti_flusher_start(count_flush);
    sp__cupti_flusher_start(count_flush); /* already running: ignored */
    sp__cupti_flusher_stop();
    sp__cupti_flusher_start(count_flush);
    wait_for_flush(1);
    sp__cupti_flusher_stop();
    CHECK(atomic_load(&flushes) >= 1);
}

/* The threads of this process (/proc/self/task), or -1. A thread shows up
 * there as soon as pthread_create returns; only counts taken when no thread
 * has just ended are compared, since an ended thread may linger a moment. */
static int thread_count(void)
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_cupti_flusher_stop_without_start(void)
{
    atomic_store(&flushes, 0);
    int before = thread_count();
    CHECK(before >= 1);
    sp__cupti_flusher_stop(); /* returns at once: nothing to join */
    sp__cupti_flusher_stop();
    CHECK_EQ(before, thread_count());
    sp__cupti_flusher_start(NULL); /* nothing to call: no thread */
    CHECK_EQ(before, thread_count());
    sp__cupti_flusher_stop();
    CHECK_EQ(before, thread_count());
    CHECK_EQ(0, atomic_load(&flushes));
    /* The harmless calls left it startable: one thread, which flushes. */
    sp__cupti_flusher_start(count_flush);
    CHECK_EQ(before + 1, thread_count());
    wait_for_flush(1);
    sp__cupti_flusher_stop();
    CHECK(atomic_load(&flushes) >= 1);
}

int main(void)
{
    RUN_TEST(test_cupti_flusher_stop_without_start);
    RUN_TEST(test_cupti_flusher_flushes_until_stopped);
    RUN_TEST(test_cupti_flusher_restarts);
    return TEST_SUMMARY();
}

#endif /* SP_HAVE_CUPTI */

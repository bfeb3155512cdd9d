/* cupti_flusher.c: the background thread that asks CUPTI, about once a
 * second while GPU tracing is active, to hand over its completed buffers
 * (docs/design.md, GPU recorder), so that the pool is refilled and the
 * discard buffer stays unused. cupti_tracer.c starts it at prepare and stops
 * it at release, under its control lock; the flush callback never runs
 * while this file's lock is held, so it may take the recorder's locks. */
#define _GNU_SOURCE
#ifdef SP_HAVE_CUPTI

#include "cupti_load.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake; /* on CLOCK_MONOTONIC, made at the first start */

static struct {
    void (*flush)(void); /* written before the thread starts */
    pthread_t thread;
    int running;    /* control lock of the caller */
    int stop, init; /* under lock */
} f;

static void *flusher_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    while (!f.stop) {
        struct timespec until;
        clock_gettime(CLOCK_MONOTONIC, &until);
        until.tv_sec += 1;
        int r = 0;
        while (!f.stop && r != ETIMEDOUT) r = pthread_cond_timedwait(&wake, &lock, &until);
        if (f.stop) break;
        pthread_mutex_unlock(&lock);
        f.flush();
        pthread_mutex_lock(&lock);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

void sp__cupti_flusher_start(void (*flush)(void))
{
    if (f.running || !flush) return;
    pthread_mutex_lock(&lock);
    if (!f.init) {
        pthread_condattr_t attr;
        pthread_condattr_init(&attr);
        pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
        pthread_cond_init(&wake, &attr);
        pthread_condattr_destroy(&attr);
        f.init = 1;
    }
    f.stop = 0;
    f.flush = flush;
    pthread_mutex_unlock(&lock);
    /* Every signal blocked, so the application's handlers never run here. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    f.running = pthread_create(&f.thread, NULL, flusher_main, NULL) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void sp__cupti_flusher_stop(void)
{
    if (!f.running) return;
    pthread_mutex_lock(&lock);
    f.stop = 1;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    pthread_join(f.thread, NULL);
    f.running = 0;
}

#endif /* SP_HAVE_CUPTI */

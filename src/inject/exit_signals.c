/* exit_signals.c: the exit hook's signal half. A span still recording when
 * SIGTERM or SIGINT ends the process is stopped and written as at exit(),
 * with one line saying so, and then the signal is raised again with its
 * default action, so the process ends with the status it would have had.
 * Only signals whose disposition is still the default when the first
 * profiler starts are taken: a program's own handler (or SIG_IGN) is left
 * alone, and a handler installed later replaces this one.
 * Stopping a profiler allocates and takes locks, which a signal handler must
 * not do, so the handler only writes the signal's number to a pipe; a helper
 * thread reads it and does the work under the profilers' drive lock, which
 * keeps the program's own start/step/stop calls out meanwhile. */
#define _GNU_SOURCE
#include "api.h"
#include "inject.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static const int signals[] = {SIGTERM, SIGINT};
enum { NSIG_TAKEN = (int)(sizeof signals / sizeof signals[0]) };

static int pipe_fds[2] = {-1, -1};
static int taken[NSIG_TAKEN];
static atomic_int pending; /* a signal is being handled */
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void restore_default(int sig)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(sig, &sa, NULL);
}

/* A second signal while the first is handled ends the process at once, so
 * a stop that hangs can still be interrupted. */
static void on_signal(int sig)
{
    int saved = errno;
    if (atomic_exchange(&pending, 1)) {
        restore_default(sig);
        raise(sig);
    }
    unsigned char b = (unsigned char)sig;
    if (write(pipe_fds[1], &b, 1) != 1) {
        restore_default(sig);
        raise(sig);
    }
    errno = saved;
}

static void *helper(void *arg)
{
    (void)arg;
    unsigned char b;
    ssize_t n;
    do n = read(pipe_fds[0], &b, 1);
    while (n < 0 && errno == EINTR);
    if (n != 1) return NULL;
    int sig = b;
    sp__profilers_stop_for_signal(sig == SIGINT ? "at SIGINT" : "at SIGTERM");
    restore_default(sig);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig); /* the default action ends the whole process */
    return NULL;
}

/* A forked child has no helper thread: its signals go back to the default. */
static void fork_child(void)
{
    for (int i = 0; i < NSIG_TAKEN; i++)
        if (taken[i]) restore_default(signals[i]);
    atomic_store(&pending, 0);
}

static void install(void)
{
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) return;
    /* The helper must not take the signals itself before it is ready, nor
     * ever run the handler: it is created with them blocked. */
    sigset_t block, old;
    sigemptyset(&block);
    for (int i = 0; i < NSIG_TAKEN; i++) sigaddset(&block, signals[i]);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    pthread_t t;
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    int err = pthread_create(&t, &attr, helper, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) return;
    pthread_atfork(NULL, NULL, fork_child);
    for (int i = 0; i < NSIG_TAKEN; i++) {
        struct sigaction prev, sa;
        if (sigaction(signals[i], NULL, &prev) != 0) continue;
        if ((prev.sa_flags & SA_SIGINFO) || prev.sa_handler != SIG_DFL) continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        taken[i] = sigaction(signals[i], &sa, NULL) == 0;
    }
}

void sp__exit_signals_install(void) { pthread_once(&once, install); }

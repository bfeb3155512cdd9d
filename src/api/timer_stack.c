/* timer_stack.c: the process-wide stack of benchmark timers (semantics.md
 * §7). Each profiler owns one timer; start() pushes it and stop() pops it,
 * so a profiler started inside another (evaluation inside training) times
 * its own steps. Reader costs, the outermost Dataloader ranges of the thread
 * that started the timers (reader.c), feed the timer on top. */
#include "api.h"
#include "fork.h"
#include "reader.h"
#include "timer.h"

#include <pthread.h>

#define MAX_TIMERS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static sp__timer *stack[MAX_TIMERS];
static int depth;

/* fork() (record/fork.c): the lock is taken around it, inside the reader's;
 * the child's stack is empty, since the timers on it belong to profilers
 * that are inert there. */
static void fork_lock(void) { pthread_mutex_lock(&lock); }
static void fork_unlock(void) { pthread_mutex_unlock(&lock); }
static void fork_child(void) { depth = 0; }
static const sp__fork_hook fork_hook = {fork_lock, fork_unlock, fork_child};
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static void add_fork_hook(void) { sp__record_fork_hook(&fork_hook); }

static void on_reader(void *ctx, uint64_t reader_id, int64_t begin_ns, int64_t end_ns)
{
    (void)ctx;
    pthread_mutex_lock(&lock);
    /* now = the load's begin: a resumed step includes the load that resumed it. */
    if (depth > 0) sp__timer_reader(stack[depth - 1], reader_id, end_ns - begin_ns, begin_ns);
    pthread_mutex_unlock(&lock);
}

int64_t sp__timer_now_ns(void) { return (int64_t)sp__clock_raw_ns(CLOCK_MONOTONIC); }

void sp__timer_push(sp__timer *t)
{
    pthread_once(&fork_once, add_fork_hook);
    sp__timer_start(t, sp__timer_now_ns());
    pthread_mutex_lock(&lock);
    if (depth < MAX_TIMERS) stack[depth++] = t; /* deeper nesting is not timed */
    int first = depth == 1;
    pthread_mutex_unlock(&lock);
    if (first) sp__reader_watch(on_reader, NULL);
}

void sp__timer_pop(sp__timer *t)
{
    pthread_mutex_lock(&lock);
    int found = -1;
    for (int i = depth - 1; i >= 0 && found < 0; i--)
        if (stack[i] == t) found = i;
    if (found >= 0) {
        for (int i = found; i + 1 < depth; i++) stack[i] = stack[i + 1];
        depth--;
    }
    int empty = depth == 0;
    pthread_mutex_unlock(&lock);
    if (empty && found >= 0) sp__reader_watch(NULL, NULL);
}

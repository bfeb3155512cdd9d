/* reader.c: finds the outermost Dataloader ranges of the thread that runs
 * the benchmark timer, so that reader_cost (semantics.md §7) is measured in
 * every step, recorded or not. Begin and end records carry no type, so once
 * a Dataloader range opens, the thread counts every begin and end until the
 * depth returns to zero; meanwhile its range calls take the slow path (the
 * caller forces that). Times come from CLOCK_MONOTONIC, like the timer's.
 *
 * While no profiler records, the inline range calls reach the library only
 * for Dataloader begins (bit 1 of sp__host_active). Opening a timed range
 * sets bit 3 until it closes, so that every begin and end of the timer's
 * thread is counted meanwhile; other threads then pass through the library
 * too, doing nothing, for as long as the load lasts.
 *
 * A load can also be timed by two calls and no range (sp__reader_load_begin
 * and _end): paddle's DataLoader announces each batch to its benchmark hooks
 * (python/stepprof/_paddle_reader.py), and paddle's own tracer records the
 * batch's Dataloader event, so a range of ours would show it twice. */
#include "fork.h"
#include "reader.h"

#include <pthread.h>
#include <time.h>

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static sp__reader_fn watch_fn;
static void *watch_ctx;
static pthread_t watch_thread;
static _Atomic int watching;

static _Thread_local struct {
    int depth;        /* open ranges since the Dataloader range began, itself included */
    uint64_t id;
    int64_t begin_ns;
} open_reader;

/* The open call-timed load of this thread; a begin overwrites an unended
 * one, as paddle's own timer does (a load that raised, such as the one that
 * ends an epoch, never sees its end). */
static _Thread_local struct {
    int open;
    uint64_t id;
    int64_t begin_ns;
} open_load;

static int64_t monotonic_ns(void) { return (int64_t)sp__clock_raw_ns(CLOCK_MONOTONIC); }

void sp__reader_watch(sp__reader_fn fn, void *ctx)
{
    pthread_mutex_lock(&watch_lock);
    watch_fn = fn;
    watch_ctx = ctx;
    watch_thread = pthread_self();
    atomic_store(&watching, fn != NULL);
    if (fn)
        __atomic_fetch_or(&sp__host_active, 2, __ATOMIC_RELEASE);
    else
        __atomic_fetch_and(&sp__host_active, ~2, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&watch_lock);
}

int sp__reader_on_begin(sp_event_type type, uint64_t reader_id)
{
    if (open_reader.depth > 0) {
        open_reader.depth++;
        return 1;
    }
    if (type != SP_EVENT_DATALOADER || !atomic_load_explicit(&watching, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&watch_lock);
    int mine = watch_fn && pthread_equal(watch_thread, pthread_self());
    pthread_mutex_unlock(&watch_lock);
    if (!mine) return 0;
    open_reader.depth = 1;
    __atomic_fetch_or(&sp__host_active, SP__ACTIVE_READER, __ATOMIC_RELEASE);
    open_reader.id = reader_id;
    open_reader.begin_ns = monotonic_ns();
    return 1;
}

int sp__reader_is_open(void) { return open_reader.depth > 0; }

int sp__reader_on_end(void)
{
    if (open_reader.depth == 0) return 0;
    if (--open_reader.depth > 0) return 1;
    __atomic_fetch_and(&sp__host_active, ~SP__ACTIVE_READER, __ATOMIC_RELEASE);
    int64_t end_ns = monotonic_ns();
    pthread_mutex_lock(&watch_lock);
    if (watch_fn && pthread_equal(watch_thread, pthread_self()))
        watch_fn(watch_ctx, open_reader.id, open_reader.begin_ns, end_ns);
    pthread_mutex_unlock(&watch_lock);
    return 0;
}

void sp__reader_load_begin(uint64_t reader_id)
{
    /* Inside a watched Dataloader range the range already times this load:
     * the outermost one counts, as for nested ranges. */
    open_load.open =
        open_reader.depth == 0 && atomic_load_explicit(&watching, memory_order_relaxed);
    open_load.id = reader_id;
    open_load.begin_ns = monotonic_ns();
}

void sp__reader_load_end(void)
{
    if (!open_load.open) return;
    open_load.open = 0;
    int64_t end_ns = monotonic_ns();
    pthread_mutex_lock(&watch_lock);
    if (watch_fn && pthread_equal(watch_thread, pthread_self()))
        watch_fn(watch_ctx, open_load.id, open_load.begin_ns, end_ns);
    pthread_mutex_unlock(&watch_lock);
}

void sp__reader_fork_lock(void) { pthread_mutex_lock(&watch_lock); }

void sp__reader_fork_unlock(void) { pthread_mutex_unlock(&watch_lock); }

void sp__reader_fork_child(void)
{
    watch_fn = NULL;
    watch_ctx = NULL;
    atomic_store(&watching, 0);
    __atomic_fetch_and(&sp__host_active, ~(2 | SP__ACTIVE_READER), __ATOMIC_RELEASE);
    open_reader.depth = 0; /* the forking thread's, now the child's only thread */
    open_load.open = 0;
}

/* fork.c: what the recording stage does around fork(). A forked child
 * starts with a clean recording state: recording is off, the thread
 * registry, the chunk pool and the memory count are empty, no benchmark
 * timer watches Dataloader ranges, and the fork
 * generation is one higher, so that the profiler layer can tell objects
 * inherited from the parent (created in an earlier generation) from the
 * child's own. Nothing is freed in the child: the parent's buffers are
 * forgotten, not released, because the threads that wrote them do not exist
 * in the child and may have been mid-write, and because freeing would touch
 * (and so copy) every page of them, while untouched they cost the child
 * nothing under copy-on-write. They stay reachable from a static list so
 * that leak checkers do not report them.
 *
 * The prepare handler takes the registry, stream cursor, pool and reader
 * locks (in the order the code nests them: registry, then cursor or pool;
 * the reader lock is never held with those), then the locks of the hooks
 * later stages added (the benchmark timer stack's, which the reader's
 * callback takes inside the reader lock), so the child's copies are
 * consistent and unlocked. The handlers are registered once, from
 * sp__clock_init, which every path that can record or create a profiler
 * runs first. */
#include "chunks.h"
#include "correlate.h"
#include "fork.h"
#include "reader.h"
#include "threads.h"

#include <pthread.h>

static _Atomic unsigned generation;

unsigned sp__record_fork_generation(void)
{
    return atomic_load_explicit(&generation, memory_order_relaxed);
}

#define MAX_HOOKS 4
static const sp__fork_hook *_Atomic hooks[MAX_HOOKS];
static _Atomic int hook_count;

void sp__record_fork_hook(const sp__fork_hook *hook)
{
    int i = atomic_fetch_add(&hook_count, 1);
    if (i < MAX_HOOKS)
        atomic_store(&hooks[i], hook);
    else
        atomic_fetch_sub(&hook_count, 1);
}

/* The hooks registered so far, each taken whole (a hook being added during
 * a fork is seen or not, never half). */
static int hooks_now(const sp__fork_hook *out[MAX_HOOKS])
{
    int n = 0, count = atomic_load(&hook_count);
    for (int i = 0; i < count && i < MAX_HOOKS; i++)
        if ((out[n] = atomic_load(&hooks[i]))) n++;
    return n;
}

static const sp__fork_hook *held[MAX_HOOKS];
static int held_count;

static void before_fork(void)
{
    sp__threads_lock();
    sp__stream_fork_lock();
    sp__chunks_fork_lock();
    sp__reader_fork_lock();
    held_count = hooks_now(held);
    for (int i = 0; i < held_count; i++) held[i]->lock();
}

static void in_parent(void)
{
    for (int i = held_count; i-- > 0;) held[i]->unlock();
    sp__reader_fork_unlock();
    sp__chunks_fork_unlock();
    sp__stream_fork_unlock();
    sp__threads_unlock();
}

static void in_child(void)
{
    sp__record_set_active(0);
    sp__record_set_memory(0);
    sp__threads_fork_child();
    sp__chunks_fork_child();
    sp__reader_fork_child();
    sp__correlate_fork_child();
    for (int i = 0; i < held_count; i++) held[i]->child();
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
    in_parent(); /* the child's only thread holds the locks: release them */
}

static pthread_once_t registered = PTHREAD_ONCE_INIT;

static void register_handlers(void) { pthread_atfork(before_fork, in_parent, in_child); }

void sp__record_fork_init(void) { pthread_once(&registered, register_handlers); }

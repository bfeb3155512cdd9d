/* fork.c: what the recording stage does around fork(). A forked child
 * starts with a clean recording state: recording is off, the thread
 * registry, the chunk pool and the memory count are empty, and the fork
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
 * the reader lock is never held with the others), so the child's copies are
 * consistent and unlocked. The handlers are registered once, from
 * sp__clock_init, which every path that can record or create a profiler
 * runs first. */
#include "chunks.h"
#include "fork.h"
#include "reader.h"
#include "threads.h"

#include <pthread.h>

static _Atomic unsigned generation;

unsigned sp__record_fork_generation(void)
{
    return atomic_load_explicit(&generation, memory_order_relaxed);
}

static void before_fork(void)
{
    sp__threads_lock();
    sp__stream_fork_lock();
    sp__chunks_fork_lock();
    sp__reader_fork_lock();
}

static void in_parent(void)
{
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
    atomic_fetch_add_explicit(&generation, 1, memory_order_relaxed);
    in_parent(); /* the child's only thread holds the locks: release them */
}

static pthread_once_t registered = PTHREAD_ONCE_INIT;

static void register_handlers(void) { pthread_atfork(before_fork, in_parent, in_child); }

void sp__record_fork_init(void) { pthread_once(&registered, register_handlers); }

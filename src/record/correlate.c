/* correlate.c: pushes and pops the ranges of each thread to the correlator
 * (correlate.h). Each thread keeps one bit per open range, saying whether
 * its begin was pushed: a begin that was dropped at the cap, or that came
 * deeper than the bits reach, pushed nothing, so its end pops nothing and
 * the enclosing range keeps its id. The bits belong to one correlator: a
 * new one (a new generation) starts every thread from depth 0, since the
 * ends of ranges begun while none was set took the fast path unseen. */
#include "correlate.h"
#include "record.h"

#include <stdatomic.h>

enum { TRACKED_DEPTH = 64 };

static _Atomic(const sp__correlator *) current;
static _Atomic unsigned generation;

static _Thread_local struct {
    unsigned generation;
    unsigned depth;  /* open ranges seen since this generation began */
    uint64_t pushed; /* bit d: the range at depth d was pushed */
} mine;

void sp__record_set_correlator(const sp__correlator *c)
{
    if (c) atomic_fetch_add(&generation, 1);
    atomic_store(&current, c);
    if (c)
        __atomic_fetch_or(&sp__host_active, SP__ACTIVE_CORRELATE, __ATOMIC_RELEASE);
    else
        __atomic_fetch_and(&sp__host_active, ~SP__ACTIVE_CORRELATE, __ATOMIC_RELEASE);
}

/* The correlator, with this thread's bits brought to its generation. */
static const sp__correlator *follow(void)
{
    const sp__correlator *c = atomic_load_explicit(&current, memory_order_acquire);
    if (!c) return NULL;
    unsigned g = atomic_load_explicit(&generation, memory_order_relaxed);
    if (mine.generation != g) {
        mine.generation = g;
        mine.depth = 0;
        mine.pushed = 0;
    }
    return c;
}

void sp__correlate_begin(int recorded, uint64_t ticks)
{
    const sp__correlator *c = follow();
    if (!c) return;
    unsigned d = mine.depth++;
    if (d >= TRACKED_DEPTH) return;
    uint64_t bit = UINT64_C(1) << d;
    if (recorded) {
        c->push(ticks);
        mine.pushed |= bit;
    } else {
        mine.pushed &= ~bit;
    }
}

void sp__correlate_end(void)
{
    const sp__correlator *c = follow();
    if (!c || mine.depth == 0) return; /* an end whose begin came before the correlator */
    unsigned d = --mine.depth;
    if (d >= TRACKED_DEPTH) return;
    uint64_t bit = UINT64_C(1) << d;
    if (mine.pushed & bit) c->pop();
    mine.pushed &= ~bit;
}

void sp__correlate_fork_child(void)
{
    atomic_store(&current, NULL);
    __atomic_fetch_and(&sp__host_active, ~SP__ACTIVE_CORRELATE, __ATOMIC_RELEASE);
    mine.depth = 0;
    mine.pushed = 0;
}

/* ring.c: the overwrite policy at the memory cap (sp_options.overwrite_oldest).
 * When a thread needs a new chunk and the cap allows none, it takes the
 * oldest chunk over all threads instead of dropping its new events: the
 * first chunk of some thread's chain that its writer has left (one with a
 * successor, or any chunk of a thread that has exited), the one whose
 * writer took it first. The events in it that no
 * drain has consumed yet are lost: they are counted on the thread that
 * wrote them (`overwritten`, reported as that thread's drops), and so are
 * the begins among them still open, whose ends are yet to come
 * (`lost_open`), so that the collector can skip those ends instead of
 * calling them unmatched. A taken chunk keeps its size; every chunk has room
 * for the largest event and the end reserve.
 *
 * A take runs on a thread's slow path, once per chunk at most, under the
 * registry lock, which excludes drains and other takes: a drain or a take
 * is the only thing that changes a chain's head or a thread's read
 * position. It never waits for a drain (a drain can take long; the event is
 * dropped instead) and never runs on a thread that holds that lock already
 * (a signal handler that records). The stream and the crash handler read
 * chains without that lock: the stream's cursor is moved under its own lock
 * (sp__stream_forget_chunk), and a crash dump taken during a take is best
 * effort, as during a drain. */
#include "fork.h"
#include "ring.h"
#include "stream.h"
#include "threads.h"

#include <stdatomic.h>

/* Every chunk can take the largest event with the end reserve behind it,
 * so a taken chunk of any size serves any writer. */
_Static_assert((16384 - sizeof(sp__chunk)) / sizeof(sp__word) >=
                   SP__COMPLETE_WORDS + SP__NAME_WORDS(SP__NAME_MAX_BYTES + 1) + SP__END_RESERVE,
               "the smallest chunk must hold the largest event and the end reserve");

static _Atomic int overwrite;
/* The stop tick of the newest span awaiting its drain, 0 for none. */
static _Atomic uint64_t held_until;

void sp__record_set_overwrite(int on) { atomic_store_explicit(&overwrite, on != 0, memory_order_relaxed); }

void sp__record_hold(uint64_t ticks) { atomic_store_explicit(&held_until, ticks, memory_order_release); }

void sp__record_unhold(uint64_t ticks)
{
    uint64_t expected = ticks;
    atomic_compare_exchange_strong(&held_until, &expected, 0);
}

int sp__ring_on(void) { return atomic_load_explicit(&overwrite, memory_order_relaxed); }

/* The chunk of tb that a take may reuse: its first chunk with words (after
 * the stub a new thread starts with), once its writer has left it, or the
 * thread has exited. *stub receives the stub before it, or NULL. */
static sp__chunk *reusable_chunk(sp__tbuf *tb, sp__chunk **stub)
{
    sp__chunk *c = tb->head;
    *stub = NULL;
    if (c && c->bytes == 0) {
        *stub = c;
        c = atomic_load_explicit(&c->next, memory_order_acquire);
    }
    if (!c || c->bytes == 0) return NULL;
    if (c->start_ticks <= atomic_load_explicit(&held_until, memory_order_acquire))
        return NULL; /* it may hold records of a span awaiting its drain */
    if (atomic_load_explicit(&c->next, memory_order_acquire)) return c;
    return atomic_load_explicit(&tb->exited, memory_order_acquire) ? c : NULL;
}

/* Counts the unread events of c (the first chunk of tb's chain after `stub`)
 * up to `stop` as overwritten, and its begins still open as lost. */
static void count_lost(sp__tbuf *tb, const sp__chunk *c, const sp__chunk *stub, const sp__word *stop)
{
    const sp__word *w;
    if (sp__in_chunk(c, tb->read))
        w = tb->read;
    else if (stub && sp__in_chunk(stub, tb->read))
        w = c->words;
    else
        return; /* a drain consumed it all */
    if (!stop || !sp__in_chunk(c, stop)) return;
    uint64_t lost = 0, open = 0;
    while (w < stop) {
        size_t n = sp__event_words(w);
        if (n > (size_t)(stop - w)) break;
        switch (SP__REC_KIND(*w)) {
        case SP__REC_BEGIN:
        case SP__REC_BEGIN_COPY:
            open++;
            lost++;
            break;
        case SP__REC_END:
            /* Ranges nest per thread: an end closes the innermost begin,
             * here, or else among those lost before, or else one a drain
             * consumed. */
            if (open > 0)
                open--;
            else if (tb->lost_open > 0)
                tb->lost_open--;
            break;
        default:
            lost++;
        }
        w += n;
    }
    tb->lost_open += open;
    atomic_fetch_add_explicit(&tb->overwritten, lost, memory_order_relaxed);
}

/* Unlinks c, the first chunk of tb after `stub`, which has a successor. */
static void unlink_sealed(sp__tbuf *tb, sp__chunk *c, sp__chunk *stub)
{
    count_lost(tb, c, stub, atomic_load_explicit(&c->sealed_end, memory_order_acquire));
    sp__chunk *next = atomic_load_explicit(&c->next, memory_order_acquire);
    if (stub)
        atomic_store_explicit(&stub->next, next, memory_order_release);
    else
        tb->head = next;
    if (sp__in_chunk(c, tb->read)) tb->read = next->words;
    sp__stream_forget_chunk(tb, c, next);
}

/* Unlinks c, the last chunk of exited thread tb, leaving tb an empty chain
 * (a stub) that the next drain frees with it. 0 if no stub can be made. */
static int unlink_last(sp__tbuf *tb, sp__chunk *c, sp__chunk *stub)
{
    sp__chunk *empty = stub ? stub : sp__alloc(sizeof *empty);
    if (!empty) return 0;
    count_lost(tb, c, stub, atomic_load_explicit(&tb->pos, memory_order_acquire));
    atomic_store_explicit(&empty->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&empty->sealed_end, empty->words, memory_order_relaxed);
    tb->head = tb->cur = empty;
    tb->read = empty->words;
    atomic_store_explicit(&tb->pos, empty->words, memory_order_release);
    sp__stream_forget_chunk(tb, c, empty);
    return 1;
}

sp__chunk *sp__ring_take(void)
{
    if (!sp__threads_lock_for_ring()) return NULL;
    sp__tbuf *owner = NULL;
    sp__chunk *victim = NULL, *victim_stub = NULL;
    for (sp__tbuf *tb = sp__threads_first(); tb; tb = tb->next_thread) {
        sp__chunk *stub;
        sp__chunk *c = reusable_chunk(tb, &stub);
        if (c && (!victim || c->start_ticks < victim->start_ticks)) {
            owner = tb;
            victim = c;
            victim_stub = stub;
        }
    }
    if (victim) {
        int taken = 1;
        if (atomic_load_explicit(&victim->next, memory_order_acquire))
            unlink_sealed(owner, victim, victim_stub);
        else
            taken = unlink_last(owner, victim, victim_stub);
        if (taken) {
            atomic_store_explicit(&victim->next, NULL, memory_order_relaxed);
            atomic_store_explicit(&victim->sealed_end, NULL, memory_order_relaxed);
        } else {
            victim = NULL;
        }
    }
    sp__threads_unlock();
    return victim;
}

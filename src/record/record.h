/* record.h: what the recording stage offers the collect stage. Every thread
 * that records owns a chain of chunks of 8-byte words. The thread is the only
 * writer and publishes its write position with a release store after each
 * event; the collector is the only reader, consumes words up to the published
 * position, and recycles chunks the writer has left. No lock and no atomic
 * read-modify-write is taken per event.
 *
 * Event encoding. The first word of every event carries a 3-bit kind in its
 * top bits. An end is that word alone, its low 61 bits the low bits of the
 * tick count (the collector restores the high bits from the thread's
 * previous event), so a range costs 3 words: 24 bytes. Every other event's
 * first word holds the kind, a 5-bit event type and a pointer or a length in
 * its low 56 bits (user-space pointers fit in 56 bits on every Linux target,
 * la57 included); its second word is the full tick count; more words follow
 * as the kind says. A thread's events are in time order, and an event never
 * spans two chunks. */
#ifndef SP_RECORD_H
#define SP_RECORD_H

#include "clock.h"
#include "sys.h"

#include <stdatomic.h>
#include <stdint.h>

typedef uint64_t sp__word;

enum sp__rec_kind {
    SP__REC_BEGIN = 1,      /* low: static name pointer */
    SP__REC_BEGIN_COPY = 2, /* low: name length; the name bytes follow */
    SP__REC_END = 3,        /* one word: kind and low tick bits */
    SP__REC_INSTANT = 4,    /* low: static name pointer */
    SP__REC_COUNTER = 5,    /* low: static name pointer; then the value's bits */
    SP__REC_COMPLETE = 6,   /* low: name length; then begin, end ticks; the name bytes */
    SP__REC_MEMORY = 7      /* low: place pointer; then addr, bytes, current x2, peak x2 */
};

#define SP__REC_KIND_SHIFT 61
#define SP__REC_TYPE_SHIFT 56
#define SP__REC_LOW_MASK ((UINT64_C(1) << 56) - 1)
#define SP__REC_END_TICKS_MASK ((UINT64_C(1) << SP__REC_KIND_SHIFT) - 1)
#define SP__REC_KIND(w) ((unsigned)((w) >> SP__REC_KIND_SHIFT))
#define SP__REC_TYPE(w) ((unsigned)(((w) >> SP__REC_TYPE_SHIFT) & 31u))
#define SP__REC_LOW(w) ((w) & SP__REC_LOW_MASK)
#define SP__REC_WORD(kind, type, low)                                          \
    (((uint64_t)(kind) << SP__REC_KIND_SHIFT) |                                \
     ((uint64_t)(type) << SP__REC_TYPE_SHIFT) | ((uint64_t)(low) & SP__REC_LOW_MASK))
#define SP__REC_END_WORD(ticks)                                                \
    (((uint64_t)SP__REC_END << SP__REC_KIND_SHIFT) | ((ticks) & SP__REC_END_TICKS_MASK))

/* Words each kind takes before its name bytes. */
#define SP__BEGIN_WORDS 2
#define SP__INSTANT_WORDS 2
#define SP__COUNTER_WORDS 3
#define SP__COMPLETE_WORDS 4
#define SP__MEMORY_WORDS 8

/* Copied names longer than this are cut when recorded; one extra byte is kept
 * so that collection can tell the name was cut. */
#define SP__NAME_MAX_BYTES 4096
#define SP__NAME_WORDS(len) (((len) + sizeof(sp__word) - 1) / sizeof(sp__word))

/* The whole size of the event that starts at w, in words. */
static inline size_t sp__event_words(const sp__word *w)
{
    switch (SP__REC_KIND(*w)) {
    case SP__REC_BEGIN_COPY:
        return SP__BEGIN_WORDS + SP__NAME_WORDS(SP__REC_LOW(*w));
    case SP__REC_END:
        return 1;
    case SP__REC_COUNTER:
        return SP__COUNTER_WORDS;
    case SP__REC_COMPLETE:
        return SP__COMPLETE_WORDS + SP__NAME_WORDS(SP__REC_LOW(*w));
    case SP__REC_MEMORY:
        return SP__MEMORY_WORDS;
    default:
        return 2;
    }
}

/* The time of the event at w. An end carries only the low bits; `prev` is
 * the time of the thread's previous event, which fixes the high bits. */
static inline uint64_t sp__event_ticks(const sp__word *w, uint64_t prev)
{
    if (SP__REC_KIND(*w) != SP__REC_END) return w[1];
    uint64_t t = (prev & ~SP__REC_END_TICKS_MASK) | (*w & SP__REC_END_TICKS_MASK);
    return t < prev ? t + SP__REC_END_TICKS_MASK + 1 : t;
}

/* Words every chunk keeps free behind the fast path's limit, for the ends of
 * the ranges open when a fast-path begin is written: the fast path takes
 * begins only while fewer than this many are open, and the slow path asks
 * for room for every end (record.c), so reaching the memory cap never drops
 * the end of a kept range. */
#define SP__END_RESERVE 128

typedef struct sp__chunk {
    struct sp__chunk *_Atomic next; /* set by the writer when it moves on */
    _Atomic(sp__word *) sealed_end;  /* last written position, set before next */
    size_t cap;                     /* words */
    size_t bytes;                   /* allocation size, counted in the cap */
    uint64_t start_ticks;           /* when its writer took it: its age (ring.c) */
    sp__word words[];
} sp__chunk;

/* One recording thread. The writer fields come first and are touched only by
 * the thread itself; `pos` is also read by the collector (acquire). */
typedef struct sp__tbuf {
    _Atomic(sp__word *) pos; /* next free word; published after each event */
    sp__word *limit;         /* a begin (2 words) fits if pos is below this */
    sp__word *hard_limit;    /* an end (1 word) fits if pos is below this */
    sp__chunk *cur;
    uint64_t dropped_open;  /* ranges begun while dropping, not yet ended */
    int dropping;
    int reader_open;        /* a Dataloader range is being timed (reader.c) */
    uint64_t epoch;         /* the recording it last recorded in (record.c) */
    _Atomic uint64_t dropped; /* events dropped at the cap (writer stores only) */
    _Atomic uint64_t misuse;  /* bad arguments seen on the hot path */
    /* Events dropped because their call interrupted a recording call of the
     * thread (a signal handler that records); added by those calls only. */
    _Atomic uint64_t nested;

    /* Collector side. */
    sp__chunk *head;        /* oldest chunk not yet recycled */
    sp__word *read;         /* next word to consume, inside head's chain */
    uint64_t read_ticks;    /* time of the last event consumed (for ends) */
    uint64_t dropped_seen;  /* `dropped` at the previous collection */
    uint64_t misuse_seen;
    uint64_t span_dropped;  /* drops in the span being drained */
    uint64_t span_misuse;
    /* Overwrite policy (ring.c), changed under the registry lock: events of
     * this thread lost to another chunk's reuse since the last drain (read by
     * the stream without the lock), and how many of their begins were still
     * open, whose ends are yet to come; span_lost_open is that number at
     * the start of the drain, for the collector. */
    _Atomic uint64_t overwritten;
    uint64_t lost_open;
    uint64_t span_lost_open;

    uint64_t tid;
    uint64_t serial;        /* registration order, from 1 (sp__count_marks) */
    char name[64];
    _Atomic int exited;
    struct sp__tbuf *next_thread;
} sp__tbuf;

/* Events of tb dropped so far: at the cap, and as nested calls. */
static inline uint64_t sp__tbuf_dropped(const sp__tbuf *tb)
{
    return atomic_load_explicit(&tb->dropped, memory_order_relaxed) +
           atomic_load_explicit(&tb->nested, memory_order_relaxed);
}

/* Whether p lies in chunk c, its end included (a position one past a
 * chunk's last word is still that chunk's). */
static inline int sp__in_chunk(const sp__chunk *c, const sp__word *p)
{
    return p >= c->words && p <= c->words + c->cap;
}

/* Called for each contiguous run of whole events of one thread during a
 * drain, then once more with words NULL and n 0 when the thread is done (its
 * span_dropped and span_misuse are set by then). `ticks` is the time of the
 * event before the run, for sp__event_ticks. */
typedef void (*sp__drain_fn)(void *ctx, sp__tbuf *thread, const sp__word *words, size_t n,
                             uint64_t ticks);

/* Notes that the buffers are drained up to `ticks` (record.c), on the
 * thread that decides it, which may be before the drain itself runs (a
 * collection queued on a writer thread): a span starts after it, so
 * sp_range_add counts a range that begins before it as misuse. The mark
 * never moves back. */
void sp__record_mark_drained(uint64_t ticks);

/* The tick count of the last drain: the earliest begin an added range of
 * the current span can have (a tracer begins the calls it finds already
 * running there, python/_stepprof/pytrace.c). */
uint64_t sp__record_drained_at(void);

/* Tests: called in the middle of each chunk switch, where the thread is
 * between two chunks (a signal raised there finds the worst moment). */
extern void (*sp__record_switch_hook)(void);

/* Records the sample count of the step the calling thread just closed
 * with sp_range_add: a counter record of type ProfileStep right behind it,
 * which the collector folds into that step (SP_EVENT_FLAG_SAMPLES) instead
 * of keeping as an event. Like the step, it is kept past the memory cap. */
void sp__step_samples(double num_samples);

/* Sets the cap on chunk memory over all threads (bytes). */
void sp__record_set_cap(size_t cap_bytes);

/* Chooses what happens at the memory cap: drop new events (0, the
 * default) or overwrite the oldest chunk of events over all threads (1). */
void sp__record_set_overwrite(int on);

/* A span's records up to `ticks` await a drain queued on another thread:
 * until sp__record_unhold(ticks), the overwrite policy takes no chunk begun
 * by then (ring.c), so that span stays whole and the new events are dropped
 * and counted instead. Holds nest by time: a later hold covers an earlier. */
void sp__record_hold(uint64_t ticks);
void sp__record_unhold(uint64_t ticks);

/* Turns recording of sp_memory_event calls on or off (profile_memory). */
void sp__record_set_memory(int on);

/* Turns recording on (READY or RECORD) or off. */
void sp__record_set_active(int active);

/* Drops everything recorded so far (READY -> RECORD), and marks the
 * buffers drained now. */
void sp__record_discard(void);



/* Hands each thread's unread records written at or before end_ticks to fn
 * (marking no drain: the caller does, sp__record_mark_drained),
 * then recycles consumed chunks and forgets exited threads that are fully
 * read. *dropped and *misuse receive the counts accumulated since the last
 * drain or discard. Threads are visited in registration order. */
void sp__record_drain(uint64_t end_ticks, sp__drain_fn fn, void *ctx, uint64_t *dropped,
                      uint64_t *misuse);

/* Each thread's drop and misuse counts at a span's stop, taken on the thread
 * that ends the span, so that a drain that runs later (on the writer
 * thread, while the next span records) charges the span with those only,
 * not with the next span's. */
typedef struct sp__count_mark {
    uint64_t serial, dropped, misuse, overwritten;
} sp__count_mark;
typedef struct sp__count_marks {
    sp__count_mark *marks; /* in registry order: serials descending */
    size_t count;
} sp__count_marks;
/* Takes the marks (the overwrite policy's losses so far move into them);
 * 0, or -1 when out of memory (the drain then counts up to its own time). */
int sp__record_mark_counts(sp__count_marks *out);
void sp__count_marks_free(sp__count_marks *m);
/* sp__record_drain with the counts of marks (may be NULL: counts now).
 * With fn NULL, a discard of what was written up to end_ticks, asked for
 * then and run later, behind a collection, while the next span records
 * (the caller marks the drain when it asks). */
void sp__record_drain_marked(uint64_t end_ticks, const sp__count_marks *marks, sp__drain_fn fn,
                             void *ctx);

/* Counts an event lost because its thread has no buffer (allocation
 * failed), and takes that count (resetting it) at collection. */
void sp__record_count_orphan_drop(void);
uint64_t sp__record_take_orphan_drops(void);

/* Frees pooled chunks that no thread is using. */
void sp__record_trim(void);

/* Chunk memory currently held, in bytes (tests and benchmarks). */
size_t sp__record_bytes_in_use(void);

#endif

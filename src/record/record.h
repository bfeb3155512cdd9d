/* record.h: what the recording stage offers the collect stage. Every thread
 * that records owns a chain of chunks of 16-byte records. The thread is the
 * only writer and publishes its write position with a release store after
 * each event; the collector is the only reader, consumes records up to the
 * published position, and recycles chunks the writer has left. No lock and no
 * atomic read-modify-write is taken per event.
 *
 * Record encoding: `ticks` is the time the record was written (so a thread's
 * records are in time order); `word` holds a 3-bit kind and a 5-bit event type
 * in its top byte and a pointer or a length in its low 56 bits (user-space
 * pointers fit in 56 bits on every Linux target, la57 included). An event that
 * takes several records never spans two chunks. */
#ifndef SP_RECORD_H
#define SP_RECORD_H

#include "clock.h"
#include "sys.h"

#include <stdatomic.h>
#include <stdint.h>

typedef struct sp__rec {
    uint64_t ticks;
    uint64_t word;
} sp__rec;

enum sp__rec_kind {
    SP__REC_BEGIN = 1,      /* word: static name pointer */
    SP__REC_BEGIN_COPY = 2, /* word: name length; payload records follow */
    SP__REC_END = 3,
    SP__REC_INSTANT = 4,    /* word: static name pointer */
    SP__REC_COUNTER = 5,    /* word: static name pointer; next record: value bits */
    SP__REC_COMPLETE = 6,   /* word: name length; next record: begin, end ticks; payload */
    SP__REC_MEMORY = 7      /* word: place pointer; 3 records: addr, bytes; current; peak */
};

#define SP__REC_KIND_SHIFT 61
#define SP__REC_TYPE_SHIFT 56
#define SP__REC_LOW_MASK ((UINT64_C(1) << 56) - 1)
#define SP__REC_KIND(w) ((unsigned)((w) >> SP__REC_KIND_SHIFT))
#define SP__REC_TYPE(w) ((unsigned)(((w) >> SP__REC_TYPE_SHIFT) & 31u))
#define SP__REC_LOW(w) ((w) & SP__REC_LOW_MASK)
#define SP__REC_WORD(kind, type, low)                                          \
    (((uint64_t)(kind) << SP__REC_KIND_SHIFT) |                                \
     ((uint64_t)(type) << SP__REC_TYPE_SHIFT) | ((uint64_t)(low) & SP__REC_LOW_MASK))

/* Copied names longer than this are cut when recorded; one extra byte is kept
 * so that collection can tell the name was cut. */
#define SP__NAME_MAX_BYTES 4096
#define SP__NAME_PAYLOAD_RECS(len) (((len) + sizeof(sp__rec) - 1) / sizeof(sp__rec))

/* Records reserved at the end of each chunk for ends of ranges already begun,
 * so that reaching the memory cap never splits a kept range. */
#define SP__END_RESERVE 128

typedef struct sp__chunk {
    struct sp__chunk *_Atomic next; /* set by the writer when it moves on */
    _Atomic(sp__rec *) sealed_end;  /* last written position, set before next */
    size_t cap;                     /* records */
    size_t bytes;                   /* allocation size, counted in the cap */
    sp__rec recs[];
} sp__chunk;

/* One recording thread. The writer fields come first and are touched only by
 * the thread itself; `pos` is also read by the collector (acquire). */
typedef struct sp__tbuf {
    _Atomic(sp__rec *) pos; /* next free record; published after each event */
    sp__rec *limit;         /* begins and instants must stay below this */
    sp__rec *hard_limit;    /* ends must stay below this */
    sp__chunk *cur;
    uint64_t dropped_open;  /* ranges begun while dropping, not yet ended */
    int dropping;
    int reader_open;        /* a Dataloader range is being timed (reader.c) */
    _Atomic uint64_t dropped; /* events dropped at the cap (writer stores only) */
    _Atomic uint64_t misuse;  /* bad arguments seen on the hot path */

    /* Collector side. */
    sp__chunk *head;        /* oldest chunk not yet recycled */
    sp__rec *read;          /* next record to consume, inside head's chain */
    uint64_t dropped_seen;  /* `dropped` at the previous collection */
    uint64_t misuse_seen;
    uint64_t span_dropped;  /* drops in the span being drained */
    uint64_t span_misuse;

    uint64_t tid;
    char name[64];
    _Atomic int exited;
    struct sp__tbuf *next_thread;
} sp__tbuf;

/* Called for each contiguous run of records of one thread during a drain,
 * then once more with recs NULL and n 0 when the thread is done (its
 * span_dropped and span_misuse are set by then). */
typedef void (*sp__drain_fn)(void *ctx, sp__tbuf *thread, const sp__rec *recs, size_t n);

/* Sets the cap on chunk memory over all threads (bytes). */
void sp__record_set_cap(size_t cap_bytes);

/* Turns recording of sp_memory_event calls on or off (profile_memory). */
void sp__record_set_memory(int on);

/* Turns recording on (READY or RECORD) or off. */
void sp__record_set_active(int active);

/* Drops everything recorded so far (READY -> RECORD). */
void sp__record_discard(void);

/* Hands each thread's unread records written at or before end_ticks to fn,
 * then recycles consumed chunks and forgets exited threads that are fully
 * read. *dropped and *misuse receive the counts accumulated since the last
 * drain or discard. Threads are visited in registration order. */
void sp__record_drain(uint64_t end_ticks, sp__drain_fn fn, void *ctx, uint64_t *dropped,
                      uint64_t *misuse);

/* Counts an event lost because its thread has no buffer (allocation
 * failed), and takes that count (resetting it) at collection. */
void sp__record_count_orphan_drop(void);
uint64_t sp__record_take_orphan_drops(void);

/* Frees pooled chunks that no thread is using. */
void sp__record_trim(void);

/* Chunk memory currently held, in bytes (tests and benchmarks). */
size_t sp__record_bytes_in_use(void);

#endif

/* record.c: the hot path. Each call reads the clock, stores one record into
 * the calling thread's chunk and publishes the new write position with a
 * release store (a plain store on x86): no lock, no atomic read-modify-write,
 * no allocation. Everything unusual (first event of a thread, full chunk,
 * memory cap, bad arguments, a correlator that follows the ranges for GPU
 * tracing: correlate.c) goes to a slow path out of line.
 *
 * Re-entry. A signal handler may record on a thread that is itself inside a
 * recording call (a SIGPROF sampler, say). The interrupted call holds a
 * write position it has loaded and not yet published, and may be between
 * two chunks, so the handler's call must not write: while a call runs, the
 * thread's `in_state` carries SP__IN_RECORD (set and cleared with signal
 * fences around every load and store of the buffer; a handler runs on the
 * thread it interrupts, so no atomic read-modify-write is needed), and a
 * call that finds it set drops its event and counts it on the thread
 * (`nested`, reported as host_dropped). Ranges a handler begins and ends
 * inside one interrupted call are dropped whole (nested_open).
 *
 * Room for ends. The low bits of in_state count the ranges begun on the
 * thread and not yet ended (`depth`; begins dropped at the cap are counted
 * in dropped_open instead). Invariant: the current chunk always has room
 * after the write position for `depth` ends, so the end of a kept range is
 * never dropped, however many are open at the cap. The fast path keeps it by
 * taking begins only while depth < SP__END_RESERVE, the words every chunk
 * keeps behind its fast-path limit; deeper begins take the slow path, which
 * asks the chunk, or a new one, for room for every end.
 *
 * While nothing records, the inline check lets most range calls pass
 * without reaching the library; those that reach it (a Dataloader begin for
 * the benchmark timer, or any call while one is open: reader.c) count
 * nothing. Depth then only needs to cover the ranges begun in the current
 * recording, and none is open while nothing records, so those calls set it
 * to 0. A range begun while recording and ended after it stopped stays in
 * depth on a thread that makes no such call, which only makes the fast path
 * more careful (depth is a bound, and ends are taken whatever it says).
 * dropped_open, which would keep the thread dropping, starts again from
 * zero when recording restarts (record_epoch).
 *
 * At the memory cap, under the overwrite policy, a chunk switch takes the
 * oldest chunk over all threads instead (ring.c); when none can be taken,
 * or without that policy, the thread enters dropping mode. Invariant: while
 * dropped_open > 0 the thread stays in dropping mode, so every end seen then
 * belongs to a dropped begin (ranges are LIFO per thread). A ProfileStep
 * range is never dropped at the cap: when no chunk under the cap has room,
 * it takes a small chunk past the cap (at most one 16 KiB chunk per few
 * hundred steps, freed at collection), so that the step thread keeps every
 * step even if it records nothing else.
 *
 * tb->limit and tb->hard_limit are gates for the fast path, not capacities:
 * they are closed (set to the chunk start) while dropping and while a
 * Dataloader range is being timed, and the slow path then measures the real
 * room from the chunk itself. */
#include "chunks.h"
#include "correlate.h"
#include "reader.h"
#include "ring.h"
#include "threads.h"

#include <math.h>
#include <signal.h>
#include <string.h>

int sp__host_active;
void (*sp__record_switch_hook)(void);

enum reserve_kind { FOR_BEGIN, FOR_END, FOR_STEP, FOR_OTHER };

/* The calling thread inside a recording call (bit 63) and its depth (the
 * low bits): see the file's opening comment. Thread-local rather than in
 * the thread's buffer, so that it also covers the call that registers the
 * buffer. */
#define SP__IN_RECORD (UINT64_C(1) << 63)
static _Thread_local uint64_t in_state;
/* Begins dropped as nested whose ends are yet to come (nested calls only:
 * a handler can be interrupted by another, hence atomic). */
static _Thread_local _Atomic uint64_t nested_open;
/* The tick count when the buffers were last drained: a span starts after
 * it, so an added range that begins before it lies outside the span. */
static _Atomic uint64_t drained_at;
/* Counts the times recording started (bit 0 of sp__host_active set from
 * clear); a thread whose tb->epoch differs has not recorded since. */
static _Atomic uint64_t record_epoch;

/* How far ahead of the clock an added range may end before it counts as
 * misuse: 2^36 ticks, 20 to 70 seconds, far more than any clock skew
 * between CPUs, far less than what would overflow a trace's times. */
#define SP__ADD_AHEAD_TICKS (UINT64_C(1) << 36)

void sp__record_set_active(int active)
{
    if (active) {
        if (!(__atomic_load_n(&sp__host_active, __ATOMIC_RELAXED) & 1))
            atomic_fetch_add_explicit(&record_epoch, 1, memory_order_relaxed);
        __atomic_fetch_or(&sp__host_active, 1, __ATOMIC_RELEASE);
    } else
        __atomic_fetch_and(&sp__host_active, ~1, __ATOMIC_RELEASE);
}

void sp__record_mark_drained(uint64_t ticks)
{
    /* Never back: a collection drained late, on the writer thread, must not
     * move the floor below the start of a span that began meanwhile. */
    uint64_t seen = atomic_load_explicit(&drained_at, memory_order_relaxed);
    while (seen < ticks && !atomic_compare_exchange_weak_explicit(&drained_at, &seen, ticks,
                                                                  memory_order_relaxed,
                                                                  memory_order_relaxed)) {
    }
}

uint64_t sp__record_drained_at(void)
{
    return atomic_load_explicit(&drained_at, memory_order_relaxed);
}

static inline int recording(void) { return __atomic_load_n(&sp__host_active, __ATOMIC_RELAXED) & 1; }

/* Recording, and no correlator wants to see begins and ends: the fast path. */
static inline int recording_plain(void)
{
    return (__atomic_load_n(&sp__host_active, __ATOMIC_RELAXED) & (1 | SP__ACTIVE_CORRELATE)) == 1;
}

static inline sp__word *chunk_end(const sp__chunk *c) { return (sp__word *)c->words + c->cap; }

static void count(_Atomic uint64_t *counter)
{
    /* Only the owning thread writes, inside a recording call (re-entry is
     * excluded), so load + store is exact. */
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* Counts the event of a call that interrupted another recording call of
 * its thread, and drops it. A range counts once, at its begin. */
static void __attribute__((noinline)) drop_nested(enum reserve_kind kind)
{
    if (kind == FOR_END) {
        uint64_t open = atomic_load_explicit(&nested_open, memory_order_relaxed);
        while (open > 0)
            if (atomic_compare_exchange_weak_explicit(&nested_open, &open, open - 1,
                                                      memory_order_relaxed, memory_order_relaxed))
                return; /* its begin was dropped and counted */
    } else if (kind == FOR_BEGIN) {
        atomic_fetch_add_explicit(&nested_open, 1, memory_order_relaxed);
    }
    if (!recording()) return;
    sp__tbuf *tb = sp__tls_tbuf;
    if (tb)
        atomic_fetch_add_explicit(&tb->nested, 1, memory_order_relaxed);
    else
        sp__record_count_orphan_drop(); /* it interrupted the registration */
}

/* Enters a recording call on the slow path: returns 0 (the event dropped
 * and counted) when the call interrupted another, else sets SP__IN_RECORD
 * and gives the depth. Every load of the buffer comes after this. */
static inline int enter(enum reserve_kind kind, uint64_t *depth)
{
    uint64_t s = in_state;
    if (s & SP__IN_RECORD) {
        drop_nested(kind);
        return 0;
    }
    in_state = s | SP__IN_RECORD;
    atomic_signal_fence(memory_order_seq_cst);
    *depth = s;
    return 1;
}

/* Leaves a recording call with the thread's new depth. */
static inline void leave(uint64_t depth)
{
    atomic_signal_fence(memory_order_seq_cst);
    in_state = depth;
}

static void set_limits(sp__tbuf *tb)
{
    if (tb->dropping || tb->reader_open) {
        /* Force every event through the slow path. */
        tb->limit = tb->hard_limit = tb->cur->words;
        return;
    }
    tb->hard_limit = chunk_end(tb->cur);
    /* A fast-path begin (2 words) below the limit leaves SP__END_RESERVE
     * words behind it: room for the ends of the ranges open then, which the
     * fast path keeps below SP__END_RESERVE. */
    sp__word *room_end =
        tb->cur->cap > SP__END_RESERVE ? chunk_end(tb->cur) - SP__END_RESERVE : tb->cur->words;
    tb->limit = room_end - tb->cur->words >= SP__BEGIN_WORDS ? room_end - (SP__BEGIN_WORDS - 1)
                                                             : tb->cur->words;
}

/* Keeps the fast-path gates closed exactly while a Dataloader range is timed. */
static void follow_reader(int reading)
{
    sp__tbuf *tb = sp__tls_tbuf;
    if (!tb || tb->reader_open == reading) return;
    tb->reader_open = reading;
    set_limits(tb);
}

/* The first slow call of a thread in a new recording forgets the dropped
 * begins of the last one: their ends came, if at all, while nothing was
 * counted (see the opening comment). */
static void follow_epoch(sp__tbuf *tb)
{
    uint64_t epoch = atomic_load_explicit(&record_epoch, memory_order_relaxed);
    if (tb->epoch == epoch) return;
    tb->epoch = epoch;
    tb->dropped_open = 0;
}

/* Words that must stay free behind an event of this kind, at this depth:
 * the ends of the ranges open after it (a begin adds its own), at least the
 * fast path's reserve for anything but a step. */
static size_t room_behind(enum reserve_kind kind, uint64_t depth)
{
    uint64_t ends = depth + (kind == FOR_BEGIN);
    if (kind == FOR_STEP || ends > SP__END_RESERVE) return (size_t)ends;
    return SP__END_RESERVE;
}

static int holds(size_t bytes, size_t need)
{
    return (bytes - sizeof(sp__chunk)) / sizeof(sp__word) >= need;
}

/* The size of a chunk that holds `need` words: the next size, doubled as
 * needed; past the largest size, just enough (in 4 KiB pages). */
static size_t bytes_for(const sp__chunk *cur, size_t need)
{
    size_t bytes = sp__chunk_next_bytes(cur);
    while (bytes < SP__CHUNK_MAX_BYTES && !holds(bytes, need))
        bytes *= 2;
    if (!holds(bytes, need)) bytes = (sizeof(sp__chunk) + need * sizeof(sp__word) + 4095) & ~(size_t)4095;
    return bytes;
}

/* Moves the thread to chunk c (the old chunk is sealed for the collector). */
static void move_to(sp__tbuf *tb, sp__chunk *c)
{
    if (sp__record_switch_hook) sp__record_switch_hook();
    c->start_ticks = sp__ticks();
    sp__word *pos = atomic_load_explicit(&tb->pos, memory_order_relaxed);
    atomic_store_explicit(&tb->cur->sealed_end, pos, memory_order_relaxed);
    atomic_store_explicit(&tb->cur->next, c, memory_order_release);
    tb->cur = c;
    atomic_store_explicit(&tb->pos, c->words, memory_order_release);
}

/* Moves the thread to a new chunk with room for `need` words; 0 if none
 * under the cap. Near the cap a smaller chunk than the next size may still
 * fit. */
static int switch_chunk(sp__tbuf *tb, size_t need)
{
    size_t bytes = bytes_for(tb->cur, need);
    sp__chunk *c = sp__chunk_acquire(bytes);
    while (!c && bytes > SP__CHUNK_MIN_BYTES && bytes <= SP__CHUNK_MAX_BYTES && holds(bytes / 2, need)) {
        bytes /= 2;
        c = sp__chunk_acquire(bytes);
    }
    if (!c && sp__ring_on() && (c = sp__ring_take()) && !holds(c->bytes, need)) {
        /* Too small for the ends owed: its memory may still buy one that
         * is not. */
        sp__chunk_release(c);
        c = sp__chunk_acquire(bytes);
    }
    if (!c) return 0;
    move_to(tb, c);
    return 1;
}

static sp__word *drop(sp__tbuf *tb, enum reserve_kind kind)
{
    tb->dropping = 1;
    set_limits(tb);
    count(&tb->dropped);
    if (kind == FOR_BEGIN) tb->dropped_open++;
    return NULL;
}

/* Room for an end whose begin was not dropped (end_slow has seen to
 * those). */
static sp__word *reserve_end(sp__tbuf *tb, sp__word *pos, uint64_t depth)
{
    /* With depth > 0 the room is there (the invariant), unless the depth
     * counts ranges begun while nothing recorded, whose room was never
     * asked for. */
    if (pos + 1 <= chunk_end(tb->cur)) return pos;
    if (!tb->dropping && switch_chunk(tb, depth > 0 ? (size_t)depth : 1)) {
        set_limits(tb);
        return tb->cur->words;
    }
    return drop(tb, FOR_END);
}

/* Where an event finds no room under the cap: a ProfileStep takes a chunk
 * past the cap (the thread stays in dropping mode, so nothing else uses
 * it); anything else is dropped and counted. */
static sp__word *step_or_drop(sp__tbuf *tb, sp__word *pos, size_t need, enum reserve_kind kind)
{
    if (kind != FOR_STEP) return drop(tb, kind);
    if (pos + need <= chunk_end(tb->cur)) return pos;
    sp__chunk *c = sp__chunk_acquire_past_cap(bytes_for(NULL, need));
    if (!c) return drop(tb, kind);
    move_to(tb, c);
    tb->dropping = 1;
    set_limits(tb);
    return tb->cur->words;
}

/* Returns room for n words of one event, or NULL if it is dropped. */
static sp__word *reserve_slow(size_t n, enum reserve_kind kind, uint64_t depth)
{
    sp__tbuf *tb = sp__tls_tbuf;
    if (!tb) {
        if (!(tb = sp__thread_register())) {
            if (kind != FOR_END) sp__record_count_orphan_drop();
            return NULL;
        }
        tb->reader_open = sp__reader_is_open(); /* the first chunk's gates follow it */
    }
    follow_epoch(tb);
    sp__word *pos = atomic_load_explicit(&tb->pos, memory_order_relaxed);
    if (kind == FOR_END) return reserve_end(tb, pos, depth);
    size_t need = n + room_behind(kind, depth);
    if (tb->dropping) {
        if (tb->dropped_open > 0 || !switch_chunk(tb, need)) return step_or_drop(tb, pos, need, kind);
        tb->dropping = 0;
        set_limits(tb);
        return tb->cur->words;
    }
    if (pos + need <= chunk_end(tb->cur)) return pos;
    if (!switch_chunk(tb, need)) return step_or_drop(tb, pos, need, kind);
    set_limits(tb);
    return tb->cur->words;
}

static inline void publish(sp__word *next)
{
    atomic_store_explicit(&sp__tls_tbuf->pos, next, memory_order_release);
}

static sp__tbuf *counting_tbuf(void) { return sp__tls_tbuf ? sp__tls_tbuf : sp__thread_register(); }

static sp_event_type checked_type(sp_event_type type)
{
    if ((unsigned)type < SP_EVENT_TYPE_COUNT) return type;
    sp__tbuf *tb = counting_tbuf();
    if (tb) count(&tb->misuse);
    return SP_EVENT_USER_DEFINED;
}

static void __attribute__((noinline)) begin_slow(sp_event_type type, const char *name)
{
    uint64_t depth;
    if (!enter(FOR_BEGIN, &depth)) return;
    follow_reader(sp__reader_on_begin(type, (uint64_t)(uintptr_t)name));
    if (!recording()) {
        leave(0); /* no range of a recording is open: see the opening comment */
        return;
    }
    uint64_t t = sp__ticks();
    type = checked_type(type);
    sp__word *w = reserve_slow(SP__BEGIN_WORDS, FOR_BEGIN, depth);
    if (w) {
        w[0] = SP__REC_WORD(SP__REC_BEGIN, type, (uintptr_t)name);
        w[1] = t;
        publish(w + SP__BEGIN_WORDS);
    }
    sp__correlate_begin(w != NULL, t);
    leave(w ? depth + 1 : depth);
}

void sp__range_begin(sp_event_type type, const char *name)
{
    sp__tbuf *tb = sp__tls_tbuf;
    uint64_t s = in_state;
    if (SP__UNLIKELY(!tb) || SP__UNLIKELY(s >= SP__END_RESERVE) ||
        SP__UNLIKELY((unsigned)type >= SP_EVENT_TYPE_COUNT || type == SP_EVENT_DATALOADER) ||
        SP__UNLIKELY(!recording_plain())) {
        begin_slow(type, name);
        return;
    }
    in_state = s | SP__IN_RECORD;
    atomic_signal_fence(memory_order_seq_cst);
    sp__word *w = atomic_load_explicit(&tb->pos, memory_order_relaxed);
    if (SP__UNLIKELY(w >= tb->limit)) {
        in_state = s;
        begin_slow(type, name);
        return;
    }
    w[0] = SP__REC_WORD(SP__REC_BEGIN, type, (uintptr_t)name);
    w[1] = sp__ticks();
    atomic_store_explicit(&tb->pos, w + SP__BEGIN_WORDS, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    in_state = s + 1;
}

static void __attribute__((noinline)) end_slow(void)
{
    uint64_t depth;
    if (!enter(FOR_END, &depth)) return;
    follow_reader(sp__reader_on_end());
    sp__tbuf *tb = sp__tls_tbuf;
    if (!recording()) { /* the benchmark timer alone costs no clock read */
        leave(0);
        return;
    }
    sp__correlate_end();
    if (tb) follow_epoch(tb);
    if (tb && tb->dropped_open > 0) {
        tb->dropped_open--; /* its begin was dropped and counted */
        leave(depth);
        return;
    }
    sp__word *w = reserve_slow(1, FOR_END, depth);
    if (w) {
        /* The clock is read after reserving: an end may be the first event
         * of its thread, whose registration takes the tick base that
         * restores the end's high bits, and an end earlier than that base
         * would read as 2^61 ticks late and block the thread's records at
         * every drain. */
        *w = SP__REC_END_WORD(sp__ticks());
        publish(w + 1);
    }
    leave(depth > 0 ? depth - 1 : 0);
}

void sp__range_end(void)
{
    sp__tbuf *tb = sp__tls_tbuf;
    uint64_t s = in_state;
    /* s - 1 wraps for depth 0 (an end with no counted range: the slow path
     * sorts it out) and stays huge while SP__IN_RECORD is set. */
    if (SP__UNLIKELY(!tb) || SP__UNLIKELY(s - 1 >= SP__IN_RECORD - 1) ||
        SP__UNLIKELY(!recording_plain())) {
        end_slow();
        return;
    }
    in_state = s | SP__IN_RECORD;
    atomic_signal_fence(memory_order_seq_cst);
    sp__word *w = atomic_load_explicit(&tb->pos, memory_order_relaxed);
    if (SP__UNLIKELY(w >= tb->hard_limit)) {
        in_state = s;
        end_slow();
        return;
    }
    *w = SP__REC_END_WORD(sp__ticks());
    atomic_store_explicit(&tb->pos, w + 1, memory_order_release);
    atomic_signal_fence(memory_order_seq_cst);
    in_state = s - 1;
}

/* Writes an event's first `head` words (kind word, ticks, the caller fills
 * the rest) followed by the name bytes. */
static sp__word *put_named(uint64_t ticks, unsigned kind, sp_event_type type, size_t head,
                           const char *name, size_t len, enum reserve_kind rk, uint64_t depth)
{
    if (!name) {
        name = "(null)";
        len = 6;
    }
    if (len > SP__NAME_MAX_BYTES) len = SP__NAME_MAX_BYTES + 1;
    sp__word *w = reserve_slow(head + SP__NAME_WORDS(len), rk, depth);
    if (!w) return NULL;
    w[0] = SP__REC_WORD(kind, type, len);
    w[1] = ticks;
    memcpy(w + head, name, len);
    return w;
}

static uint64_t name_hash(const char *name, size_t len)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; name && i < len && i < 64; i++) h = (h ^ (unsigned char)name[i]) * 1099511628211ull;
    return h;
}

void sp__range_begin_copy(sp_event_type type, const char *name, size_t len)
{
    uint64_t depth;
    if (!enter(FOR_BEGIN, &depth)) return;
    follow_reader(sp__reader_on_begin(type, name_hash(name, len)));
    if (!recording()) {
        leave(0);
        return;
    }
    type = checked_type(type);
    uint64_t t = sp__ticks();
    sp__word *w =
        put_named(t, SP__REC_BEGIN_COPY, type, SP__BEGIN_WORDS, name, len, FOR_BEGIN, depth);
    if (w) publish(w + sp__event_words(w));
    sp__correlate_begin(w != NULL, t);
    leave(w ? depth + 1 : depth);
}

/* Brings an added range's ticks into what a span can hold: it must not
 * begin before the buffers were last drained (the span's start), nor end
 * far ahead of `now`, nor end before it begins. Returns 1 if it changed
 * anything (a misuse). */
static int clamp_added(uint64_t now, uint64_t *begin, uint64_t *end)
{
    uint64_t floor = atomic_load_explicit(&drained_at, memory_order_relaxed);
    uint64_t ceiling = now + SP__ADD_AHEAD_TICKS;
    int bad = 0;
    if (*end > ceiling) *end = now, bad = 1;
    if (*begin > ceiling) *begin = now, bad = 1;
    if (*begin < floor) *begin = floor, bad = 1;
    if (*end < floor) *end = floor, bad = 1;
    if (*end < *begin) *end = *begin, bad = 1;
    return bad;
}

void sp_range_add(sp_event_type type, const char *name, size_t len, uint64_t begin_ticks,
                  uint64_t end_ticks)
{
    if (!sp__is_recording()) return;
    enum reserve_kind kind = type == SP_EVENT_PROFILE_STEP ? FOR_STEP : FOR_OTHER;
    uint64_t depth;
    if (!enter(kind, &depth)) return;
    type = checked_type(type);
    uint64_t now = sp__ticks();
    if (clamp_added(now, &begin_ticks, &end_ticks)) {
        sp__tbuf *tb = counting_tbuf();
        if (tb) count(&tb->misuse);
    }
    sp__word *w = put_named(now, SP__REC_COMPLETE, type, SP__COMPLETE_WORDS, name, len, kind, depth);
    if (w) {
        w[2] = begin_ticks;
        w[3] = end_ticks;
        publish(w + sp__event_words(w));
    }
    leave(depth);
}

void sp__instant(sp_event_type type, const char *name)
{
    uint64_t depth;
    if (!enter(FOR_OTHER, &depth)) return;
    type = checked_type(type);
    uint64_t t = sp__ticks();
    sp__word *w = reserve_slow(SP__INSTANT_WORDS, FOR_OTHER, depth);
    if (w) {
        w[0] = SP__REC_WORD(SP__REC_INSTANT, type, (uintptr_t)name);
        w[1] = t;
        publish(w + SP__INSTANT_WORDS);
    }
    leave(depth);
}

void sp__counter(const char *name, double value)
{
    uint64_t depth;
    if (!enter(FOR_OTHER, &depth)) return;
    uint64_t t = sp__ticks();
    sp__word *w = reserve_slow(SP__COUNTER_WORDS, FOR_OTHER, depth);
    if (w) {
        if (!isfinite(value)) {
            count(&sp__tls_tbuf->misuse);
            value = 0;
        }
        w[0] = SP__REC_WORD(SP__REC_COUNTER, SP_EVENT_USER_DEFINED, (uintptr_t)name);
        w[1] = t;
        memcpy(&w[2], &value, sizeof value);
        publish(w + SP__COUNTER_WORDS);
    }
    leave(depth);
}

/* The name of a step's sample count record; one object, so a crash dump
 * names it once. */
static const char step_samples_name[] = "num_samples";

void sp__step_samples(double num_samples)
{
    if (!sp__is_recording()) return;
    uint64_t depth;
    if (!enter(FOR_STEP, &depth)) return;
    uint64_t t = sp__ticks();
    sp__word *w = reserve_slow(SP__COUNTER_WORDS, FOR_STEP, depth);
    if (w) {
        w[0] = SP__REC_WORD(SP__REC_COUNTER, SP_EVENT_PROFILE_STEP, (uintptr_t)step_samples_name);
        w[1] = t;
        memcpy(&w[2], &num_samples, sizeof num_samples);
        publish(w + SP__COUNTER_WORDS);
    }
    leave(depth);
}

static int memory_on;

void sp__record_set_memory(int on) { __atomic_store_n(&memory_on, on, __ATOMIC_RELEASE); }

void sp__memory_event(sp_mem_event_type type, const char *place, const sp_mem_info *info)
{
    if (!__atomic_load_n(&memory_on, __ATOMIC_ACQUIRE)) return;
    uint64_t depth;
    if (!enter(FOR_OTHER, &depth)) return;
    if ((unsigned)type > SP_MEM_RESERVED_FREE || !info) {
        sp__tbuf *tb = counting_tbuf();
        if (tb) count(&tb->misuse);
        leave(depth);
        return;
    }
    uint64_t t = sp__ticks();
    sp__word *w = reserve_slow(SP__MEMORY_WORDS, FOR_OTHER, depth);
    if (!w) {
        leave(depth);
        return;
    }
    w[0] = SP__REC_WORD(SP__REC_MEMORY, type, (uintptr_t)place);
    w[1] = t;
    w[2] = info->addr;
    w[3] = (uint64_t)info->bytes;
    w[4] = info->current_allocated;
    w[5] = info->current_reserved;
    w[6] = info->peak_allocated;
    w[7] = info->peak_reserved;
    publish(w + SP__MEMORY_WORDS);
    leave(depth);
}

uint64_t sp_clock_ticks(void)
{
    sp__clock_init();
    return sp__ticks();
}

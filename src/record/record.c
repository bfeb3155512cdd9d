/* record.c: the hot path. Each call reads the clock, stores one record into
 * the calling thread's chunk and publishes the new write position with a
 * release store (a plain store on x86): no lock, no atomic read-modify-write,
 * no allocation. Everything unusual (first event of a thread, full chunk,
 * memory cap, bad arguments, a correlator that follows the ranges for GPU
 * tracing: correlate.c) goes to a slow path out of line.
 *
 * At the memory cap, under the overwrite policy, a chunk switch takes the
 * oldest chunk over all threads instead (ring.c); when none can be taken,
 * or without that policy, the thread enters dropping mode. Invariant: while
 * dropped_open > 0 the thread stays in dropping mode, so every end seen then
 * belongs to a dropped begin (ranges are LIFO per thread); ends of kept ranges
 * go into the chunk's reserve, so kept ranges keep their ends.
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
#include <string.h>

int sp__host_active;

enum reserve_kind { FOR_BEGIN, FOR_END, FOR_STEP, FOR_OTHER };

void sp__record_set_active(int active)
{
    if (active)
        __atomic_fetch_or(&sp__host_active, 1, __ATOMIC_RELEASE);
    else
        __atomic_fetch_and(&sp__host_active, ~1, __ATOMIC_RELEASE);
}

static inline int recording(void) { return __atomic_load_n(&sp__host_active, __ATOMIC_RELAXED) & 1; }

/* Recording, and no correlator wants to see begins and ends: the fast path. */
static inline int recording_plain(void)
{
    return (__atomic_load_n(&sp__host_active, __ATOMIC_RELAXED) & (1 | SP__ACTIVE_CORRELATE)) == 1;
}

static inline sp__word *chunk_end(const sp__chunk *c) { return (sp__word *)c->words + c->cap; }

/* Where events other than ends must stop, leaving the reserve for ends. */
static inline sp__word *begin_end(const sp__chunk *c)
{
    return c->cap > SP__END_RESERVE ? chunk_end(c) - SP__END_RESERVE : (sp__word *)c->words;
}

static void count(_Atomic uint64_t *counter)
{
    /* Only the owning thread writes, so load + store is exact. */
    atomic_store_explicit(counter, atomic_load_explicit(counter, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

static void set_limits(sp__tbuf *tb)
{
    if (tb->dropping || tb->reader_open) {
        /* Force every event through the slow path. */
        tb->limit = tb->hard_limit = tb->cur->words;
        return;
    }
    tb->hard_limit = chunk_end(tb->cur);
    sp__word *room_end = begin_end(tb->cur);
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

static int holds(size_t bytes, size_t n)
{
    return (bytes - sizeof(sp__chunk)) / sizeof(sp__word) >= n + SP__END_RESERVE;
}

/* Moves the thread to a new chunk with room for n words; 0 if none. Near
 * the cap a smaller chunk than the next size may still fit. */
static int switch_chunk(sp__tbuf *tb, size_t n)
{
    size_t bytes = sp__chunk_next_bytes(tb->cur);
    while (bytes < SP__CHUNK_MAX_BYTES && !holds(bytes, n))
        bytes *= 2;
    sp__chunk *c = sp__chunk_acquire(bytes);
    while (!c && bytes > SP__CHUNK_MIN_BYTES && holds(bytes / 2, n)) {
        bytes /= 2;
        c = sp__chunk_acquire(bytes);
    }
    if (!c && sp__ring_on()) c = sp__ring_take();
    if (!c) return 0;
    c->start_ticks = sp__ticks();
    sp__word *pos = atomic_load_explicit(&tb->pos, memory_order_relaxed);
    atomic_store_explicit(&tb->cur->sealed_end, pos, memory_order_relaxed);
    atomic_store_explicit(&tb->cur->next, c, memory_order_release);
    tb->cur = c;
    atomic_store_explicit(&tb->pos, c->words, memory_order_release);
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

static sp__word *reserve_end(sp__tbuf *tb, sp__word *pos)
{
    if (tb->dropped_open > 0) {
        tb->dropped_open--; /* its begin was dropped and counted */
        return NULL;
    }
    if (pos + 1 <= chunk_end(tb->cur)) return pos; /* the reserve */
    if (!tb->dropping && switch_chunk(tb, 1)) {
        set_limits(tb);
        return tb->cur->words;
    }
    return drop(tb, FOR_END);
}

/* Where an event finds no room: a ProfileStep may still take the end
 * reserve, as long as half of it stays for ends, so that a span that fills
 * the cap keeps its steps (the summary's denominator); anything else is
 * dropped and counted. */
static sp__word *step_or_drop(sp__tbuf *tb, sp__word *pos, size_t n, enum reserve_kind kind)
{
    if (kind == FOR_STEP && pos + n + SP__END_RESERVE / 2 <= chunk_end(tb->cur)) return pos;
    return drop(tb, kind);
}

/* Returns room for n words of one event, or NULL if it is dropped. */
static sp__word *reserve_slow(size_t n, enum reserve_kind kind)
{
    sp__tbuf *tb = sp__tls_tbuf;
    if (!tb) {
        if (!(tb = sp__thread_register())) {
            if (kind != FOR_END) sp__record_count_orphan_drop();
            return NULL;
        }
        tb->reader_open = sp__reader_is_open(); /* the first chunk's gates follow it */
    }
    sp__word *pos = atomic_load_explicit(&tb->pos, memory_order_relaxed);
    if (kind == FOR_END) return reserve_end(tb, pos);
    if (tb->dropping) {
        if (tb->dropped_open > 0 || !switch_chunk(tb, n)) return step_or_drop(tb, pos, n, kind);
        tb->dropping = 0;
        set_limits(tb);
        return tb->cur->words;
    }
    if (pos + n <= begin_end(tb->cur)) return pos;
    if (!switch_chunk(tb, n)) return step_or_drop(tb, pos, n, kind);
    set_limits(tb);
    return tb->cur->words;
}

static inline void publish(sp__word *next)
{
    atomic_store_explicit(&sp__tls_tbuf->pos, next, memory_order_release);
}

static sp_event_type checked_type(sp_event_type type)
{
    if ((unsigned)type < SP_EVENT_TYPE_COUNT) return type;
    sp__tbuf *tb = sp__tls_tbuf ? sp__tls_tbuf : sp__thread_register();
    if (tb) count(&tb->misuse);
    return SP_EVENT_USER_DEFINED;
}

static void __attribute__((noinline)) begin_slow(sp_event_type type, const char *name)
{
    follow_reader(sp__reader_on_begin(type, (uint64_t)(uintptr_t)name));
    if (!recording()) return;
    uint64_t t = sp__ticks();
    type = checked_type(type);
    sp__word *w = reserve_slow(SP__BEGIN_WORDS, FOR_BEGIN);
    if (w) {
        w[0] = SP__REC_WORD(SP__REC_BEGIN, type, (uintptr_t)name);
        w[1] = t;
        publish(w + SP__BEGIN_WORDS);
    }
    sp__correlate_begin(w != NULL, t);
}

void sp__range_begin(sp_event_type type, const char *name)
{
    sp__tbuf *tb = sp__tls_tbuf;
    sp__word *w;
    if (SP__UNLIKELY(!tb) ||
        SP__UNLIKELY((w = atomic_load_explicit(&tb->pos, memory_order_relaxed)) >= tb->limit) ||
        SP__UNLIKELY((unsigned)type >= SP_EVENT_TYPE_COUNT || type == SP_EVENT_DATALOADER) ||
        SP__UNLIKELY(!recording_plain())) {
        begin_slow(type, name);
        return;
    }
    w[0] = SP__REC_WORD(SP__REC_BEGIN, type, (uintptr_t)name);
    w[1] = sp__ticks();
    atomic_store_explicit(&tb->pos, w + SP__BEGIN_WORDS, memory_order_release);
}

static void __attribute__((noinline)) end_slow(void)
{
    follow_reader(sp__reader_on_end());
    if (!recording()) return; /* the benchmark timer alone costs no clock read */
    sp__correlate_end();
    sp__word *w = reserve_slow(1, FOR_END);
    if (!w) return;
    /* The clock is read after reserving: an end may be the first event of its
     * thread, whose registration takes the tick base that restores the end's
     * high bits, and an end earlier than that base would read as 2^61 ticks
     * late and block the thread's records at every drain. */
    *w = SP__REC_END_WORD(sp__ticks());
    publish(w + 1);
}

void sp__range_end(void)
{
    sp__tbuf *tb = sp__tls_tbuf;
    sp__word *w;
    if (SP__UNLIKELY(!tb) ||
        SP__UNLIKELY((w = atomic_load_explicit(&tb->pos, memory_order_relaxed)) >= tb->hard_limit) ||
        SP__UNLIKELY(!recording_plain())) {
        end_slow();
        return;
    }
    *w = SP__REC_END_WORD(sp__ticks());
    atomic_store_explicit(&tb->pos, w + 1, memory_order_release);
}

/* Writes an event's first `head` words (kind word, ticks, the caller fills
 * the rest) followed by the name bytes. */
static sp__word *put_named(uint64_t ticks, unsigned kind, sp_event_type type, size_t head,
                           const char *name, size_t len, enum reserve_kind rk)
{
    if (!name) {
        name = "(null)";
        len = 6;
    }
    if (len > SP__NAME_MAX_BYTES) len = SP__NAME_MAX_BYTES + 1;
    sp__word *w = reserve_slow(head + SP__NAME_WORDS(len), rk);
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
    follow_reader(sp__reader_on_begin(type, name_hash(name, len)));
    if (!recording()) return;
    type = checked_type(type);
    uint64_t t = sp__ticks();
    sp__word *w = put_named(t, SP__REC_BEGIN_COPY, type, SP__BEGIN_WORDS, name, len, FOR_BEGIN);
    if (w) publish(w + sp__event_words(w));
    sp__correlate_begin(w != NULL, t);
}

void sp_range_add(sp_event_type type, const char *name, size_t len, uint64_t begin_ticks,
                  uint64_t end_ticks)
{
    if (!sp__is_recording()) return;
    type = checked_type(type);
    if (end_ticks < begin_ticks) {
        sp__tbuf *tb = sp__tls_tbuf ? sp__tls_tbuf : sp__thread_register();
        if (tb) count(&tb->misuse);
        end_ticks = begin_ticks;
    }
    sp__word *w = put_named(sp__ticks(), SP__REC_COMPLETE, type, SP__COMPLETE_WORDS, name, len,
                            type == SP_EVENT_PROFILE_STEP ? FOR_STEP : FOR_OTHER);
    if (!w) return;
    w[2] = begin_ticks;
    w[3] = end_ticks;
    publish(w + sp__event_words(w));
}

void sp__instant(sp_event_type type, const char *name)
{
    type = checked_type(type);
    uint64_t t = sp__ticks();
    sp__word *w = reserve_slow(SP__INSTANT_WORDS, FOR_OTHER);
    if (!w) return;
    w[0] = SP__REC_WORD(SP__REC_INSTANT, type, (uintptr_t)name);
    w[1] = t;
    publish(w + SP__INSTANT_WORDS);
}

void sp__counter(const char *name, double value)
{
    uint64_t t = sp__ticks();
    sp__word *w = reserve_slow(SP__COUNTER_WORDS, FOR_OTHER);
    if (!w) return;
    if (!isfinite(value)) {
        count(&sp__tls_tbuf->misuse);
        value = 0;
    }
    w[0] = SP__REC_WORD(SP__REC_COUNTER, SP_EVENT_USER_DEFINED, (uintptr_t)name);
    w[1] = t;
    memcpy(&w[2], &value, sizeof value);
    publish(w + SP__COUNTER_WORDS);
}

static int memory_on;

void sp__record_set_memory(int on) { __atomic_store_n(&memory_on, on, __ATOMIC_RELEASE); }

void sp__memory_event(sp_mem_event_type type, const char *place, const sp_mem_info *info)
{
    if (!__atomic_load_n(&memory_on, __ATOMIC_ACQUIRE)) return;
    if ((unsigned)type > SP_MEM_RESERVED_FREE || !info) {
        sp__tbuf *tb = sp__tls_tbuf ? sp__tls_tbuf : sp__thread_register();
        if (tb) count(&tb->misuse);
        return;
    }
    uint64_t t = sp__ticks();
    sp__word *w = reserve_slow(SP__MEMORY_WORDS, FOR_OTHER);
    if (!w) return;
    w[0] = SP__REC_WORD(SP__REC_MEMORY, type, (uintptr_t)place);
    w[1] = t;
    w[2] = info->addr;
    w[3] = (uint64_t)info->bytes;
    w[4] = info->current_allocated;
    w[5] = info->current_reserved;
    w[6] = info->peak_allocated;
    w[7] = info->peak_reserved;
    publish(w + SP__MEMORY_WORDS);
}

uint64_t sp_clock_ticks(void)
{
    sp__clock_init();
    return sp__ticks();
}

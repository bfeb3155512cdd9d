/* external_mem.c: allocations and frees that another tracer measured
 * (paddle's memory recorder, through sp_profiler_add_memory_events), kept
 * with the external ranges until their span is collected, then merged into
 * their threads' memory events before attribution, so that the Memory
 * Summary and the trace's [memory] events treat them as if sp_memory_event
 * had reported them. Their CLOCK_REALTIME times go through the same
 * sp__external_time as the external ranges' times: an allocation made while
 * a range was open keeps lying inside that range on the result's time line.
 * The invariant kept: each thread's memory events stay in time order. */
#include "collect.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

void sp__ext_mems_init(sp__ext_mems *m)
{
    memset(m, 0, sizeof *m);
    sp__buf_init(&m->places);
}

void sp__ext_mems_fini(sp__ext_mems *m)
{
    sp__free(m->mems);
    sp__buf_fini(&m->places);
    memset(m, 0, sizeof *m);
}

void sp__ext_mems_clear(sp__ext_mems *m)
{
    m->count = 0;
    m->places.len = 0;
    m->places.failed = 0;
}

/* How much of a place is kept: all of it, or SP__EXT_NAME_MAX bytes less a
 * UTF-8 sequence the cut would split. */
static size_t kept_len(const sp_external_mem_event *e)
{
    if (e->place_len <= SP__EXT_NAME_MAX) return e->place_len;
    size_t len = SP__EXT_NAME_MAX;
    while (len > 0 && ((unsigned char)e->place[len] & 0xC0) == 0x80)
        len--;
    return len;
}

/* Whether e's place is the same bytes as the stored place `prev` (a run of
 * events on one place is the common case: it is stored once). */
static int same_place(const sp__ext_mems *m, const sp__ext_mem *prev,
                      const sp_external_mem_event *e, size_t len)
{
    return prev && prev->place_len == len && prev->place_cut == (e->place_len > SP__EXT_NAME_MAX) &&
           (len == 0 || memcmp(m->places.data + prev->place_off, e->place, len) == 0);
}

int sp__ext_mems_add(sp__ext_mems *m, const sp_external_mem_event *events, size_t n)
{
    if (n == 0) return 0;
    if (m->count + n > m->cap) {
        size_t cap = m->cap ? m->cap : 256;
        while (cap < m->count + n)
            cap *= 2;
        sp__ext_mem *e = sp__realloc(m->mems, sizeof *e * cap);
        if (!e) return -1;
        m->mems = e;
        m->cap = cap;
    }
    /* Room for every place, stored once per run; reserved first, so that an
     * add either stores everything or changes nothing. */
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += kept_len(&events[i]);
    if (sp__buf_reserve(&m->places, bytes) != 0) {
        m->places.failed = 0; /* the buffer is unchanged: a later add may succeed */
        return -1;
    }
    const sp__ext_mem *prev = m->count ? &m->mems[m->count - 1] : NULL;
    for (size_t i = 0; i < n; i++) {
        const sp_external_mem_event *in = &events[i];
        size_t len = kept_len(in);
        sp__ext_mem *out = &m->mems[m->count + i];
        *out = (sp__ext_mem){
            .tid = in->tid,
            .ts_ns = in->ts_ns,
            .place_off = m->places.len,
            .place_len = (uint32_t)len,
            .type = (uint8_t)in->type,
            .place_cut = in->place_len > SP__EXT_NAME_MAX,
            .info = in->info,
        };
        if (same_place(m, prev, in, len))
            out->place_off = prev->place_off;
        else
            sp__buf_append(&m->places, len ? in->place : "", len); /* room reserved above */
        prev = out;
    }
    m->count += n;
    return 0;
}

/* An added event in the span, on the time line, to be sorted by thread and
 * time; `index` keeps the caller's order among equal times. */
typedef struct kept {
    uint64_t tid;
    int64_t ts_ns;
    size_t index;
} kept;

static int by_tid_time(const void *pa, const void *pb)
{
    const kept *a = pa, *b = pb;
    if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
    if (a->ts_ns != b->ts_ns) return a->ts_ns < b->ts_ns ? -1 : 1;
    return a->index < b->index ? -1 : a->index > b->index;
}

static uint32_t place_id(sp_result *r, const sp__ext_mems *m, const sp__ext_mem *in)
{
    uint32_t id = sp__names_from_bytes(
        &r->names, in->place_len ? m->places.data + in->place_off : "", in->place_len);
    uint8_t fixes = r->names.fixes ? r->names.fixes[id] : 0;
    if (fixes & SP__UTF8_INVALID) r->counters[SP_COUNTER_INVALID_UTF8]++;
    if (in->place_cut || (fixes & SP__UTF8_CUT)) r->counters[SP_COUNTER_NAMES_CUT]++;
    return id;
}

/* Merges the n added events of one thread (k, sorted by time) into t's
 * memory events, which are in time order already. */
static int merge_into(sp_result *r, sp__thread *t, const sp__ext_mems *m, const kept *k, size_t n)
{
    size_t total = t->mem_count + n;
    sp__mem_event *out = sp__alloc(sizeof *out * total);
    if (!out) return -1;
    size_t a = 0, b = 0;
    for (size_t o = 0; o < total; o++) {
        if (b == n || (a < t->mem_count && t->mems[a].ts_ns <= k[b].ts_ns)) {
            out[o] = t->mems[a++];
            continue;
        }
        const sp__ext_mem *in = &m->mems[k[b].index];
        out[o] = (sp__mem_event){
            .ts_ns = k[b++].ts_ns,
            .type = in->type,
            .place = place_id(r, m, in),
            .addr = in->info.addr,
            .bytes = in->info.bytes,
            .current_allocated = in->info.current_allocated,
            .current_reserved = in->info.current_reserved,
            .peak_allocated = in->info.peak_allocated,
            .peak_reserved = in->info.peak_reserved,
            .host = -1,
        };
    }
    sp__free(t->mems);
    t->mems = out;
    t->mem_count = total;
    return 0;
}

int sp__collect_ext_mems(sp_result *r, const sp__ext_mems *m, const sp__sync *start,
                         const sp__sync *stop, const sp__tick_map *map)
{
    if (m->count == 0) return 0;
    if (m->places.failed) return -1;
    kept *k = sp__alloc(sizeof *k * m->count);
    if (!k) return -1;
    size_t n = 0;
    for (size_t i = 0; i < m->count; i++) {
        int64_t ts = sp__external_time(m->mems[i].ts_ns, start, stop, map);
        if (ts < r->span_start_ns || ts > r->span_end_ns) {
            r->counters[SP_COUNTER_OUT_OF_WINDOW]++;
            continue;
        }
        k[n++] = (kept){m->mems[i].tid, ts, i};
    }
    if (n > 1) qsort(k, n, sizeof *k, by_tid_time);
    int rc = 0;
    for (size_t lo = 0, hi; lo < n && rc == 0; lo = hi) {
        for (hi = lo + 1; hi < n && k[hi].tid == k[lo].tid; hi++) {
        }
        sp__thread *t = sp__result_thread(r, k[lo].tid);
        rc = t ? merge_into(r, t, m, k + lo, hi - lo) : -1;
    }
    sp__free(k);
    return rc;
}

/* span.c: turns the raw records of every thread into a result. A begin takes
 * its event's slot at once and pushes the slot on a per-thread stack; an end
 * fills in the innermost open slot's end. So a thread's events come out in
 * begin order, which is start order with parents before children, and the
 * nesting pass (tree.c) needs no sort. Ranges added whole (sp_range_add,
 * recorded when they end) are kept aside and merged in at the thread's end.
 * An end with nothing open is counted and skipped (unless its begin was
 * overwritten at the memory cap, ring.c: that loss is counted already as a
 * drop), and a range still open when the span ends is closed at the span
 * end, flagged UNCLOSED and counted. Ticks become CLOCK_REALTIME nanoseconds here, off the hot path.
 * Threads whose id was reused by the OS are merged into one track. */
#include "collect.h"
#include "utf8.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct collector {
    sp_result *r;
    sp__tick_map map;
    int64_t end_ns;
    sp__tbuf *tb;       /* thread being collected */
    sp__thread *thread; /* its entry in r->threads */
    size_t *stack;     /* slots of the open ranges, innermost last */
    size_t depth, stack_cap;
    sp__event *added;  /* the thread's sp_range_add ranges, merged at its end */
    size_t added_count, added_cap;
    uint64_t ticks; /* time of the event before the one being taken */
    uint64_t lost_open; /* ends still due to begins the ring overwrote */
    /* The added ProfileStep range taken just before the current record (its
     * index in added), which a following num_samples record belongs to
     * (sp__step_samples); -1 when the previous record was anything else. */
    ptrdiff_t last_step;
    size_t threads_cap;
    int failed;
    /* Saved records (sp__collect_saved): static name pointers are resolved
     * through name_of, never read, and times are clamped. NULL when live. */
    sp__static_name_fn name_of;
    void *name_ctx;
} collector;

static _Atomic uint32_t span_counter;

#define MAX_SAVED_NS ((int64_t)1 << 62)

/* Ticks to CLOCK_REALTIME ns. Live ticks use the map as is; saved ones may
 * come from a corrupt file, so they are kept in [0, 2^62] without overflow. */
static int64_t to_real(const collector *c, uint64_t ticks)
{
    if (!c->name_of) return sp__clock_to_real(&c->map, ticks);
    double off = (double)(int64_t)(ticks - c->map.anchor_ticks) * c->map.ns_per_tick;
    if (!(off > -(double)MAX_SAVED_NS)) return 0; /* NaN too */
    if (off > (double)MAX_SAVED_NS) return MAX_SAVED_NS;
    int64_t t = c->map.anchor_real_ns + (int64_t)off; /* both within +-2^62 */
    return t < 0 ? 0 : t > MAX_SAVED_NS ? MAX_SAVED_NS : t;
}

static uint32_t static_name(collector *c, const char *ptr)
{
    if (c->name_of) return c->name_of(c->name_ctx, &c->r->names, (uint64_t)(uintptr_t)ptr);
    return sp__names_from_ptr(&c->r->names, ptr);
}

static void push_open(collector *c, size_t slot)
{
    if (c->depth == c->stack_cap) {
        size_t cap = c->stack_cap ? c->stack_cap * 2 : 64;
        size_t *s = sp__realloc(c->stack, sizeof *s * cap);
        if (!s) {
            c->failed = 1;
            return;
        }
        c->stack = s;
        c->stack_cap = cap;
    }
    c->stack[c->depth++] = slot;
}

/* Makes room for one more event in *events; NULL (and failed) if none. */
static sp__event *append(collector *c, sp__event **events, size_t *count, size_t *cap)
{
    if (*count == *cap) {
        size_t grown = *cap ? *cap * 2 : 256;
        sp__event *e = sp__realloc(*events, sizeof *e * grown);
        if (!e) {
            c->failed = 1;
            return NULL;
        }
        *events = e;
        *cap = grown;
    }
    return &(*events)[(*count)++];
}

static void fill_event(collector *c, sp__event *e, uint32_t name, unsigned type, int64_t start,
                       int64_t end)
{
    memset(e, 0, sizeof *e);
    e->start_ns = start;
    e->end_ns = end < start ? start : end;
    e->name = name;
    e->type = (uint8_t)type;
    e->parent = -1;
    uint8_t fixes = c->r->names.fixes ? c->r->names.fixes[name] : 0;
    if (fixes & SP__UTF8_INVALID) c->r->counters[SP_COUNTER_INVALID_UTF8]++;
    if (fixes & SP__UTF8_CUT) c->r->counters[SP_COUNTER_NAMES_CUT]++;
}

static sp__event *add_event(collector *c, uint32_t name, unsigned type, int64_t start,
                            int64_t end)
{
    sp__thread *t = c->thread;
    sp__event *e = append(c, &t->events, &t->count, &t->cap);
    if (e) fill_event(c, e, name, type, start, end);
    return e;
}

/* A range's begin: its event, open until its end arrives. */
static void open_range(collector *c, uint32_t name, unsigned type, uint64_t ticks)
{
    int64_t start = to_real(c, ticks);
    if (add_event(c, name, type, start, start)) push_open(c, c->thread->count - 1);
}

static void close_range(collector *c, int64_t end_ns, unsigned flags)
{
    sp__event *e = &c->thread->events[c->stack[--c->depth]];
    e->end_ns = end_ns < e->start_ns ? e->start_ns : end_ns;
    e->flags |= flags;
}

/* Whether added range a goes before thread event b in start order: an added
 * range (a ProfileStep) encloses an event with the same interval. */
static int added_goes_first(const sp__event *a, const sp__event *b)
{
    return a->start_ns < b->start_ns || (a->start_ns == b->start_ns && a->end_ns >= b->end_ns);
}

/* Merges the added ranges into the thread's events, keeping start order. */
static void merge_added(collector *c)
{
    sp__thread *t = c->thread;
    size_t n = c->added_count;
    if (n == 0) return;
    qsort(c->added, n, sizeof *c->added, sp__event_order);
    sp__event *e = sp__realloc(t->events, sizeof *e * (t->count + n));
    if (!e) {
        c->failed = 1;
        return;
    }
    t->events = e;
    size_t i = t->count, j = n, k = t->count + n;
    while (j > 0) {
        if (i > 0 && added_goes_first(&c->added[j - 1], &e[i - 1]))
            e[--k] = e[--i];
        else
            e[--k] = c->added[--j];
    }
    t->count = t->cap = t->count + n;
    c->added_count = 0;
}

static int begin_thread(collector *c, sp__tbuf *tb)
{
    sp_result *r = c->r;
    if (r->thread_count == c->threads_cap) {
        size_t cap = c->threads_cap ? c->threads_cap * 2 : 16;
        sp__thread *t = sp__realloc(r->threads, sizeof *t * cap);
        if (!t) return -1;
        r->threads = t;
        c->threads_cap = cap;
    }
    c->tb = tb;
    c->thread = &r->threads[r->thread_count++];
    memset(c->thread, 0, sizeof *c->thread);
    c->thread->tid = tb->tid;
    c->thread->name = sp__names_from_bytes(&r->names, tb->name, strnlen(tb->name, sizeof tb->name));
    c->depth = 0;
    c->added_count = 0;
    c->last_step = -1;
    c->lost_open = tb->span_lost_open;
    return 0;
}

static void finish_thread(collector *c)
{
    sp_result *r = c->r;
    while (c->depth > 0) {
        close_range(c, c->end_ns, SP_EVENT_FLAG_UNCLOSED);
        r->counters[SP_COUNTER_UNCLOSED_RANGES]++;
    }
    merge_added(c);
    /* The array grew by doubling; a result lives on, so give back the slack. */
    sp__thread *t = c->thread;
    if (t->cap > t->count && t->count > 0) {
        sp__event *fit = sp__realloc(t->events, sizeof *fit * t->count);
        if (fit) {
            t->events = fit;
            t->cap = t->count;
        }
    }
    c->thread->dropped = c->tb->span_dropped;
    r->counters[SP_COUNTER_HOST_DROPPED] += c->tb->span_dropped;
    r->counters[SP_COUNTER_MISUSE] += c->tb->span_misuse;
    if (c->thread->count == 0 && c->thread->dropped == 0 && c->thread->mem_count == 0)
        r->thread_count--; /* idle thread */
    c->tb = NULL;
}

static uint32_t payload_name(collector *c, const sp__word *payload, uint64_t len)
{
    return sp__names_from_bytes(&c->r->names, (const char *)payload, (size_t)len);
}

static void take_memory(collector *c, const sp__word *w)
{
    sp__thread *t = c->thread;
    if (t->mem_count % 64 == 0) {
        sp__mem_event *m = sp__realloc(t->mems, sizeof *m * (t->mem_count + 64));
        if (!m) {
            c->failed = 1;
            return;
        }
        t->mems = m;
    }
    const char *place = (const char *)(uintptr_t)SP__REC_LOW(w[0]);
    t->mems[t->mem_count++] = (sp__mem_event){to_real(c, w[1]),
                                              (uint8_t)SP__REC_TYPE(w[0]),
                                              static_name(c, place),
                                              w[2],
                                              (int64_t)w[3],
                                              w[4],
                                              w[5],
                                              w[6],
                                              w[7],
                                              -1};
}

/* A step's num_samples record: folded into the step range right before it.
 * One with no such step (the step was dropped or overwritten) or with a
 * value that is no count (a corrupt dump) is left out. */
static void take_step_samples(collector *c, const sp__word *w, ptrdiff_t last_step)
{
    double v;
    memcpy(&v, &w[2], sizeof v);
    if (last_step < 0 || !(v >= 0 && v <= SP__STEP_SAMPLES_MAX)) return;
    sp__event *step = &c->added[last_step];
    step->flags |= SP_EVENT_FLAG_SAMPLES;
    step->value = v;
}

/* Handles the event at w. */
static void take_event(collector *c, const sp__word *w)
{
    uint64_t head = w[0];
    unsigned type = SP__REC_TYPE(head);
    const char *ptr = (const char *)(uintptr_t)SP__REC_LOW(head);
    sp__event *e;
    ptrdiff_t last_step = c->last_step;
    c->last_step = -1;
    if (SP__REC_KIND(head) == SP__REC_COUNTER && type == SP_EVENT_PROFILE_STEP) {
        take_step_samples(c, w, last_step);
        return;
    }
    switch (SP__REC_KIND(head)) {
    case SP__REC_BEGIN:
        open_range(c, static_name(c, ptr), type, w[1]);
        break;
    case SP__REC_BEGIN_COPY:
        open_range(c, payload_name(c, w + SP__BEGIN_WORDS, SP__REC_LOW(head)), type, w[1]);
        break;
    case SP__REC_END:
        if (c->depth == 0 && c->lost_open > 0)
            c->lost_open--; /* its begin was overwritten and counted as dropped */
        else if (c->depth == 0)
            c->r->counters[SP_COUNTER_UNMATCHED_ENDS]++;
        else
            close_range(c, to_real(c, sp__event_ticks(w, c->ticks)), 0);
        break;
    case SP__REC_INSTANT:
    case SP__REC_COUNTER: {
        int64_t t = to_real(c, w[1]);
        e = add_event(c, static_name(c, ptr), type, t, t);
        if (!e) break;
        if (SP__REC_KIND(head) == SP__REC_INSTANT) {
            e->flags |= SP_EVENT_FLAG_INSTANT;
        } else {
            e->flags |= SP_EVENT_FLAG_COUNTER;
            memcpy(&e->value, &w[2], sizeof e->value);
        }
        break;
    }
    case SP__REC_MEMORY:
        take_memory(c, w);
        break;
    case SP__REC_COMPLETE:
        e = append(c, &c->added, &c->added_count, &c->added_cap);
        if (e) {
            fill_event(c, e, payload_name(c, w + SP__COMPLETE_WORDS, SP__REC_LOW(head)), type,
                       to_real(c, w[2]), to_real(c, w[3]));
            if (type == SP_EVENT_PROFILE_STEP) c->last_step = (ptrdiff_t)(c->added_count - 1);
        }
        break;
    default:
        break; /* cannot happen: the writer only writes the kinds above */
    }
}

static void on_records(void *ctx, sp__tbuf *tb, const sp__word *words, size_t n, uint64_t ticks)
{
    collector *c = ctx;
    if (c->tb != tb && begin_thread(c, tb) != 0) {
        c->failed = 1;
        return;
    }
    if (!words) {
        finish_thread(c);
        return;
    }
    c->ticks = ticks;
    for (size_t i = 0; i < n; i += sp__event_words(words + i)) {
        take_event(c, words + i);
        c->ticks = sp__event_ticks(words + i, c->ticks);
    }
}

static int by_tid(const void *a, const void *b)
{
    uint64_t x = ((const sp__thread *)a)->tid, y = ((const sp__thread *)b)->tid;
    return x < y ? -1 : x > y;
}

/* Sorts threads by tid and merges entries that share a tid (reused ids). */
static int merge_threads(sp_result *r)
{
    if (r->thread_count > 1) qsort(r->threads, r->thread_count, sizeof *r->threads, by_tid);
    size_t out = 0;
    for (size_t i = 0; i < r->thread_count; i++) {
        sp__thread *t = &r->threads[i];
        if (out > 0 && r->threads[out - 1].tid == t->tid) {
            sp__thread *into = &r->threads[out - 1];
            sp__event *e = sp__realloc(into->events, sizeof *e * (into->count + t->count + 1));
            if (!e) return -1;
            memcpy(e + into->count, t->events, sizeof *e * t->count);
            into->events = e;
            into->count += t->count;
            into->cap = into->count;
            into->dropped += t->dropped;
            sp__free(t->events);
            /* Memory events of a reused tid: appended after the first thread's. */
            if (t->mem_count) {
                sp__mem_event *m = sp__realloc(into->mems, sizeof *m * (into->mem_count + t->mem_count));
                if (!m) return -1;
                memcpy(m + into->mem_count, t->mems, sizeof *m * t->mem_count);
                into->mems = m;
                into->mem_count += t->mem_count;
            }
            sp__free(t->mems);
            continue;
        }
        r->threads[out++] = *t;
    }
    r->thread_count = out;
    return 0;
}

/* External ranges of a live span and the sync points that place them. */
typedef struct span_external {
    const sp__external *x;
    const sp__sync *start, *stop;
} span_external;

/* The steps after the records are taken, shared by live and saved spans:
 * merges reused tids, adds the external ranges (ext may be NULL), nests,
 * takes the GPU batch (may be NULL) and attributes. Frees the result on
 * failure. */
static sp_status finish_result(collector *c, const span_external *ext, sp__gpu_batch *gpu,
                               sp_result **out)
{
    sp__free(c->stack);
    sp__free(c->added);
    if (!c->failed && merge_threads(c->r) != 0) c->failed = 1;
    if (!c->failed && ext && ext->x &&
        sp__collect_external(c->r, ext->x, ext->start, ext->stop, &c->map) != 0)
        c->failed = 1;
    if (!c->failed && ext && ext->x &&
        sp__collect_external_ops(c->r, &ext->x->ops, ext->start, ext->stop, &c->map) != 0)
        c->failed = 1;
    if (!c->failed && ext && ext->x &&
        sp__collect_external_comms(c->r, &ext->x->comms, ext->start, ext->stop, &c->map) != 0)
        c->failed = 1;
    for (size_t i = 0; !c->failed && i < c->r->thread_count; i++) {
        sp__thread *t = &c->r->threads[i];
        c->r->counters[SP_COUNTER_SPLIT_RANGES] += sp__tree_split_at_steps(t);
        c->r->counters[SP_COUNTER_OVERLAP] += sp__tree_build(t->events, t->count);
    }
    if (gpu) {
        if (!c->failed && sp__collect_gpu(c->r, gpu, &c->map) != 0) c->failed = 1;
        sp__gpu_batch_free(gpu);
    }
    if (!c->failed && sp__attribute(c->r) != 0) c->failed = 1;
    if (c->failed || c->r->names.failed) {
        sp__result_free(c->r);
        return sp__fail(SP_ENOMEM, "out of memory collecting the span");
    }
    *out = c->r;
    return SP_OK;
}

void sp__collect_span_end(sp__span_end *e, const sp__sync *start, const sp__span_meta *meta,
                          sp__external *external)
{
    memset(e, 0, sizeof *e);
    /* The GPU batch first: taking it synchronises the devices, so every
     * kernel launched in the span has finished before the span ends. */
    if (sp__gpu_active()) (void)sp__gpu_take(&e->gpu); /* a failure is counted in the batch */
    e->start = *start;
    sp__clock_sync(&e->stop);
    sp__record_mark_drained(e->stop.ticks);
    e->has_counts = sp__record_mark_counts(&e->counts) == 0;
    e->orphan_dropped = sp__record_take_orphan_drops();
    if (meta) e->meta = *meta;
    if (external) {
        e->external = *external;
        e->has_external = 1;
        sp__external_init(external);
    }
}

void sp__span_end_free(sp__span_end *e)
{
    sp__gpu_batch_free(&e->gpu);
    if (e->has_external) sp__external_fini(&e->external);
    e->has_external = 0;
    sp__count_marks_free(&e->counts);
    e->has_counts = 0;
}

sp_status sp__collect_span_build(sp__span_end *e, sp_result **out)
{
    collector c = {0};
    c.r = sp__result_new();
    if (!c.r) {
        sp__record_drain_marked(e->stop.ticks, e->has_counts ? &e->counts : NULL, NULL, NULL);
        sp__span_end_free(e); /* the buffers stay bounded even so */
        return sp__fail(SP_ENOMEM, "out of memory collecting the span");
    }
    sp__clock_map(&c.map, &e->start, &e->stop);
    c.end_ns = sp__clock_to_real(&c.map, e->stop.ticks);
    c.r->span_start_ns = sp__clock_to_real(&c.map, e->start.ticks);
    c.r->span_end_ns = c.end_ns;
    c.r->span_index = atomic_fetch_add(&span_counter, 1);
    c.r->meta = e->meta;
    sp__record_drain_marked(e->stop.ticks, e->has_counts ? &e->counts : NULL, on_records, &c);
    c.r->counters[SP_COUNTER_HOST_DROPPED] += e->orphan_dropped;
    span_external ext = {e->has_external ? &e->external : NULL, &e->start, &e->stop};
    sp_status s = finish_result(&c, &ext, &e->gpu, out);
    sp__span_end_free(e);
    return s;
}

sp_status sp__collect_span(const sp__sync *start, const sp__span_meta *meta,
                           sp__external *external, sp_result **out)
{
    sp__span_end e;
    sp__collect_span_end(&e, start, meta, external);
    return sp__collect_span_build(&e, out);
}

sp_status sp__collect_saved(const sp__saved_span *s, sp_result **out)
{
    collector c = {0};
    c.r = sp__result_new();
    if (!c.r) return sp__fail(SP_ENOMEM, "out of memory collecting the span");
    c.map = s->map;
    c.name_of = s->name_of;
    c.name_ctx = s->name_ctx;
    c.end_ns = to_real(&c, s->end_ticks);
    c.r->span_start_ns = to_real(&c, s->start_ticks);
    if (c.end_ns < c.r->span_start_ns) c.end_ns = c.r->span_start_ns;
    c.r->span_end_ns = c.end_ns;
    c.r->meta = s->meta;
    for (size_t i = 0; i < s->thread_count && !c.failed; i++) {
        sp__saved_thread *t = &s->threads[i];
        if (t->count > 0) on_records(&c, &t->tb, t->words, t->count, t->tb.read_ticks);
        if (!c.failed) on_records(&c, &t->tb, NULL, 0, 0);
    }
    c.r->counters[SP_COUNTER_HOST_DROPPED] += s->orphan_dropped;
    return finish_result(&c, NULL, NULL, out);
}

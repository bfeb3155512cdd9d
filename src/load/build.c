/* build.c: assembles a loaded result so that it keeps every invariant of a
 * collected one (collect.h): threads in ascending tid order, each thread's
 * events sorted by start (longer first) with parent and depth from
 * sp__tree_build, memory events in time order, runtime calls and device
 * records attributed by sp__attribute, arrays trimmed to size. The readers
 * append in file order; everything order-dependent happens in
 * sp__builder_finish. */
#include "load.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Loaded times are kept in [0, 2^62] ns (until the year 2116), so that
 * differences and sums of a few of them, as the tables compute, cannot
 * overflow whatever a file holds. Real results are far inside. */
#define MAX_NS ((int64_t)1 << 62)

static int64_t clamp_ns(int64_t t) { return t < 0 ? 0 : t > MAX_NS ? MAX_NS : t; }

/* Makes every time and value of the result sane: clamped times, ends not
 * before starts, finite counter values (a live result has no other). */
static void sanitize(sp_result *r)
{
    r->span_start_ns = clamp_ns(r->span_start_ns);
    r->span_end_ns = clamp_ns(r->span_end_ns);
    if (r->span_end_ns < r->span_start_ns) r->span_end_ns = r->span_start_ns;
    for (size_t i = 0; i < r->thread_count; i++) {
        sp__thread *t = &r->threads[i];
        for (size_t k = 0; k < t->count; k++) {
            sp__event *e = &t->events[k];
            e->start_ns = clamp_ns(e->start_ns);
            e->end_ns = clamp_ns(e->end_ns);
            if (e->end_ns < e->start_ns) e->end_ns = e->start_ns;
            if (!isfinite(e->value)) e->value = 0;
        }
        for (size_t k = 0; k < t->runtime_count; k++) {
            sp__runtime *rt = &t->runtimes[k];
            rt->start_ns = clamp_ns(rt->start_ns);
            rt->end_ns = clamp_ns(rt->end_ns);
            if (rt->end_ns < rt->start_ns) rt->end_ns = rt->start_ns;
        }
        for (size_t k = 0; k < t->mem_count; k++) t->mems[k].ts_ns = clamp_ns(t->mems[k].ts_ns);
        for (size_t k = 0; k < t->op_count; k++) t->ops[k].ts_ns = clamp_ns(t->ops[k].ts_ns);
        for (size_t k = 0; k < t->comm_count; k++)
            t->comms[k].ts_ns = clamp_ns(t->comms[k].ts_ns);
    }
    for (size_t d = 0; d < r->device_count; d++) {
        sp__device_rec *dev = &r->devices[d];
        dev->start_ns = clamp_ns(dev->start_ns);
        dev->end_ns = clamp_ns(dev->end_ns);
        if (dev->end_ns < dev->start_ns) dev->end_ns = dev->start_ns;
    }
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

int sp__builder_init(sp__builder *b)
{
    memset(b, 0, sizeof *b);
    b->r = sp__result_new();
    return b->r ? 0 : -1;
}

void sp__builder_fini(sp__builder *b)
{
    sp__result_free(b->r);
    sp__free(b->caps);
    sp__free(b->dev_order);
    sp__free(b->by_tid);
    memset(b, 0, sizeof *b);
}

static int rehash(sp__builder *b, size_t size)
{
    int32_t *table = sp__alloc(sizeof *table * size);
    if (!table) return -1;
    for (size_t i = 0; i < size; i++) table[i] = -1;
    for (size_t t = 0; t < b->r->thread_count; t++) {
        size_t j = mix64(b->r->threads[t].tid) & (size - 1);
        while (table[j] >= 0) j = (j + 1) & (size - 1);
        table[j] = (int32_t)t;
    }
    sp__free(b->by_tid);
    b->by_tid = table;
    b->by_tid_mask = size - 1;
    return 0;
}

sp__thread *sp__builder_thread(sp__builder *b, uint64_t tid)
{
    sp_result *r = b->r;
    if (b->by_tid) {
        size_t j = mix64(tid) & b->by_tid_mask;
        for (; b->by_tid[j] >= 0; j = (j + 1) & b->by_tid_mask)
            if (r->threads[b->by_tid[j]].tid == tid) return &r->threads[b->by_tid[j]];
    }
    if (r->thread_count >= INT32_MAX / 4) goto fail;
    if (r->thread_count == b->threads_cap) {
        size_t cap = b->threads_cap ? b->threads_cap * 2 : 8;
        sp__thread *t = sp__realloc(r->threads, sizeof *t * cap);
        if (!t) goto fail;
        r->threads = t;
        sp__thread_caps *caps = sp__realloc(b->caps, sizeof *caps * cap);
        if (!caps) goto fail;
        b->caps = caps;
        b->threads_cap = cap;
    }
    size_t i = r->thread_count++;
    sp__thread *t = &r->threads[i];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->name = sp__names_from_bytes(&r->names, "", 0);
    memset(&b->caps[i], 0, sizeof b->caps[i]);
    if ((r->thread_count * 2 > b->by_tid_mask + 1) && rehash(b, (b->by_tid_mask + 1) * 2 < 16 ? 16 : (b->by_tid_mask + 1) * 2) != 0) {
        r->thread_count--;
        goto fail;
    }
    if (!b->by_tid) goto fail;
    size_t j = mix64(tid) & b->by_tid_mask;
    while (b->by_tid[j] >= 0 && b->by_tid[j] != (int32_t)i) j = (j + 1) & b->by_tid_mask;
    b->by_tid[j] = (int32_t)i;
    return t;
fail:
    b->failed = 1;
    return NULL;
}

/* Makes room for one more item in *items (count, cap); NULL if none. */
static void *append(sp__builder *b, void **items, size_t *count, size_t *cap, size_t size)
{
    if (*count == *cap) {
        size_t grown = *cap ? *cap * 2 : 64;
        if (grown > SIZE_MAX / size) goto fail;
        void *p = sp__realloc(*items, size * grown);
        if (!p) goto fail;
        *items = p;
        *cap = grown;
    }
    char *slot = (char *)*items + size * (*count)++;
    memset(slot, 0, size);
    return slot;
fail:
    b->failed = 1;
    return NULL;
}

sp__event *sp__builder_event(sp__builder *b, sp__thread *t)
{
    sp__event *e = append(b, (void **)&t->events, &t->count, &t->cap, sizeof *e);
    if (e) e->parent = -1;
    return e;
}

sp__runtime *sp__builder_runtime(sp__builder *b, sp__thread *t)
{
    size_t i = (size_t)(t - b->r->threads);
    sp__runtime *rt = append(b, (void **)&t->runtimes, &t->runtime_count, &b->caps[i].runtimes, sizeof *rt);
    if (rt) rt->host = -1;
    return rt;
}

sp__mem_event *sp__builder_mem(sp__builder *b, sp__thread *t)
{
    size_t i = (size_t)(t - b->r->threads);
    sp__mem_event *m = append(b, (void **)&t->mems, &t->mem_count, &b->caps[i].mems, sizeof *m);
    if (m) m->host = -1;
    return m;
}

sp__op_supplement *sp__builder_op(sp__builder *b, sp__thread *t)
{
    size_t i = (size_t)(t - b->r->threads);
    sp__op_supplement *o = append(b, (void **)&t->ops, &t->op_count, &b->caps[i].ops, sizeof *o);
    if (!o) return NULL;
    o->host = -1;
    o->words = t->op_word_count;
    o->callstack = sp__names_from_bytes(&b->r->names, "", 0);
    return o;
}

void sp__builder_op_word(sp__builder *b, sp__thread *t, uint64_t word)
{
    size_t i = (size_t)(t - b->r->threads);
    uint64_t *w = append(b, (void **)&t->op_words, &t->op_word_count, &b->caps[i].op_words, sizeof *w);
    if (w) *w = word;
}

sp__comm *sp__builder_comm(sp__builder *b, sp__thread *t)
{
    size_t i = (size_t)(t - b->r->threads);
    sp__comm *c = append(b, (void **)&t->comms, &t->comm_count, &b->caps[i].comms, sizeof *c);
    if (c) *c = (sp__comm){.bytes = -1, .seq = -1, .host = -1};
    return c;
}

sp__device_rec *sp__builder_device(sp__builder *b, uint64_t order)
{
    sp_result *r = b->r;
    size_t count = r->device_count;
    sp__device_rec *d = append(b, (void **)&r->devices, &r->device_count, &b->devices_cap, sizeof *d);
    if (!d) return NULL;
    size_t n = count;
    uint64_t *o = append(b, (void **)&b->dev_order, &n, &b->dev_order_cap, sizeof *o);
    if (!o) {
        r->device_count--;
        return NULL;
    }
    *o = order;
    d->thread = d->runtime = -1;
    return d;
}

static int by_tid(const void *pa, const void *pb)
{
    uint64_t x = ((const sp__thread *)pa)->tid, y = ((const sp__thread *)pb)->tid;
    return x < y ? -1 : x > y;
}

/* Memory events and op supplements go in time order; equal times keep their
 * file order, which is the recording order within one host node. */
typedef struct time_key {
    int64_t ts;
    size_t i;
} time_key;

static int by_time_key(const void *pa, const void *pb)
{
    const time_key *a = pa, *b = pb;
    if (a->ts != b->ts) return a->ts < b->ts ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static int64_t time_at(const void *items, size_t i, size_t size, size_t ts_offset)
{
    int64_t ts;
    memcpy(&ts, (const char *)items + i * size + ts_offset, sizeof ts);
    return ts;
}

/* Sorts *items (count of size bytes, an int64_t time at ts_offset) stably by
 * time. Returns 0 or -1 (out of memory, *items unchanged). */
static int sort_by_time(void **items, size_t count, size_t size, size_t ts_offset)
{
    int sorted = 1;
    for (size_t i = 1; i < count && sorted; i++)
        if (time_at(*items, i, size, ts_offset) < time_at(*items, i - 1, size, ts_offset)) sorted = 0;
    if (sorted) return 0;
    time_key *keys = sp__alloc(sizeof *keys * count);
    char *out = sp__alloc(size * count);
    if (!keys || !out) {
        sp__free(keys);
        sp__free(out);
        return -1;
    }
    for (size_t i = 0; i < count; i++) keys[i] = (time_key){time_at(*items, i, size, ts_offset), i};
    qsort(keys, count, sizeof *keys, by_time_key);
    for (size_t i = 0; i < count; i++) memcpy(out + i * size, (char *)*items + keys[i].i * size, size);
    sp__free(*items);
    *items = out;
    sp__free(keys);
    return 0;
}

typedef struct dev_key {
    uint64_t order;
    size_t i;
} dev_key;

static int by_dev_key(const void *pa, const void *pb)
{
    const dev_key *a = pa, *b = pb;
    if (a->order != b->order) return a->order < b->order ? -1 : 1;
    return a->i < b->i ? -1 : a->i > b->i;
}

static int sort_devices(sp__builder *b)
{
    sp_result *r = b->r;
    size_t n = r->device_count;
    if (n < 2) return 0;
    dev_key *keys = sp__alloc(sizeof *keys * n);
    sp__device_rec *out = sp__alloc(sizeof *out * n);
    if (!keys || !out) {
        sp__free(keys);
        sp__free(out);
        return -1;
    }
    for (size_t i = 0; i < n; i++) keys[i] = (dev_key){b->dev_order[i], i};
    qsort(keys, n, sizeof *keys, by_dev_key);
    for (size_t i = 0; i < n; i++) out[i] = r->devices[keys[i].i];
    sp__free(r->devices);
    r->devices = out;
    return (sp__free(keys), 0);
}

static void *trim(void *items, size_t count, size_t size)
{
    if (count == 0) {
        sp__free(items);
        return NULL;
    }
    void *fit = sp__realloc(items, size * count);
    return fit ? fit : items;
}

sp_status sp__builder_finish(sp__builder *b, int keep_counters, const char *path, sp_result **out)
{
    sp_result *r = b->r;
    if (b->failed || r->names.failed || sort_devices(b) != 0) goto nomem;
    sanitize(r);
    if (r->thread_count > 1) qsort(r->threads, r->thread_count, sizeof *r->threads, by_tid);
    /* A thread with nothing in it (the protobuf's holder of unattributed
     * device records, a JSON track without events) is no thread, as the
     * collector drops idle threads. */
    size_t kept = 0;
    for (size_t i = 0; i < r->thread_count; i++) {
        sp__thread *t = &r->threads[i];
        if (t->count == 0 && t->dropped == 0 && t->mem_count == 0 && t->runtime_count == 0 &&
            t->op_count == 0 && t->comm_count == 0) {
            sp__free(t->events);
            sp__free(t->comms);
            sp__free(t->runtimes);
            sp__free(t->mems);
            sp__free(t->op_words);
            sp__free(t->ops);
            continue;
        }
        r->threads[kept++] = *t;
    }
    r->thread_count = kept;
    uint64_t saved[SP_COUNTER_COUNT];
    memcpy(saved, r->counters, sizeof saved);
    uint64_t overlaps = 0;
    for (size_t i = 0; i < r->thread_count; i++) {
        sp__thread *t = &r->threads[i];
        for (size_t k = 0; k < t->count; k++) t->events[k].flags &= (uint8_t)~SP_EVENT_FLAG_OVERLAP;
        overlaps += sp__tree_build(t->events, t->count);
        if (sort_by_time((void **)&t->mems, t->mem_count, sizeof *t->mems,
                         offsetof(sp__mem_event, ts_ns)) != 0 ||
            sort_by_time((void **)&t->ops, t->op_count, sizeof *t->ops,
                         offsetof(sp__op_supplement, ts_ns)) != 0 ||
            sort_by_time((void **)&t->comms, t->comm_count, sizeof *t->comms,
                         offsetof(sp__comm, ts_ns)) != 0)
            goto nomem;
        t->events = trim(t->events, t->count, sizeof *t->events);
        t->cap = t->count;
        t->runtimes = trim(t->runtimes, t->runtime_count, sizeof *t->runtimes);
        t->mems = trim(t->mems, t->mem_count, sizeof *t->mems);
        t->ops = trim(t->ops, t->op_count, sizeof *t->ops);
        t->op_words = trim(t->op_words, t->op_word_count, sizeof *t->op_words);
        t->comms = trim(t->comms, t->comm_count, sizeof *t->comms);
    }
    sp__dist_meta_default(&r->meta);
    r->devices = trim(r->devices, r->device_count, sizeof *r->devices);
    if (sp__attribute(r) != 0) goto nomem;
    if (keep_counters)
        memcpy(r->counters, saved, sizeof saved);
    else
        r->counters[SP_COUNTER_OVERLAP] += overlaps;
    sp__free(b->caps);
    sp__free(b->dev_order);
    sp__free(b->by_tid);
    memset(b, 0, sizeof *b);
    *out = r;
    return SP_OK;
nomem:
    sp__builder_fini(b);
    return sp__fail(SP_ENOMEM, "out of memory loading %s", path);
}

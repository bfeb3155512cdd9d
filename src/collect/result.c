/* result.c: the public accessors of a collected result and its lifetime.
 * A result is immutable after collection, so every accessor is safe from any
 * thread; the reference count is the only shared mutable state. */
#include "collect.h"

#include <string.h>

sp_result *sp__result_new(void)
{
    sp_result *r = sp__alloc(sizeof *r);
    if (!r) return NULL;
    if (sp__names_init(&r->names) != 0) {
        sp__free(r);
        return NULL;
    }
    atomic_init(&r->refs, 1);
    r->meta.world_size = r->meta.local_world_size = 1;
    return r;
}

sp__thread *sp__result_thread(sp_result *r, uint64_t tid)
{
    size_t lo = 0, hi = r->thread_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->threads[mid].tid < tid)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < r->thread_count && r->threads[lo].tid == tid) return &r->threads[lo];
    sp__thread *ts = sp__realloc(r->threads, sizeof *ts * (r->thread_count + 1));
    if (!ts) return NULL;
    r->threads = ts;
    memmove(&ts[lo + 1], &ts[lo], sizeof *ts * (r->thread_count - lo));
    r->thread_count++;
    memset(&ts[lo], 0, sizeof ts[lo]);
    ts[lo].tid = tid;
    ts[lo].name = sp__names_from_bytes(&r->names, "", 0);
    return &ts[lo];
}

void sp__result_free(sp_result *r)
{
    if (!r) return;
    for (size_t i = 0; i < r->thread_count; i++) {
        sp__free(r->threads[i].events);
        sp__free(r->threads[i].runtimes);
        sp__free(r->threads[i].mems);
        sp__free(r->threads[i].ops);
        sp__free(r->threads[i].op_words);
        sp__free(r->threads[i].comms);
    }
    sp__free(r->threads);
    sp__free(r->devices);
    sp__free(r->device_props);
    sp__names_fini(&r->names);
    sp__free(r);
}

const char *sp__result_name(const sp_result *r, uint32_t id) { return sp__names_get(&r->names, id); }

const sp__device_props *sp__result_device_props(const sp_result *r, uint32_t id)
{
    if (id < r->device_prop_count && r->device_props[id].id == id) return &r->device_props[id];
    for (size_t i = 0; i < r->device_prop_count; i++)
        if (r->device_props[i].id == id) return &r->device_props[i];
    return NULL;
}

sp_result *sp_result_retain(const sp_result *result)
{
    sp_result *r = (sp_result *)result;
    if (r) atomic_fetch_add(&r->refs, 1);
    return r;
}

void sp_result_release(sp_result *r)
{
    if (r && atomic_fetch_sub(&r->refs, 1) == 1) sp__result_free(r);
}

size_t sp_result_thread_count(const sp_result *r) { return r ? r->thread_count : 0; }

sp_status sp_result_thread(const sp_result *r, size_t i, sp_thread_info *out)
{
    if (!r || !out || i >= r->thread_count)
        return sp__fail(SP_EINVAL, "sp_result_thread: thread index %zu out of range", i);
    const sp__thread *t = &r->threads[i];
    out->tid = t->tid;
    out->name = sp__result_name(r, t->name);
    out->event_count = t->count;
    out->dropped = t->dropped;
    return SP_OK;
}

sp_status sp_result_event(const sp_result *r, size_t t, size_t i, sp_event_info *out)
{
    if (!r || !out || t >= r->thread_count || i >= r->threads[t].count)
        return sp__fail(SP_EINVAL, "sp_result_event: index (%zu, %zu) out of range", t, i);
    const sp__event *e = &r->threads[t].events[i];
    out->name = sp__result_name(r, e->name);
    out->type = (sp_event_type)e->type;
    out->flags = e->flags;
    out->start_ns = e->start_ns;
    out->end_ns = e->end_ns;
    out->parent = e->parent;
    out->depth = e->depth;
    out->value = e->value;
    return SP_OK;
}

uint64_t sp_result_counter(const sp_result *r, sp_counter_kind c)
{
    return r && (unsigned)c < SP_COUNTER_COUNT ? r->counters[c] : 0;
}

void sp_result_span(const sp_result *r, int64_t *start_ns, int64_t *end_ns)
{
    if (start_ns) *start_ns = r ? r->span_start_ns : 0;
    if (end_ns) *end_ns = r ? r->span_end_ns : 0;
}

uint32_t sp_result_span_index(const sp_result *r) { return r ? r->span_index : 0; }

const char *sp_event_type_name(sp_event_type type)
{
    switch (type) {
#define SP__EVENT_TEXT(name, value, text)                                      \
    case name:                                                                 \
        return text;
        SP_EVENT_TYPE_LIST(SP__EVENT_TEXT)
#undef SP__EVENT_TEXT
    default:
        return "Unknown";
    }
}

const char *sp_counter_name(sp_counter_kind c)
{
    static const char *const names[] = {
#define SP__COUNTER_TEXT(name, text) text,
        SP_COUNTER_LIST(SP__COUNTER_TEXT)
#undef SP__COUNTER_TEXT
    };
    return (unsigned)c < SP_COUNTER_COUNT ? names[c] : "unknown";
}

size_t sp_result_op_count(const sp_result *r, size_t t)
{
    return r && t < r->thread_count ? r->threads[t].op_count : 0;
}

/* Walks one section of an op's words (collect.h: the shapes, or the
 * dtypes) from *at, leaving *at past it; returns its item count. Item j, if
 * there, leaves its first word's offset in *item_at and its key's name id
 * in *key. Reads nothing past n, whatever the words say. */
static size_t walk(const uint64_t *w, size_t n, size_t *at, int dims, size_t j, uint64_t *key,
                   size_t *item_at)
{
    size_t i = *at, seen = 0;
    uint64_t keys = i < n ? w[i++] : 0;
    for (uint64_t k = 0; k < keys && i + 1 < n; k++) {
        uint64_t name = w[i], items = w[i + 1];
        i += 2;
        for (uint64_t item = 0; item < items && i < n; item++, seen++) {
            if (seen == j) {
                *key = name;
                *item_at = i;
            }
            i += !dims ? 1 : w[i] < n - i ? 1 + (size_t)w[i] : n - i;
        }
    }
    *at = i;
    return seen;
}

sp_status sp_result_op(const sp_result *r, size_t t, size_t i, sp_op_record *out)
{
    if (!r || !out || t >= r->thread_count || i >= r->threads[t].op_count)
        return sp__fail(SP_EINVAL, "sp_result_op: index (%zu, %zu) out of range", t, i);
    const sp__thread *th = &r->threads[t];
    const sp__op_supplement *op = &th->ops[i];
    out->time_ns = op->ts_ns;
    out->event = op->host;
    out->op_type = sp__result_name(r, op->op_type);
    out->callstack = sp__result_name(r, op->callstack);
    out->flops = op->flops;
    /* Both sections list the same inputs when stepprof wrote them; a loaded
     * file may list more in one: the longer counts. */
    size_t at = op->words, item = 0;
    uint64_t key = 0;
    size_t shapes = walk(th->op_words, th->op_word_count, &at, 1, SIZE_MAX, &key, &item);
    size_t dtypes = walk(th->op_words, th->op_word_count, &at, 0, SIZE_MAX, &key, &item);
    out->input_count = shapes > dtypes ? shapes : dtypes;
    return SP_OK;
}

sp_status sp_result_op_input(const sp_result *r, size_t t, size_t i, size_t j, sp_op_input *out)
{
    sp_op_record rec;
    if (!out || sp_result_op(r, t, i, &rec) != SP_OK || j >= rec.input_count)
        return sp__fail(SP_EINVAL, "sp_result_op_input: index (%zu, %zu, %zu) out of range", t, i,
                        j);
    const sp__thread *th = &r->threads[t];
    const uint64_t *w = th->op_words;
    size_t n = th->op_word_count, at = th->ops[i].words, item = SIZE_MAX;
    uint64_t key = 0;
    memset(out, 0, sizeof *out);
    out->key = out->dtype = "";
    if (walk(w, n, &at, 1, j, &key, &item) > j) {
        out->key = sp__result_name(r, (uint32_t)key);
        out->rank = (size_t)w[item];
        if (out->rank > n - item - 1) out->rank = 0; /* cut words: never read past them */
        /* int64_t may alias the uint64_t words (C11 6.5p7): the dims as given. */
        out->dims = out->rank ? (const int64_t *)(w + item + 1) : NULL;
    }
    if (walk(w, n, &at, 0, j, &key, &item) > j) {
        if (!*out->key) out->key = sp__result_name(r, (uint32_t)key);
        out->dtype = sp__result_name(r, (uint32_t)w[item]);
    }
    out->key_len = strlen(out->key);
    out->dtype_len = strlen(out->dtype);
    return SP_OK;
}

size_t sp_result_mem_event_count(const sp_result *r, size_t t)
{
    return r && t < r->thread_count ? r->threads[t].mem_count : 0;
}

sp_status sp_result_mem_event(const sp_result *r, size_t t, size_t i, sp_mem_event_info *out)
{
    if (!r || !out || t >= r->thread_count || i >= r->threads[t].mem_count)
        return sp__fail(SP_EINVAL, "sp_result_mem_event: index (%zu, %zu) out of range", t, i);
    const sp__mem_event *m = &r->threads[t].mems[i];
    out->ts_ns = m->ts_ns;
    out->type = (sp_mem_event_type)m->type;
    out->place = sp__result_name(r, m->place);
    out->info = (sp_mem_info){.addr = m->addr,
                              .bytes = m->bytes,
                              .current_allocated = m->current_allocated,
                              .current_reserved = m->current_reserved,
                              .peak_allocated = m->peak_allocated,
                              .peak_reserved = m->peak_reserved};
    out->event = m->host;
    return SP_OK;
}

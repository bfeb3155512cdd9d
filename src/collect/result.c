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

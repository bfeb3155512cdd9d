/* external.c: ranges that another tracer measured (paddle's host tracer,
 * through sp_profiler_add_events) kept until their span is collected, then
 * moved into the result's threads before the nesting pass, so they nest with
 * stepprof's own ranges as if recorded here. Their times are CLOCK_REALTIME
 * nanoseconds, which the span's two sync points tie to the tick clock; the
 * invariant kept is that an external range read at the same moment as a
 * stepprof range gets the same time on the result's time line. */
#include "collect.h"
#include "utf8.h"

#include <string.h>

void sp__external_init(sp__external *x)
{
    memset(x, 0, sizeof *x);
    sp__buf_init(&x->names);
    sp__ext_mems_init(&x->mems);
    sp__ext_ops_init(&x->ops);
    sp__ext_comms_init(&x->comms);
}

void sp__external_fini(sp__external *x)
{
    sp__free(x->events);
    sp__buf_fini(&x->names);
    sp__ext_mems_fini(&x->mems);
    sp__ext_ops_fini(&x->ops);
    sp__ext_comms_fini(&x->comms);
    memset(x, 0, sizeof *x);
}

void sp__external_clear(sp__external *x)
{
    x->count = 0;
    x->names.len = 0;
    x->names.failed = 0;
    sp__ext_mems_clear(&x->mems);
    sp__ext_ops_clear(&x->ops);
    sp__ext_comms_clear(&x->comms);
}

/* How much of an event's name is kept: all of it, or SP__EXT_NAME_MAX
 * bytes less a UTF-8 sequence the cut would split. */
static size_t kept_len(const sp_external_event *e)
{
    if (e->name_len <= SP__EXT_NAME_MAX) return e->name_len;
    size_t len = SP__EXT_NAME_MAX;
    while (len > 0 && ((unsigned char)e->name[len] & 0xC0) == 0x80) len--;
    return len;
}

int sp__external_add(sp__external *x, const sp_external_event *events, size_t n)
{
    if (n == 0) return 0;
    if (x->count + n > x->cap) {
        size_t cap = x->cap ? x->cap : 256;
        while (cap < x->count + n)
            cap *= 2;
        sp__ext_event *e = sp__realloc(x->events, sizeof *e * cap);
        if (!e) return -1;
        x->events = e;
        x->cap = cap;
    }
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++)
        bytes += kept_len(&events[i]);
    if (sp__buf_reserve(&x->names, bytes) != 0) {
        x->names.failed = 0; /* the buffer is unchanged: a later add may succeed */
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        const sp_external_event *in = &events[i];
        size_t len = kept_len(in);
        x->events[x->count + i] = (sp__ext_event){
            .tid = in->tid,
            .start_ns = in->start_ns,
            .end_ns = in->end_ns,
            .name_off = x->names.len,
            .name_len = (uint32_t)len,
            .type = (uint8_t)in->type,
            .name_cut = in->name_len > SP__EXT_NAME_MAX,
        };
        sp__buf_append(&x->names, len ? in->name : "", len); /* room reserved above */
    }
    x->count += n;
    return 0;
}

int64_t sp__external_time(int64_t real_ns, const sp__sync *start, const sp__sync *stop,
                          const sp__tick_map *map)
{
    int64_t line_start = sp__clock_to_real(map, start->ticks);
    int64_t line_stop = sp__clock_to_real(map, stop->ticks);
    int64_t real_span = stop->real_ns - start->real_ns;
    double k = 1.0;
    if (real_span > 0) {
        k = (double)(line_stop - line_start) / (double)real_span;
        if (k < 0.99 || k > 1.01) k = 1.0; /* the realtime clock was stepped */
    }
    /* A caller's time may be anywhere in int64_t: where the difference or
     * the result would overflow, the time is clamped (it lies far outside
     * the span and is dropped as out of window). The difference stays an
     * integer, so that near times keep their nanoseconds. */
    int64_t diff, out;
    if (__builtin_sub_overflow(real_ns, stop->real_ns, &diff))
        return real_ns < stop->real_ns ? INT64_MIN : INT64_MAX;
    double scaled = (double)diff * k;
    if (scaled >= 9.2e18 || scaled <= -9.2e18) return scaled < 0 ? INT64_MIN : INT64_MAX;
    if (__builtin_add_overflow(line_stop, (int64_t)scaled, &out))
        return scaled < 0 ? INT64_MIN : INT64_MAX;
    return out;
}

static int append(sp__thread *t, const sp__event *e)
{
    if (t->count == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        sp__event *ev = sp__realloc(t->events, sizeof *ev * cap);
        if (!ev) return -1;
        t->events = ev;
        t->cap = cap;
    }
    t->events[t->count++] = *e;
    return 0;
}

int sp__collect_external(sp_result *r, const sp__external *x, const sp__sync *start,
                         const sp__sync *stop, const sp__tick_map *map)
{
    if (x->names.failed) return -1;
    sp__thread *t = NULL;
    for (size_t i = 0; i < x->count; i++) {
        const sp__ext_event *in = &x->events[i];
        int64_t s = sp__external_time(in->start_ns, start, stop, map);
        int64_t e = sp__external_time(in->end_ns, start, stop, map);
        if (s < r->span_start_ns || s > r->span_end_ns) {
            r->counters[SP_COUNTER_OUT_OF_WINDOW]++;
            continue;
        }
        if (e > r->span_end_ns) e = r->span_end_ns;
        if (e < s) e = s;
        /* Events of one thread come in runs: look the thread up again only
         * when the tid changes (adding a thread moves the array). */
        if (!t || t->tid != in->tid) t = sp__result_thread(r, in->tid);
        if (!t) return -1;
        uint32_t name = sp__names_from_bytes(
            &r->names, in->name_len ? x->names.data + in->name_off : "", in->name_len);
        uint8_t fixes = r->names.fixes ? r->names.fixes[name] : 0;
        if (fixes & SP__UTF8_INVALID) r->counters[SP_COUNTER_INVALID_UTF8]++;
        if (in->name_cut || (fixes & SP__UTF8_CUT)) r->counters[SP_COUNTER_NAMES_CUT]++;
        sp__event ev = {
            .start_ns = s,
            .end_ns = e,
            .name = name,
            .type = in->type,
            .parent = -1,
        };
        if (append(t, &ev) != 0) return -1;
    }
    return sp__collect_ext_mems(r, &x->mems, start, stop, map);
}

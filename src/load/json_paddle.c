/* json_paddle.c: the parts of paddle.profiler's chrome trace (trace-format.md
 * §10.3) that stepprof's own dialect does not have, for load_json.c.
 *
 * Times: paddle writes ts in whole microseconds (truncated); a parent and
 * its child can share a ts, or the child's end pass the parent's, so
 * nesting built from ts and dur goes wrong. Each range's "start_time" /
 * "end_time" args count from the earliest range of the file, in ns rounded
 * through a float: they keep the order of paddle's times, so the nesting
 * built from them is paddle's. dur is exact for any range under 16.7 ms, so
 * lengths come from it where the nesting allows (exact_lengths). Every range
 * gives a lower bound of the base that makes start_time absolute (ts -
 * start_time, within 1 us of the true base); the latest bound is within a
 * few ns of it once there are a few hundred ranges, and sp__paddle_finish
 * moves the ranges onto it. A range whose args disagree with its ts by more
 * than TS_SLACK_NS keeps ts and dur.
 *
 * Memory events carry only a truncated ts. Paddle writes each right after
 * the host range that holds it (its parent in paddle's tree), so it is
 * placed in that range and in none of its children: paddle's tables
 * attribute it there, and so do stepprof's. */
#include "json_paddle.h"

#include <stdlib.h>
#include <string.h>

/* How far (ns) a range's exact start may lie from its truncated ts. */
#define TS_SLACK_NS 2000

void sp__paddle_args_reset(sp__paddle_args *a)
{
    sp__buf place = a->place;
    memset(a, 0, sizeof *a);
    a->place = place;
    a->place.len = 0;
    a->device = a->context = a->stream = -1;
}

void sp__paddle_args_fini(sp__paddle_args *a)
{
    sp__buf_fini(&a->place);
}

void sp__paddle_arg_number(sp__paddle_args *a, const char *key, int64_t v)
{
    if (strcmp(key, "correlation id") == 0)
        a->correlation = v;
    else if (strcmp(key, "device") == 0)
        a->device = v, a->has_device = 1;
    else if (strcmp(key, "context") == 0)
        a->context = v;
    else if (strcmp(key, "stream") == 0)
        a->stream = v;
    else if (strcmp(key, "bytes") == 0)
        a->bytes = v;
    else if (strcmp(key, "registers per thread") == 0)
        a->registers = v;
    else if (strcmp(key, "shared memory") == 0)
        a->shared = v;
    else if (strcmp(key, "increase_bytes") == 0)
        a->increase_bytes = v;
    else if (strcmp(key, "current_allocated") == 0)
        a->current_allocated = v;
    else if (strcmp(key, "current_reserved") == 0)
        a->current_reserved = v;
    else if (strcmp(key, "peak_allocated") == 0)
        a->peak_allocated = v;
    else if (strcmp(key, "peak_reserved") == 0)
        a->peak_reserved = v;
    else if (strcmp(key, "addr") == 0)
        a->addr = v;
}

/* "<digits>[.<digits>] us" to ns, exact to the third decimal; 0 when it is
 * not that form. */
static int us_text_ns(const char *v, int64_t *out)
{
    int neg = *v == '-';
    if (neg) v++;
    size_t digits = strspn(v, "0123456789");
    if (digits == 0 || digits > 15) return 0;
    int64_t us = 0, frac = 0;
    for (size_t i = 0; i < digits; i++)
        us = us * 10 + (v[i] - '0');
    v += digits;
    if (*v == '.') {
        v++;
        for (int i = 0; i < 3; i++)
            frac = frac * 10 + (*v >= '0' && *v <= '9' ? *v++ - '0' : 0);
        v += strspn(v, "0123456789");
    }
    if (strcmp(v, " us") != 0) return 0;
    *out = neg ? -(us * 1000 + frac) : us * 1000 + frac;
    return 1;
}

int sp__paddle_arg_string(sp__paddle_args *a, const char *key, const char *v, size_t len)
{
    if (strcmp(key, "start_time") == 0) {
        a->has_start = us_text_ns(v, &a->start_ns);
    } else if (strcmp(key, "end_time") == 0) {
        a->has_end = us_text_ns(v, &a->end_ns);
    } else if (strcmp(key, "place") == 0) {
        a->place.len = 0;
        sp__buf_append(&a->place, v, len);
        sp__buf_cstr(&a->place);
        if (a->place.failed) return -1;
    } else if (strcmp(key, "addr") == 0) {
        a->addr = (int64_t)strtoull(v, NULL, 10); /* paddle writes it as a string */
    }
    return 0;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t sum;
    if (__builtin_add_overflow(a, b, &sum)) return b > 0 ? INT64_MAX : INT64_MIN;
    return sum;
}

int sp__paddle_times(sp__paddle_clock *c, const sp__paddle_args *a, int64_t ts_ns, int64_t dur_ns,
                     int64_t *start, int64_t *end)
{
    *start = ts_ns;
    *end = sat_add(ts_ns, dur_ns > 0 ? dur_ns : 0);
    if (!a->has_start || !a->has_end || a->end_ns < a->start_ns) return 0;
    int64_t base;
    if (__builtin_sub_overflow(ts_ns, a->start_ns, &base)) return 0;
    if (!c->have_base) {
        c->base_ns = c->latest_ns = base;
        c->have_base = 1;
    }
    int64_t s = sat_add(c->base_ns, a->start_ns), diff;
    if (__builtin_sub_overflow(s, ts_ns, &diff) || diff > TS_SLACK_NS || diff < -TS_SLACK_NS)
        return 0;
    int64_t above; /* how far this bound lies above the first */
    if (base > c->latest_ns && !__builtin_sub_overflow(base, c->base_ns, &above) && above < 1000)
        c->latest_ns = base;
    *start = s;
    *end = sat_add(c->base_ns, a->end_ns);
    return 1;
}

void sp__paddle_keep_length(sp__event *ev, int64_t dur_ns)
{
    if (dur_ns > 0 && dur_ns < ((int64_t)1 << 53)) ev->value = (double)dur_ns; /* exact in a double */
}

void sp__paddle_host_seen(sp__paddle_clock *c, uint64_t tid, int64_t start, int64_t end)
{
    c->have_last = 1;
    c->last_tid = tid;
    c->last_start = start;
    c->last_end = end;
}

/* The type names with their lengths, in the order of their values. */
static const struct {
    const char *text;
    size_t len;
} type_names[SP_EVENT_TYPE_COUNT] = {
#define SP__TYPE_TEXT(name, value, text) {text, sizeof text - 1},
    SP_EVENT_TYPE_LIST(SP__TYPE_TEXT)
#undef SP__TYPE_TEXT
};

sp_event_type sp__paddle_type(const char *cat)
{
    /* Every range of a file asks, so lengths rule out nearly all at once. */
    size_t len = strlen(cat);
    for (int t = 0; t < SP_EVENT_TYPE_COUNT; t++)
        if (type_names[t].len == len && memcmp(cat, type_names[t].text, len) == 0)
            return (sp_event_type)t;
    return SP_EVENT_TYPE_COUNT;
}

static int is_gpu(sp_event_type t)
{
    return t == SP_EVENT_CUDA_RUNTIME || t == SP_EVENT_KERNEL || t == SP_EVENT_MEMCPY ||
           t == SP_EVENT_MEMSET;
}

int sp__paddle_kind(int in_paddle_file, const char *ph, const char *cat, const char *name)
{
    if (strcmp(ph, "X") == 0) {
        sp_event_type t = sp__paddle_type(cat);
        if (t != SP_EVENT_TYPE_COUNT) return is_gpu(t) ? SP__PADDLE_GPU : SP__PADDLE_RANGE;
        /* stepprof's own cats (cpu_op, kernel...) are not paddle's */
        return in_paddle_file ? SP__PADDLE_UNKNOWN : SP__PADDLE_NONE;
    }
    if (strcmp(ph, "i") == 0 && strcmp(name, "[memory]") == 0 &&
        strcmp(cat, "cpu_instant_event") != 0)
        return sp__paddle_mem_type(cat) >= 0 ? SP__PADDLE_MEMORY : SP__PADDLE_UNKNOWN;
    return SP__PADDLE_NONE;
}

size_t sp__paddle_name_len(const char *name)
{
    size_t len = strlen(name);
    const char *open = strrchr(name, '[');
    if (!open || len < 4 || name[len - 1] != ']' || name[len - 2] != 's') return len;
    if (open[1] < '0' || open[1] > '9') return len;
    return (size_t)(open - name);
}

int sp__paddle_mem_type(const char *cat)
{
    static const char *const names[] = {"Allocate", "Free", "ReservedAllocate", "ReservedFree"};
    for (int i = 0; i < 4; i++)
        if (strcmp(cat, names[i]) == 0) return i; /* the order of sp_mem_event_type */
    return -1;
}

/* A memory event and the range written before it, on the base_ns clock. */
struct sp__paddle_mem_fix {
    uint64_t tid;
    size_t index; /* in the thread's mems, before sp__builder_finish sorts them */
    int64_t start, end;
};

int sp__paddle_add_mem(sp__builder *b, sp__paddle_clock *c, const sp__paddle_args *a, uint64_t tid,
                       int64_t ts_ns, int type)
{
    sp__thread *t = sp__builder_thread(b, tid);
    sp__mem_event *m = t ? sp__builder_mem(b, t) : NULL;
    if (!m) return -1;
    if (c->have_last && c->last_tid == tid) {
        if (c->fix_count == c->fix_cap) {
            size_t cap = c->fix_cap ? c->fix_cap * 2 : 64;
            sp__paddle_mem_fix *grown = sp__realloc(c->fixes, sizeof *grown * cap);
            if (!grown) return -1;
            c->fixes = grown;
            c->fix_cap = cap;
        }
        c->fixes[c->fix_count++] =
            (sp__paddle_mem_fix){tid, t->mem_count - 1, c->last_start, c->last_end};
    }
    const char *place = a->place.len ? a->place.data : "Place(cpu)";
    m->ts_ns = ts_ns;
    m->type = (uint8_t)type;
    m->place = sp__names_from_bytes(&b->r->names, place, strlen(place));
    m->addr = (uint64_t)a->addr;
    m->bytes = a->increase_bytes;
    m->current_allocated = (uint64_t)a->current_allocated;
    m->current_reserved = (uint64_t)a->current_reserved;
    m->peak_allocated = (uint64_t)a->peak_allocated;
    m->peak_reserved = (uint64_t)a->peak_reserved;
    return 0;
}

int sp__paddle_add_runtime(sp__builder *b, const sp__paddle_args *a, uint64_t tid, uint32_t name,
                           int64_t start, int64_t end)
{
    sp__thread *t = sp__builder_thread(b, tid);
    sp__runtime *rt = t ? sp__builder_runtime(b, t) : NULL;
    if (!rt) return -1;
    rt->start_ns = start;
    rt->end_ns = end;
    rt->name = name;
    rt->correlation = (uint32_t)a->correlation;
    return 0;
}

int sp__paddle_add_device(sp__builder *b, const sp__paddle_args *a, sp_event_type type, int64_t pid,
                          int64_t tid, uint32_t name, int64_t start, int64_t end)
{
    sp__device_rec *d = sp__builder_device(b, UINT64_MAX);
    if (!d) return -1;
    d->start_ns = start;
    d->end_ns = end;
    d->name = name;
    d->type = (uint8_t)type;
    /* pid is the device and tid the stream; the args repeat them, but a
     * Memcpy has no "device". */
    d->device = (uint32_t)(a->has_device ? a->device : pid);
    d->context = (uint32_t)(a->context >= 0 ? a->context : 0);
    d->stream = (uint32_t)(a->stream >= 0 ? a->stream : tid);
    d->correlation = (uint32_t)a->correlation;
    if (type == SP_EVENT_KERNEL) {
        d->detail.kernel.registers = (uint32_t)a->registers;
        d->detail.kernel.static_shared = (uint32_t)a->shared; /* paddle writes static + dynamic */
    } else {
        d->bytes = (uint64_t)a->bytes;
    }
    return 0;
}

/* The innermost range of t (sorted and nested) containing ts, its end
 * included, as sp__attribute finds it; -1 for none. */
static int32_t innermost_at(const sp__thread *t, int64_t ts)
{
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->events[mid].start_ns <= ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int32_t i = (int32_t)lo - 1; i >= 0; i = t->events[i].parent)
        if (!sp__event_is_mark(&t->events[i]) && t->events[i].start_ns <= ts &&
            ts <= t->events[i].end_ns)
            return i;
    return -1;
}

/* The memory event m happened in [ts, ts + 1 us), in the range that paddle
 * wrote right before it (its parent in paddle's tree; `start` and, before
 * exact_lengths, `end` on the clock of the events) and in none of that
 * range's children. Moves it to the first such time, so that sp__attribute
 * finds the same range; leaves it where no such time exists (the file was
 * not written so). t's events are sorted and nested. */
static void place_mem(const sp__thread *t, sp__mem_event *m, int64_t start, int64_t end)
{
    size_t first = 0, n = t->count;
    while (first < n) { /* the first event starting at start */
        size_t mid = first + (n - first) / 2;
        if (t->events[mid].start_ns < start)
            first = mid + 1;
        else
            n = mid;
    }
    int32_t parent = -1; /* of those starting there, the one whose end was nearest */
    uint64_t best = UINT64_MAX;
    for (size_t i = first; i < t->count && t->events[i].start_ns == start; i++) {
        const sp__event *e = &t->events[i];
        uint64_t off = e->end_ns > end ? (uint64_t)e->end_ns - (uint64_t)end : (uint64_t)end - (uint64_t)e->end_ns;
        if (!sp__event_is_mark(e) && off < best) parent = (int32_t)i, best = off;
    }
    if (parent < 0) return;
    int64_t lo = m->ts_ns > start ? m->ts_ns : start, hi = sat_add(m->ts_ns, 999);
    if (hi > t->events[parent].end_ns) hi = t->events[parent].end_ns;
    for (int64_t p = lo; p <= hi;) {
        int32_t i = innermost_at(t, p);
        if (i == parent) {
            m->ts_ns = p;
            return;
        }
        while (i >= 0 && t->events[i].parent != parent) i = t->events[i].parent;
        if (i < 0) return; /* not inside the range after all */
        p = sat_add(t->events[i].end_ns, 1); /* past that child */
    }
}

/* start_time and end_time pass through a float in paddle's writer (exact
 * for the first 2^24 ns of the trace), dur is exact for any range shorter
 * than that: each range whose length was kept (sp__paddle_keep_length) ends
 * at start + dur, as far as that keeps the nesting the args gave (its
 * descendants start before its end; it ends by its parent's end and its
 * next sibling's start). t's events are sorted and nested; values are
 * cleared. */
static void exact_lengths(sp__thread *t)
{
    size_t n = t->count;
    size_t *last = sp__alloc(sizeof *last * (n ? n : 1)); /* the last event of each subtree */
    for (size_t i = 0; last && i < n; i++) last[i] = i;
    for (size_t i = n; last && i-- > 0;) {
        int32_t p = t->events[i].parent;
        if (p >= 0 && last[i] > last[p]) last[p] = last[i];
    }
    for (size_t i = 0; i < n; i++) {
        sp__event *e = &t->events[i];
        if (sp__event_is_mark(e)) continue;
        int64_t end = e->end_ns, want = sat_add(e->start_ns, (int64_t)e->value);
        e->value = 0;
        if (!last) continue;
        if (want > e->start_ns && (last[i] == i || want > t->events[last[i]].start_ns)) end = want;
        if (e->parent >= 0 && end > t->events[e->parent].end_ns) end = t->events[e->parent].end_ns;
        size_t next = last[i] + 1;
        if (next < n && t->events[next].parent == e->parent && end > t->events[next].start_ns)
            end = t->events[next].start_ns;
        e->end_ns = end < e->start_ns ? e->start_ns : end;
    }
    sp__free(last);
}

void sp__paddle_finish(sp__builder *b, sp__paddle_clock *c)
{
    sp_result *r = b->r;
    int64_t delta = c->have_base ? c->latest_ns - c->base_ns : 0;
    for (size_t i = 0; delta && i < r->thread_count; i++) {
        sp__thread *t = &r->threads[i];
        for (size_t k = 0; k < t->count; k++) {
            t->events[k].start_ns = sat_add(t->events[k].start_ns, delta);
            t->events[k].end_ns = sat_add(t->events[k].end_ns, delta);
        }
        for (size_t k = 0; k < t->runtime_count; k++) {
            t->runtimes[k].start_ns = sat_add(t->runtimes[k].start_ns, delta);
            t->runtimes[k].end_ns = sat_add(t->runtimes[k].end_ns, delta);
        }
    }
    for (size_t d = 0; delta && d < r->device_count; d++) {
        r->devices[d].start_ns = sat_add(r->devices[d].start_ns, delta);
        r->devices[d].end_ns = sat_add(r->devices[d].end_ns, delta);
    }
    /* Nested now rather than in sp__builder_finish, for the exact lengths
     * and to find each memory event's range; sp__builder_finish then finds
     * them in order. */
    for (size_t i = 0; c->have_base && i < r->thread_count; i++) {
        (void)sp__tree_build(r->threads[i].events, r->threads[i].count); /* counted there */
        exact_lengths(&r->threads[i]);
    }
    for (size_t i = 0; i < c->fix_count; i++) {
        const sp__paddle_mem_fix *f = &c->fixes[i];
        sp__thread *t = sp__builder_thread(b, f->tid);
        if (t && f->index < t->mem_count)
            place_mem(t, &t->mems[f->index], sat_add(f->start, delta), sat_add(f->end, delta));
    }
}

void sp__paddle_clock_fini(sp__paddle_clock *c)
{
    sp__free(c->fixes);
    c->fixes = NULL;
    c->fix_count = c->fix_cap = 0;
}

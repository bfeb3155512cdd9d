/* attribute.c: charges GPU work to the host ranges that launched it
 * (semantics.md §5.1): kernel --correlation id--> runtime call --its
 * external correlation id, or else time containment on its thread-->
 * innermost enclosing host range. The external id names the range the
 * call was made in whatever the GPU clock says; where that range does not
 * contain the call's time, the clocks disagree (counted). Unlike
 * paddle, nothing is dropped: a runtime call that ends after its range is
 * still attached to the range containing its start (counted as straddling),
 * and a device record without a runtime call stays in the result as
 * unattributed (counted), so it still appears in the device tables.
 * Memory events and op supplements attach to the innermost host range
 * containing them, its end included (§5.1.7). */
#include "collect.h"

#include <stdlib.h>
#include <string.h>

static int by_start(const void *pa, const void *pb)
{
    const sp__runtime *a = pa, *b = pb;
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
    return a->end_ns > b->end_ns ? -1 : a->end_ns < b->end_ns;
}

static int contains(const sp__event *e, int64_t ts) { return e->start_ns <= ts && ts < e->end_ns; }

/* Memory events and op supplements: the closed interval of §5.1 step 7. An
 * allocation made just before a range's end can carry the end's very
 * nanosecond; with the half-open test it went to the parent (issue 17: 1 of
 * 12 allocations of a `fwd` range charged to ProfileStep#6). */
static int contains_closed(const sp__event *e, int64_t ts) { return e->start_ns <= ts && ts <= e->end_ns; }

/* The index of t's first event starting at or after ts (events are sorted
 * by start). */
static size_t first_starting_at(const sp__thread *t, int64_t ts)
{
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->events[mid].start_ns < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The innermost range of t containing time ts (start <= ts < end, or
 * start <= ts <= end when closed), or -1. Events are sorted by start, so
 * the candidate is the last event starting at or before ts. Any range
 * containing ts started before that event and so also contains its start:
 * it is one of its ancestors, which are climbed (a chain as deep as the
 * nesting, never the siblings). */
static int32_t innermost_at(const sp__thread *t, int64_t ts, int closed)
{
    size_t after = ts == INT64_MAX ? t->count : first_starting_at(t, ts + 1);
    int32_t i = (int32_t)after - 1;
    while (i >= 0) {
        const sp__event *e = &t->events[i];
        if (!sp__event_is_mark(e) && (closed ? contains_closed(e, ts) : contains(e, ts))) return i;
        i = e->parent;
    }
    return -1;
}

/* How far from the time an op's own range is looked for, in events either
 * way (a few hundred nanoseconds of ops, on a thread of tiny ops). */
#define OP_NAME_REACH 64

/* An op supplement that names its op (op_type) goes to the range of that
 * name starting nearest its time, within OP_NAME_REACH events, when the
 * innermost range at its time has another name. The time comes from
 * another clock (CLOCK_REALTIME, mapped onto the span), whose error can
 * exceed the gap between an op's begin and its first child's (torch's
 * operators, a few hundred ns apart), so time alone may pick the child or
 * the parent. Without a range of that name near, the innermost one. */
static int32_t op_host(const sp_result *r, const sp__thread *t, const sp__op_supplement *op)
{
    int32_t inner = innermost_at(t, op->ts_ns, 1);
    const char *want = sp__result_name(r, op->op_type);
    if (!want || !*want || (inner >= 0 && strcmp(sp__result_name(r, t->events[inner].name), want) == 0))
        return inner;
    size_t mid = first_starting_at(t, op->ts_ns);
    size_t lo = mid > OP_NAME_REACH ? mid - OP_NAME_REACH : 0;
    size_t hi = t->count - mid > OP_NAME_REACH ? mid + OP_NAME_REACH : t->count;
    int32_t best = -1;
    uint64_t best_gap = UINT64_MAX;
    for (size_t i = lo; i < hi; i++) {
        const sp__event *e = &t->events[i];
        if (sp__event_is_mark(e) || strcmp(sp__result_name(r, e->name), want) != 0) continue;
        uint64_t gap = e->start_ns > op->ts_ns ? (uint64_t)(e->start_ns - op->ts_ns)
                                               : (uint64_t)(op->ts_ns - e->start_ns);
        if (gap < best_gap) best_gap = gap, best = (int32_t)i;
    }
    return best >= 0 ? best : inner;
}

/* A collective's record describes the innermost Communication range
 * containing its time: other ranges that a communication library opens
 * inside (a memcpy, a kernel launch) are climbed over. */
static int32_t comm_host(const sp__thread *t, int64_t ts)
{
    int32_t i = innermost_at(t, ts, 1);
    while (i >= 0 && t->events[i].type != SP_EVENT_COMMUNICATION)
        i = t->events[i].parent;
    return i;
}

static void attach_memory_and_ops(const sp_result *r, sp__thread *t)
{
    for (size_t k = 0; k < t->mem_count; k++) t->mems[k].host = innermost_at(t, t->mems[k].ts_ns, 1);
    for (size_t k = 0; k < t->op_count; k++) t->ops[k].host = op_host(r, t, &t->ops[k]);
    for (size_t k = 0; k < t->comm_count; k++)
        t->comms[k].host = comm_host(t, t->comms[k].ts_ns);
}

/* The range of t that an external id names: the one starting at start_ns
 * (of several starting together, the innermost containing the call at ts,
 * else the outermost), or -1 when none does (the id came from an earlier
 * span, or the range was dropped). */
static int32_t named_range(const sp__thread *t, int64_t start_ns, int64_t ts)
{
    int32_t first = -1, best = -1;
    for (size_t i = first_starting_at(t, start_ns); i < t->count && t->events[i].start_ns == start_ns; i++) {
        if (sp__event_is_mark(&t->events[i])) continue;
        if (first < 0) first = (int32_t)i;
        if (contains(&t->events[i], ts)) best = (int32_t)i;
    }
    return best >= 0 ? best : first;
}

static void attach_runtimes(sp_result *r, sp__thread *t)
{
    if (t->runtime_count > 1) qsort(t->runtimes, t->runtime_count, sizeof *t->runtimes, by_start);
    for (size_t k = 0; k < t->runtime_count; k++) {
        sp__runtime *rt = &t->runtimes[k];
        int32_t named = rt->external_ns ? named_range(t, rt->external_ns, rt->start_ns) : -1;
        rt->host = named >= 0 ? named : innermost_at(t, rt->start_ns, 0);
        if (rt->host < 0) continue;
        if (!contains(&t->events[rt->host], rt->start_ns))
            r->counters[SP_COUNTER_CLOCK_MISMATCH]++;
        else if (rt->end_ns > t->events[rt->host].end_ns)
            r->counters[SP_COUNTER_STRADDLING_RUNTIME]++;
    }
}

typedef struct slot {
    uint32_t correlation;
    int32_t thread, runtime; /* thread -1: empty */
} slot;

static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    return x;
}

int sp__attribute(sp_result *r)
{
    r->counters[SP_COUNTER_STRADDLING_RUNTIME] = 0; /* recounted: a retry stays exact */
    r->counters[SP_COUNTER_DUPLICATE_CORRELATION] = 0;
    r->counters[SP_COUNTER_UNATTRIBUTED] = 0;
    r->counters[SP_COUNTER_CLOCK_MISMATCH] = 0;
    size_t runtimes = 0;
    for (size_t i = 0; i < r->thread_count; i++) {
        attach_runtimes(r, &r->threads[i]);
        attach_memory_and_ops(r, &r->threads[i]);
        runtimes += r->threads[i].runtime_count;
    }
    size_t size = 16;
    while (size < runtimes * 2) size *= 2;
    slot *table = sp__alloc(sizeof *table * size);
    if (!table) return -1;
    for (size_t i = 0; i < size; i++) table[i].thread = -1;
    for (size_t i = 0; i < r->thread_count; i++)
        for (size_t k = 0; k < r->threads[i].runtime_count; k++) {
            uint32_t c = r->threads[i].runtimes[k].correlation;
            size_t j = mix(c) & (size - 1);
            while (table[j].thread >= 0 && table[j].correlation != c) j = (j + 1) & (size - 1);
            if (table[j].thread >= 0) r->counters[SP_COUNTER_DUPLICATE_CORRELATION]++;
            table[j] = (slot){c, (int32_t)i, (int32_t)k}; /* the last one wins */
        }
    for (size_t d = 0; d < r->device_count; d++) {
        sp__device_rec *dev = &r->devices[d];
        size_t j = mix(dev->correlation) & (size - 1);
        while (table[j].thread >= 0 && table[j].correlation != dev->correlation) j = (j + 1) & (size - 1);
        dev->thread = table[j].thread;
        dev->runtime = table[j].thread >= 0 ? table[j].runtime : -1;
        if (dev->thread < 0) r->counters[SP_COUNTER_UNATTRIBUTED]++;
    }
    sp__free(table);
    return 0;
}

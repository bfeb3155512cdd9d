/* tree.c: builds one thread's nesting (semantics.md §5.1 step 5). Events are
 * put in order of start ascending and end descending, then walked with a
 * stack: an event nests under the innermost open range that contains it. The
 * collector hands them over in begin order, which is that order already
 * unless intervals tie, so the sort runs only when a check finds otherwise. An event that
 * partially overlaps the top of the stack is not fatal (paddle aborts): it is
 * attached to the nearest enclosing range, flagged OVERLAP and counted.
 * Instants and counter samples get a parent but never become one. */
#include "collect.h"

#include <stdlib.h>
#include <string.h>

static const sp__event *sort_base;

/* Equal intervals: ranges before marks, and the earlier-begun range first,
 * because an outer range begins before the ranges inside it. */
static int by_start_end(const void *pa, const void *pb)
{
    uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
    const sp__event *a = &sort_base[ia], *b = &sort_base[ib];
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
    if (a->end_ns != b->end_ns) return a->end_ns > b->end_ns ? -1 : 1;
    if (sp__event_is_mark(a) != sp__event_is_mark(b)) return sp__event_is_mark(a) ? 1 : -1;
    return ia < ib ? -1 : ia > ib;
}

int sp__event_order(const void *pa, const void *pb)
{
    const sp__event *a = pa, *b = pb;
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
    if (a->end_ns != b->end_ns) return a->end_ns > b->end_ns ? -1 : 1;
    return sp__event_is_mark(a) - sp__event_is_mark(b);
}

static void sort_events(sp__event *events, size_t count)
{
    uint32_t *order = sp__alloc(sizeof *order * count);
    sp__event *sorted = order ? sp__alloc(sizeof *sorted * count) : NULL;
    if (!sorted) {
        sp__free(order);
        qsort(events, count, sizeof *events, sp__event_order);
        return;
    }
    for (size_t i = 0; i < count; i++) order[i] = (uint32_t)i;
    sort_base = events; /* the collector is single-threaded per result */
    qsort(order, count, sizeof *order, by_start_end);
    for (size_t i = 0; i < count; i++) sorted[i] = events[order[i]];
    memcpy(events, sorted, sizeof *events * count);
    sp__free(order);
    sp__free(sorted);
}

static int in_order(const sp__event *events, size_t count)
{
    for (size_t i = 1; i < count; i++)
        if (sp__event_order(&events[i - 1], &events[i]) > 0) return 0;
    return 1;
}

uint64_t sp__tree_build(sp__event *events, size_t count)
{
    if (count == 0) return 0;
    if (!in_order(events, count)) sort_events(events, count);
    int32_t *stack = sp__alloc(sizeof *stack * count);
    uint64_t overlaps = 0;
    size_t sp = 0;
    for (size_t i = 0; i < count; i++) {
        sp__event *e = &events[i];
        while (sp > 0 && events[stack[sp - 1]].end_ns <= e->start_ns) sp--;
        if (!sp__event_is_mark(e) && sp > 0 && e->end_ns > events[stack[sp - 1]].end_ns) {
            while (sp > 0 && e->end_ns > events[stack[sp - 1]].end_ns) sp--;
            e->flags |= SP_EVENT_FLAG_OVERLAP;
            overlaps++;
        }
        e->parent = sp > 0 ? stack[sp - 1] : -1;
        e->depth = (uint32_t)sp;
        if (!sp__event_is_mark(e) && stack) stack[sp++] = (int32_t)i;
    }
    sp__free(stack);
    return overlaps;
}

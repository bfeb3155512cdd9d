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

/* ---- ranges open across a step boundary (issue 17) ----
 * ProfileStep ranges tile the stepping thread's time. A user range begun in
 * one step and ended in a later one would partially overlap both steps,
 * which breaks the nesting that viewers and the tables rely on. Such a range
 * is cut at the boundary of each step it partially overlaps (at most two:
 * the step it begins in and the step it ends in, as steps do not overlap),
 * so that every piece lies inside a step, or between steps around whole
 * steps. The pieces keep the name and type; every piece is flagged
 * SP_EVENT_FLAG_SPLIT and every piece but the first SP_EVENT_FLAG_SPLIT_CONT.
 * A range nested in another is cut at the same points as the outer one, so
 * the pieces still nest. Ranges begun in the last step that run past it
 * (still open at stop, UNCLOSED) extend that step instead (extend_last_step). */

typedef struct step_span {
    int64_t start_ns, end_ns;
} step_span;

static int by_step_start(const void *pa, const void *pb)
{
    const step_span *a = pa, *b = pb;
    return a->start_ns < b->start_ns ? -1 : a->start_ns > b->start_ns;
}

/* The last step that starts before t, or -1. */
static ptrdiff_t step_before(const step_span *steps, size_t n, int64_t t)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (steps[mid].start_ns < t)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (ptrdiff_t)lo - 1;
}

static int is_step(const sp__event *e)
{
    return e->type == SP_EVENT_PROFILE_STEP && !sp__event_is_mark(e);
}

/* The last step ends in stop(), a moment before the span does; a range
 * begun in it and still open then (UNCLOSED, ended at the span's end) would
 * overlap it by stop()'s own time. The step is extended to the end of such
 * ranges instead of leaving a sliver of each after it. */
static void extend_last_step(sp__thread *t, step_span *last)
{
    int64_t end = last->end_ns;
    for (size_t i = 0; i < t->count; i++) {
        const sp__event *e = &t->events[i];
        if (is_step(e) || sp__event_is_mark(e)) continue;
        if (e->start_ns > last->start_ns && e->start_ns < last->end_ns && e->end_ns > end)
            end = e->end_ns;
    }
    if (end == last->end_ns) return;
    for (size_t i = 0; i < t->count; i++) {
        sp__event *e = &t->events[i];
        if (is_step(e) && e->start_ns == last->start_ns && e->end_ns == last->end_ns) {
            e->end_ns = end;
            break;
        }
    }
    last->end_ns = end;
}

uint64_t sp__tree_split_at_steps(sp__thread *t)
{
    size_t nsteps = 0;
    for (size_t i = 0; i < t->count; i++)
        nsteps += is_step(&t->events[i]);
    if (nsteps == 0) return 0;
    step_span *steps = sp__alloc(sizeof *steps * nsteps);
    if (!steps) return 0; /* left unsplit: counted as overlaps by the nesting pass */
    size_t k = 0;
    for (size_t i = 0; i < t->count; i++)
        if (is_step(&t->events[i]))
            steps[k++] = (step_span){t->events[i].start_ns, t->events[i].end_ns};
    qsort(steps, nsteps, sizeof *steps, by_step_start);
    extend_last_step(t, &steps[nsteps - 1]);
    uint64_t split = 0;
    size_t count = t->count;
    for (size_t i = 0; i < count; i++) {
        sp__event e = t->events[i];
        if (is_step(&e) || sp__event_is_mark(&e) || e.end_ns <= e.start_ns) continue;
        int64_t cut[2];
        int ncut = 0;
        ptrdiff_t a = step_before(steps, nsteps, e.start_ns); /* begins inside it? */
        if (a >= 0 && steps[a].end_ns > e.start_ns && steps[a].end_ns < e.end_ns)
            cut[ncut++] = steps[a].end_ns;
        ptrdiff_t b = step_before(steps, nsteps, e.end_ns); /* ends inside it? */
        if (b >= 0 && steps[b].start_ns > e.start_ns && steps[b].end_ns > e.end_ns &&
            (ncut == 0 || steps[b].start_ns > cut[0]))
            cut[ncut++] = steps[b].start_ns;
        if (ncut == 0) continue;
        if (t->count + (size_t)ncut > t->cap) {
            size_t cap = t->cap ? t->cap * 2 : 16;
            while (cap < t->count + (size_t)ncut)
                cap *= 2;
            sp__event *grown = sp__realloc(t->events, sizeof *grown * cap);
            if (!grown) break; /* the rest stay whole, counted as overlaps */
            t->events = grown;
            t->cap = cap;
        }
        int64_t from = e.start_ns;
        for (int c = 0; c <= ncut; c++) {
            int64_t to = c < ncut ? cut[c] : e.end_ns;
            sp__event piece = e;
            piece.start_ns = from;
            piece.end_ns = to;
            piece.flags |= SP_EVENT_FLAG_SPLIT;
            if (c > 0) {
                piece.flags |= SP_EVENT_FLAG_SPLIT_CONT;
                /* A continued range was not left open at the span's end. */
                if (c < ncut) piece.flags &= (uint8_t)~SP_EVENT_FLAG_UNCLOSED;
                t->events[t->count++] = piece;
            } else {
                piece.flags &= (uint8_t)~SP_EVENT_FLAG_UNCLOSED;
                t->events[i] = piece;
            }
            from = to;
        }
        split++;
    }
    sp__free(steps);
    return split;
}

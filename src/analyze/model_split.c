/* model_split.c: a range cut at step boundaries (tree.c, SP_EVENT_FLAG_SPLIT)
 * is one call in every table, as in the Overview: its first piece stands for
 * all the pieces, with their times summed, and the later pieces
 * (SP_EVENT_FLAG_SPLIT_CONT) count nothing. Without this, Calls counted
 * each piece, and Max and Min were those of the pieces, not of the range.
 *
 * The pieces of one range have its name, type and depth, and each begins
 * where the one before it ends; the first keeps the range's place in the
 * events, the others were appended. Two ranges nested in each other with
 * the same name and type are cut at the same points but differ in depth,
 * so the match is unambiguous. */
#include "model.h"
#include "sys.h"

#include <stdlib.h>

typedef struct later_piece {
    int64_t start_ns;
    uint32_t depth, name;
    uint8_t type;
    uint8_t used;
    int32_t node;
} later_piece;

static int by_start(const void *pa, const void *pb)
{
    const later_piece *a = pa, *b = pb;
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns ? -1 : 1;
    return a->node < b->node ? -1 : a->node > b->node;
}

/* The unused later piece that continues event e at e_end, or NULL. */
static later_piece *continuation(later_piece *v, size_t n, const sp__event *e, int64_t e_end)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid].start_ns < e_end)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (; lo < n && v[lo].start_ns == e_end; lo++)
        if (!v[lo].used && v[lo].name == e->name && v[lo].type == e->type &&
            v[lo].depth == e->depth)
            return &v[lo];
    return NULL;
}

static void add_times(sp__node *to, const sp__node *from)
{
    to->cpu += from->cpu;
    to->self_cpu += from->self_cpu;
    to->gpu += from->gpu;
    to->self_gpu += from->self_gpu;
    to->ggpu += from->ggpu;
}

int sp__model_join_split(sp__thread_model *t)
{
    const sp__event *ev = t->thread->events;
    size_t firsts = 0, laters = 0;
    for (size_t k = 0; k < t->count; k++) {
        uint8_t f = ev[t->nodes[k].event].flags;
        if (f & SP_EVENT_FLAG_SPLIT) (f & SP_EVENT_FLAG_SPLIT_CONT) ? laters++ : firsts++;
    }
    if (firsts == 0) return 0;
    t->wholes = sp__alloc(sizeof *t->wholes * firsts);
    later_piece *v = laters ? sp__alloc(sizeof *v * laters) : NULL;
    if (!t->wholes || (laters && !v)) {
        sp__free(v);
        return -1;
    }
    size_t n = 0;
    for (size_t k = 0; k < t->count; k++) {
        const sp__event *e = &ev[t->nodes[k].event];
        if ((e->flags & SP_EVENT_FLAG_SPLIT) && (e->flags & SP_EVENT_FLAG_SPLIT_CONT))
            v[n++] = (later_piece){e->start_ns, e->depth, e->name, e->type, 0, (int32_t)k};
    }
    qsort(v, n, sizeof *v, by_start);
    for (size_t k = 0; k < t->count; k++) {
        const sp__event *e = &ev[t->nodes[k].event];
        if (!(e->flags & SP_EVENT_FLAG_SPLIT) || (e->flags & SP_EVENT_FLAG_SPLIT_CONT)) continue;
        sp__whole_range *w = &t->wholes[t->whole_count++];
        w->node = (int32_t)k;
        w->call = t->nodes[k];
        w->start_ns = e->start_ns;
        w->end_ns = e->end_ns;
        for (later_piece *p; (p = continuation(v, n, e, w->end_ns)) != NULL;) {
            p->used = 1;
            add_times(&w->call, &t->nodes[p->node]);
            w->end_ns = ev[t->nodes[p->node].event].end_ns;
        }
    }
    sp__free(v);
    return 0;
}

int sp__model_call(const sp__thread_model *t, const sp__node *n, sp__node *call,
                   int64_t *start_ns, int64_t *end_ns)
{
    const sp__event *e = &t->thread->events[n->event];
    *call = *n;
    *start_ns = e->start_ns;
    *end_ns = e->end_ns;
    if (!(e->flags & SP_EVENT_FLAG_SPLIT)) return 1;
    if (e->flags & SP_EVENT_FLAG_SPLIT_CONT) return 0;
    int32_t k = (int32_t)(n - t->nodes);
    size_t lo = 0, hi = t->whole_count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->wholes[mid].node < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < t->whole_count && t->wholes[lo].node == k) {
        *call = t->wholes[lo].call;
        *start_ns = t->wholes[lo].start_ns;
        *end_ns = t->wholes[lo].end_ns;
    }
    return 1;
}

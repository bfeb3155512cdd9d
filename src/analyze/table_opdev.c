/* table_opdev.c: for the Operator Summary's device rows (semantics.md §6.5),
 * an index from each host node to the device records of its OWN runtime
 * calls (the calls whose attribution `host` is that node's event; a
 * descendant's calls are not included). Each node's records are chained in
 * §5.4 order: runtime calls in start order (a thread's runtimes are sorted by
 * start), then the records of one call by start, then by position in
 * r->devices.
 *
 * Records of every device type count (the GPU column is ggpu). Records that
 * are unattributed, attributed to a thread root (host -1) or whose indices
 * are out of range are left out.
 *
 * The interface has no header of its own yet: table_operator.c repeats the
 * functions declared in summary.h. */
#include "summary.h"

#include <stdlib.h>
#include <string.h>

struct sp__opdev {
    size_t *base;  /* per thread: offset of its nodes in first */
    int32_t *first; /* per node: first device record, -1 = none */
    int32_t *next;  /* per device record: the next of the same node, -1 = none */
};

typedef struct rec_key {
    int32_t thread, runtime;
    int64_t start;
    int32_t index;
    int32_t node;
} rec_key;

static int cmp_key(const void *pa, const void *pb)
{
    const rec_key *a = pa, *b = pb;
    if (a->thread != b->thread) return a->thread < b->thread ? -1 : 1;
    if (a->runtime != b->runtime) return a->runtime < b->runtime ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

void sp__opdev_free(sp__opdev *x)
{
    if (!x) return;
    sp__free(x->base);
    sp__free(x->first);
    sp__free(x->next);
    sp__free(x);
}

sp__opdev *sp__opdev_new(const sp__model *m)
{
    const sp_result *r = m->result;
    sp__opdev *x = sp__alloc(sizeof *x);
    if (!x) return NULL;
    memset(x, 0, sizeof *x);
    size_t nodes = 0, n = 0;
    x->base = sp__alloc((m->thread_count + 1) * sizeof *x->base);
    if (!x->base) goto fail;
    for (size_t t = 0; t < m->thread_count; t++) x->base[t] = nodes, nodes += m->threads[t].count;
    x->first = sp__alloc((nodes + 1) * sizeof *x->first);
    x->next = sp__alloc((r->device_count + 1) * sizeof *x->next);
    rec_key *keys = sp__alloc((r->device_count + 1) * sizeof *keys);
    if (!x->first || !x->next || !keys) {
        sp__free(keys);
        goto fail;
    }
    memset(x->first, 0xff, (nodes + 1) * sizeof *x->first);
    memset(x->next, 0xff, (r->device_count + 1) * sizeof *x->next);
    for (size_t d = 0; d < r->device_count && d <= INT32_MAX; d++) {
        const sp__device_rec *dv = &r->devices[d];
        if (dv->thread < 0 || (size_t)dv->thread >= m->thread_count) continue;
        const sp__thread_model *tm = &m->threads[dv->thread];
        if (dv->runtime < 0 || (size_t)dv->runtime >= tm->thread->runtime_count) continue;
        int32_t host = tm->thread->runtimes[dv->runtime].host;
        int32_t node = host >= 0 ? sp__model_node_of(tm, host) : -1;
        if (node < 0) continue;
        keys[n++] = (rec_key){dv->thread, dv->runtime, dv->start_ns, (int32_t)d, node};
    }
    qsort(keys, n, sizeof *keys, cmp_key);
    /* Pushing to the front in reverse leaves every chain in key order. */
    for (size_t k = n; k-- > 0;) {
        int32_t *head = &x->first[x->base[keys[k].thread] + (size_t)keys[k].node];
        x->next[keys[k].index] = *head;
        *head = keys[k].index;
    }
    sp__free(keys);
    return x;
fail:
    sp__opdev_free(x);
    return NULL;
}

int32_t sp__opdev_first(const sp__opdev *x, size_t thread, size_t node)
{
    return x->first[x->base[thread] + node];
}

int32_t sp__opdev_next(const sp__opdev *x, int32_t dev) { return x->next[dev]; }

/* table_operator.c: the Operator Summary of semantics.md §6.5, called by the
 * summary driver. One §5.4 first-seen walk of the model groups every
 * Operator node by name (per thread with thread_sep), and under each item its
 * non-Operator children by name (the op_detail rows); then each group is
 * sorted (stable: ties keep first-seen order) and printed.
 *
 * Decisions:
 * - Paddle prints the table only when some Operator node exists
 *   (`if statistic_data.event_summary.items:`), so without one *out is NULL.
 * - Names are grouped by their interned id; the result's name table interns
 *   by text, so that is grouping by name.
 * - Device rows: an op's (or inner item's) devices are the device records
 *   of the node's own runtime calls (table_opdev.c), grouped by name in the
 *   order the walk first meets them; calls and duration total/max/min.
 *   Printed only with op_detail, as §6.5 says; FLOPs "-".
 * - Op rows print the summed flops; none are recorded yet, so "0".
 * - Inner items of one op are found by a linear scan of that op's few inner
 *   names; op items through a name-id -> item map, reset per group. */
#include "summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_WIDTH 52


typedef sp__item_stats stat;

typedef struct dev {
    uint32_t name;
    int64_t calls, total, max, min;
    int32_t next;
} dev;

typedef struct devlist { int32_t first, last; } devlist;

typedef struct item {
    uint32_t name;
    size_t seen; /* creation order: the stable tie-break */
    double key;  /* larger sorts first */
    stat s;
    int32_t first_inner, last_inner;
    devlist devs;
} item;

typedef struct inner {
    uint32_t name;
    stat s;
    int32_t next;
    devlist devs;
} inner;

typedef struct ctx {
    const sp__model *m;
    int thread_sep;
    item *items;
    size_t n_items, cap_items;
    inner *inners;
    size_t n_inners, cap_inners;
    sp__opdev *opdev;
    dev *devs;
    size_t n_devs, cap_devs;
    int32_t *map; /* name id (count = out of range) -> item, -1 = none */
    size_t map_n, group_start;
    size_t *groups; /* start index of each group; groups[n_groups] = n_items */
    uint64_t *tids;
    size_t n_groups;
    int failed;
} ctx;

/* Grows *p (of *cap elements of size sz) to hold one more; 0 or -1. */
static int grow(void **p, size_t *cap, size_t used, size_t sz)
{
    if (used < *cap) return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    void *np = sp__realloc(*p, ncap * sz);
    if (!np) return -1;
    *p = np;
    *cap = ncap;
    return 0;
}

static void start_group(ctx *c, uint64_t tid)
{
    for (size_t i = c->group_start; i < c->n_items; i++) c->map[c->items[i].name] = -1;
    c->group_start = c->n_items;
    c->groups[c->n_groups] = c->n_items;
    c->tids[c->n_groups++] = tid;
}

static item *find_item(ctx *c, uint32_t name)
{
    if (c->map[name] >= 0) return &c->items[c->map[name]];
    if (grow((void **)&c->items, &c->cap_items, c->n_items, sizeof *c->items)) return NULL;
    item *it = &c->items[c->n_items];
    memset(it, 0, sizeof *it);
    it->name = name;
    it->seen = c->n_items;
    it->first_inner = it->last_inner = -1;
    it->devs.first = it->devs.last = -1;
    c->map[name] = (int32_t)c->n_items++;
    return it;
}

static inner *find_inner(ctx *c, item *it, uint32_t name)
{
    for (int32_t k = it->first_inner; k >= 0; k = c->inners[k].next)
        if (c->inners[k].name == name) return &c->inners[k];
    if (grow((void **)&c->inners, &c->cap_inners, c->n_inners, sizeof *c->inners)) return NULL;
    inner *in = &c->inners[c->n_inners];
    memset(in, 0, sizeof *in);
    in->name = name;
    in->next = -1;
    in->devs.first = in->devs.last = -1;
    if (it->last_inner >= 0) c->inners[it->last_inner].next = (int32_t)c->n_inners;
    else it->first_inner = (int32_t)c->n_inners;
    it->last_inner = (int32_t)c->n_inners++;
    return in;
}

/* Adds the device records of node k of thread t (its own runtime calls) to l. */
static int add_devs(ctx *c, devlist *l, const sp__thread_model *t, size_t k)
{
    const sp_result *r = c->m->result;
    size_t ti = (size_t)(t - c->m->threads);
    for (int32_t d = sp__opdev_first(c->opdev, ti, k); d >= 0; d = sp__opdev_next(c->opdev, d)) {
        const sp__device_rec *rec = &r->devices[d];
        int64_t dur = rec->end_ns > rec->start_ns ? rec->end_ns - rec->start_ns : 0;
        int32_t j = l->first;
        while (j >= 0 && c->devs[j].name != rec->name) j = c->devs[j].next;
        if (j < 0) {
            if (grow((void **)&c->devs, &c->cap_devs, c->n_devs, sizeof *c->devs)) return -1;
            j = (int32_t)c->n_devs++;
            c->devs[j] = (dev){.name = rec->name, .max = dur, .min = dur, .next = -1};
            if (l->last >= 0) c->devs[l->last].next = j;
            else l->first = j;
            l->last = j;
        }
        dev *v = &c->devs[j];
        v->calls++;
        v->total += dur;
        if (dur > v->max) v->max = dur;
        if (dur < v->min) v->min = dur;
    }
    return 0;
}

static uint32_t name_key(const ctx *c, uint32_t id) { return id < c->map_n - 1 ? id : (uint32_t)(c->map_n - 1); }

static void visit(void *vc, const sp__thread_model *t, const sp__node *n)
{
    ctx *c = vc;
    const sp__event *e = &t->thread->events[n->event];
    if (c->failed || e->type != SP_EVENT_OPERATOR) return;
    if (c->n_groups == 0 || (c->thread_sep && c->tids[c->n_groups - 1] != t->thread->tid))
        start_group(c, c->thread_sep ? t->thread->tid : 0);
    item *it = find_item(c, name_key(c, e->name));
    if (!it) { c->failed = 1; return; }
    sp__item_stats_add(&it->s, n);
    if (c->opdev && add_devs(c, &it->devs, t, (size_t)(n - t->nodes))) { c->failed = 1; return; }
    for (int32_t k = n->first_child; k >= 0; k = t->nodes[k].next_sibling) {
        const sp__event *ce = &t->thread->events[t->nodes[k].event];
        if (ce->type == SP_EVENT_OPERATOR) continue;
        inner *in = find_inner(c, it, name_key(c, ce->name));
        if (!in) { c->failed = 1; return; }
        sp__item_stats_add(&in->s, &t->nodes[k]);
        if (c->opdev && add_devs(c, &in->devs, t, (size_t)k)) { c->failed = 1; return; }
    }
}

static int cmp_item(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
    return a->seen < b->seen ? -1 : a->seen > b->seen;
}

static const char *unit_of(const sp__summary_opts *o)
{
    static const char *const units[] = {"s", "ms", "us", "ns"};
    for (size_t i = 0; o->time_unit && i < 4; i++)
        if (strcmp(o->time_unit, units[i]) == 0) return units[i];
    return "ms";
}

/* prefix + name, cut to NAME_WIDTH code points with "..." (§6.5). */
static void detail_name(char *out, size_t size, const char *prefix, const char *name)
{
    size_t plen = strlen(prefix), cps = 0, keep = 0, keep_bytes = 0;
    for (const char *p = name; *p; p++) {
        if (((unsigned char)*p & 0xC0) == 0x80) continue;
        if (cps++ == NAME_WIDTH - plen - 3) keep_bytes = (size_t)(p - name), keep = 1;
    }
    if (cps + plen <= NAME_WIDTH) keep = 0;
    if (keep) snprintf(out, size, "%s%.*s...", prefix, (int)keep_bytes, name);
    else snprintf(out, size, "%s%s", prefix, name);
}

static void add_row(sp__table *t, const char *name, const stat *s, double cpu_den, double gpu_den,
                    const char *flops, const char *unit)
{
    char calls[32], cpu[256], gpu[256];
    snprintf(calls, sizeof calls, "%lld", (long long)s->calls);
    sp__fmt_composite(cpu, sizeof cpu, (double)s->cpu, s->calls, (double)s->cpu_max,
                      (double)s->cpu_min, (double)s->cpu, cpu_den, unit);
    sp__fmt_composite(gpu, sizeof gpu, (double)s->gpu, s->calls, (double)s->gpu_max,
                      (double)s->gpu_min, (double)s->gpu, gpu_den, unit);
    const char *cells[] = {name, calls, cpu, gpu, flops};
    sp__table_row(t, cells);
}

static void add_dev_rows(const ctx *c, sp__table *t, const char *prefix, const devlist *l, double den,
                         const char *unit)
{
    char name[512], calls[32], gpu[256];
    for (int32_t j = l->first; j >= 0; j = c->devs[j].next) {
        const dev *v = &c->devs[j];
        detail_name(name, sizeof name, prefix, sp__result_name(c->m->result, v->name));
        snprintf(calls, sizeof calls, "%lld", (long long)v->calls);
        sp__fmt_composite(gpu, sizeof gpu, (double)v->total, v->calls, (double)v->max, (double)v->min,
                          (double)v->total, den, unit);
        const char *cells[] = {name, calls, "- / - / - / - / -", gpu, "-"};
        sp__table_row(t, cells);
    }
}

static void add_group(const ctx *c, const sp__summary_opts *o, sp__table *t, size_t g)
{
    char title[64], name[512];
    const char *unit = unit_of(o);
    item *first = &c->items[c->groups[g]];
    size_t n = c->groups[g + 1] - c->groups[g];
    if (c->thread_sep) snprintf(title, sizeof title, "Thread: %llu", (unsigned long long)c->tids[g]);
    else snprintf(title, sizeof title, "Thread: All threads merged");
    sp__table_title(t, title);
    double cpu_sum = 0, gpu_sum = 0;
    for (size_t i = 0; i < n; i++) {
        first[i].key = sp__item_sort_key(&first[i].s, o->sorted_by);
        cpu_sum += (double)first[i].s.cpu;
        gpu_sum += (double)first[i].s.gpu;
    }
    qsort(first, n, sizeof *first, cmp_item);
    for (size_t i = 0; i < n; i++) {
        const item *it = &first[i];
        add_row(t, sp__result_name(c->m->result, it->name), &it->s, cpu_sum, gpu_sum, "0", unit);
        for (int32_t k = it->first_inner; o->op_detail && k >= 0; k = c->inners[k].next) {
            const inner *in = &c->inners[k];
            detail_name(name, sizeof name, "  ", sp__result_name(c->m->result, in->name));
            add_row(t, name, &in->s, (double)it->s.cpu, (double)it->s.gpu, "-", unit);
            add_dev_rows(c, t, "    ", &in->devs, (double)in->s.gpu, unit);
        }
        if (o->op_detail) add_dev_rows(c, t, "  ", &it->devs, (double)it->s.gpu, unit);
    }
}

static sp__table *render(const ctx *c, const sp__summary_opts *o)
{
    static const char *const head[] = {"Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
                                       "GPU Total / Avg / Max / Min / Ratio(%)", "FLOPs"};
    char unit_line[32];
    sp__table *t = sp__table_new(5);
    if (!t) return NULL;
    sp__table_column(t, 0, NAME_WIDTH, 0);
    sp__table_column(t, 1, 6, 1);
    sp__table_column(t, 2, 40, 1);
    sp__table_column(t, 3, 40, 1);
    sp__table_column(t, 4, 10, 0);
    snprintf(unit_line, sizeof unit_line, "Time unit: %s", unit_of(o));
    sp__table_title(t, "Operator Summary");
    sp__table_text(t, unit_line);
    sp__table_separator(t);
    sp__table_header(t, head);
    sp__table_separator(t);
    for (size_t g = 0; g < c->n_groups; g++) add_group(c, o, t, g);
    sp__table_separator(t);
    sp__table_blank(t);
    sp__table_blank(t);
    return t;
}

int sp__summary_operator(const sp__model *m, const sp__summary_opts *o, sp__table **out)
{
    ctx c = {.m = m, .thread_sep = o->thread_sep};
    int rc = -1;
    *out = NULL;
    if (m->failed || !m->result) return 0;
    c.map_n = (size_t)m->result->names.count + 1;
    c.map = sp__alloc(c.map_n * sizeof *c.map);
    c.groups = sp__alloc((m->thread_count + 2) * sizeof *c.groups);
    c.tids = sp__alloc((m->thread_count + 1) * sizeof *c.tids);
    if (!c.map || !c.groups || !c.tids) goto done;
    memset(c.map, 0xff, c.map_n * sizeof *c.map);
    if (o->op_detail && m->result->device_count) {
        c.opdev = sp__opdev_new(m);
        if (!c.opdev) goto done;
    }
    sp__model_visit(m, visit, &c);
    if (c.failed) goto done;
    rc = 0;
    if (c.n_groups == 0) goto done; /* no Operator node: no table */
    c.groups[c.n_groups] = c.n_items;
    *out = render(&c, o);
    if (!*out || sp__table_failed(*out)) {
        sp__table_free(*out);
        *out = NULL;
        rc = -1;
    }
done:
    sp__free(c.map);
    sp__free(c.groups);
    sp__free(c.tids);
    sp__free(c.items);
    sp__free(c.inners);
    sp__free(c.devs);
    sp__opdev_free(c.opdev);
    return rc;
}

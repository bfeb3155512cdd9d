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
 * - FLOPs (docs/semantics.md §6.5), as paddle counts them: a node's FLOPs
 *   are those of the op supplements attached to it (or to a non-Operator
 *   range inside it, not inside another Operator) when it is an Operator,
 *   plus its children's; an op row prints the sum over its calls (so an
 *   operator inside another counts in both rows), "0" when none were
 *   recorded. Inner and device rows print "-", as paddle's do.
 * - Inner items of one op are found by a linear scan of that op's few inner
 *   names; op items through a name-id -> item map, reset per group.
 * - Helper threads (issue 17, docs/design.md "Work on helper threads"): an
 *   OperatorInner range with no Operator or OperatorInner around it on its
 *   own thread (an OpenMP worker's piece of an op) is charged to the one
 *   Operator on another thread whose time contains it (the innermost there).
 *   It becomes an inner row "<name> (other threads)" under that op, kept
 *   apart from the op's own inner rows; its ratio is CPU time on other
 *   threads over the op's time, so it may exceed 100% when several threads
 *   work at once. When no Operator elsewhere contains it, or Operators on two
 *   or more other threads do (ambiguous), it stays on its own thread: an
 *   inner row of the item "(no operator)" in its thread's group. An
 *   OperatorInner range without an operator around it that lies inside some
 *   other range of its thread (not a ProfileStep) is not a helper's piece:
 *   it is left out, as paddle does (docs/semantics.md §6.5). */
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
    uint64_t flops;
} item;

typedef struct inner {
    uint32_t name;
    int helper; /* ranges of other threads than the op's (see above) */
    stat s;
    int32_t next;
    devlist devs;
} inner;

/* The item "(no operator)": a name id no result uses. */
#define NO_OP_NAME UINT32_MAX
#define HELPER_SUFFIX " (other threads)"

/* Per thread, for finding the Operator that contains a helper's range: its
 * Operator nodes in start order, each one's nearest Operator ancestor (an
 * index in ops, -1 for none) and the item it was counted in. outer[k] is 1
 * for a node with an Operator or OperatorInner around it on its thread. */
typedef struct opindex {
    int32_t *ops, *up, *item;
    int32_t *pos; /* per node: an Operator node's index in ops (else unset) */
    size_t n;
    unsigned char *outer;
    uint64_t *flops; /* per node: its subtree's FLOPs; NULL when the thread has none */
} opindex;

/* A helper's range waiting for its op's item (the op's thread may be
 * visited later). */
typedef struct pending {
    uint32_t thread;
    int32_t node;
    uint32_t op_thread;
    int32_t op; /* index in the op thread's ops */
} pending;

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
    opindex *idx; /* per thread */
    pending *pend;
    size_t n_pend, cap_pend;
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
    for (size_t i = c->group_start; i < c->n_items; i++)
        if (c->items[i].name != NO_OP_NAME) c->map[c->items[i].name] = -1;
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

static inner *find_inner(ctx *c, item *it, uint32_t name, int helper)
{
    for (int32_t k = it->first_inner; k >= 0; k = c->inners[k].next)
        if (c->inners[k].name == name && c->inners[k].helper == helper) return &c->inners[k];
    if (grow((void **)&c->inners, &c->cap_inners, c->n_inners, sizeof *c->inners)) return NULL;
    inner *in = &c->inners[c->n_inners];
    memset(in, 0, sizeof *in);
    in->name = name;
    in->helper = helper;
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

static int node_type(const sp__thread_model *t, int32_t k) { return t->thread->events[t->nodes[k].event].type; }

/* Each node's FLOPs as paddle's statistic tree sums them: an Operator's own
 * (its supplements') plus its children's. x->flops stays NULL when the
 * thread has no FLOPs. Returns 0 or -1. */
static int sum_flops(const sp__thread_model *t, opindex *x)
{
    const sp__thread *th = t->thread;
    size_t k = 0;
    while (k < th->op_count && th->ops[k].flops == 0)
        k++;
    if (k == th->op_count) return 0;
    x->flops = sp__alloc(sizeof *x->flops * t->count);
    if (!x->flops) return -1;
    memset(x->flops, 0, sizeof *x->flops * t->count);
    for (; k < th->op_count; k++) {
        /* An op's time may fall in a child that starts with it: the op's
         * FLOPs are its innermost Operator's. */
        int32_t n = th->ops[k].host >= 0 ? sp__model_node_of(t, th->ops[k].host) : -1;
        while (n >= 0 && node_type(t, n) != SP_EVENT_OPERATOR)
            n = t->nodes[n].parent;
        if (n >= 0) x->flops[n] += th->ops[k].flops;
    }
    for (size_t i = t->count; i-- > 0;)
        if (t->nodes[i].parent >= 0) x->flops[t->nodes[i].parent] += x->flops[i];
    return 0;
}

/* Builds the opindex of every thread, in one pass over each thread's nodes
 * (parents come before their children). Returns 0 or -1. */
static int index_ops(ctx *c)
{
    const sp__model *m = c->m;
    c->idx = sp__alloc(sizeof *c->idx * (m->thread_count ? m->thread_count : 1));
    if (!c->idx) return -1;
    memset(c->idx, 0, sizeof *c->idx * (m->thread_count ? m->thread_count : 1));
    for (size_t ti = 0; ti < m->thread_count; ti++) {
        const sp__thread_model *t = &m->threads[ti];
        opindex *x = &c->idx[ti];
        if (t->count == 0) continue;
        int32_t *near = sp__alloc(sizeof *near * t->count); /* nearest Operator ancestor's ops index */
        int32_t *opos = x->pos = sp__alloc(sizeof *opos * t->count); /* kept: visit asks */
        x->outer = sp__alloc(t->count);
        x->ops = sp__alloc(sizeof *x->ops * t->count);
        x->up = sp__alloc(sizeof *x->up * t->count);
        x->item = sp__alloc(sizeof *x->item * t->count);
        if (!near || !opos || !x->outer || !x->ops || !x->up || !x->item) {
            sp__free(near);
            return -1;
        }
        for (size_t k = 0; k < t->count; k++) {
            int32_t p = t->nodes[k].parent;
            int pt = p >= 0 ? node_type(t, p) : -1;
            x->outer[k] = p >= 0 && (x->outer[p] || pt == SP_EVENT_OPERATOR || pt == SP_EVENT_OPERATOR_INNER);
            near[k] = p < 0 ? -1 : pt == SP_EVENT_OPERATOR ? opos[p] : near[p];
            if (node_type(t, (int32_t)k) != SP_EVENT_OPERATOR) continue;
            opos[k] = (int32_t)x->n;
            x->ops[x->n] = (int32_t)k;
            x->up[x->n] = near[k];
            x->item[x->n++] = -1;
        }
        sp__free(near);
        if (sum_flops(t, x) != 0) return -1;
    }
    return 0;
}

/* The ops index of the innermost Operator of thread x that contains
 * [s, e], or -1. */
static int32_t op_containing(const sp__thread_model *t, const opindex *x, int64_t s, int64_t e)
{
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->thread->events[t->nodes[x->ops[mid]].event].start_ns <= s)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (int32_t i = (int32_t)lo - 1; i >= 0; i = x->up[i]) {
        const sp__event *op = &t->thread->events[t->nodes[x->ops[i]].event];
        if (op->start_ns <= s && e <= op->end_ns) return i;
    }
    return -1;
}

static void ensure_group(ctx *c, const sp__thread_model *t)
{
    if (c->n_groups == 0 || (c->thread_sep && c->tids[c->n_groups - 1] != t->thread->tid))
        start_group(c, c->thread_sep ? t->thread->tid : 0);
}

/* A helper's range (node k of thread t): queued for the one Operator on
 * another thread containing it, else an inner row of "(no operator)". */
static void visit_helper(ctx *c, const sp__thread_model *t, int32_t k)
{
    const sp__model *m = c->m;
    size_t ti = (size_t)(t - m->threads);
    const sp__event *e = &t->thread->events[t->nodes[k].event];
    int32_t found = -1;
    size_t found_thread = 0, candidates = 0;
    for (size_t oi = 0; oi < m->thread_count && candidates < 2; oi++) {
        if (oi == ti || c->idx[oi].n == 0) continue;
        int32_t op = op_containing(&m->threads[oi], &c->idx[oi], e->start_ns, e->end_ns);
        if (op < 0) continue;
        candidates++;
        found = op;
        found_thread = oi;
    }
    if (candidates == 1) {
        if (grow((void **)&c->pend, &c->cap_pend, c->n_pend, sizeof *c->pend)) {
            c->failed = 1;
            return;
        }
        c->pend[c->n_pend++] = (pending){(uint32_t)ti, k, (uint32_t)found_thread, found};
        return;
    }
    ensure_group(c, t);
    item *it = NULL;
    for (size_t i = c->group_start; i < c->n_items && !it; i++)
        if (c->items[i].name == NO_OP_NAME) it = &c->items[i];
    if (!it && grow((void **)&c->items, &c->cap_items, c->n_items, sizeof *c->items) == 0) {
        it = &c->items[c->n_items];
        memset(it, 0, sizeof *it);
        it->name = NO_OP_NAME;
        it->seen = c->n_items++;
        it->first_inner = it->last_inner = -1;
        it->devs.first = it->devs.last = -1;
    }
    inner *in = it ? find_inner(c, it, name_key(c, e->name), 0) : NULL;
    if (!in) { c->failed = 1; return; }
    sp__item_stats_add(&it->s, t, &t->nodes[k]);
    sp__item_stats_add(&in->s, t, &t->nodes[k]);
    if (c->opdev && add_devs(c, &in->devs, t, (size_t)k)) c->failed = 1;
}

/* Charges the queued helper ranges to their ops' items. */
static void charge_helpers(ctx *c)
{
    for (size_t i = 0; i < c->n_pend && !c->failed; i++) {
        const pending *p = &c->pend[i];
        const sp__thread_model *t = &c->m->threads[p->thread];
        int32_t at = c->idx[p->op_thread].item[p->op];
        if (at < 0) continue; /* cannot happen: every op node was visited */
        const sp__event *e = &t->thread->events[t->nodes[p->node].event];
        inner *in = find_inner(c, &c->items[at], name_key(c, e->name), 1);
        if (!in) { c->failed = 1; return; }
        sp__item_stats_add(&in->s, t, &t->nodes[p->node]);
        if (c->opdev && add_devs(c, &in->devs, t, (size_t)p->node)) c->failed = 1;
    }
}

/* An OperatorInner range with no operator around it but inside some other
 * range of its own thread (a ProfileStep aside): inner work the thread did
 * outside any operator, such as paddle's "full infer_meta" under its
 * Backward range. It is not a helper thread's piece of an op, and paddle's
 * Operator Summary leaves it out; so does this table. */
static int inside_thread_work(const sp__thread_model *t, const sp__node *n)
{
    for (int32_t p = n->parent; p >= 0; p = t->nodes[p].parent)
        if (t->thread->events[t->nodes[p].event].type != SP_EVENT_PROFILE_STEP) return 1;
    return 0;
}

static void visit(void *vc, const sp__thread_model *t, const sp__node *n)
{
    ctx *c = vc;
    const sp__event *e = &t->thread->events[n->event];
    if (c->failed) return;
    int32_t self = (int32_t)(n - t->nodes);
    const opindex *x = &c->idx[t - c->m->threads];
    if (e->type == SP_EVENT_OPERATOR_INNER && !x->outer[self]) {
        if (inside_thread_work(t, n)) return; /* paddle leaves it out too */
        visit_helper(c, t, self);
        return;
    }
    if (e->type != SP_EVENT_OPERATOR) return;
    ensure_group(c, t);
    item *it = find_item(c, name_key(c, e->name));
    if (!it) { c->failed = 1; return; }
    x->item[x->pos[self]] = (int32_t)(it - c->items);
    sp__item_stats_add(&it->s, t, n);
    if (x->flops) it->flops += x->flops[self];
    if (c->opdev && add_devs(c, &it->devs, t, (size_t)(n - t->nodes))) { c->failed = 1; return; }
    for (int32_t k = n->first_child; k >= 0; k = t->nodes[k].next_sibling) {
        const sp__event *ce = &t->thread->events[t->nodes[k].event];
        if (ce->type == SP_EVENT_OPERATOR) continue;
        inner *in = find_inner(c, it, name_key(c, ce->name), 0);
        if (!in) { c->failed = 1; return; }
        sp__item_stats_add(&in->s, t, &t->nodes[k]);
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

/* prefix + name, made visible and cut to NAME_WIDTH code points with "..."
 * (§6.5; table.c's one rule for every table). */
static void detail_name(char *out, size_t size, const char *prefix, const char *name)
{
    size_t plen = strlen(prefix);
    sp__fmt_name(out, size, prefix, name, NAME_WIDTH - plen, NAME_WIDTH - plen - 3);
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
    char name[SP__NAME_CELL_BYTES], calls[32], gpu[256];
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
    char title[64], name[SP__NAME_CELL_BYTES], flops[32];
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
        detail_name(name, sizeof name, "",
                    it->name == NO_OP_NAME ? "(no operator)" : sp__result_name(c->m->result, it->name));
        snprintf(flops, sizeof flops, "%llu", (unsigned long long)it->flops);
        add_row(t, name, &it->s, cpu_sum, gpu_sum, it->name == NO_OP_NAME ? "-" : flops, unit);
        for (int32_t k = it->first_inner; o->op_detail && k >= 0; k = c->inners[k].next) {
            const inner *in = &c->inners[k];
            if (in->helper) {
                size_t room = NAME_WIDTH - 2 - (sizeof HELPER_SUFFIX - 1);
                sp__fmt_name(name, sizeof name - sizeof HELPER_SUFFIX, "  ",
                             sp__result_name(c->m->result, in->name), room, room - 3);
                strcat(name, HELPER_SUFFIX);
            } else {
                detail_name(name, sizeof name, "  ", sp__result_name(c->m->result, in->name));
            }
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
    if (index_ops(&c) != 0) goto done;
    sp__model_visit(m, visit, &c);
    charge_helpers(&c);
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
    for (size_t i = 0; c.idx && i < m->thread_count; i++) {
        sp__free(c.idx[i].ops);
        sp__free(c.idx[i].up);
        sp__free(c.idx[i].item);
        sp__free(c.idx[i].pos);
        sp__free(c.idx[i].outer);
        sp__free(c.idx[i].flops);
    }
    sp__free(c.idx);
    sp__free(c.pend);
    return rc;
}

/* table_userdefined.c: the UserDefined Summary of semantics.md §6.8, called
 * by the summary driver. One §5.4 first-seen walk groups the UserDefined
 * and PythonUserDefined nodes (C's SP_EVENT_USER_DEFINED ranges and the
 * Python RecordEvent ranges) by name, per thread with thread_sep, as paddle
 * 2.x's table holds both (later paddle versions list only PythonUserDefined;
 * a C user range would then appear in no table at all); names of memory
 * manipulation (§6.7) are left to that table. Groups are sorted like §6.5
 * (stable, GPU keys on ggpu).
 *
 * Decisions:
 * - Paddle prints the table only when it has items, so without any *out is
 *   NULL.
 * - CPU ratio = cpu / T (T's fallback of §6.0 included); GPU ratio = ggpu /
 *   the ProfileStep nodes' ggpu, or, with no ProfileStep node, the sum of
 *   ggpu over all thread roots (§9); a zero denominator prints 0.00.
 * - No closing separator after the last row, as paddle prints none
 *   (issue 17; §6.8 used to say stepprof prints one).
 * - Name column: as wide as the longest name (Paddle), so "Name" may
 *   overflow it; names are made visible and cut at NAME_CELL_MAX code points
 *   (sp__fmt_name), so one odd name cannot widen the table without bound. */
#include "summary.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CELL_MAX 90 /* as the Kernel Summary's name column */

typedef struct item {
    uint32_t name;
    size_t seen; /* creation order: the stable tie-break */
    double key;  /* larger sorts first */
    sp__item_stats s;
} item;

typedef struct ctx {
    const sp_result *result;
    int thread_sep;
    item *items;
    size_t n_items, cap_items;
    int32_t *map; /* name id (map_n - 1 = out of range) -> item, -1 = none */
    size_t map_n, group_start;
    size_t *groups; /* start of each group; groups[n_groups] = n_items */
    uint64_t *tids;
    size_t n_groups;
    int failed;
} ctx;


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
    if (c->n_items == c->cap_items) {
        size_t ncap = c->cap_items ? c->cap_items * 2 : 16;
        item *ni = sp__realloc(c->items, ncap * sizeof *ni);
        if (!ni) return NULL;
        c->items = ni;
        c->cap_items = ncap;
    }
    item *it = &c->items[c->n_items];
    memset(it, 0, sizeof *it);
    it->name = name;
    it->seen = c->n_items;
    c->map[name] = (int32_t)c->n_items++;
    return it;
}

static void visit(void *vc, const sp__thread_model *t, const sp__node *n)
{
    ctx *c = vc;
    const sp__event *e = &t->thread->events[n->event];
    if (c->failed || (e->type != SP_EVENT_PYTHON_USER_DEFINED && e->type != SP_EVENT_USER_DEFINED))
        return;
    if (sp__is_memory_name(sp__result_name(c->result, e->name))) return;
    uint32_t key = e->name < c->map_n - 1 ? e->name : (uint32_t)(c->map_n - 1);
    if (c->n_groups == 0 || (c->thread_sep && c->tids[c->n_groups - 1] != t->thread->tid))
        start_group(c, c->thread_sep ? t->thread->tid : 0);
    item *it = find_item(c, key);
    if (!it) { c->failed = 1; return; }
    sp__item_stats_add(&it->s, t, n);
}

static int cmp_item(const void *pa, const void *pb)
{
    const item *a = pa, *b = pb;
    if (a->key != b->key) return a->key > b->key ? -1 : 1;
    return a->seen < b->seen ? -1 : a->seen > b->seen;
}

/* §9: ProfileStep ggpu, or the roots' ggpu when there is no ProfileStep. */
static double gpu_denominator(const sp__model *m)
{
    double steps = 0, roots = 0;
    int have_step = 0;
    for (size_t i = 0; i < m->thread_count; i++) {
        const sp__thread_model *t = &m->threads[i];
        for (size_t k = 0; k < t->count; k++) {
            if (t->thread->events[t->nodes[k].event].type == SP_EVENT_PROFILE_STEP)
                have_step = 1, steps += (double)t->nodes[k].ggpu;
            if (t->nodes[k].parent < 0) roots += (double)t->nodes[k].ggpu;
        }
    }
    return have_step ? steps : roots;
}

static const char *unit_of(const sp__summary_opts *o)
{
    static const char *const units[] = {"s", "ms", "us", "ns"};
    for (size_t i = 0; o->time_unit && i < 4; i++)
        if (strcmp(o->time_unit, units[i]) == 0) return units[i];
    return "ms";
}

static void add_group(const sp__model *m, const ctx *c, const sp__summary_opts *o, sp__table *t,
                      size_t g, double gpu_den)
{
    char title[64], calls[32], cpu[256], gpu[256];
    const char *unit = unit_of(o);
    item *first = &c->items[c->groups[g]];
    size_t n = c->groups[g + 1] - c->groups[g];
    if (c->thread_sep) snprintf(title, sizeof title, "Thread: %llu", (unsigned long long)c->tids[g]);
    else snprintf(title, sizeof title, "Thread: All threads merged");
    sp__table_title(t, title);
    for (size_t i = 0; i < n; i++) first[i].key = sp__item_sort_key(&first[i].s, o->sorted_by);
    qsort(first, n, sizeof *first, cmp_item);
    for (size_t i = 0; i < n; i++) {
        const sp__item_stats *s = &first[i].s;
        snprintf(calls, sizeof calls, "%lld", (long long)s->calls);
        sp__fmt_composite(cpu, sizeof cpu, (double)s->cpu, s->calls, (double)s->cpu_max,
                          (double)s->cpu_min, (double)s->cpu, (double)m->T, unit);
        sp__fmt_composite(gpu, sizeof gpu, (double)s->gpu, s->calls, (double)s->gpu_max,
                          (double)s->gpu_min, (double)s->gpu, gpu_den, unit);
        char name[SP__NAME_CELL_BYTES];
        sp__fmt_name(name, sizeof name, "", sp__result_name(m->result, first[i].name), NAME_CELL_MAX,
                     NAME_CELL_MAX - 3);
        const char *cells[] = {name, calls, cpu, gpu};
        sp__table_row(t, cells);
    }
}

static sp__table *render(const sp__model *m, const ctx *c, const sp__summary_opts *o)
{
    static const char *const head[] = {"Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
                                       "GPU Total / Avg / Max / Min / Ratio(%)"};
    char unit_line[32];
    double gpu_den = gpu_denominator(m);
    sp__table *t = sp__table_new(4);
    if (!t) return NULL;
    sp__table_column(t, 0, 0, 1);
    sp__table_column(t, 1, 6, 1);
    sp__table_column(t, 2, 40, 1);
    sp__table_column(t, 3, 40, 1);
    snprintf(unit_line, sizeof unit_line, "Time unit: %s", unit_of(o));
    sp__table_title(t, "UserDefined Summary");
    sp__table_text(t, unit_line);
    sp__table_separator(t);
    sp__table_header(t, head);
    sp__table_separator(t);
    for (size_t g = 0; g < c->n_groups; g++) add_group(m, c, o, t, g, gpu_den);
    sp__table_blank(t);
    sp__table_blank(t);
    return t;
}

int sp__summary_userdefined(const sp__model *m, const sp__summary_opts *o, sp__table **out)
{
    ctx c = {.result = m->result, .thread_sep = o->thread_sep};
    int rc = -1;
    *out = NULL;
    if (m->failed || !m->result) return 0;
    c.map_n = (size_t)m->result->names.count + 1;
    c.map = sp__alloc(c.map_n * sizeof *c.map);
    c.groups = sp__alloc((m->thread_count + 2) * sizeof *c.groups);
    c.tids = sp__alloc((m->thread_count + 1) * sizeof *c.tids);
    if (!c.map || !c.groups || !c.tids) goto done;
    memset(c.map, 0xff, c.map_n * sizeof *c.map);
    sp__model_visit(m, visit, &c);
    if (c.failed) goto done;
    rc = 0;
    if (c.n_groups == 0) goto done; /* no user range: no table */
    c.groups[c.n_groups] = c.n_items;
    *out = render(m, &c, o);
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
    return rc;
}

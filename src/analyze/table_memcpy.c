/* table_memcpy.c: the Memory Manipulation Summary of semantics.md §6.7,
 * called by the summary driver. UserDefined and PythonUserDefined nodes whose
 * lower-cased name contains "memcpy", "memorycopy" or "memset", grouped by
 * name in §5.4 first-seen order, all threads merged, not sorted.
 * Decisions: printed only when it has items (Paddle); CPU ratio = cpu / T;
 * GPU ratio = ggpu / ProfileStep ggpu, or the roots' ggpu without a
 * ProfileStep node (§9); Name column as wide as the longest name, names made
 * visible and cut at 90 code points (sp__fmt_name). Items are
 * found by a linear scan (few distinct memory names). */
#include "summary.h"

#include <stdio.h>
#include <string.h>

typedef struct item {
    uint32_t name;
    sp__item_stats s;
} item;

typedef struct ctx {
    const sp_result *result;
    item *items;
    size_t n, cap;
    int failed;
} ctx;

static item *find_item(ctx *c, uint32_t name)
{
    for (size_t i = 0; i < c->n; i++)
        if (c->items[i].name == name) return &c->items[i];
    if (c->n == c->cap) {
        size_t ncap = c->cap ? c->cap * 2 : 8;
        item *ni = sp__realloc(c->items, ncap * sizeof *ni);
        if (!ni) return NULL;
        c->items = ni;
        c->cap = ncap;
    }
    memset(&c->items[c->n], 0, sizeof *c->items);
    c->items[c->n].name = name;
    return &c->items[c->n++];
}

static void visit(void *vc, const sp__thread_model *t, const sp__node *n)
{
    ctx *c = vc;
    const sp__event *e = &t->thread->events[n->event];
    if (c->failed) return;
    if (e->type != SP_EVENT_USER_DEFINED && e->type != SP_EVENT_PYTHON_USER_DEFINED) return;
    if (!sp__is_memory_name(sp__result_name(c->result, e->name))) return;
    item *it = find_item(c, e->name);
    if (!it) { c->failed = 1; return; }
    sp__item_stats_add(&it->s, t, n);
}

static double gpu_denominator(const sp__model *m)
{
    double steps = 0, roots = 0;
    int have_step = 0;
    for (size_t i = 0; i < m->thread_count; i++) {
        const sp__thread_model *t = &m->threads[i];
        for (size_t k = 0; k < t->count; k++) {
            if (t->thread->events[t->nodes[k].event].type == SP_EVENT_PROFILE_STEP) {
                have_step = 1;
                steps += (double)t->nodes[k].ggpu;
            }
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

static sp__table *render(const sp__model *m, const ctx *c, const char *unit)
{
    static const char *const head[] = {"Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
                                       "GPU Total / Avg / Max / Min / Ratio(%)"};
    char line[32], calls[32], cpu[256], gpu[256];
    double gpu_den = gpu_denominator(m);
    sp__table *t = sp__table_new(4);
    if (!t) return NULL;
    sp__table_column(t, 0, 0, 1);
    sp__table_column(t, 1, 6, 1);
    sp__table_column(t, 2, 40, 1);
    sp__table_column(t, 3, 40, 1);
    snprintf(line, sizeof line, "Time unit: %s", unit);
    sp__table_title(t, "Memory Manipulation Summary");
    sp__table_text(t, line);
    sp__table_separator(t);
    sp__table_header(t, head);
    sp__table_separator(t);
    for (size_t i = 0; i < c->n; i++) {
        const sp__item_stats *s = &c->items[i].s;
        snprintf(calls, sizeof calls, "%lld", (long long)s->calls);
        sp__fmt_composite(cpu, sizeof cpu, (double)s->cpu, s->calls, (double)s->cpu_max,
                          (double)s->cpu_min, (double)s->cpu, (double)m->T, unit);
        sp__fmt_composite(gpu, sizeof gpu, (double)s->gpu, s->calls, (double)s->gpu_max,
                          (double)s->gpu_min, (double)s->gpu, gpu_den, unit);
        char name[SP__NAME_CELL_BYTES];
        sp__fmt_name(name, sizeof name, "", sp__result_name(m->result, c->items[i].name), 90, 87);
        const char *cells[] = {name, calls, cpu, gpu};
        sp__table_row(t, cells);
    }
    sp__table_separator(t);
    sp__table_blank(t);
    sp__table_blank(t);
    return t;
}

int sp__summary_memory_manipulation(const sp__model *m, const sp__summary_opts *o,
                                    sp__table **out)
{
    ctx c = {.result = m->result};
    *out = NULL;
    if (m->failed || !m->result) return 0;
    sp__model_visit(m, visit, &c);
    int rc = c.failed ? -1 : 0;
    if (!c.failed && c.n > 0) {
        *out = render(m, &c, unit_of(o));
        if (!*out || sp__table_failed(*out)) {
            sp__table_free(*out);
            *out = NULL;
            rc = -1;
        }
    }
    sp__free(c.items);
    return rc;
}

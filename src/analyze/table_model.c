/* table_model.c: the Model Summary (semantics.md §6.3) and the model items
 * it shares with the Overview: the outermost Dataloader, Forward, Backward
 * and Optimization ranges of each thread, and the ProfileStep ranges they
 * sit in, found in one pass over each thread's nodes (no recursion, so any
 * nesting depth is fine). The table ends with paddle's "Note:" footer. No
 * cell is negative: phases count only inside the steps, and "Others" is
 * never below 0 (model.h). */
#include "summary.h"

#include <string.h>

static void add(sp__model_item *it, const sp__node *n)
{
    if (it->calls == 0 || n->cpu > it->cpu_max) it->cpu_max = n->cpu;
    if (it->calls == 0 || n->cpu < it->cpu_min) it->cpu_min = n->cpu;
    if (it->calls == 0 || n->gpu > it->gpu_max) it->gpu_max = n->gpu;
    if (it->calls == 0 || n->gpu < it->gpu_min) it->gpu_min = n->gpu;
    it->calls++;
    it->cpu_total += n->cpu;
    it->gpu_total += n->gpu;
    it->ggpu_total += n->ggpu;
}

static int item_of(sp_event_type type)
{
    switch (type) {
    case SP_EVENT_PROFILE_STEP: return SP__ITEM_PROFILE_STEP;
    case SP_EVENT_DATALOADER: return SP__ITEM_DATALOADER;
    case SP_EVENT_FORWARD: return SP__ITEM_FORWARD;
    case SP_EVENT_BACKWARD: return SP__ITEM_BACKWARD;
    case SP_EVENT_OPTIMIZATION: return SP__ITEM_OPTIMIZATION;
    default: return -1;
    }
}

/* Counts the model items of one thread in a single pass over its nodes, in
 * place of a walk down the tree (which a nesting 150,000 deep overflowed the
 * stack with): nodes come parents first, so a node's "below a phase range"
 * bit is known from its parent's when the node is reached. A phase range is
 * counted unless a phase range encloses it; a ProfileStep is counted where
 * no phase range encloses it. With steps, a phase range counts only its part
 * inside the steps (sp__model_in_steps), so no phase exceeds T. below is
 * scratch of t->count bytes. */
static void count_items(const sp__model *m, const sp__thread_model *t, unsigned char *below,
                        sp__model_item *items)
{
    for (size_t k = 0; k < t->count; k++) {
        const sp__node *n = &t->nodes[k];
        int32_t p = n->parent;
        below[k] = 0;
        if (p >= 0) {
            int pitem = item_of((sp_event_type)t->thread->events[t->nodes[p].event].type);
            below[k] = below[p] || (pitem >= 0 && pitem != SP__ITEM_PROFILE_STEP);
        }
        if (below[k]) continue;
        const sp__event *e = &t->thread->events[n->event];
        int item = item_of((sp_event_type)e->type);
        if (item < 0) continue;
        sp__node call; /* a range cut at step boundaries counts once, whole */
        int64_t start, end;
        if (!sp__model_call(t, n, &call, &start, &end)) continue;
        if (item == SP__ITEM_PROFILE_STEP) {
            add(&items[item], &call);
            continue;
        }
        int counts;
        call.cpu = sp__model_in_steps(m, start, end, &counts);
        if (counts) add(&items[item], &call);
    }
}

int sp__summary_model_items(const sp__model *m, sp__model_item items[SP__ITEM_COUNT])
{
    memset(items, 0, sizeof(sp__model_item) * SP__ITEM_COUNT);
    size_t most = 0;
    for (size_t i = 0; i < m->thread_count; i++)
        if (m->threads[i].count > most) most = m->threads[i].count;
    if (most == 0) return 0;
    unsigned char *below = sp__alloc(most);
    if (!below) return -1;
    for (size_t i = 0; i < m->thread_count; i++) count_items(m, &m->threads[i], below, items);
    sp__free(below);
    return 0;
}

static void add_row(sp__table *t, const char *name, const sp__model_item *it, double T, double G,
                    const char *unit)
{
    char calls[32], cpu[160], gpu[160];
    snprintf(calls, sizeof calls, "%lld", (long long)it->calls);
    sp__fmt_composite(cpu, sizeof cpu, (double)it->cpu_total, it->calls, (double)it->cpu_max,
                      (double)it->cpu_min, (double)it->cpu_total, T, unit);
    sp__fmt_composite(gpu, sizeof gpu, (double)it->gpu_total, it->calls, (double)it->gpu_max,
                      (double)it->gpu_min, (double)it->gpu_total, G, unit);
    const char *cells[] = {name, calls, cpu, gpu};
    sp__table_row(t, cells);
}

static void add_others(sp__table *t, double cpu, double gpu, double T, double G, const char *unit)
{
    char tc[64], rc[32], tg[64], rg[32], cpu_cell[160], gpu_cell[160];
    sp__fmt_time(tc, sizeof tc, cpu, unit);
    sp__fmt_ratio(rc, sizeof rc, cpu, T);
    sp__fmt_time(tg, sizeof tg, gpu, unit);
    sp__fmt_ratio(rg, sizeof rg, gpu, G);
    snprintf(cpu_cell, sizeof cpu_cell, "%s / - / - / - / %s", tc, rc);
    snprintf(gpu_cell, sizeof gpu_cell, "%s / - / - / - / %s", tg, rg);
    const char *cells[] = {"  Others", "-", cpu_cell, gpu_cell};
    sp__table_row(t, cells);
}

/* paddle's footer, word for word (profiler_statistic.py), with the empty
 * line its trailing "\n" gives before the closing dashes. */
static const char *const model_note[] = {
    "Note:",
    "In this table, GPU time is the sum of all device(GPU) events called in the phase.",
    "Unlike overview summary, if two device(GPU) events execute on different streams with overlap "
    "time, we sum them directly here.",
    "",
};

/* The sum of gpu over every thread root: the §9 fallback for G. */
static double gpu_of_roots(const sp__model *m)
{
    double g = 0;
    for (size_t i = 0; i < m->thread_count; i++) g += (double)m->threads[i].root_gpu;
    return g;
}

int sp__summary_model(const sp__model *m, const sp__summary_opts *o, sp__table **out)
{
    static const char *const names[] = {"ProfileStep", "  Dataloader", "  Forward", "  Backward",
                                        "  Optimization"};
    sp__model_item items[SP__ITEM_COUNT];
    *out = NULL;
    if (sp__summary_model_items(m, items) != 0) return -1;
    int present = 0;
    for (int i = 0; i < SP__ITEM_COUNT; i++) present += items[i].calls > 0;
    if (present <= 1) return 0;
    sp__table *t = sp__table_new(4);
    if (!t) return -1;
    double T = (double)m->T;
    double G = items[SP__ITEM_PROFILE_STEP].calls ? (double)items[SP__ITEM_PROFILE_STEP].gpu_total
                                                  : gpu_of_roots(m);
    sp__table_column(t, 0, 15, 0);
    sp__table_column(t, 1, 6, 1);
    sp__table_column(t, 2, 40, 1);
    sp__table_column(t, 3, 40, 1);
    char unit_line[32];
    snprintf(unit_line, sizeof unit_line, "Time unit: %s", o->time_unit);
    const char *header[] = {"Name", "Calls", "CPU Total / Avg / Max / Min / Ratio(%)",
                            "GPU Total / Avg / Max / Min / Ratio(%)"};
    sp__table_title(t, "Model Summary");
    sp__table_text(t, unit_line);
    sp__table_separator(t);
    sp__table_header(t, header);
    sp__table_separator(t);
    double other_cpu = T, other_gpu = G;
    for (int i = 0; i < SP__ITEM_COUNT; i++) {
        if (items[i].calls == 0) continue;
        add_row(t, names[i], &items[i], T, G, o->time_unit);
        if (i == SP__ITEM_PROFILE_STEP) continue;
        other_cpu -= (double)items[i].cpu_total;
        other_gpu -= (double)items[i].gpu_total;
    }
    /* Phases on several threads at once can add up past T (or G): the rest
     * is then none, never negative. */
    add_others(t, other_cpu > 0 ? other_cpu : 0, other_gpu > 0 ? other_gpu : 0, T, G, o->time_unit);
    sp__table_separator(t);
    for (size_t i = 0; i < sizeof model_note / sizeof *model_note; i++) sp__table_text(t, model_note[i]);
    sp__table_dashes(t);
    sp__table_blank(t);
    sp__table_blank(t);
    *out = t;
    return sp__table_failed(t) ? -1 : 0;
}

/* table_items.c: what the Operator, UserDefined and Memory Manipulation
 * tables share (semantics.md §6.5, §6.7, §6.8): a row's statistics over a
 * group of nodes, the sort key of each sorted_by value, and the rule that
 * routes memory-copy ranges to their own table. The GPU statistics use
 * ggpu (kernels, memcpy and memset), as those tables' GPU columns do. A
 * range cut at step boundaries is one call of its whole length
 * (sp__model_call). */
#include "summary.h"

void sp__item_stats_add(sp__item_stats *s, const sp__thread_model *t, const sp__node *node)
{
    sp__node n;
    int64_t start, end;
    if (!sp__model_call(t, node, &n, &start, &end)) return; /* counted with its first piece */
    if (s->calls == 0 || n.cpu > s->cpu_max) s->cpu_max = n.cpu;
    if (s->calls == 0 || n.cpu < s->cpu_min) s->cpu_min = n.cpu;
    if (s->calls == 0 || n.ggpu > s->gpu_max) s->gpu_max = n.ggpu;
    if (s->calls == 0 || n.ggpu < s->gpu_min) s->gpu_min = n.ggpu;
    s->calls++;
    s->cpu += n.cpu;
    s->gpu += n.ggpu;
}

/* Larger sorts first, so the ascending keys (the minima) are negated. */
double sp__item_sort_key(const sp__item_stats *s, int sorted_by)
{
    switch (sorted_by) {
    case SP__SORT_CPU_AVG: return (double)s->cpu / (double)s->calls;
    case SP__SORT_CPU_MAX: return (double)s->cpu_max;
    case SP__SORT_CPU_MIN: return -(double)s->cpu_min;
    case SP__SORT_GPU_TOTAL: return (double)s->gpu;
    case SP__SORT_GPU_AVG: return (double)s->gpu / (double)s->calls;
    case SP__SORT_GPU_MAX: return (double)s->gpu_max;
    case SP__SORT_GPU_MIN: return -(double)s->gpu_min;
    default: return (double)s->cpu;
    }
}

int sp__is_memory_name(const char *s)
{
    static const char *const pat[] = {"memcpy", "memorycopy", "memset"};
    for (const char *p = s; *p; p++)
        for (size_t k = 0; k < 3; k++) {
            size_t j = 0;
            while (pat[k][j] && p[j] && (p[j] | 0x20) == pat[k][j]) j++;
            if (!pat[k][j]) return 1;
        }
    return 0;
}

/* summary.h: the summary tables of semantics.md §6, one function per table,
 * each in its own file (table_<name>.c), and the driver that prints them in
 * order (summary.c). Every table function builds its sp__table from the host
 * model; it sets *out to NULL when its table is not printed for this input
 * (e.g. the Model Summary with a single item) and returns -1 only when memory
 * ran out. No table divides by zero or prints nan/inf. */
#ifndef SP_ANALYZE_SUMMARY_H
#define SP_ANALYZE_SUMMARY_H

#include "intervals.h"
#include "model.h"
#include "table.h"

/* paddle.profiler SortedKeys and SummaryView (semantics.md §1). */
enum { SP__SORT_CPU_TOTAL, SP__SORT_CPU_AVG, SP__SORT_CPU_MAX, SP__SORT_CPU_MIN,
       SP__SORT_GPU_TOTAL, SP__SORT_GPU_AVG, SP__SORT_GPU_MAX, SP__SORT_GPU_MIN };
enum { SP__VIEW_DEVICE, SP__VIEW_OVERVIEW, SP__VIEW_MODEL, SP__VIEW_DISTRIBUTED, SP__VIEW_KERNEL,
       SP__VIEW_OPERATOR, SP__VIEW_MEMORY, SP__VIEW_MEMORY_MANIPULATION, SP__VIEW_UDF };

typedef struct sp__summary_opts {
    int sorted_by;         /* SP__SORT_* */
    int op_detail;
    int thread_sep;
    const char *time_unit; /* "s", "ms", "us" or "ns" */
} sp__summary_opts;

typedef int (*sp__table_fn)(const sp__model *m, const sp__summary_opts *o, sp__table **out);

int sp__summary_device(const sp__model *m, const sp__summary_opts *o, sp__table **out);
int sp__summary_overview(const sp__model *m, const sp__summary_opts *o, sp__table **out);
int sp__summary_model(const sp__model *m, const sp__summary_opts *o, sp__table **out);
int sp__summary_distributed(const sp__model *m, const sp__summary_opts *o, sp__table **out);
int sp__summary_operator(const sp__model *m, const sp__summary_opts *o, sp__table **out);
int sp__summary_kernel(const sp__model *m, const sp__summary_opts *o, sp__table **out);
int sp__summary_memory(const sp__model *m, const sp__summary_opts *o, sp__table **out);
int sp__summary_memory_manipulation(const sp__model *m, const sp__summary_opts *o, sp__table **out);
int sp__summary_userdefined(const sp__model *m, const sp__summary_opts *o, sp__table **out);

/* §6.4 rules 1 and 2: the host communication ranges (nodes of type
 * Communication, and Operator nodes whose lower-cased name contains
 * "allreduce", "broadcast" or "rpc"), merged. Used by the Distributed and
 * the Overview tables. Returns 0 or -1. */
int sp__summary_cpu_comm(const sp__model *m, sp__spans *out);

/* §6.4 GPU side: the GPU communication kernels (rules 1-3), one span per
 * record, unmerged, so callers can count distinct ranges before merging.
 * out must be initialised; returns 0, or -1 when memory ran out (out empty
 * with failed set). Used by the Distribution and Overview tables. */
int sp__summary_gpu_comm(const sp__model *m, sp__spans *out);

/* Every kernel, as communication (comm, the rules above) or computation
 * (comp), one span per record, unmerged. Both must be initialised and are
 * overwritten; returns 0, or -1 when memory ran out (both then empty with
 * failed set). Used by the per-step breakdown (steps.h). */
int sp__summary_gpu_split(const sp__model *m, sp__spans *comm, sp__spans *comp);

/* table_opdev.c: for the Operator Summary, the device records of each
 * node's own runtime calls (not its descendants'), in §5.4 order. */
typedef struct sp__opdev sp__opdev;
sp__opdev *sp__opdev_new(const sp__model *m); /* NULL when memory ran out */
void sp__opdev_free(sp__opdev *x);
/* The first device record of node `node` of thread `thread`, -1 = none. */
int32_t sp__opdev_first(const sp__opdev *x, size_t thread, size_t node);
/* The next device record of the same node, -1 = none. */
int32_t sp__opdev_next(const sp__opdev *x, int32_t dev);

/* table_items.c: a row of the Operator, UserDefined and Memory Manipulation
 * tables: calls and cpu / ggpu total, max and min over a group of nodes. */
typedef struct sp__item_stats {
    int64_t calls, cpu, cpu_max, cpu_min, gpu, gpu_max, gpu_min;
} sp__item_stats;
void sp__item_stats_add(sp__item_stats *s, const sp__thread_model *t, const sp__node *n);
/* The value to sort rows by (SP__SORT_*): larger sorts first. */
double sp__item_sort_key(const sp__item_stats *s, int sorted_by);
/* §6.7: the lower-cased name contains "memcpy", "memorycopy" or "memset". */
int sp__is_memory_name(const char *name);

/* §6.3 Model items, shared by the Model and the Overview tables: for
 * Dataloader, Forward, Backward, Optimization (outermost ranges only) and
 * ProfileStep. */
typedef struct sp__model_item {
    int64_t calls, cpu_total, cpu_max, cpu_min;
    int64_t gpu_total, gpu_max, gpu_min, ggpu_total;
} sp__model_item;
enum { SP__ITEM_PROFILE_STEP, SP__ITEM_DATALOADER, SP__ITEM_FORWARD, SP__ITEM_BACKWARD,
       SP__ITEM_OPTIMIZATION, SP__ITEM_COUNT };
/* Returns 0, or -1 when memory ran out (items then all zero). */
int sp__summary_model_items(const sp__model *m, sp__model_item items[SP__ITEM_COUNT]);

#endif

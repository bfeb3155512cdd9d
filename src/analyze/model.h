/* model.h: the per-node quantities and time range summary that every summary
 * table starts from (semantics.md §5.2, §5.4, §6.0). sp__model_build walks a
 * collected result once: it gives each range event of each thread a node
 * (children linked in start order, cpu and self_cpu), sums the host ranges
 * of each event type (merged per thread, then unioned across threads) and
 * picks the denominator T. sp__model_visit replays §5.4's first-seen order.
 *
 * Host part only: runtime and device records do not exist in results yet, so
 * gpu, self_gpu and ggpu stay 0 and no CudaRuntime/device ranges are added;
 * the GPU tracer fills them later.
 *
 * Decisions where the reference leaves room:
 * - Instants and counter samples get no node and count nowhere.
 * - self_cpu subtracts the children's plain durations and is clamped at 0
 *   when overlapping (OVERLAP-flagged) children add up past cpu.
 * - An event whose parent index is not an earlier range event of the same
 *   thread (only possible in a hand-made or loaded result) becomes a root,
 *   so the tree is always acyclic.
 * - Events whose type is outside sp_event_type get nodes but enter no sum.
 * - Merging per thread and then unioning across threads gives the same
 *   closed set as one merge of all the per-thread pieces, which is how the
 *   union is computed (linear, not threads x ranges).
 * - T falls back whenever CPUSum[ProfileStep] == 0 (no step, or only
 *   zero-length steps): the span's wall time if positive, else latest end -
 *   earliest start over all events (instants included), else 0.
 * - With steps (T not a fallback), host time outside every ProfileStep
 *   counts nowhere: a type whose ranges reach outside the steps' union
 *   keeps in cpu_ranges and cpu_sum only its part inside, and in calls only
 *   the ranges that lie (partly) inside (sp__model_in_steps); CUDA runtime
 *   calls are kept whole. Otherwise a range left open in a crash dump,
 *   closed at the dump's end after the last complete step, would print a
 *   share of T above 100% and a negative "Others" (issue 17).
 *
 * Memory: about 56 bytes per range event plus 4 bytes per event of the
 * largest thread; allocation only through sp__alloc.
 * Threads: a model is built and visited by one thread at a time (visit uses
 * a scratch stack owned by the model); the result must outlive the model. */
#ifndef SP_ANALYZE_MODEL_H
#define SP_ANALYZE_MODEL_H

#include "collect.h"
#include "intervals.h"

#include <stddef.h>
#include <stdint.h>

/* One per range event of a thread (instants/counters excluded). Nodes are in
 * the thread's event order (start asc, end desc), so a parent always comes
 * before its children. */
typedef struct sp__node {
    uint32_t event;                    /* index in the thread's events */
    int32_t parent;                    /* index in the thread's nodes; -1 = a root */
    int32_t first_child, next_sibling; /* children in start order; -1 = none */
    int64_t cpu, self_cpu;             /* §5.2: end - start; cpu - children's, >= 0 */
    int64_t gpu, self_gpu, ggpu;       /* 0 until device records exist */
} sp__node;

/* A range cut at step boundaries, taken whole (model_split.c): its first
 * piece's node, that node with the times of all the pieces summed, and the
 * whole range's start and end. */
typedef struct sp__whole_range {
    int32_t node;
    sp__node call;
    int64_t start_ns, end_ns;
} sp__whole_range;

typedef struct sp__thread_model {
    const sp__thread *thread;
    sp__node *nodes;
    size_t count;
    int32_t first_root; /* roots linked by next_sibling in start order; -1 = none */
    int32_t *order;     /* the nodes in sp__model_visit's order, computed once
                           (several tables visit); NULL: walk the tree */
    /* GPU time of the whole thread (its root): every node's and every
     * root-level runtime call's device work; the §9 fallback denominators. */
    int64_t root_gpu, root_ggpu;
    /* One per range cut at step boundaries, by node; NULL when none. */
    sp__whole_range *wholes;
    size_t whole_count;
} sp__thread_model;

typedef struct sp__model {
    const sp_result *result;
    sp__thread_model *threads; /* ascending tid, as in the result */
    size_t thread_count;
    /* §6.0 time range summary, host side: per event type the ranges of all
     * non-root host nodes merged per thread then unioned across threads
     * (merged: sorted, strictly apart), their length and the node count. */
    sp__spans cpu_ranges[SP_EVENT_TYPE_COUNT];
    int64_t cpu_sum[SP_EVENT_TYPE_COUNT];
    int64_t calls[SP_EVENT_TYPE_COUNT];
    /* §6.0 device side, per device type (0 Kernel, 1 Memcpy, 2 Memset; all
     * devices and streams unioned, unattributed records included): merged
     * ranges, their length and the record count. Per device: kernel time
     * (union over its streams), devices in ascending id. */
    sp__spans gpu_ranges[3];
    int64_t gpu_sum[3];
    int64_t gpu_calls[3];
    uint32_t *device_ids;
    int64_t *device_kernel_sum;
    size_t device_count;
    int64_t T;         /* CPUSum[ProfileStep], or the fallback below */
    int T_is_fallback; /* 1 when CPUSum[ProfileStep] == 0: T = span wall time
                          (span end - start; if that is <= 0, latest end -
                          earliest start over all events; 0 without events) */
    int failed;        /* the build ran out of memory */
    int32_t *stack;    /* scratch for sp__model_visit: one slot per event of
                          the largest thread */
} sp__model;

/* Builds m from r (NULL counts as an empty result). Linear in the number of
 * events (the final merge of each type radix-sorts). Returns 0, or -1
 * when memory ran out: m->failed is then set and m must still be passed to
 * sp__model_fini. r is borrowed and must outlive m. */
int sp__model_build(sp__model *m, const sp_result *r);

/* Frees what the build allocated; safe after a failed build and twice. */
void sp__model_fini(sp__model *m);

/* The node of event index ev of thread t, or -1 (marks have none). Nodes
 * are in event order, so this is a binary search. */
int32_t sp__model_node_of(const sp__thread_model *t, int32_t ev);

/* The part of [start, end] inside the ProfileStep ranges of all threads
 * (their merged union), and in *counts whether such a range counts as a call
 * there: a positive-length range when some of it is inside, a zero-length
 * one when a step contains its point. Without steps (T_is_fallback) every
 * range counts whole. O(log steps + steps it covers). */
int64_t sp__model_in_steps(const sp__model *m, int64_t start, int64_t end, int *counts);

/* Merges s and, where part of it lies outside the ProfileStep union, keeps
 * only its positive-length pieces inside (s is left as it is without steps,
 * T_is_fallback, or when it lies wholly inside): the host ranges a table
 * takes from elsewhere (communication) follow the rule above. Returns 0, or
 * -1 when memory ran out (s empty, failed). */
int sp__model_clip_to_steps(const sp__model *m, sp__spans *s);

/* model_gpu.c: charges attributed device time to nodes (gpu, self_gpu, ggpu;
 * self_cpu loses the runtime calls, §5.2), adds the runtime calls to
 * cpu_ranges[CudaRuntime] and fills the device side above. Called by
 * sp__model_build; returns 0 or -1. */
int sp__model_add_gpu(sp__model *m);

/* model_split.c: fills t->wholes, after the GPU times are charged.
 * Returns 0, or -1 when memory ran out. */
int sp__model_join_split(sp__thread_model *t);

/* What node n counts for in a table of calls: a range cut at step
 * boundaries is one call, of its whole length. Returns 0 for a later piece
 * of such a range (it counts nothing: the first piece holds its times);
 * otherwise 1, with *call = n (for a first piece: n with the times of all
 * its pieces summed) and [*start_ns, *end_ns] the range's. */
int sp__model_call(const sp__thread_model *t, const sp__node *n, sp__node *call,
                   int64_t *start_ns, int64_t *end_ns);

/* §5.4 first-seen traversal: calls fn for every node of every thread,
 * threads in ascending tid, depth first with an explicit stack starting at
 * the root, children pushed in start order (so the LAST-starting child is
 * visited first). Never allocates. Does nothing on a failed model. */
typedef void (*sp__visit_fn)(void *ctx, const sp__thread_model *t, const sp__node *n);
void sp__model_visit(const sp__model *m, sp__visit_fn fn, void *ctx);

#endif

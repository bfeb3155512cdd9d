/* steps.h: the time of each recorded step, split by what the host and the
 * GPU did in it (diagnose.md §1). The diagnosis rules (diagnose.h), the
 * regression gate (step_compare.c) and any later per-step view start from
 * it, so they all cut steps the same way.
 *
 * A step is one ProfileStep range (any thread), in start order. Each figure
 * is a length of merged spans clipped to the step's [start, end], so time
 * two threads spend in the same phase at once counts once, and no figure
 * exceeds the step's length. Kernel counts go to the step in which the
 * kernel starts.
 *
 * Threads: built and read by one thread at a time; borrows the model. */
#ifndef SP_ANALYZE_STEPS_H
#define SP_ANALYZE_STEPS_H

#include "model.h"

#include <stddef.h>
#include <stdint.h>

/* The host phases of a step: the event types of the Overview's model
 * items, host communication, and the rest ("Other": step time in none). */
enum {
    SP__PHASE_DATALOADER,
    SP__PHASE_FORWARD,
    SP__PHASE_BACKWARD,
    SP__PHASE_OPTIMIZATION,
    SP__PHASE_COMMUNICATION,
    SP__PHASE_OTHER,
    SP__PHASE_COUNT
};

/* The phase's display name ("Dataloader", ..., "Other"). */
const char *sp__phase_name(int phase);

typedef struct sp__step {
    int64_t number;           /* N of "ProfileStep#N" / "ProfilerStep#N"; else its index */
    int64_t start_ns, end_ns; /* the ProfileStep range */
    int64_t phase_ns[SP__PHASE_COUNT];
    int64_t busy_ns;                /* some device record (kernel, memcpy, memset) running */
    int64_t idle_ns;                /* GPU idle outside data loading: step - busy - Dataloader */
    int64_t kernel_ns;              /* kernels running (merged) */
    int64_t runtime_ns;             /* CUDA runtime / driver calls (merged, all threads) */
    int64_t sync_ns;                /* waits: synchronize calls, blocking copies, item() */
    int64_t comm_ns;                /* communication, host ranges and GPU kernels */
    int64_t exposed_comm_ns;        /* communication while no compute kernel runs */
    int64_t kernels, short_kernels; /* kernels starting in the step; those under 10 us */
    double num_samples;             /* given to step() (SP_EVENT_FLAG_SAMPLES); -1 unknown */
} sp__step;

/* Kernels shorter than this count as short (launch-bound evidence). */
#define SP__SHORT_KERNEL_NS 10000

typedef struct sp__steps {
    sp__step *v;
    size_t n;
    int has_gpu; /* the result holds device records */
} sp__steps;

/* Fills s from m (steps ordered by start). Returns 0, or -1 when memory ran
 * out (s then empty). s needs no initialisation; free with sp__steps_fini. */
int sp__steps_build(const sp__model *m, sp__steps *s);
void sp__steps_fini(sp__steps *s);

/* Only the steps themselves, from a result with no model: number, start,
 * end and num_samples, every other figure 0 (r may be NULL). Returns 0, or
 * -1 when memory ran out (s then empty); free with sp__steps_fini. */
int sp__steps_collect(const sp_result *r, sp__steps *s);

/* The index of the step whose [start, end) holds t (the last one starting
 * at or before it), or -1. */
ptrdiff_t sp__steps_at(const sp__steps *s, int64_t t);

/* The per-step values, in ns, of one metric (see sp_result_compare_steps):
 * "step" (the step's length), "phase:TYPE" (a phase above, or any host event
 * type name, merged), "op:NAME" (host ranges of that name, merged) or
 * "kernel:NAME" (kernels of that name, merged). values holds s->n slots.
 * *found is set when the metric's ranges occur in the result at all.
 * Returns 0, 1 for an unknown metric, -1 when memory ran out. */
int sp__steps_metric(const sp__model *m, const sp__steps *s, const char *metric, double *values,
                     int *found);

/* The length of spans (merged) inside [start, end]; spans sorted, apart. */
int64_t sp__spans_within(const sp__spans *spans, int64_t start, int64_t end);

#endif

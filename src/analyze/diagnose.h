/* diagnose.h: the verdicts of `stepprof diagnose` (diagnose.md): each
 * rule reads the per-step breakdown (steps.h), compares one measure with a
 * documented threshold, and keeps the numbers and the steps behind its
 * verdict so that a printer (diagnose_print.c: text and JSON) or the HTML
 * report can show the evidence. The rules never print.
 *
 * Threads: a diagnosis is built and read by one thread at a time. */
#ifndef SP_ANALYZE_DIAGNOSE_H
#define SP_ANALYZE_DIAGNOSE_H

#include "steps.h"

/* The rules, in the order their verdicts are listed. */
enum {
    SP__RULE_DATALOADER,
    SP__RULE_LAUNCH,
    SP__RULE_SYNC,
    SP__RULE_COMM,
    SP__RULE_OPTIMIZER,
    SP__RULE_SLOW_STEPS,
    SP__RULE_NONE,
    SP__RULE_COUNT
};

/* The thresholds (diagnose.md §2 explains each). Shares are of the
 * steps' total time. */
#define SP__DIAG_DATALOADER_SHARE 0.20 /* Dataloader time */
#define SP__DIAG_IDLE_SHARE 0.30       /* GPU idle outside data loading */
#define SP__DIAG_SYNC_SHARE 0.10       /* waits */
#define SP__DIAG_COMM_SHARE 0.15       /* exposed communication */
#define SP__DIAG_OPT_SHARE 0.10        /* Optimization, and ... */
#define SP__DIAG_OPT_RATIO 0.50        /* ... Optimization / Backward */
#define SP__DIAG_SLOW_FACTOR 1.5       /* a slow step: over 1.5 x the median step */
#define SP__DIAG_SLOW_MIN_STEPS 5      /* steps the slow-step rule needs */
#define SP__DIAG_WORST 3               /* steps named as evidence */
#define SP__DIAG_SLOW_LISTED 8         /* slow steps named */

/* The rule's id ("dataloader_bound", ...) and its title ("dataloader-bound"). */
const char *sp__rule_id(int rule);
const char *sp__rule_title(int rule);

typedef struct sp__verdict {
    int rule;
    double value, threshold; /* the measure the rule compared, and its threshold */
    double share;            /* total_ns as a share of the steps' total time */
    int64_t total_ns;        /* the time behind value, summed over the steps */
    int64_t median_ns;       /* that time's median per step */
    /* The steps the evidence comes from: the worst ones by the rule's
     * measure (slow steps: the slow ones, in order), with that measure. */
    size_t nsteps;
    int64_t step[SP__DIAG_SLOW_LISTED], step_ns[SP__DIAG_SLOW_LISTED];
    /* Launch-bound evidence. */
    int64_t kernels, short_kernels, kernel_ns, runtime_ns;
    /* Slow steps: how many, their period (0 = not periodic), and what grew
     * most in the slowest one against the median step: a phase and the
     * host range name (name -1: none) whose self time grew most. */
    size_t slow_count;
    int64_t period, reference_step;
    int phase;
    int64_t phase_excess_ns;
    int64_t name, name_excess_ns;
    int warmup; /* the slowest step is the first recorded one */
} sp__verdict;

typedef struct sp__diagnosis {
    sp__steps steps;
    int64_t total_ns, median_ns; /* step time: summed, median */
    int64_t phase_total[SP__PHASE_COUNT];
    int64_t idle_total; /* GPU idle outside data loading (has_gpu) */
    sp__verdict v[SP__RULE_COUNT];
    size_t count; /* verdicts in v; SP__RULE_NONE alone when nothing fired */
} sp__diagnosis;

/* Runs every rule on m. Returns 0, or -1 when memory ran out. A result
 * without steps leaves d->steps.n == 0 and no verdict. Free with
 * sp__diagnosis_fini (also after a failure). */
int sp__diagnose(const sp__model *m, sp__diagnosis *d);
void sp__diagnosis_fini(sp__diagnosis *d);

/* Appends the diagnosis as docs/diagnose.md §3's JSON object (one line per
 * verdict, ending in a newline): `stepprof diagnose --json` and the HTML
 * report print the same. d must have steps. */
void sp__diagnosis_json(sp__buf *b, const sp__diagnosis *d, const sp_result *r);

#endif

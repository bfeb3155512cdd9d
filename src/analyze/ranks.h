/* ranks.h: the cross-rank view of a distributed job (semantics.md §6.10):
 * one result per rank, read side by side. Per rank: the step time and how
 * it splits into compute, communication, their overlap, exposed
 * communication and idle time. Per collective: calls, bytes, time and
 * bandwidth. And the stragglers: which rank made the others wait in a
 * collective, in which phase of which steps it fell behind, and by how much.
 *
 * A rank's collectives are its Communication ranges that carry a collective
 * record (process group, seq, bytes: sp_profiler_add_comm_info, torch's
 * c10d ops) when it has any, else its outermost Communication ranges. When
 * every rank's collectives have a seq, an operation is the collectives of
 * the same group and seq on every rank; otherwise the k-th of one rank is
 * the same operation as the k-th of every other (the occurrence index in
 * start order, docs/trace-format.md), up to the count of the rank with the
 * fewest. Waits are read
 * from durations alone, so ranks need no common clock: all ranks leave a
 * collective at nearly the same instant, so the rank that entered last has
 * the shortest one, and each other rank waited its own duration minus that
 * shortest one.
 *
 * Threads: built and read by one thread at a time; borrows the results. */
#ifndef SP_ANALYZE_RANKS_H
#define SP_ANALYZE_RANKS_H

#include "steps.h"
#include "table.h"

#include <stddef.h>
#include <stdint.h>

/* A collective makes the others wait when their median wait is at least
 * this share of the median step, and at least SP__STRAGGLER_MIN_NS. */
#define SP__STRAGGLER_SHARE 0.05
#define SP__STRAGGLER_MIN_NS 100000
#define SP__STRAGGLER_STEPS 8 /* steps listed per straggler row */

typedef struct sp__rank_row {
    int64_t rank;
    size_t steps;
    /* Means per step, ns. compute: GPU computation kernels when the rank
     * has device records, else its Forward, Backward and Optimization
     * ranges; communication: the Distributed Summary's (host ranges and GPU
     * communication kernels); idle: step time in none of compute,
     * communication and Dataloader. */
    double step_ns, compute_ns, comm_ns, overlap_ns, exposed_ns, idle_ns;
    size_t collectives;
} sp__rank_row;

typedef struct sp__collective_row {
    const char *name; /* borrowed from the first rank's result */
    size_t calls;     /* matched operations of this name */
    double bytes;     /* summed over the operations: the lowest rank's bytes */
    int has_bytes;    /* some operation's bytes were recorded */
    double time_ns;   /* summed over the operations: the median rank's duration */
    double wait_ns;   /* summed: the median wait of the ranks that waited */
} sp__collective_row;

typedef struct sp__straggler_row {
    int64_t rank;
    int phase;        /* SP__PHASE_*: where it fell behind; -1 when no phase grew */
    size_t count;     /* collectives it made the others wait in */
    double wait_ns;   /* the others' median wait, summed over those */
    double behind_ns; /* that phase's excess over the other ranks' median, summed */
    int64_t steps[SP__STRAGGLER_STEPS];
    size_t nsteps;    /* distinct steps, the first SP__STRAGGLER_STEPS listed */
} sp__straggler_row;

typedef struct sp__ranks {
    sp__rank_row *rows; /* in rank order */
    size_t nrows;
    sp__collective_row *colls;
    size_t ncolls;
    sp__straggler_row *strag; /* most wait first */
    size_t nstrag;
    size_t matched;   /* operations matched on every rank */
    size_t unmatched; /* collectives past the fewest rank's count */
    int mismatched;   /* a matched operation's names differ between ranks */
    int by_seq;       /* operations matched by process group and seq, not by order */
    double median_step_ns;
} sp__ranks;

/* Analyses n results, rank[i] being the rank of results[i] (results in any
 * order; rows come out in rank order). Returns 0, or -1 when memory ran out
 * (out then empty). Free with sp__ranks_fini. */
int sp__ranks_build(const sp_result *const *results, const int64_t *rank, size_t n, sp__ranks *out);

/* The ranks of results as they recorded them (sp_result_dist_info), or
 * their positions when two of them say the same rank (files of one
 * process, or of single-process runs). */
void sp__ranks_default_ids(const sp_result *const *results, size_t n, int64_t *ids);
void sp__ranks_fini(sp__ranks *r);

/* The tables of semantics.md §6.10 (table_ranks.c), times in unit ("s",
 * "ms", "us" or "ns"): 0 Cross-rank, 1 Collective, 2 Straggler Summary.
 * NULL when memory ran out (or for another which). */
#define SP__RANKS_TABLES 3
sp__table *sp__ranks_table(const sp__ranks *r, int which, const char *unit);
/* Appends the three tables; out->failed when memory ran out. */
void sp__ranks_render(const sp__ranks *r, const char *unit, sp__buf *out);

#endif

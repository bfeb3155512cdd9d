/* timer.h: the statistics of one timer_only benchmark event (semantics.md §7):
 * batch and reader costs, samples/s or steps/s, the step_info string and the
 * Perf Summary. The profiler keeps a stack of these and feeds them times it
 * read itself; this module never reads a clock, never allocates and never
 * prints, so it is pure arithmetic on int64 nanoseconds.
 *
 * Decisions where §7 leaves room (see timer.c for the fixes of §9):
 * - Every Perf Summary line ends with '\n'; the step_info string has no '\n'.
 * - Any division by a zero time (a step or a window that took 0 ns) gives 0,
 *   never nan or inf: a zero-cost step's ips is 0 and enters min/max as 0.
 * - A zero-filled sp__timer behaves as one started at time 0.
 * - The IPS unit remembered from step_info is "<unit>/s" with <unit> cut to
 *   SP__TIMER_UNIT_MAX bytes (at a UTF-8 boundary); the step_info string
 *   itself always carries the whole unit.
 * Threads: an sp__timer is used by one thread at a time. */
#ifndef SP_ANALYZE_TIMER_H
#define SP_ANALYZE_TIMER_H

#include "sys.h"

#include <stdint.h>

#define SP__TIMER_UNIT_MAX 61 /* bytes of a step_info unit kept for the summary */

/* min/max/total of one quantity over steps 11..N; count is how many values
 * were folded in, and min/max are meaningful only when count > 0. */
typedef struct sp__timer_cost {
    int64_t total_ns, min_ns, max_ns, count;
} sp__timer_cost;

typedef struct sp__timer_rate {
    double min, max;
    int64_t count;
} sp__timer_rate;

/* One benchmark event. Invariants: steps counts every step() taken while not
 * paused; the records hold steps 11..steps only (so their batch count is
 * steps - 10 once steps > 10); the win_* averagers hold what happened since
 * the last step_info (or start). */
typedef struct sp__timer {
    int64_t step_start_ns; /* when the current step began */
    int64_t steps;         /* N: steps timed */
    uint64_t reader_id;    /* the bound reader, valid when reader_bound */
    int reader_bound;
    int paused;     /* !need_record: another reader's loop is running */
    int steps_mode; /* some step had no num_samples: report steps/s (sticky) */
    /* averagers since the last step_info */
    int64_t win_reader_ns, win_reader_count;
    int64_t win_batch_ns, win_batch_count, win_samples;
    /* records of steps 11..N */
    sp__timer_cost reader, batch;
    int64_t total_samples;    /* samples of steps 11..N taken in samples mode */
    sp__timer_rate ips_samples; /* num_samples / batch_cost, while in samples mode */
    sp__timer_rate ips_steps;   /* 1 / batch_cost, every recorded step */
    char unit[SP__TIMER_UNIT_MAX + 3]; /* "<unit>/s" of the last step_info; "" = none */
} sp__timer;

/* Resets everything and starts the first step at now_ns. */
void sp__timer_start(sp__timer *t, int64_t now_ns);

/* One outermost Dataloader range of reader reader_id that took cost_ns, seen
 * at now_ns. The first id binds to the event; a range of another id pauses
 * timing (steps are then ignored); a range of the bound id while paused
 * resumes timing and starts the step at now_ns (paddle restarts before the
 * load, so a caller that wants the load inside the step passes the range's
 * begin time). While not paused, a non-zero cost feeds the reader averager,
 * and the reader record too once 10 steps were timed. */
void sp__timer_reader(sp__timer *t, uint64_t reader_id, int64_t cost_ns, int64_t now_ns);

/* Ends a step at now_ns (ignored while paused). num_samples < 0 means "not
 * given", which switches the event to steps/s for good; 0 is a valid count. */
void sp__timer_step(sp__timer *t, int64_t now_ns, int64_t num_samples);

/* paddle's step_info(unit): appends " reader_cost: %.5f s", " batch_cost:
 * %.5f s" and " ips: %.3f <unit>/s" (each only if non-zero; possibly
 * nothing) for the steps since the previous call, then resets those
 * averagers. unit NULL means "samples". */
void sp__timer_step_info(sp__timer *t, const char *unit, sp__buf *out);

/* Appends the Perf Summary (7 lines at most, each ending in '\n') if more
 * than 10 steps were timed, else nothing. */
void sp__timer_perf_summary(const sp__timer *t, sp__buf *out);

/* The rows that follow the Perf Summary's table when the profiler was
 * given the figures (sp_options; 0 = not given), in the same layout, over
 * the same steps 11..N: "tokens/s" (ips x tokens_per_sample; samples mode
 * only), "TFLOP/s" (flops_per_step / batch_cost) and, with a peak too,
 * "MFU (%)" (100 x TFLOP/s / peak_tflops). Nothing without them or within
 * the first 10 steps; a zero time gives 0, never nan or inf. */
void sp__timer_perf_throughput(const sp__timer *t, double tokens_per_sample, double flops_per_step,
                               double peak_tflops, sp__buf *out);

/* N, the number of steps timed. */
int64_t sp__timer_steps(const sp__timer *t);

/* Appends text centred in 15 columns the way Python's str.center(15) does
 * (the odd space goes left); text of 15 bytes or more is appended as is. */
void sp__center15(sp__buf *out, const char *text);

#endif

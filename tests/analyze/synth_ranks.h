/* synth_ranks.h: a synthetic data-parallel job, one result per rank, laid
 * out on one clock: each step, every rank loads, runs forward (an op) and
 * backward, then enters an all-reduce that ends for all of them 1 ms after
 * the last one entered, then steps its optimizer. A slow rank loads longer
 * on every third step, so the others wait for it. Times are exact. */
#ifndef SP_TESTS_SYNTH_RANKS_H
#define SP_TESTS_SYNTH_RANKS_H

#include "export.h"
#include "fixture.h"

#include <stdio.h>

#define MS 1000000ll
#define RANKS 4
#define STEPS 9

static char synth_step_names[STEPS][32];

/* One rank's result: slow_rank loads extra_ms longer on steps n % 3 == 0
 * (-1: none); Forward holds an Operator; with skip_last_comm the last
 * all-reduce is missing. */
static inline sp_result *rank_result(int rank, int slow_rank, int64_t extra_ms, int skip_last_comm)
{
    fixture_range v[STEPS * 8];
    size_t n = 0;
    /* On the wall clock, as recorded spans are: saved files write times
     * from the base of trace-format.md §3, and clip what lies before it. */
    const int64_t t0 = sp__base_time_ns() + 1000000000ll;
    int64_t s = t0;
    for (int k = 0; k < STEPS; k++) {
        snprintf(synth_step_names[k], sizeof synth_step_names[k], "ProfileStep#%d", k);
        int64_t last_in = 0, mine = 0;
        for (int r = 0; r < RANKS; r++) {
            int64_t dl = 5 * MS + (r == slow_rank && k % 3 == 0 ? extra_ms * MS : 0);
            int64_t in = s + dl + 20 * MS;
            if (in > last_in) last_in = in;
            if (r == rank) mine = dl;
        }
        int64_t end_comm = last_in + 1 * MS, in = s + mine + 20 * MS;
        v[n++] = (fixture_range){synth_step_names[k], SP_EVENT_PROFILE_STEP, s, end_comm + 2 * MS};
        v[n++] = (fixture_range){"DataLoader", SP_EVENT_DATALOADER, s, s + mine};
        v[n++] = (fixture_range){"forward", SP_EVENT_FORWARD, s + mine, s + mine + 10 * MS};
        v[n++] = (fixture_range){"matmul", SP_EVENT_OPERATOR, s + mine, s + mine + 8 * MS};
        v[n++] = (fixture_range){"backward", SP_EVENT_BACKWARD, s + mine + 10 * MS, in};
        if (!(skip_last_comm && k == STEPS - 1))
            v[n++] = (fixture_range){"allreduce", SP_EVENT_COMMUNICATION, in, end_comm};
        v[n++] = (fixture_range){"sgd", SP_EVENT_OPTIMIZATION, end_comm, end_comm + 2 * MS};
        s = end_comm + 2 * MS;
    }
    sp_result *r = sp__result_new();
    fixture_add_thread(r, 100 + (uint64_t)rank, "main", v, n);
    r->span_start_ns = t0;
    r->span_end_ns = s;
    return r;
}

#endif

/* bench_record.c: the cost of recording a range, beside its floors. Each
 * figure is the median (with min and max) over trials of a tight loop that
 * calls a non-inlined empty function once per iteration, wrapped in:
 *   empty        nothing (the baseline)
 *   closed       sp_range_begin/sp_range_end while no profiler records
 *   started, CLOSED  the same while a started profiler is at a CLOSED step
 *                (its benchmark timer on): what most ranges of a long run
 *                pay; only Dataloader ranges reach the library
 *   timer only   the same while a started profiler runs only its benchmark
 *                timer (timer_only)
 *   dataloader   a Dataloader range with an operator range inside, at a
 *                CLOSED step: the timer times it, so both pairs reach the
 *                library
 *   tsc x2       two raw rdtsc reads (the physical floor of a timed range)
 *   clock x2     two clock_gettime(CLOCK_MONOTONIC_RAW) calls
 *   record       sp_range_begin/sp_range_end while recording
 *   correlated   the same while GPU tracing's correlator follows the
 *                ranges (correlate.h): every begin and end takes the slow
 *                path and calls the correlator, here a no-op; CUPTI's own
 *                push and pop come on top (measured only on a GPU host)
 *   at the cap   the same with the buffer cap (4 MiB) full: new events
 *                dropped (the default), or the oldest chunk overwritten
 *                (sp_options.overwrite_oldest), whose cost per chunk the
 *                ranges pay
 * Ratios are against the floors measured in the same run, since the
 * machines are shared and absolute nanoseconds drift. */
#include "correlate.h"
#include "record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TRIALS 9
#define ITERS 2000000

__attribute__((noinline)) static void work(void) { __asm__ volatile(""); }

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static volatile uint64_t sink;

static double run_empty(void)
{
    double t0 = now_ns();
    for (int i = 0; i < ITERS; i++) work();
    return (now_ns() - t0) / ITERS;
}

static double run_ranges(void)
{
    double t0 = now_ns();
    for (int i = 0; i < ITERS; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, "op");
        work();
        sp_range_end();
    }
    return (now_ns() - t0) / ITERS;
}

static double run_dataloader(void)
{
    double t0 = now_ns();
    for (int i = 0; i < ITERS; i++) {
        sp_range_begin(SP_EVENT_DATALOADER, "loader");
        sp_range_begin(SP_EVENT_OPERATOR, "op");
        work();
        sp_range_end();
        sp_range_end();
    }
    return (now_ns() - t0) / ITERS;
}

static double run_tsc(void)
{
    uint64_t acc = 0;
    double t0 = now_ns();
    for (int i = 0; i < ITERS; i++) {
#ifdef SP__HAVE_TSC
        acc += __rdtsc();
        work();
        acc += __rdtsc();
#else
        acc += sp__clock_raw_ns(CLOCK_MONOTONIC_RAW);
        work();
        acc += sp__clock_raw_ns(CLOCK_MONOTONIC_RAW);
#endif
    }
    sink = acc;
    return (now_ns() - t0) / ITERS;
}

static double run_clock(void)
{
    uint64_t acc = 0;
    double t0 = now_ns();
    for (int i = 0; i < ITERS; i++) {
        acc += sp__clock_raw_ns(CLOCK_MONOTONIC_RAW);
        work();
        acc += sp__clock_raw_ns(CLOCK_MONOTONIC_RAW);
    }
    sink = acc;
    return (now_ns() - t0) / ITERS;
}

typedef struct stats {
    double median, min, max;
} stats;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stats measure(double (*fn)(void), int discard_between)
{
    double t[TRIALS];
    fn(); /* warm up */
    if (discard_between) sp__record_discard();
    for (int i = 0; i < TRIALS; i++) {
        t[i] = fn();
        if (discard_between) sp__record_discard();
    }
    qsort(t, TRIALS, sizeof *t, cmp_double);
    return (stats){t[TRIALS / 2], t[0], t[TRIALS - 1]};
}

static void row(const char *name, stats s, double base, const char *vs)
{
    printf("%-34s %8.2f %8.2f %8.2f", name, s.median, s.min, s.max);
    if (vs) printf("   %6.2fx %s", s.median / base, vs);
    printf("\n");
}

static void metric(const char *name, stats s)
{
    printf("metric %s %.3f ns min %.3f max %.3f\n", name, s.median, s.min, s.max);
}

static volatile uint64_t correlator_calls;
__attribute__((noinline)) static void no_push(uint64_t id) { correlator_calls += id != 0; }
__attribute__((noinline)) static void no_pop(void) { correlator_calls++; }
static const sp__correlator no_op_correlator = {no_push, no_pop};

/* The recorded pair with the cap full, under either policy. The first
 * (warm-up) trial fills the cap; no trial discards. */
static stats measure_at_cap(bool overwrite)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.buffer_cap_bytes = (size_t)4 << 20;
    o.overwrite_oldest = overwrite;
    sp_profiler *prof;
    if (sp_profiler_create(&o, &prof) != SP_OK || sp_profiler_start(prof) != SP_OK) {
        fprintf(stderr, "bench_record: %s\n", sp_last_error());
        exit(1);
    }
    stats s = measure(run_ranges, 0);
    sp_profiler_destroy(prof);
    return s;
}

int main(void)
{
    stats empty = measure(run_empty, 0);
    stats closed = measure(run_ranges, 0);
    stats tsc = measure(run_tsc, 0);
    stats clk = measure(run_clock, 0);

    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    sp_scheduler_range(&o.scheduler, 1000, 1001); /* step 0 is CLOSED */
    sp_profiler *prof;
    if (sp_profiler_create(&o, &prof) != SP_OK || sp_profiler_start(prof) != SP_OK) {
        fprintf(stderr, "bench_record: %s\n", sp_last_error());
        return 1;
    }
    if (sp_is_recording() || !(sp__host_active & 2)) {
        fprintf(stderr, "bench_record: the profiler is not at a CLOSED step with its timer on\n");
        return 1;
    }
    stats started_closed = measure(run_ranges, 0);
    stats dataloader = measure(run_dataloader, 0);
    sp_profiler_destroy(prof);
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.timer_only = true;
    if (sp_profiler_create(&o, &prof) != SP_OK || sp_profiler_start(prof) != SP_OK) {
        fprintf(stderr, "bench_record: %s\n", sp_last_error());
        return 1;
    }
    stats timer_only = measure(run_ranges, 0);
    sp_profiler_destroy(prof);
    o.timer_only = false;
    if (sp_profiler_create(&o, &prof) != SP_OK || sp_profiler_start(prof) != SP_OK) {
        fprintf(stderr, "bench_record: %s\n", sp_last_error());
        return 1;
    }
    stats rec = measure(run_ranges, 1);
    sp__record_set_correlator(&no_op_correlator);
    stats correlated = measure(run_ranges, 1);
    sp__record_set_correlator(NULL);
    if (correlator_calls < (uint64_t)TRIALS * ITERS * 2) {
        fprintf(stderr, "bench_record: the correlator saw %llu calls\n", (unsigned long long)correlator_calls);
        return 1;
    }
    sp_profiler_destroy(prof);
    stats cap_drop = measure_at_cap(false);
    stats cap_ring = measure_at_cap(true);

    printf("stepprof record cost, ns per iteration (%d trials x %d iterations)\n", TRIALS, ITERS);
    printf("clock: %s\n", sp__clock_tsc ? "invariant TSC" : "CLOCK_MONOTONIC_RAW");
    printf("%-34s %8s %8s %8s\n", "loop body", "median", "min", "max");
    row("empty (noinline call)", empty, 0, NULL);
    row("closed: begin+end, not recording", closed, 0, NULL);
    row("started, CLOSED step: begin+end", started_closed, 0, NULL);
    row("timer only: begin+end", timer_only, 0, NULL);
    row("CLOSED: Dataloader + op inside", dataloader, 0, NULL);
    row("tsc x2", tsc, 0, NULL);
    row("clock_gettime x2", clk, 0, NULL);
    row("record: begin+end pair", rec, 0, NULL);
    row("correlated (GPU tracing's ids)", correlated, rec.median, "of record");
    row("at the cap, dropping", cap_drop, rec.median, "of record");
    row("at the cap, overwriting the oldest", cap_ring, rec.median, "of record");
    printf("\nclosed - empty:              %6.2f ns per pair\n", closed.median - empty.median);
    printf("started CLOSED - empty:      %6.2f ns per pair\n", started_closed.median - empty.median);
    printf("timer only - empty:          %6.2f ns per pair\n", timer_only.median - empty.median);
    printf("record pair / (tsc x2):      %6.2fx  (pair %.2f ns over the loop, floor %.2f ns)\n",
           (rec.median - empty.median) / (tsc.median - empty.median), rec.median - empty.median,
           tsc.median - empty.median);
    printf("record pair / (clock x2):    %6.2fx\n",
           (rec.median - empty.median) / (clk.median - empty.median));
    /* For bench/report.py: metric <name> <median> <unit> [min <v> max <v>]. */
    metric("empty_loop_ns", empty);
    metric("closed_pair_loop_ns", closed);
    metric("started_closed_pair_loop_ns", started_closed);
    metric("timer_only_pair_loop_ns", timer_only);
    metric("closed_dataloader_loop_ns", dataloader);
    metric("tsc2_loop_ns", tsc);
    metric("clock2_loop_ns", clk);
    metric("record_pair_loop_ns", rec);
    printf("metric record_pair_over_tsc2 %.3f x\n",
           (rec.median - empty.median) / (tsc.median - empty.median));
    printf("metric closed_minus_empty_ns %.3f ns\n", closed.median - empty.median);
    printf("metric started_closed_minus_empty_ns %.3f ns\n", started_closed.median - empty.median);
    printf("metric timer_only_minus_empty_ns %.3f ns\n", timer_only.median - empty.median);
    printf("metric correlated_over_record %.3f x\n", correlated.median / rec.median);
    printf("metric cap_drop_over_record %.3f x\n", cap_drop.median / rec.median);
    printf("metric cap_overwrite_over_record %.3f x\n", cap_ring.median / rec.median);
    return 0;
}

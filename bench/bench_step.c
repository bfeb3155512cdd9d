/* bench_step.c: how long step() keeps the training thread at the end of a
 * recorded span of 1M ranges (make_scheduler(closed=1, ready=1, record=1):
 * the step() that leaves the RECORD_AND_RETURN step collects the span).
 * Two figures per trial:
 *   step()     from the call to its return: what the training loop waits
 *   result     from the call until sp_profiler_result() returns the span
 *              (the collection itself, wherever it runs: the writer thread)
 * on_trace_ready fires inside step(), as with a built-in handler, and reads
 * nothing: reading the result there would wait for the collection. The
 * target is step() within 1 ms, reported as a ratio against that limit.
 * Each trial records its ranges on the calling thread, as a training loop
 * does; the median of TRIALS trials is reported, with min and max. */
#include "stepprof/stepprof.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRIALS 5
#define RANGES 1000000
#define LIMIT_MS 1.0

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void on_ready(sp_profiler *p, void *user)
{
    (void)p;
    ++*(int *)user;
}

static size_t events_of(const sp_result *r)
{
    size_t n = 0;
    for (size_t t = 0; r && t < sp_result_thread_count(r); t++) {
        sp_thread_info info;
        if (sp_result_thread(r, t, &info) == SP_OK) n += info.event_count;
    }
    return n;
}

static void no_report(const char *text, void *user)
{
    (void)text;
    (void)user;
}

static void fail(const char *what)
{
    fprintf(stderr, "bench_step: %s: %s\n", what, sp_last_error());
    exit(1);
}

typedef struct stats {
    double median, min, max;
} stats;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stats summarize(double *t)
{
    qsort(t, TRIALS, sizeof *t, cmp_double);
    return (stats){t[TRIALS / 2], t[0], t[TRIALS - 1]};
}

int main(void)
{
    int calls = 0;
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = (sp_trace_handler){on_ready, &calls, NULL};
    o.buffer_cap_bytes = (size_t)256 << 20; /* the span is never cut */
    o.report = no_report;                   /* the Perf Summary at stop */
    if (sp_scheduler_make(&o.scheduler, 1, 1, 1, 0, 0) != SP_OK) fail("scheduler");
    sp_profiler *p;
    if (sp_profiler_create(&o, &p) != SP_OK || sp_profiler_start(p) != SP_OK) fail("start");
    double step_ms[TRIALS], result_ms[TRIALS];
    for (int trial = 0; trial < TRIALS; trial++) {
        /* To the READY step, then the RECORD_AND_RETURN one, which records. */
        if (sp_profiler_step(p, 0) != SP_OK || sp_profiler_step(p, 0) != SP_OK) fail("step");
        for (int i = 0; i < RANGES; i++) {
            sp_range_begin(SP_EVENT_OPERATOR, "op");
            sp_range_end();
        }
        int before = calls;
        double t0 = now_ms();
        if (sp_profiler_step(p, 0) != SP_OK) fail("step");
        double t1 = now_ms();
        const sp_result *r = sp_profiler_result(p); /* waits for the collection */
        double t2 = now_ms();
        if (calls != before + 1) fail("on_trace_ready did not fire once at the span's end");
        size_t events = events_of(r);
        if (events < RANGES) {
            fprintf(stderr, "bench_step: the span holds %zu events, not %d\n", events, RANGES);
            return 1;
        }
        step_ms[trial] = t1 - t0;
        result_ms[trial] = t2 - t0;
    }
    if (sp_profiler_stop(p) != SP_OK) fail("stop");
    sp_profiler_destroy(p);
    stats st = summarize(step_ms), rs = summarize(result_ms);
    printf("stepprof step() at the end of a %d-range span, ms (%d trials)\n", RANGES, TRIALS);
    printf("%-40s %8s %8s %8s\n", "", "median", "min", "max");
    printf("%-40s %8.3f %8.3f %8.3f\n", "step(): the training thread waits", st.median, st.min,
           st.max);
    printf("%-40s %8.3f %8.3f %8.3f\n", "until sp_profiler_result() has it", rs.median, rs.min,
           rs.max);
    printf("step() / limit (%.0f ms):             %6.2fx\n", LIMIT_MS, st.median / LIMIT_MS);
    /* For bench/report.py: metric <name> <median> <unit> [min <v> max <v>]. */
    printf("metric step_stall_1m_ms %.3f ms min %.3f max %.3f\n", st.median, st.min, st.max);
    printf("metric step_result_1m_ms %.3f ms min %.3f max %.3f\n", rs.median, rs.min, rs.max);
    printf("metric step_stall_1m_over_limit %.3f x\n", st.median / LIMIT_MS);
    return 0;
}

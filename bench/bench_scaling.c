/* bench_scaling.c: issue 4's targets for the recording hot path.
 *   amortized  each range wraps ~100 ns of real work; (time with ranges -
 *              time without) / ranges, base and recorded runs interleaved
 *              per trial; target <= 2 ns per range
 *   scaling    ns per begin+end pair (loop minus an empty loop) on each of
 *              1, 2, 4 persistent threads recording at once; target: the
 *              2-thread per-thread cost <= 1.2x the 1-thread cost (4 threads
 *              is informational on a 2-core machine); a control runs
 *              work() alone (no ranges, no memory) on 1 and 2 threads to show
 *              what the machine itself gives two threads
 *   memory     chunk bytes in use per event (a range = begin+end = 1 event);
 *              target <= 24 B; then 100M ranges under a 64 MiB cap, drained
 *              (sp__record_drain, as sp__record_discard) every 1M ranges as a
 *              collector would, so nothing is dropped: RSS after the first
 *              10M and at the end, and ns per range over the first and last
 *              10M (drain included); neither may grow (target <= 1.10x)
 * Lines starting with "metric " are for scripts: metric <name> <value> <unit>.
 *
 * Build (bench/CMakeLists.txt):
 *   add_executable(bench_scaling bench_scaling.c)
 *   target_link_libraries(bench_scaling PRIVATE stepprof_static m)
 *   target_include_directories(bench_scaling PRIVATE ${PROJECT_SOURCE_DIR}/src/sys ${PROJECT_SOURCE_DIR}/src/record)
 *   target_compile_options(bench_scaling PRIVATE ${SP_WARNINGS} -O2)
 *   target_compile_definitions(bench_scaling PRIVATE _GNU_SOURCE)
 * (threads come with stepprof_static; add Threads::Threads if not.) */
#include "record.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRIALS 9
#define AMORT_N 1000000     /* ranges per amortized run */
#define SCALE_N 1000000     /* pairs per thread per scaling run */
#define MAXT 4
#define BYTES_N 2000000     /* ranges for bytes per event */
#define MEM_BLOCK 1000000   /* ranges between drains */
#define MEM_BLOCKS 100      /* 100M ranges */

typedef struct stats {
    double median, min, max;
} stats;

static volatile uint64_t sink;
static unsigned work_iters = 64;

__attribute__((noinline)) static void empty(void) { __asm__ volatile(""); }

/* ~100 ns of dependent arithmetic (work_iters is calibrated). */
__attribute__((noinline)) static void work(void)
{
    uint64_t x = sink;
    for (unsigned i = 0; i < work_iters; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        __asm__ volatile("" : "+r"(x));
    }
    sink = x;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stats summarize(const double *v, int n)
{
    double t[128];
    memcpy(t, v, (size_t)n * sizeof *t);
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    return (stats){t[n / 2], t[0], t[n - 1]};
}

static double rss_mib(void) /* resident set, from /proc/self/statm */
{
    long size = 0, res = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f) return -1;
    if (fscanf(f, "%ld %ld", &size, &res) != 2) res = -1;
    fclose(f);
    return res < 0 ? -1 : res * (double)sysconf(_SC_PAGESIZE) / (1 << 20);
}

static sp_profiler *start(size_t cap)
{
    sp_options o;
    sp_options_init(&o);
    o.on_trace_ready = sp_handler_none();
    o.buffer_cap_bytes = cap;
    sp_profiler *prof;
    if (sp_profiler_create(&o, &prof) != SP_OK || sp_profiler_start(prof) != SP_OK) {
        fprintf(stderr, "bench_scaling: %s\n", sp_last_error());
        exit(1);
    }
    return prof;
}

static double run_work(int ranges)
{
    double t0 = now_ns();
    for (int i = 0; i < AMORT_N; i++) {
        if (ranges) sp_range_begin(SP_EVENT_OPERATOR, "op");
        work();
        if (ranges) sp_range_end();
    }
    return (now_ns() - t0) / AMORT_N;
}

static double run_pairs(int n, int ranges) /* ranges 0: the empty-loop floor */
{
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        if (ranges) sp_range_begin(SP_EVENT_OPERATOR, "op");
        empty();
        if (ranges) sp_range_end();
    }
    return (now_ns() - t0) / n;
}

/* Persistent workers: each round, the first `active` run SCALE_N pairs. */
static pthread_barrier_t go, done;
static int active, quit, control; /* control: work() alone, no ranges */
static double per_thread[MAXT];

static void *worker(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (;;) {
        pthread_barrier_wait(&go);
        if (quit) return NULL;
        if (id < active) per_thread[id] = control ? run_work(0) : run_pairs(SCALE_N, 1);
        pthread_barrier_wait(&done);
    }
}

static void round_of(int n, int ctl)
{
    active = n;
    control = ctl;
    pthread_barrier_wait(&go);
    pthread_barrier_wait(&done);
    sp__record_discard();
}

static int fails;

static void reset(void) /* drop all records, free pooled chunks */
{
    sp__record_discard();
    sp__record_trim();
}

static stats one(double v) { return (stats){v, v, v}; }

static void row(const char *name, stats s, const char *unit, double target)
{
    printf("%-30s %9.2f %9.2f %9.2f %-7s", name, s.median, s.min, s.max, unit);
    if (target > 0) {
        int ok = s.median <= target;
        fails += !ok;
        printf(" target <=%-6.2f %5.2fx %s", target, s.median / target, ok ? "ok" : "MISS");
    }
    printf("\n");
}

int main(void)
{
    double t_start = now_ns();

    /* Calibrate work() to ~100 ns. */
    for (int k = 0; k < 3; k++) {
        double ns = run_work(0);
        work_iters = (unsigned)(work_iters * 100.0 / ns + 0.5);
        if (work_iters < 1) work_iters = 1;
    }

    /* 1: amortized cost around ~100 ns of work. */
    sp_profiler *prof = start(0);
    double base[TRIALS], rec[TRIALS], diff[TRIALS];
    run_work(1); /* warm up */
    sp__record_discard();
    for (int i = 0; i < TRIALS; i++) {
        base[i] = run_work(0);
        rec[i] = run_work(1);
        sp__record_discard();
        diff[i] = rec[i] - base[i];
    }
    stats s_base = summarize(base, TRIALS), s_rec = summarize(rec, TRIALS);
    stats s_amort = summarize(diff, TRIALS);

    /* 2: scaling over 1, 2, 4 threads, configurations interleaved per trial. */
    pthread_t th[MAXT];
    pthread_barrier_init(&go, NULL, MAXT + 1);
    pthread_barrier_init(&done, NULL, MAXT + 1);
    for (int i = 0; i < MAXT; i++) pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i);
    round_of(MAXT, 0); /* warm every thread's buffer */
    const int nt[3] = {1, 2, MAXT};
    double mean[3][TRIALS], worst[3][TRIALS], emp[TRIALS], ctl[TRIALS];
    for (int i = 0; i < TRIALS; i++) {
        emp[i] = run_pairs(SCALE_N, 0);
        for (int c = 0; c < 3; c++) {
            round_of(nt[c], 0);
            double sum = 0, mx = 0;
            for (int t = 0; t < nt[c]; t++) {
                double v = per_thread[t] - emp[i];
                sum += v;
                if (v > mx) mx = v;
            }
            mean[c][i] = sum / nt[c];
            worst[c][i] = mx;
        }
        round_of(1, 1);
        double alone = per_thread[0];
        round_of(2, 1);
        ctl[i] = (per_thread[0] + per_thread[1]) / 2 / alone;
    }
    quit = 1;
    pthread_barrier_wait(&go);
    for (int i = 0; i < MAXT; i++) pthread_join(th[i], NULL);
    stats s_mean[3], s_worst[3], s_ratio[3], s_ctl = summarize(ctl, TRIALS);
    for (int c = 0; c < 3; c++) {
        double r[TRIALS];
        for (int i = 0; i < TRIALS; i++) r[i] = mean[c][i] / mean[0][i];
        s_mean[c] = summarize(mean[c], TRIALS);
        s_worst[c] = summarize(worst[c], TRIALS);
        s_ratio[c] = summarize(r, TRIALS);
    }

    /* 3a: chunk bytes per event (ranges, then instants for reference). */
    reset();
    size_t b0 = sp__record_bytes_in_use();
    run_pairs(BYTES_N, 1); /* chunk growth over 2M ranges; the warm current chunk is not counted */
    double bytes_range = (double)(sp__record_bytes_in_use() - b0) / BYTES_N;
    reset();
    b0 = sp__record_bytes_in_use();
    for (int i = 0; i < BYTES_N; i++) sp_instant(SP_EVENT_OPERATOR, "i");
    double bytes_instant = (double)(sp__record_bytes_in_use() - b0) / BYTES_N;
    sp_profiler_destroy(prof);
    reset();

    /* 3b: 100M ranges under a 64 MiB cap, drained every 1M. */
    prof = start((size_t)64 << 20);
    double blk[MEM_BLOCKS], rss_early = 0, rss_before = rss_mib();
    size_t peak_chunks = 0;
    uint64_t dropped = 0, d; /* drops at the cap: must stay 0 for an honest run */
    for (int b = 0; b < MEM_BLOCKS; b++) {
        double t0 = now_ns();
        run_pairs(MEM_BLOCK, 1);
        size_t in_use = sp__record_bytes_in_use();
        sp__record_drain(UINT64_MAX, NULL, NULL, &d, NULL);
        blk[b] = (now_ns() - t0) / MEM_BLOCK;
        dropped += d;
        if (in_use > peak_chunks) peak_chunks = in_use;
        if (b == 9) rss_early = rss_mib();
    }
    double rss_late = rss_mib();
    sp_profiler_destroy(prof);
    stats s_early = summarize(blk, 10), s_late = summarize(blk + MEM_BLOCKS - 10, 10);
    double rss_ratio = rss_late / rss_early, cost_ratio = s_late.median / s_early.median;

    printf("stepprof scaling, %d trials; work() = %u mul-adds; clock: %s\n", TRIALS, work_iters,
           sp__clock_tsc ? "invariant TSC" : "CLOCK_MONOTONIC_RAW");
    printf("%-30s %9s %9s %9s\n", "figure", "median", "min", "max");
    row("work alone (ns/iter)", s_base, "ns", 0);
    row("work in a range (ns/iter)", s_rec, "ns", 0);
    row("amortized cost per range", s_amort, "ns", 2.0);
    row("pair cost, 1 thread", s_mean[0], "ns", 0);
    row("pair cost, 2 threads (each)", s_mean[1], "ns", 0);
    row("pair cost, 4 threads (each)", s_mean[2], "ns", 0);
    row("  worst thread of 2", s_worst[1], "ns", 0);
    row("  worst thread of 4", s_worst[2], "ns", 0);
    row("2 threads / 1 thread", s_ratio[1], "x", 1.2);
    row("4 threads / 1 thread (info)", s_ratio[2], "x", 0);
    row("control: work() alone, 2t / 1t", s_ctl, "x", 0);
    row("bytes per range event", one(bytes_range), "B", 24.0);
    row("bytes per instant (info)", one(bytes_instant), "B", 0);
    row("ns/range, first 10M", s_early, "ns", 0);
    row("ns/range, last 10M", s_late, "ns", 0);
    row("late / early cost", one(cost_ratio), "x", 1.10);
    printf("%-30s %9.2f MiB before, %.2f after 10M, %.2f after 100M; chunks peak %.1f MiB, %llu dropped\n",
           "RSS", rss_before, rss_early, rss_late, peak_chunks / 1048576.0, (unsigned long long)dropped);
    row("late / early RSS", one(rss_ratio), "x", 1.10);
    printf("%d target(s) missed\n\n", fails);

    const struct { const char *name; double v; const char *unit; } m[] = {
        {"amortized_ns_per_range", s_amort.median, "ns"}, {"work_alone_ns", s_base.median, "ns"},
        {"pair_ns_1t", s_mean[0].median, "ns"}, {"pair_ns_2t", s_mean[1].median, "ns"},
        {"pair_ns_4t", s_mean[2].median, "ns"}, {"pair_ns_2t_worst", s_worst[1].median, "ns"},
        {"pair_ns_4t_worst", s_worst[2].median, "ns"}, {"scaling_ratio_2t", s_ratio[1].median, "x"},
        {"scaling_ratio_4t", s_ratio[2].median, "x"}, {"control_ratio_2t", s_ctl.median, "x"},
        {"bytes_per_range_event", bytes_range, "B"}, {"bytes_per_instant_event", bytes_instant, "B"},
        {"ns_per_range_first10M", s_early.median, "ns"}, {"ns_per_range_last10M", s_late.median, "ns"},
        {"cost_ratio_late_early", cost_ratio, "x"}, {"rss_early_mib", rss_early, "MiB"},
        {"rss_late_mib", rss_late, "MiB"}, {"rss_ratio_late_early", rss_ratio, "x"},
        {"peak_chunk_mib", peak_chunks / 1048576.0, "MiB"}, {"dropped_events", (double)dropped, "events"},
        {"targets_missed", fails, "count"}, {"wall_s", (now_ns() - t_start) / 1e9, "s"}};
    for (size_t k = 0; k < sizeof m / sizeof *m; k++)
        printf("metric %s %.6g %s\n", m[k].name, m[k].v, m[k].unit);
    return 0;
}

/* bench_gpu.cu: what GPU tracing costs a launch-bound loop. Each trial
 * launches LAUNCHES empty kernels back to back, each inside an Operator
 * range as a framework would mark it, then waits for the device; the figure
 * is the wall time per launch, median (min, max) over TRIALS trials, in
 * three runs:
 *
 *   untraced     no profiler exists (a range call is one load and a branch)
 *   traced       stepprof records with SP_TARGET_CPU | SP_TARGET_GPU (CUPTI)
 *   traced_cpu   stepprof records with SP_TARGET_CPU only
 *
 * A traced trial is one recorded step; the step before it is READY and runs
 * a short untimed warm-up, and collecting the span (no file is written)
 * happens between trials, outside the timing. Output, for bench/report.py:
 *
 *   metric gpu_launch_untraced <ns> ns min <v> max <v>
 *   metric gpu_launch_traced <ns> ns min <v> max <v>
 *   metric gpu_launch_traced_cpu <ns> ns min <v> max <v>
 *   metric gpu_trace_overhead <traced / untraced> x
 *
 * and the same three runs of a compute-bound loop (`compute`): each trial
 * launches COMPUTE_LAUNCHES kernels that keep every SM busy for about half a
 * millisecond (a chain of FMAs per thread), each in an Operator range, so
 * the launch cost hides behind the kernels; the target is 1.01x at most:
 *
 *   metric gpu_compute_untraced <ns> ns min <v> max <v>   (per kernel)
 *   metric gpu_compute_traced <ns> ns min <v> max <v>
 *   metric gpu_compute_traced_cpu <ns> ns min <v> max <v>
 *   metric gpu_compute_overhead <traced / untraced> x
 *
 * `bench_gpu launch` or `bench_gpu compute` runs one loop; no argument, both.
 *
 * Without a usable CUDA device it says so and exits 77. If stepprof could
 * not trace the GPU (no CUPTI, another CUPTI subscriber), the traced
 * figures would measure nothing, so it prints stepprof's warning instead of
 * them and exits 1. */
#include <stepprof/stepprof.h>

#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { TRIALS = 20, LAUNCHES = 10000, WARMUP_LAUNCHES = 1000 };
enum { COMPUTE_TRIALS = 10, COMPUTE_LAUNCHES = 40, COMPUTE_WARMUP = 4, COMPUTE_FMAS = 1 << 16 };

static void cuda_check(cudaError_t err, const char *what)
{
    if (err == cudaSuccess) return;
    fprintf(stderr, "bench_gpu: %s failed: %s\n", what, cudaGetErrorString(err));
    exit(1);
}
#define CK(call) cuda_check((call), #call)

__global__ void empty_kernel(void) {}

/* COMPUTE_FMAS dependent FMAs per thread; the store (never taken for the
 * inputs used) keeps the compiler from dropping the loop. */
__global__ void compute_kernel(float seed, float *sink)
{
    float a = seed + (float)threadIdx.x, b = 0.999f;
    for (int i = 0; i < COMPUTE_FMAS; i++)
        a = fmaf(a, b, 0.001f);
    if (a == 12345.678f) sink[threadIdx.x] = a;
}

static int compute_blocks; /* 8 blocks of 256 threads per SM: every SM full */
static float *compute_sink;

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

/* The loop measured: empty kernels (launch-bound) or compute kernels. */
typedef struct loop {
    const char *name, *metric_prefix, *unit_text;
    int trials, launches, warmup, compute;
} loop;

static const loop LAUNCH_LOOP = {
    "launch", "gpu_launch", "empty-kernel launches", TRIALS, LAUNCHES, WARMUP_LAUNCHES, 0};
static const loop COMPUTE_LOOP = {"compute",
                                  "gpu_compute",
                                  "compute kernels (about 0.5 ms each)",
                                  COMPUTE_TRIALS,
                                  COMPUTE_LAUNCHES,
                                  COMPUTE_WARMUP,
                                  1};

/* Launches n kernels of the loop's kind, each in an Operator range, and
 * waits for them; returns ns per launch. */
static double launch_loop(const loop *l, int n)
{
    CK(cudaDeviceSynchronize());
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        sp_range_begin(SP_EVENT_OPERATOR, l->name);
        if (l->compute)
            compute_kernel<<<compute_blocks, 256>>>(1.0f, compute_sink);
        else
            empty_kernel<<<1, 32>>>();
        sp_range_end();
    }
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    return (now_ns() - t0) / n;
}

typedef struct stats {
    double median, min, max;
} stats;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stats stats_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    stats s;
    s.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
    s.min = v[0];
    s.max = v[n - 1];
    return s;
}

static void metric(const char *name, stats s)
{
    printf("metric %s %.1f ns min %.1f max %.1f\n", name, s.median, s.min, s.max);
}

/* stepprof's warnings, the latest kept for the report: a GPU target that
 * could not be had is announced here. */
static char last_warning[512];
static int warnings;

static void log_warning(sp_log_level level, const char *message, void *user)
{
    (void)level;
    (void)user;
    warnings++;
    snprintf(last_warning, sizeof last_warning, "%s", message);
    fprintf(stderr, "bench_gpu: stepprof: %s\n", message);
}

/* Kernel launches seen in a result: the Calls column of the Kernel Summary,
 * or 0 when the span has no Kernel Summary (no device records). */
static long traced_kernels(const sp_result *result)
{
    sp_summary_table *t = NULL;
    if (!result || sp_result_summary_table(result, SP_VIEW_KERNEL, NULL, &t) != SP_OK || !t)
        return 0;
    long calls = 0;
    size_t col = (size_t)-1;
    for (size_t i = 0; i < sp_summary_table_lines(t); i++) {
        sp_line_kind kind = sp_summary_table_line_kind(t, i);
        if (kind == SP_LINE_HEADER && col == (size_t)-1) {
            for (size_t c = 0; c < sp_summary_table_columns(t); c++)
                if (strcmp(sp_summary_table_cell(t, i, c), "Calls") == 0) col = c;
        } else if (kind == SP_LINE_ROW && col != (size_t)-1) {
            calls += strtol(sp_summary_table_cell(t, i, col), NULL, 10);
        }
    }
    sp_summary_table_destroy(t);
    return calls > 0 ? calls : 1; /* a table without a Calls column still means kernels */
}

/* Runs the loop's traced trials with the given targets into out[]. Returns
 * 0, or -1 if stepprof failed; *kernels gets what the last span traced. */
static int traced_trials(const loop *l, unsigned targets, double *out, long *kernels)
{
    sp_options o;
    sp_options_init(&o);
    o.targets = targets;
    o.on_trace_ready = sp_handler_none();
    o.log = log_warning;
    o.buffer_cap_bytes = (size_t)256 << 20;
    sp_profiler *prof = NULL;
    /* closed 0, ready 1, record 1, forever: steps alternate READY and
     * RECORD_AND_RETURN, and each recorded step is collected as its own span. */
    sp_status st = sp_scheduler_make(&o.scheduler, 0, 1, 1, 0, 0);
    if (st == SP_OK) st = sp_profiler_create(&o, &prof);
    if (st == SP_OK) st = sp_profiler_start(prof);
    for (int t = 0; st == SP_OK && t < l->trials; t++) {
        launch_loop(l, l->warmup); /* READY */
        st = sp_profiler_step(prof, -1);
        if (st != SP_OK) break;
        out[t] = launch_loop(l, l->launches); /* RECORD_AND_RETURN */
        st = sp_profiler_step(prof, -1);
    }
    if (st == SP_OK) st = sp_profiler_stop(prof);
    if (st == SP_OK) *kernels = traced_kernels(sp_profiler_result(prof));
    if (st != SP_OK) fprintf(stderr, "bench_gpu: stepprof failed: %s\n", sp_last_error());
    sp_profiler_destroy(prof);
    return st == SP_OK ? 0 : -1;
}

static void metric_named(const loop *l, const char *suffix, stats s)
{
    char name[64];
    snprintf(name, sizeof name, "%s_%s", l->metric_prefix, suffix);
    metric(name, s);
}

/* The three runs of one loop and their metrics. Returns 0, or 1 when
 * stepprof failed or its GPU target traced nothing. */
static int measure(const loop *l, const char *device)
{
    printf("bench_gpu: %s; %d trials x %d %s, each in an Operator range\n", device, l->trials,
           l->launches, l->unit_text);
    launch_loop(l, l->warmup); /* context, module load, clocks */

    double untraced[TRIALS], traced[TRIALS], traced_cpu[TRIALS]; /* TRIALS: the most trials */
    for (int t = 0; t < l->trials; t++)
        untraced[t] = launch_loop(l, l->launches);

    long kernels_cpu = 0, kernels_gpu = 0;
    if (traced_trials(l, SP_TARGET_CPU, traced_cpu, &kernels_cpu) != 0) return 1;
    int warnings_before = warnings;
    if (traced_trials(l, SP_TARGET_CPU | SP_TARGET_GPU, traced, &kernels_gpu) != 0) return 1;

    stats u = stats_of(untraced, l->trials), c = stats_of(traced_cpu, l->trials);
    printf("%-26s %10s %10s %10s   (ns per launch)\n", "loop", "median", "min", "max");
    printf("%-26s %10.1f %10.1f %10.1f\n", "untraced", u.median, u.min, u.max);
    printf("%-26s %10.1f %10.1f %10.1f\n", "traced, CPU target only", c.median, c.min, c.max);
    if (kernels_gpu == 0) {
        printf("bench_gpu: the GPU target traced no kernels%s%s; no traced figures\n",
               warnings > warnings_before ? ": " : "",
               warnings > warnings_before ? last_warning : "");
        metric_named(l, "untraced", u);
        metric_named(l, "traced_cpu", c);
        return 1;
    }
    stats g = stats_of(traced, l->trials);
    printf("%-26s %10.1f %10.1f %10.1f\n", "traced, CPU + GPU targets", g.median, g.min, g.max);
    printf("kernels in the last traced span: %ld (launched %d)\n", kernels_gpu, l->launches);
    metric_named(l, "untraced", u);
    metric_named(l, "traced", g);
    metric_named(l, "traced_cpu", c);
    /* gpu_trace_overhead: the launch-bound ratio's name since before the compute loop. */
    printf("metric %s %.3f x\n", l->compute ? "gpu_compute_overhead" : "gpu_trace_overhead",
           g.median / u.median);
    return 0;
}

int main(int argc, char **argv)
{
    int launch = 1, compute = 1;
    if (argc == 2 && strcmp(argv[1], "launch") == 0) {
        compute = 0;
    } else if (argc == 2 && strcmp(argv[1], "compute") == 0) {
        launch = 0;
    } else if (argc != 1) {
        fprintf(stderr, "usage: bench_gpu [launch|compute]\n");
        return 2;
    }
    int devices = 0;
    cudaError_t err = cudaGetDeviceCount(&devices);
    if (err != cudaSuccess || devices == 0) {
        printf("bench_gpu: no usable CUDA device (%s); skipped\n",
               err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        return 77;
    }
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    compute_blocks = 8 * prop.multiProcessorCount;
    CK(cudaMalloc(&compute_sink, 256 * sizeof *compute_sink));
    int rc = 0;
    if (launch) rc |= measure(&LAUNCH_LOOP, prop.name);
    if (compute) rc |= measure(&COMPUTE_LOOP, prop.name);
    CK(cudaFree(compute_sink));
    return rc;
}

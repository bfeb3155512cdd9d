/* live_gpu.c: runs stepprof's GPU path end to end over the test doubles of
 * libcuda and libcupti (fake_gpu.h), through the public API only, as a CUDA
 * training program would: the driver is loaded first, then a profiler with
 * the GPU target records a few steps whose typed ranges launch known work,
 * prints its summary and exports a JSON trace. check_live_trace.py runs it
 * (one scenario per process, since CUPTI refusals are remembered per
 * process) and holds the trace against what it says it launched.
 *
 * Usage: live_gpu SCENARIO OUT_DIR. Scenarios: "live", "cupti_dropped",
 * "realtime_clock", "clock_skew", the refusals ("refuse_multiple",
 * "refuse_privileges", "old_version", "no_device"; the FAKE_* environment
 * makes them refuse) all run the training steps; "pool_full" floods CUPTI's
 * buffers in one step ("pool_full_null" too, with a CUPTI that takes no
 * buffer). "realtime_clock" and "clock_skew" (CUPTI's clock on
 * CLOCK_REALTIME, not stepprof's) idle PAD_NS after the start and before
 * the stop, so that no record leaves the span by the small disagreement of
 * the two clocks. In "clock_skew" CUPTI's clock runs ahead by a skew picked
 * after the steps ran (fake_gpu_set_skew): longer than they took, so that
 * every call lands after the end of every range, however slowly the steps
 * ran; the stop then waits until the skewed records lie in the span.
 * Nothing here depends on how fast the machine is.
 *
 * Output, for the checker: one "launch kind=K corr=N name=S range=R op=O
 * step=I" line per launch (op "-" outside an Operator range; I counts the
 * steps from 0), every GPU warning as
 * "warning: ...", the summary, the summary of the exported trace loaded
 * back, and last
 * "live_gpu: scenario=... <figure>=<n> ... skew_ns=N trace=PATH". Exits 0 when the
 * run completed (the checks are the checker's), 1 on a failed call. */
#include "fake_gpu.h"

#include <stepprof/stepprof.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { STEPS = 3, SPIN_NS = 200000, HTOD = 1, DTOH = 2, CBID_GET_DEVICE = 17, PAD_NS = 5000000 };
enum { POOL_BUFFERS = 4, BUFFER_BYTES = 4 << 20, DISCARD_BYTES = 256 << 10 };

static struct {
    fake_gpu_launch_kernel_fn launch_kernel;
    fake_gpu_memcpy_fn memcpy_;
    fake_gpu_memset_fn memset_;
    fake_gpu_api_call_fn api_call;
    fake_gpu_counts_get_fn counts_get;
    fake_gpu_launches_per_buffer_fn launches_per_buffer;
    fake_gpu_set_skew_fn set_skew;
    fake_cuda_synchronize_count_fn synchronize_count;
} fake;

static struct {
    unsigned kernels, memcpys, memsets, noisy, gpu_warnings, warnings;
    int step;
} ran;

static void *need(void *lib, const char *name)
{
    void *p = dlsym(lib, name);
    if (!p) {
        fprintf(stderr, "live_gpu: %s: %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

/* Function pointers from dlsym: POSIX gives them void *'s representation. */
#define RESOLVE(lib, slot, name)                    \
    do {                                            \
        void *p_ = need(lib, name);                 \
        memcpy(&fake.slot, &p_, sizeof fake.slot);  \
    } while (0)

static void open_fakes(void)
{
    /* The application's own driver, loaded before the profiler exists. */
    void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
    /* The instance stepprof loads (or will load): the same path, one copy. */
    void *cupti = dlopen("libcupti.so", RTLD_NOW);
    if (!cuda || !cupti) {
        fprintf(stderr, "live_gpu: the fake libraries are not on LD_LIBRARY_PATH: %s\n", dlerror());
        exit(1);
    }
    RESOLVE(cuda, synchronize_count, "fake_cuda_synchronize_count");
    RESOLVE(cupti, launch_kernel, "fake_gpu_launch_kernel");
    RESOLVE(cupti, memcpy_, "fake_gpu_memcpy");
    RESOLVE(cupti, memset_, "fake_gpu_memset");
    RESOLVE(cupti, api_call, "fake_gpu_api_call");
    RESOLVE(cupti, counts_get, "fake_gpu_counts_get");
    RESOLVE(cupti, launches_per_buffer, "fake_gpu_launches_per_buffer");
    RESOLVE(cupti, set_skew, "fake_gpu_set_skew");
}

/* Warnings are printed for the checker, and the GPU refusals counted. */
static void on_log(sp_log_level level, const char *message, void *user)
{
    (void)level, (void)user;
    ran.warnings++;
    if (strstr(message, "Profiling GPU is not supported in current context: ")) ran.gpu_warnings++;
    printf("warning: %s\n", message);
}

static void kernel(const char *name, const char *range, const char *op)
{
    static const uint32_t grid[3] = {64, 2, 1}, block[3] = {256, 1, 1};
    uint32_t corr = fake.launch_kernel(name, SPIN_NS, grid, block);
    ran.kernels++;
    printf("launch kind=kernel corr=%u name=%s range=%s op=%s step=%d\n", corr, name, range,
           op ? op : "-", ran.step);
}

static void copy(unsigned kind, const char *range)
{
    uint32_t corr = fake.memcpy_(kind, 1 << 20);
    ran.memcpys++;
    printf("launch kind=memcpy corr=%u name=%s range=%s op=- step=%d\n", corr,
           kind == HTOD ? "HtoD" : "DtoH", range, ran.step);
}

static void set(const char *range)
{
    uint32_t corr = fake.memset_(4096, 0);
    ran.memsets++;
    printf("launch kind=memset corr=%u name=MEMSET range=%s op=- step=%d\n", corr, range, ran.step);
}

/* One training step: 5 kernels (one of them inside an Operator), 2 copies,
 * 1 memset, and one noisy call that must not reach the trace. */
static void train_step(void)
{
    sp_range_begin(SP_EVENT_FORWARD, "Forward");
    copy(HTOD, "Forward");
    sp_range_begin(SP_EVENT_OPERATOR, "matmul");
    kernel("fake_matmul", "Forward", "matmul");
    sp_range_end();
    kernel("fake_relu", "Forward", NULL);
    sp_range_end();

    sp_range_begin(SP_EVENT_BACKWARD, "Backward");
    kernel("fake_relu_grad", "Backward", NULL);
    kernel("fake_matmul_grad", "Backward", NULL);
    fake.api_call(CBID_GET_DEVICE);
    ran.noisy++;
    sp_range_end();

    sp_range_begin(SP_EVENT_OPTIMIZATION, "Optimization");
    set("Optimization");
    kernel("fake_sgd", "Optimization", NULL);
    copy(DTOH, "Optimization");
    sp_range_end();
}

/* Fills the tracer's pool (4 x 4 MiB) and half its 256 KiB discard buffer
 * in one step, faster than its flush thread usually returns buffers; half,
 * so that the discard buffer is never handed out twice at once (its count
 * would then be an estimate). Launched outside any range, so that no
 * external correlation record is emitted and every record emitted is
 * either kept or counted. The launches are not printed: there are tens of
 * thousands. */
static void flood_step(void)
{
    uint64_t n = POOL_BUFFERS * fake.launches_per_buffer(BUFFER_BYTES) +
                 fake.launches_per_buffer(DISCARD_BYTES) / 2;
    for (uint64_t i = 0; i < n; i++) fake.launch_kernel("fake_flood", 0, NULL, NULL);
    ran.kernels += (unsigned)n;
}

static void idle(long ns)
{
    struct timespec t = {ns / 1000000000L, ns % 1000000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

static int64_t realtime_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Idles until CLOCK_REALTIME reaches until_ns. */
static void idle_until(int64_t until_ns)
{
    for (int64_t now = realtime_ns(); now < until_ns; now = realtime_ns()) idle(until_ns - now);
}

static int fail(const char *what, sp_status s)
{
    fprintf(stderr, "live_gpu: %s: %s (%s)\n", what, sp_status_str(s), sp_last_error());
    return 1;
}

/* After a stop, CUPTI's one subscriber slot is free for another client
 * (torch.profiler in the same process), and a later start takes it back:
 * another client subscribes and leaves, then a span records one kernel,
 * written to <dir>/live_gpu.handover.json. Prints
 * "live_gpu_handover: subscribe=<CUptiResult> trace=<path>". */
static int handover(sp_profiler *prof, const char *dir)
{
    typedef int (*subscribe_fn)(void **, void *, void *);
    typedef int (*unsubscribe_fn)(void *);
    void *cupti = dlopen("libcupti.so", RTLD_NOW | RTLD_NOLOAD);
    if (!cupti) return 1;
    subscribe_fn subscribe;
    unsubscribe_fn unsubscribe;
    void *p = need(cupti, "cuptiSubscribe");
    memcpy(&subscribe, &p, sizeof p);
    p = need(cupti, "cuptiUnsubscribe");
    memcpy(&unsubscribe, &p, sizeof p);
    void *other = NULL;
    int r = subscribe(&other, NULL, NULL);
    if (r == 0) unsubscribe(other);
    sp_status s = sp_profiler_start(prof);
    if (s != SP_OK) return fail("sp_profiler_start (again)", s);
    static const uint32_t grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
    sp_range_begin(SP_EVENT_OPERATOR, "after_handover");
    fake.launch_kernel("fake_after_handover", SPIN_NS, grid, block);
    sp_range_end();
    if ((s = sp_profiler_stop(prof)) != SP_OK) return fail("sp_profiler_stop (again)", s);
    char trace[4096];
    snprintf(trace, sizeof trace, "%s/live_gpu.handover.json", dir);
    if ((s = sp_profiler_export(prof, trace, SP_FORMAT_JSON)) != SP_OK) return fail("sp_profiler_export", s);
    printf("live_gpu_handover: subscribe=%d trace=%s\n", r, trace);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: live_gpu SCENARIO OUT_DIR\n");
        return 2;
    }
    const char *scenario = argv[1];
    int flood = strncmp(scenario, "pool_full", 9) == 0;
    int skew = strcmp(scenario, "clock_skew") == 0;
    int pad = skew || strcmp(scenario, "realtime_clock") == 0;
    int64_t skew_ns = 0;
    char trace[4096];
    snprintf(trace, sizeof trace, "%s/live_gpu.%s.json", argv[2], scenario);
    open_fakes();

    sp_options opts;
    sp_options_init(&opts);
    opts.targets = SP_TARGET_CPU | SP_TARGET_GPU;
    opts.on_trace_ready = sp_handler_none();
    opts.log = on_log;
    sp_profiler *prof = NULL;
    sp_status s = sp_profiler_create(&opts, &prof);
    if (s != SP_OK) return fail("sp_profiler_create", s);
    if ((s = sp_profiler_start(prof)) != SP_OK) return fail("sp_profiler_start", s);
    if (pad) idle(PAD_NS);
    int64_t first_ns = realtime_ns(); /* before the first call */
    for (ran.step = 0; ran.step < (flood ? 1 : STEPS); ran.step++) {
        if (flood)
            flood_step();
        else
            train_step();
        if ((s = sp_profiler_step(prof, -1)) != SP_OK) return fail("sp_profiler_step", s);
    }
    if (skew) {
        /* Every range has ended by now: a call made at t >= first_ns lands
         * at t + skew > now + margin, after all of them. The margin (5 ms
         * and 20% of the run) is above what host ticks mapped to
         * CLOCK_REALTIME may disagree with it, even while chrony slews the
         * clock at its fastest (8.3%). */
        int64_t now = realtime_ns();
        skew_ns = now - first_ns + PAD_NS + (now - first_ns) / 5;
        if (fake.set_skew(skew_ns) != 0) {
            fprintf(stderr, "live_gpu: records were delivered before the skew was set\n");
            return 1;
        }
        idle_until(now + skew_ns + PAD_NS + (now - first_ns) / 5);
    } else if (pad) {
        idle(PAD_NS);
    }
    if ((s = sp_profiler_stop(prof)) != SP_OK) return fail("sp_profiler_stop", s);
    const sp_result *r = sp_profiler_result(prof);
    if (!r) return fail("sp_profiler_result", SP_ENODATA);
    printf("== summary\n");
    fflush(stdout);
    if ((s = sp_result_summary(r, NULL, stdout)) != SP_OK) return fail("sp_result_summary", s);
    printf("== end of summary\n");
    if ((s = sp_profiler_export(prof, trace, SP_FORMAT_JSON)) != SP_OK) return fail("sp_profiler_export", s);
    /* The trace read back: its summary should be the live one, line for line. */
    sp_result *loaded = NULL;
    if ((s = sp_result_load(trace, NULL, &loaded)) != SP_OK) return fail("sp_result_load", s);
    printf("== reloaded summary\n");
    fflush(stdout);
    s = sp_result_summary(loaded, NULL, stdout);
    sp_result_release(loaded);
    if (s != SP_OK) return fail("sp_result_summary (reloaded)", s);
    printf("== end of reloaded summary\n");

    fake_gpu_counts c;
    fake.counts_get(&c);
    printf("live_gpu: scenario=%s kernels=%u memcpys=%u memsets=%u noisy=%u spin_ns=%d "
           "gpu_warnings=%u warnings=%u emitted_runtime=%llu emitted_driver=%llu "
           "emitted_kernels=%llu emitted_memcpys=%llu emitted_memsets=%llu "
           "emitted_external=%llu fake_dropped=%llu suppressed=%llu disabled_cbids=%llu "
           "buffers_requested=%llu buffers_delivered=%llu client_clock=%llu synchronize=%llu "
           "cupti_dropped=%llu discarded_records=%llu zero_timestamp=%llu out_of_window=%llu "
           "unattributed=%llu clock_mismatch=%llu straddling_runtime=%llu skew_ns=%lld trace=%s\n",
           scenario, ran.kernels, ran.memcpys, ran.memsets, ran.noisy, flood ? 0 : SPIN_NS,
           ran.gpu_warnings, ran.warnings, (unsigned long long)c.runtime,
           (unsigned long long)c.driver, (unsigned long long)c.kernels,
           (unsigned long long)c.memcpys, (unsigned long long)c.memsets,
           (unsigned long long)c.external, (unsigned long long)c.dropped,
           (unsigned long long)c.suppressed, (unsigned long long)c.disabled_cbids,
           (unsigned long long)c.buffers_requested, (unsigned long long)c.buffers_delivered,
           (unsigned long long)c.client_clock, (unsigned long long)fake.synchronize_count(),
           (unsigned long long)sp_result_counter(r, SP_COUNTER_CUPTI_DROPPED),
           (unsigned long long)sp_result_counter(r, SP_COUNTER_DISCARDED_RECORDS),
           (unsigned long long)sp_result_counter(r, SP_COUNTER_ZERO_TIMESTAMP),
           (unsigned long long)sp_result_counter(r, SP_COUNTER_OUT_OF_WINDOW),
           (unsigned long long)sp_result_counter(r, SP_COUNTER_UNATTRIBUTED),
           (unsigned long long)sp_result_counter(r, SP_COUNTER_CLOCK_MISMATCH),
           (unsigned long long)sp_result_counter(r, SP_COUNTER_STRADDLING_RUNTIME),
           (long long)skew_ns, trace);
    if (strcmp(scenario, "live") == 0 && handover(prof, argv[2]) != 0) return 1;
    sp_profiler_destroy(prof);
    return 0;
}

/* bench_summary.c: the cost of summarizing a large span (issue 3: 10 million
 * events in under 2 s), beside a memory-bandwidth floor on the same data.
 * A synthetic result shaped like a training run is built in memory as
 * tests/fixture.h does (events in order, then sp__tree_build per thread):
 * 4 threads, each a run of ProfileStep ranges holding Dataloader, Forward
 * (PythonUserDefined layers of operators), Backward and Optimization, every
 * Operator with two OperatorInner children; a few hundred distinct names.
 * Each figure is the median (with min and max) over TRIALS runs of:
 *   model      sp__model_build + sp__model_fini
 *   summary    sp_result_summary, default options, to /dev/null
 *   floor      one linear pass summing every event's duration (baseline)
 * and, on a span of REPORT_EVENTS built the same way, the HTML report
 * (sp_result_report, to a file) against the summary of that span: the
 * report builds the same model and tables, then the page.
 * Ratios are against the floor measured in the same run, since the machines
 * are shared and absolute times drift.
 *
 * CMake (bench/CMakeLists.txt):
 *   add_executable(bench_summary bench_summary.c)
 *   target_link_libraries(bench_summary PRIVATE stepprof_static m)
 *   target_include_directories(bench_summary PRIVATE ${PROJECT_SOURCE_DIR}/src/sys
 *     ${PROJECT_SOURCE_DIR}/src/record ${PROJECT_SOURCE_DIR}/src/collect
 *     ${PROJECT_SOURCE_DIR}/src/analyze)
 *   target_compile_options(bench_summary PRIVATE ${SP_WARNINGS} -O2)
 *   target_compile_definitions(bench_summary PRIVATE _GNU_SOURCE)
 */
#include "collect.h"
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define TRIALS 3
#define THREADS 4
#define EVENTS 10000000u
#define REPORT_EVENTS 1000000u
#define OPS 32 /* forward operator kinds; each also has a _grad kind */
#define LAYERS 40
#define OPTIM 4

static const char *const op_base[OPS] = {
    "matmul_v2", "conv2d", "relu", "softmax", "layer_norm", "elementwise_add", "dropout",
    "reshape2", "transpose2", "gelu", "batch_norm", "pool2d", "concat", "split", "slice",
    "scale", "elementwise_mul", "reduce_mean", "reduce_sum", "cast", "embedding", "lookup_table_v2",
    "fill_constant", "unsqueeze2", "squeeze2", "flatten_contiguous_range", "sigmoid", "tanh",
    "cross_entropy_with_softmax", "top_k_v2", "accuracy", "where"};
static const char *const optim_base[OPTIM] = {"adamw", "check_finite_and_unscale",
                                              "update_loss_scaling", "clip_by_norm"};

/* Name ids: operators 0..OPS-1 forward, OPS..2*OPS-1 grad, then optimizers. */
#define KINDS (2 * OPS + OPTIM)
typedef struct names {
    uint32_t op[KINDS], inner[KINDS][2], layer[LAYERS];
    uint32_t dataloader, forward, backward, optim, *step;
    size_t steps;
} names;

typedef struct gen {
    sp__thread *t;
    const names *ids;
    int64_t now;
    uint64_t rng;
} gen;

static uint32_t intern(sp_result *r, const char *fmt, const char *a, int b)
{
    char buf[96];
    int n = a ? snprintf(buf, sizeof buf, fmt, a) : snprintf(buf, sizeof buf, fmt, b);
    return sp__names_from_bytes(&r->names, buf, (size_t)n);
}

static uint32_t rnd(gen *g, uint32_t below)
{
    g->rng ^= g->rng << 13;
    g->rng ^= g->rng >> 7;
    g->rng ^= g->rng << 17;
    return (uint32_t)(g->rng >> 32) % below;
}

/* Opens a range at now (SIZE_MAX once the thread is full: then nothing more
 * is added, and the ranges already open still close, so nesting holds). */
static size_t open_range(gen *g, uint32_t name, sp_event_type type)
{
    if (g->t->count == g->t->cap) return SIZE_MAX;
    sp__event *e = &g->t->events[g->t->count];
    e->start_ns = g->now;
    e->name = name;
    e->type = (uint8_t)type;
    e->parent = -1;
    g->now += 50 + rnd(g, 200);
    return g->t->count++;
}

static void end_range(gen *g, size_t i, uint32_t work_ns)
{
    g->now += work_ns;
    if (i != SIZE_MAX) g->t->events[i].end_ns = g->now;
    g->now += 20 + rnd(g, 100);
}

static void gen_op(gen *g, int kind)
{
    size_t o = open_range(g, g->ids->op[kind], SP_EVENT_OPERATOR);
    for (int k = 0; k < 2; k++) {
        size_t i = open_range(g, g->ids->inner[kind][k], SP_EVENT_OPERATOR_INNER);
        end_range(g, i, k ? 1000 + rnd(g, 30000) : 300 + rnd(g, 700));
    }
    end_range(g, o, 100);
}

static void gen_step(gen *g, size_t step)
{
    const names *ids = g->ids;
    size_t s = open_range(g, ids->step[step], SP_EVENT_PROFILE_STEP);
    size_t d = open_range(g, ids->dataloader, SP_EVENT_DATALOADER);
    end_range(g, d, 200000 + rnd(g, 2000000));
    size_t f = open_range(g, ids->forward, SP_EVENT_FORWARD);
    int layers = 120 + (int)rnd(g, 60);
    for (int l = 0; l < layers; l++) {
        size_t u = open_range(g, ids->layer[rnd(g, LAYERS)], SP_EVENT_PYTHON_USER_DEFINED);
        for (int k = 4 + (int)rnd(g, 5); k > 0; k--) gen_op(g, (int)rnd(g, OPS));
        end_range(g, u, 500);
    }
    end_range(g, f, 1000);
    size_t b = open_range(g, ids->backward, SP_EVENT_BACKWARD);
    for (int k = 1000 + (int)rnd(g, 400); k > 0; k--) gen_op(g, OPS + (int)rnd(g, OPS));
    end_range(g, b, 1000);
    size_t o = open_range(g, ids->optim, SP_EVENT_OPTIMIZATION);
    for (int k = 500 + (int)rnd(g, 200); k > 0; k--) gen_op(g, 2 * OPS + (int)rnd(g, OPTIM));
    end_range(g, o, 1000);
    end_range(g, s, 5000);
}

static sp_result *build_result(size_t events)
{
    sp_result *r = sp__result_new();
    names ids;
    if (!r) return NULL;
    ids.steps = events / THREADS / 9000 + 64; /* a step is ~8,500 events */
    ids.step = malloc(sizeof *ids.step * ids.steps);
    r->threads = sp__alloc(sizeof *r->threads * THREADS);
    if (!ids.step || !r->threads) goto fail;
    for (int k = 0; k < KINDS; k++) {
        const char *base = k < 2 * OPS ? op_base[k % OPS] : optim_base[k - 2 * OPS];
        char op[64];
        snprintf(op, sizeof op, k >= OPS && k < 2 * OPS ? "%s_grad" : "%s", base);
        ids.op[k] = intern(r, "%s", op, 0);
        ids.inner[k][0] = intern(r, "%s infer_shape", op, 0);
        ids.inner[k][1] = intern(r, "%s compute", op, 0);
    }
    for (int l = 0; l < LAYERS; l++) ids.layer[l] = intern(r, "TransformerLayer_%d", NULL, l);
    for (size_t s = 0; s < ids.steps; s++) ids.step[s] = intern(r, "ProfileStep#%d", NULL, (int)s);
    ids.dataloader = intern(r, "%s", "Dataloader", 0);
    ids.forward = intern(r, "%s", "Forward", 0);
    ids.backward = intern(r, "%s", "Backward", 0);
    ids.optim = intern(r, "%s", "Optimization", 0);
    int64_t t0 = 1700000000000000000;
    r->span_start_ns = r->span_end_ns = t0;
    for (int i = 0; i < THREADS; i++) {
        sp__thread *t = &r->threads[r->thread_count++];
        t->tid = 1000 + (uint64_t)i;
        t->name = intern(r, i ? "Thread-%d" : "MainThread", NULL, i);
        t->cap = events / THREADS + (i < (int)(events % THREADS));
        t->events = sp__alloc(sizeof *t->events * t->cap);
        if (!t->events) goto fail;
        gen g = {t, &ids, t0 + 1000 * i, 0x9e3779b97f4a7c15ull + (uint64_t)i};
        for (size_t s = 0; t->count < t->cap; s++) gen_step(&g, s < ids.steps ? s : ids.steps - 1);
        r->counters[SP_COUNTER_OVERLAP] += sp__tree_build(t->events, t->count);
        if (g.now > r->span_end_ns) r->span_end_ns = g.now;
    }
    free(ids.step);
    return r;
fail:
    free(ids.step);
    sp__result_free(r);
    return NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const sp_result *subject;
static FILE *devnull;
static volatile int64_t sink;
static int failures;

static void run_model(void)
{
    sp__model m;
    failures += sp__model_build(&m, subject) != 0;
    sink = m.T;
    sp__model_fini(&m);
}

static void run_summary(void)
{
    if (sp_result_summary(subject, NULL, devnull) != SP_OK || fflush(devnull) != 0) failures++;
}

static char report_path[] = "/tmp/sp_bench_report_XXXXXX";

static void run_report(void)
{
    if (sp_result_report(subject, NULL, report_path) != SP_OK) failures++;
}

static void run_floor(void)
{
    int64_t sum = 0;
    for (size_t i = 0; i < subject->thread_count; i++) {
        const sp__thread *t = &subject->threads[i];
        for (size_t j = 0; j < t->count; j++) sum += t->events[j].end_ns - t->events[j].start_ns;
    }
    sink = sum;
}

typedef struct stats {
    double median, min, max;
} stats;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stats measure(void (*fn)(void))
{
    double t[TRIALS];
    for (int i = 0; i < TRIALS; i++) {
        double t0 = now_s();
        fn();
        t[i] = now_s() - t0;
    }
    qsort(t, TRIALS, sizeof *t, cmp_double);
    return (stats){t[TRIALS / 2], t[0], t[TRIALS - 1]};
}

static void row(const char *name, stats s, double events, stats floor)
{
    printf("%-32s %8.3f %8.3f %8.3f %10.1f %8.1fx\n", name, s.median, s.min, s.max,
           events / s.median / 1e6, s.median / floor.median);
}

int main(void)
{
    double t0 = now_s();
    sp_result *r = build_result(EVENTS);
    devnull = fopen("/dev/null", "w");
    if (!r || !devnull) {
        fprintf(stderr, "bench_summary: out of memory or no /dev/null\n");
        return 1;
    }
    double built_s = now_s() - t0;
    subject = r;
    size_t events = 0;
    for (size_t i = 0; i < r->thread_count; i++) events += r->threads[i].count;
    run_floor(); /* touch the data once before timing the floor */
    stats floor = measure(run_floor);
    stats model = measure(run_model);
    stats summary = measure(run_summary);

    printf("stepprof summary cost, seconds (%d trials; %zu events, %zu threads, %u names, "
           "%llu overlaps; built in %.2f s)\n",
           TRIALS, events, r->thread_count, r->names.count,
           (unsigned long long)r->counters[SP_COUNTER_OVERLAP], built_s);
    printf("%-32s %8s %8s %8s %10s %9s\n", "work", "median", "min", "max", "Mevents/s", "/floor");
    row("floor: sum of durations", floor, (double)events, floor);
    row("model: build + fini", model, (double)events, floor);
    row("summary: default opts, /dev/null", summary, (double)events, floor);
    printf("\nsummary / model: %.2fx\n", summary.median / model.median);
    printf("summary of %zuM events: %.2f s (target < 2 s)\n", events / 1000000, summary.median);
    if (failures) printf("FAILED: %d runs returned an error\n", failures);
    printf("metric summary_events %zu events\n", events);
    printf("metric summary_s %.4f s min %.4f max %.4f\n", summary.median, summary.min, summary.max);
    printf("metric summary_events_per_s %.0f events/s\n", (double)events / summary.median);
    printf("metric model_s %.4f s min %.4f max %.4f\n", model.median, model.min, model.max);
    printf("metric summary_floor_s %.4f s\n", floor.median);
    sp__result_free(r);

    /* The report of a 1M-event span, beside that span's summary. */
    int fd = mkstemp(report_path);
    r = build_result(REPORT_EVENTS);
    if (fd < 0 || !r) {
        fprintf(stderr, "bench_summary: no temporary file or out of memory\n");
        return 1;
    }
    close(fd);
    subject = r;
    stats small_summary = measure(run_summary);
    stats report = measure(run_report);
    struct stat st;
    double mb = stat(report_path, &st) == 0 ? (double)st.st_size / (1024.0 * 1024.0) : -1;
    unlink(report_path);
    printf("\nHTML report of %uM events: %.3f s (target < 2 s), %.2f MiB (target < 2 MiB), "
           "%.2fx the summary of the same span (%.3f s)\n",
           REPORT_EVENTS / 1000000, report.median, mb, report.median / small_summary.median,
           small_summary.median);
    printf("metric report_1m_s %.4f s min %.4f max %.4f\n", report.median, report.min, report.max);
    printf("metric report_1m_mib %.3f MiB\n", mb);
    printf("metric report_over_summary %.3f x\n", report.median / small_summary.median);
    sp__result_free(r);
    fclose(devnull);
    return failures ? 1 : 0;
}

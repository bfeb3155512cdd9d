/* main.c: train_mlp, the stepprof demo. It trains a small MLP on synthetic
 * clusters and marks each phase of a step (DataLoader, forward, backward,
 * optimizer) the way a framework would, while a profiler records steps
 * 10..19 into a TensorBoard trace. It reproduces the case study of paddle's
 * profiler guide: with --workers 0 the batch is made on the training thread
 * and data loading is nearly half of every step; with --workers 4 worker
 * threads prefetch batches and the wait almost disappears. The demo times
 * the wait itself too, so the effect shows without reading the trace. */
#include "loader.h"
#include "mlp.h"

#include <stepprof/stepprof.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Tuning. Model and loader are sized together: on the 2-core machine this
 * was tuned on, one step of compute takes ~3.2 ms and making one batch
 * ~2.2 ms (0.7x). Inline loading is then ~40% of a step, while 4 workers,
 * which in effect get only the second core, still make batches faster than
 * the training thread eats them. Loading must stay clearly cheaper than
 * compute for that; raise DECODE_PASSES only together with the model. */
enum { DIM = 128, HIDDEN1 = 256, HIDDEN2 = 128, CLASSES = 10, DECODE_PASSES = 18 };
#define SEPARATION 0.4f  /* std of cluster centres against unit noise */
#define LEARNING_RATE 0.05f
#define MOMENTUM 0.9f
#define DATA_SEED 0x5eed0001u
#define MODEL_SEED 0x5eed0002u

typedef struct args {
    int workers, steps, batch, decode_passes, read_ms;
    const char *out_dir;
} args;

/* What the demo measures itself, over every step but the first (which also
 * waits for the workers' first batches to fill the pipeline). */
typedef struct timing {
    double step_s, wait_s;
    int steps;
} timing;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: train_mlp [--workers N] [--steps N] [--batch N] [--out DIR]\n"
            "                 [--decode-passes N] [--read-ms N]\n"
            "  --workers N        data loader threads; 0 loads on the training thread (default 0)\n"
            "  --steps N          training steps (default 30)\n"
            "  --batch N          samples per batch (default 64)\n"
            "  --out DIR          trace directory (default ./profiler_log)\n"
            "  --decode-passes N  CPU work per sample in the loader (default %d)\n"
            "  --read-ms N        a wait per batch, as a slow disk would add (default 0);\n"
            "                     it costs no CPU, so loading time does not depend on load\n"
            "The profiler records steps 10..19.\n",
            DECODE_PASSES);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    if (!s) return -1;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

/* Returns 0 to run, 1 after --help, -1 after a bad argument. */
static int parse_args(int argc, char **argv, args *a)
{
    *a = (args){.workers = 0,
                .steps = 30,
                .batch = 64,
                .decode_passes = DECODE_PASSES,
                .out_dir = "./profiler_log"};
    for (int i = 1; i < argc; i += 2) { /* every option but --help takes a value */
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            usage(stdout);
            return 1;
        } else if (strcmp(opt, "--workers") == 0) {
            bad = parse_int(val, 0, 64, &a->workers);
        } else if (strcmp(opt, "--steps") == 0) {
            bad = parse_int(val, 1, 1000000, &a->steps);
        } else if (strcmp(opt, "--batch") == 0) {
            bad = parse_int(val, 1, 4096, &a->batch);
        } else if (strcmp(opt, "--decode-passes") == 0) {
            bad = parse_int(val, 0, 1000, &a->decode_passes);
        } else if (strcmp(opt, "--read-ms") == 0) {
            bad = parse_int(val, 0, 10000, &a->read_ms);
        } else if (strcmp(opt, "--out") == 0) {
            bad = val && *val ? 0 : -1;
            a->out_dir = val;
        } else {
            fprintf(stderr, "train_mlp: unknown argument '%s'\n", opt);
            usage(stderr);
            return -1;
        }
        if (bad) {
            fprintf(stderr, "train_mlp: bad or missing value for %s\n", opt);
            usage(stderr);
            return -1;
        }
    }
    return 0;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Reports a failed stepprof call; returns non-zero if it failed. */
static int failed(sp_status st, const char *what)
{
    if (st == SP_OK) return 0;
    const char *msg = sp_last_error();
    fprintf(stderr, "train_mlp: %s failed (%s)%s%s\n", what, sp_status_str(st), *msg ? ": " : "",
            msg);
    return 1;
}

/* A typical paddle setup: record steps [10, 20), write a TensorBoard trace. */
static sp_status make_profiler(const char *out_dir, sp_profiler **out)
{
    sp_options o;
    sp_options_init(&o);
    sp_status st = sp_scheduler_range(&o.scheduler, 10, 20);
    if (st == SP_OK) st = sp_handler_tensorboard(&o.on_trace_ready, out_dir, NULL, false);
    if (st == SP_OK) st = sp_profiler_create(&o, out);
    return st;
}

/* One training step; returns the batch loss. The DataLoader range uses an
 * explicit begin/end pair, the phases use SP_SCOPE: both styles work. */
static float train_step(mlp *m, loader *ld, int *correct, double *wait_s)
{
    batch b;
    double t0 = now_s();
    sp_range_begin(SP_EVENT_DATALOADER, "DataLoader");
    loader_next(ld, &b);
    sp_range_end();
    *wait_s = now_s() - t0;

    float loss;
    {
        SP_SCOPE(SP_EVENT_FORWARD, "forward");
        loss = mlp_forward(m, b.x, b.y, b.n, correct);
    }
    {
        SP_SCOPE(SP_EVENT_BACKWARD, "backward");
        mlp_backward(m, b.x, b.y, b.n);
    }
    {
        SP_SCOPE(SP_EVENT_OPTIMIZATION, "sgd_momentum");
        mlp_sgd(m, LEARNING_RATE, MOMENTUM);
    }
    return loss;
}

static int train(mlp *m, loader *ld, sp_profiler *prof, const args *a, timing *t)
{
    for (int step = 0; step < a->steps; step++) {
        double t0 = now_s(), wait_s;
        int correct;
        float loss = train_step(m, ld, &correct, &wait_s);
        if (failed(sp_profiler_step(prof, a->batch), "sp_profiler_step")) return -1;
        if (step % 10 == 0 || step == a->steps - 1) {
            /* paddle's step_info: averages since the previous call */
            char info[160];
            sp_profiler_step_info(prof, "samples", info, sizeof info);
            printf("step %4d  loss %.4f  acc %5.1f%%%s\n", step, loss,
                   100.0 * correct / a->batch, info);
        }
        if (step > 0) {
            t->step_s += now_s() - t0;
            t->wait_s += wait_s;
            t->steps++;
        }
    }
    return 0;
}

static int start_loader(const args *a, loader **out)
{
    loader_config lc = {.workers = a->workers,
                        .batch = a->batch,
                        .dim = DIM,
                        .classes = CLASSES,
                        .separation = SEPARATION,
                        .decode_passes = a->decode_passes,
                        .read_ms = a->read_ms,
                        .seed = DATA_SEED};
    int err = loader_create(&lc, out);
    if (err) fprintf(stderr, "train_mlp: cannot start the data loader: %s\n", strerror(err));
    return err;
}

/* Prints the profiler's summary tables (paddle's prof.summary()), the demo's
 * own timing, then the one "trace:" line. */
static void report(const timing *t, const sp_profiler *prof)
{
    const sp_result *result = sp_profiler_result(prof);
    if (result) {
        sp_summary_options so;
        sp_summary_options_init(&so);
        so.op_detail = false; /* keep the demo's output short */
        if (sp_result_summary(result, &so, stdout) != SP_OK)
            fprintf(stderr, "train_mlp: summary failed: %s\n", sp_last_error());
    }
    if (t->steps > 0) {
        printf("avg step: %.2f ms (steps 1..%d)\n", 1e3 * t->step_s / t->steps, t->steps);
        printf("data wait: %.1f%% of step time (%.2f ms per step)\n",
               100.0 * t->wait_s / t->step_s, 1e3 * t->wait_s / t->steps);
    }
    const char *path = sp_profiler_trace_path(prof);
    if (path) {
        printf("trace: %s\n", path);
    } else {
        /* --steps below 11 ends before any span, which is no error. */
        const char *why = sp_last_error();
        printf("trace: none (%s)\n", *why ? why : "no step was recorded");
    }
}

int main(int argc, char **argv)
{
    args a;
    int rc = parse_args(argc, argv, &a);
    if (rc != 0) return rc > 0 ? 0 : 2;
    printf("train_mlp: workers=%d steps=%d batch=%d (mlp %d-%d-%d-%d)\n", a.workers, a.steps,
           a.batch, DIM, HIDDEN1, HIDDEN2, CLASSES);

    int status = 1;
    loader *ld = NULL;
    sp_profiler *prof = NULL;
    timing t = {0};
    mlp *m = mlp_create(DIM, HIDDEN1, HIDDEN2, CLASSES, a.batch, MODEL_SEED);
    if (!m) {
        fprintf(stderr, "train_mlp: out of memory\n");
        goto done;
    }
    if (start_loader(&a, &ld) != 0) goto done;
    if (failed(make_profiler(a.out_dir, &prof), "creating the profiler")) goto done;
    if (failed(sp_profiler_start(prof), "sp_profiler_start")) goto done;
    if (train(m, ld, prof, &a, &t) != 0) goto done;
    if (failed(sp_profiler_stop(prof), "sp_profiler_stop")) goto done;
    report(&t, prof);
    status = 0;
done:
    sp_profiler_destroy(prof);
    loader_destroy(ld);
    mlp_destroy(m);
    return status;
}

/* bench_inject.c: what zero-code profiling costs beside the explicit API.
 * Two targets (docs/performance.md):
 *   - a range of an unmodified NVTX program, recorded through the injection
 *     library (libstepprof_nvtx.so named in NVTX_INJECTION64_PATH, as
 *     `stepprof run` names it), costs at most 1.5x a stepprof range: each
 *     above its own floor, NVTX's no-op (the same program, no injection)
 *     and the empty loop;
 *   - the profiler the environment starts (STEPPROF_STEPS, no code) costs
 *     the ranges no more than one the program creates itself.
 * Injection is per process (NVTX loads its tool once), so each mode is a
 * child process of this one, the same binary with a mode argument, and a
 * round runs every mode once, in an order that rotates from round to round;
 * the figures are ratios within a round, and their medians over the rounds.
 * Each child prints the fastest of TRIALS timed loops (load on a shared
 * machine only ever adds time).
 *
 *   bench_inject [rounds]          the driver: metric lines for report.py
 *   bench_inject nvtx|sp|sp_env    one mode (run by the driver) */
#define _GNU_SOURCE
#include <nvtx3/nvToolsExt.h>
#include <stepprof/stepprof.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define TRIALS 7
#define ITERS 200000
#define MODES 4

__attribute__((noinline)) static void work(void) { __asm__ volatile(""); }

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double run_empty(void)
{
    double t0 = now_ns();
    for (int i = 0; i < ITERS; i++) work();
    return (now_ns() - t0) / ITERS;
}

/* A constant name, as a program's "forward" or "loss": the injection cannot
 * know it outlives the call, so it copies it, as it must. */
static double run_nvtx(void)
{
    double t0 = now_ns();
    for (int i = 0; i < ITERS; i++) {
        nvtxRangePushA("forward");
        work();
        nvtxRangePop();
    }
    return (now_ns() - t0) / ITERS;
}

static double run_ranges(void)
{
    double t0 = now_ns();
    for (int i = 0; i < ITERS; i++) {
        sp_range_begin(SP_EVENT_USER_DEFINED, "forward");
        work();
        sp_range_end();
    }
    return (now_ns() - t0) / ITERS;
}

static double fastest(double (*fn)(void))
{
    double best = fn(); /* warm-up: faults in the first chunks, resolves NVTX */
    for (int t = 0; t < TRIALS; t++) {
        double v = fn();
        if (v < best) best = v;
    }
    return best;
}

/* One mode, in this process: prints "<pair ns> <empty-loop ns>". */
static int child(const char *mode)
{
    sp_profiler *prof = NULL;
    if (strcmp(mode, "sp") == 0) {
        sp_options o;
        sp_options_init(&o);
        o.on_trace_ready = sp_handler_none();
        if (sp_profiler_create(&o, &prof) != SP_OK || sp_profiler_start(prof) != SP_OK) {
            fprintf(stderr, "bench_inject: %s\n", sp_last_error());
            return 1;
        }
    }
    int nvtx = strcmp(mode, "nvtx") == 0;
    /* The environment's span is step 0: a "step" range (NVTX) or sp_step
     * ends it after the timing, so it is written then, not at exit. */
    if (nvtx) nvtxRangePushA("step");
    double empty = fastest(run_empty);
    double pair = nvtx ? fastest(run_nvtx) : fastest(run_ranges);
    if (nvtx)
        nvtxRangePop();
    else if (!prof)
        sp_step(-1);
    if (prof) {
        if (sp_profiler_stop(prof) != SP_OK) {
            fprintf(stderr, "bench_inject: %s\n", sp_last_error());
            return 1;
        }
        sp_profiler_destroy(prof);
    }
    printf("%.4f %.4f\n", pair, empty);
    fflush(stdout);
    return 0;
}

/* The modes a round runs: the argument and the environment of each. */
static const struct mode {
    const char *name, *arg;
    int inject, env_profiler;
} modes[MODES] = {
    {"nvtx_floor", "nvtx", 0, 0}, /* NVTX's no-op: no tool loaded */
    {"nvtx_injected", "nvtx", 1, 1},
    {"explicit", "sp", 0, 0},
    {"env", "sp_env", 0, 1},
};

static char out_dir[] = "/tmp/bench_inject_XXXXXX";

/* Runs one mode as a child; its two figures, or exits. */
static void spawn(const struct mode *m, double *pair, double *empty)
{
    int fd[2];
    if (pipe(fd) != 0) exit(1);
    pid_t pid = fork();
    if (pid < 0) exit(1);
    if (pid == 0) {
        dup2(fd[1], 1);
        close(fd[0]);
        close(fd[1]);
        unsetenv("NVTX_INJECTION64_PATH");
        unsetenv("STEPPROF_STEPS");
        if (m->inject) setenv("NVTX_INJECTION64_PATH", SP_NVTX_LIB, 1);
        if (m->env_profiler) {
            /* Step 0 is recorded from the start; no "step" range ever ends
             * it, so the whole run is one span, written at exit (untimed). */
            setenv("STEPPROF_STEPS", "0:1", 1);
            setenv("STEPPROF_OUT", out_dir, 1);
            setenv("STEPPROF_FORMAT", "pb", 1);
            setenv("STEPPROF_QUIET", "1", 1);
        }
        execl("/proc/self/exe", "bench_inject", m->arg, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    char buf[128] = {0};
    ssize_t n = 0, got;
    while ((got = read(fd[0], buf + n, sizeof buf - 1 - (size_t)n)) > 0) n += got;
    close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || sscanf(buf, "%lf %lf", pair, empty) != 2) {
        fprintf(stderr, "bench_inject: mode %s failed (output '%s')\n", m->name, buf);
        exit(1);
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void metric(const char *name, double *v, int n, const char *unit)
{
    double s[n];
    memcpy(s, v, sizeof s);
    qsort(s, (size_t)n, sizeof *s, cmp);
    double med = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    printf("metric %s %.4g %s (min %.4g max %.4g)\n", name, med, unit, s[0], s[n - 1]);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "nvtx") == 0 || strcmp(argv[1], "sp") == 0 ||
                     strcmp(argv[1], "sp_env") == 0))
        return child(argv[1]);
    int rounds = argc > 1 ? atoi(argv[1]) : 15;
    if (rounds < 1) {
        fprintf(stderr, "usage: bench_inject [rounds]\n");
        return 2;
    }
    if (!mkdtemp(out_dir)) {
        perror("bench_inject: mkdtemp");
        return 1;
    }
    double nvtx_cost[rounds], sp_cost[rounds], ratio[rounds], env_ratio[rounds], floor_ns[rounds];
    for (int r = 0; r < rounds; r++) {
        double pair[MODES], empty[MODES];
        for (int k = 0; k < MODES; k++) {
            int i = (k + r) % MODES;
            spawn(&modes[i], &pair[i], &empty[i]);
        }
        floor_ns[r] = pair[0];
        nvtx_cost[r] = pair[1] - pair[0];
        sp_cost[r] = pair[2] - empty[2];
        ratio[r] = nvtx_cost[r] / sp_cost[r];
        env_ratio[r] = (pair[3] - empty[3]) / sp_cost[r];
    }
    char cmd[sizeof out_dir + 16];
    snprintf(cmd, sizeof cmd, "rm -rf %s", out_dir);
    if (system(cmd) != 0) fprintf(stderr, "bench_inject: could not remove %s\n", out_dir);
    printf("bench_inject: %d rounds x %d modes (child processes), each the fastest of %d loops of %d "
           "pairs\n", rounds, MODES, TRIALS, ITERS);
    metric("nvtx_noop_pair_ns", floor_ns, rounds, "ns");
    metric("nvtx_range_cost_ns", nvtx_cost, rounds, "ns");
    metric("sp_range_cost_ns", sp_cost, rounds, "ns");
    metric("nvtx_over_sp_range", ratio, rounds, "x");
    metric("env_over_explicit_range", env_ratio, rounds, "x");
    return 0;
}

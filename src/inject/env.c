/* env.c: profiling switched on by the environment (STEPPROF_STEPS and the
 * other STEPPROF_* variables, docs/c-api.md "Zero-code profiling"). At load,
 * a constructor reads the variables; when they ask for this rank, it creates
 * the process's profiler and starts it, so that the ranges a program already
 * marks are recorded with no code added, and sp_step() counts its steps.
 * The first profiler the program creates itself takes that profiler's place
 * with the environment's settings (sp__env_adopt), so there are never two
 * profilers competing for the tracers. Bad values print one line and leave
 * the program unprofiled. A statically linked program gets this only when it
 * calls sp_step or creates a profiler, since those pull this file in. */
#define _GNU_SOURCE
#include "api.h"
#include "inject.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static sp__env_config cfg;
static int cfg_valid;
/* The environment's profiler until a program profiler takes its place.
 * Set and cleared under lock; sp_step reads it first without the lock, so a
 * program run without the environment pays one load per step. */
static _Atomic(sp_profiler *) env_prof;
static int handed_over;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The library's own lines in this mode, as the default log callback writes
 * them; informational ones are left out with STEPPROF_QUIET=1 (stepprof run
 * prints its own). */
static void say(int info, const char *fmt, ...) SP__PRINTF(2, 3);
static void say(int info, const char *fmt, ...)
{
    if (info && cfg.quiet) return;
    char text[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    fprintf(stderr, "stepprof: %s: %s\n", info ? "info" : "error", text);
}

/* The environment's profiler logs through here: quiet while it hands over
 * to the program's (what it says about an unfinished READY step would only
 * confuse), as the default log callback otherwise. */
static int handing_over;

static void env_log(sp_log_level level, const char *message, void *user)
{
    static const char *const names[] = {"info", "warning", "error"};
    (void)user;
    if (handing_over) return;
    fprintf(stderr, "stepprof: %s: %s\n", names[level <= SP_LOG_ERROR ? level : SP_LOG_ERROR],
            message);
}

/* ---- the trace handler: paddle's file naming, the chosen format, and the
 * summary tables beside each trace ---- */

typedef struct env_handler {
    sp_trace_handler inner;
} env_handler;

static void release_handler(void *user)
{
    env_handler *h = user;
    if (!h) return;
    if (h->inner.release) h->inner.release(h->inner.user);
    sp__free(h);
}

/* "<trace without its extension>.summary.txt". */
static void summary_path(const char *trace, char *out, size_t size)
{
    static const char *const exts[] = {".json.gz", ".json", ".pb", NULL};
    size_t n = strlen(trace);
    for (const char *const *e = exts; *e; e++) {
        size_t m = strlen(*e);
        if (n > m && strcmp(trace + n - m, *e) == 0) {
            n -= m;
            break;
        }
    }
    snprintf(out, size, "%.*s.summary.txt", (int)n, trace);
}

static void write_summary(sp_profiler *prof, const char *trace)
{
    const sp_result *r = sp_profiler_result(prof);
    char path[4200];
    summary_path(trace, path, sizeof path);
    FILE *f = fopen(path, "w");
    if (!f || sp_result_summary(r, NULL, f) != SP_OK)
        say(0, "summary tables not written to %s", path);
    if (f) fclose(f);
    if (cfg.summary) sp_result_summary(r, NULL, stdout);
}

static void on_ready(sp_profiler *prof, void *user)
{
    env_handler *h = user;
    h->inner.fn(prof, h->inner.user);
    const char *trace = sp_profiler_trace_path(prof);
    if (!trace) return; /* the inner handler said why */
    write_summary(prof, trace);
    /* A span cut short by exit or destroy has its own line already. */
    if (!sp__profiler_finishing_unstopped(prof))
        say(1, "steps [%lld, %lld) recorded; trace: %s", (long long)cfg.first_step,
            (long long)cfg.end_step, trace);
}

static sp_status make_handler(sp_trace_handler *out)
{
    env_handler *h = sp__alloc(sizeof *h);
    if (!h) return sp__fail(SP_ENOMEM, "out of memory");
    char host[256] = "localhost", worker[400];
    gethostname(host, sizeof host - 1);
    if (cfg.rank_set)
        snprintf(worker, sizeof worker, "host_%spid_%d_rank%ld", host, (int)getpid(), cfg.rank);
    else
        snprintf(worker, sizeof worker, "host_%spid_%d", host, (int)getpid());
    sp_status s = sp__handler_paddle(&h->inner, cfg.out_dir, worker, cfg.format);
    if (s != SP_OK) {
        sp__free(h);
        return s;
    }
    out->fn = on_ready;
    out->user = h;
    out->release = release_handler;
    return SP_OK;
}

sp_status sp__env_handler(sp_trace_handler *out)
{
    if (!cfg_valid) return sp__fail(SP_ESTATE, "STEPPROF_STEPS did not start profiling in this process");
    return make_handler(out);
}

static sp_status env_options(sp_options *o)
{
    sp_status s = sp_scheduler_range(&o->scheduler, cfg.first_step, cfg.end_step);
    if (s == SP_OK) s = make_handler(&o->on_trace_ready);
    if (s == SP_OK) o->targets = cfg.targets;
    return s;
}

/* ---- activation at load ---- */

static const char *get_env(const char *name) { return getenv(name); }

static int creating_own; /* sp_profiler_create below is the environment's own */

int sp__env_creating(void) { return creating_own; }

/* Defined (non-zero) by a program that reads the variables itself and must
 * not be profiled by them: the stepprof CLI, whose `run` passes them on. */
extern const int sp__env_opt_out __attribute__((weak));

__attribute__((constructor)) static void env_load(void)
{
    if (&sp__env_opt_out && sp__env_opt_out) return;
    char why[1024];
    int r = sp__env_config_read(get_env, &cfg, why, sizeof why);
    if (r < 0) say(0, "%s; the program runs unprofiled", why);
    if (r <= 0 || !cfg.selected) return;
    if (sp__env_config_make_dir(&cfg, why, sizeof why) != 0) {
        say(0, "STEPPROF_OUT: %s; the program runs unprofiled", why);
        return;
    }
    sp_options o;
    sp_options_init(&o);
    o.log = env_log;
    sp_profiler *p = NULL;
    sp_status s = env_options(&o);
    creating_own = 1;
    if (s == SP_OK) s = sp_profiler_create(&o, &p);
    creating_own = 0;
    if (s == SP_OK) s = sp_profiler_start(p);
    if (s != SP_OK) {
        say(0, "STEPPROF_STEPS: cannot start profiling: %s; the program runs unprofiled",
            sp_last_error());
        sp_profiler_destroy(p);
        return;
    }
    cfg_valid = 1;
    atomic_store(&env_prof, p);
    say(1, "profiling steps [%lld, %lld) into %s (STEPPROF_STEPS)", (long long)cfg.first_step,
        (long long)cfg.end_step, cfg.out_dir);
}

void sp_step(int64_t num_samples)
{
    if (!atomic_load_explicit(&env_prof, memory_order_relaxed)) return;
    pthread_mutex_lock(&lock);
    sp_profiler *p = atomic_load(&env_prof);
    if (p) sp_profiler_step(p, num_samples);
    pthread_mutex_unlock(&lock);
}

/* The environment's profiler, taken for good (sp_step and a later adopt
 * find none), or NULL when there is none or it was taken already. */
static sp_profiler *take_env_prof(void)
{
    pthread_mutex_lock(&lock);
    sp_profiler *p = atomic_load(&env_prof);
    if (p && !handed_over) {
        handed_over = 1;
        atomic_store(&env_prof, NULL);
    } else {
        p = NULL;
    }
    pthread_mutex_unlock(&lock);
    return p;
}

void sp__env_discard(void)
{
    sp_profiler *p = take_env_prof();
    if (!p) return;
    sp__profiler_drop_spans(p);
    handing_over = 1;
    sp_profiler_destroy(p);
    handing_over = 0;
}

int sp__env_adopt(const sp_options *opts, sp_options *adopted)
{
    if (creating_own || !cfg_valid) return 0;
    sp_profiler *p = take_env_prof();
    if (!p) return 0;
    /* A span it was recording is written, with its line; anything else it
     * would say is noise here. Before the first step ended, the span holds
     * only the program's start-up, and the program's profiler records step 0
     * again from its start (STEPPROF_STEPS=0:N): that span is dropped, so
     * that the run writes one trace. */
    int fresh = sp_profiler_step_num(p) == 0;
    if (fresh) sp__profiler_drop_spans(p);
    handing_over = fresh || (sp_profiler_state(p) != SP_STATE_RECORD &&
                             sp_profiler_state(p) != SP_STATE_RECORD_AND_RETURN);
    sp_profiler_destroy(p);
    handing_over = 0;
    *adopted = *opts;
    if (env_options(adopted) != SP_OK) {
        say(0, "the program's own profiler keeps its settings: %s", sp_last_error());
        return 0;
    }
    if (opts->on_trace_ready.release) opts->on_trace_ready.release(opts->on_trace_ready.user);
    say(1, "STEPPROF_STEPS is set: the program's own profiler records steps [%lld, %lld) of its "
           "steps into %s, in place of its own schedule and trace handler",
        (long long)cfg.first_step, (long long)cfg.end_step, cfg.out_dir);
    return 1;
}

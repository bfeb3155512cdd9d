/* profiler.c: the profiler object and its state machine (semantics.md §3).
 * start/step/stop ask the scheduler for the next state and run the
 * transition table's actions (prepare, start, stop with or without a
 * result), then fire on_trace_ready where the table says. Host recording is
 * process-wide, so only one profiler at a time holds the tracers; another
 * that wants them gets SP_EBUSY once and behaves as CLOSED until it can take
 * them at a later transition. */
#define _GNU_SOURCE
#include "api.h"
#include "cpu_util.h"
#include "crash.h"
#include "fork.h"
#include "gpu_fork.h"
#include "inject.h"
#include "stream.h"
#include "timer.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct sp_profiler {
    sp_options opts;
    sp_state state;     /* effective: CLOSED while another profiler holds the tracers */
    int64_t step_num;
    int started, stopped;
    int holds_tracers;
    int busy_reported;
    int gpu_reported;   /* the GPU-unavailable line was logged */
    sp__sync span_start; /* valid while recording a span */
    sp__cpu_sample cpu_start;
    uint64_t step_begin_ticks;
    int step_open;
    sp_result *result;
    /* Spans ended by step() and being collected on the writer thread; the
     * newest one collected becomes `result` when the profiler next looks
     * (adopt). */
    sp__span_queue jobs;
    /* The ticket of the last job queued on the writer that touches the
     * recording buffers (a collection, a discard): until it is done, any
     * other change to them queues behind it, or waits for it. */
    uint64_t records_ticket;
    char *trace_path;
    _Atomic uint64_t misuse;
    sp__writer *writer;
    sp_status export_status; /* first handler failure since the last stop */
    char export_error[512];
    sp__timer timer;
    sp__external external; /* sp_profiler_add_events' ranges for the span being recorded */
    int span_hooked;       /* the hooks were told BEGIN, and not yet COLLECT or DISCARD */
    unsigned fork_gen;  /* sp__record_fork_generation() at create; see inherited() */
    /* Re-entry (reliability.md, "profiler lifecycle"): set while on_trace_ready runs.
     * start/step/stop on this profiler then fail with SP_EBUSY, and destroy
     * is deferred (destroy_deferred) until the public call that ran the
     * callback returns. */
    int in_callback;
    int in_hook; /* span_hook runs: the same refusals, but add_events works */
    int destroy_deferred;
    /* The live list that the exit hook walks (at_exit below). */
    sp_profiler *live_prev, *live_next;
    int exit_seen; /* the exit hook has handled it */
    int finishing_unstopped; /* stop_unstopped runs: it logs the span's line */
    char dist_backend[SP__DIST_BACKEND_MAX]; /* sp_profiler_set_dist_backend's, or "" */
};

/* Spans being collected on a profiler's writer thread at most: the step
 * that would queue one more waits for the oldest. */
#define SP__SPANS_IN_FLIGHT 2

static pthread_mutex_t owner_lock = PTHREAD_MUTEX_INITIALIZER;
static sp_profiler *owner;
/* The writer, and the ticket on it, of the last job queued on any writer
 * that touches the recording buffers (under owner_lock): a profiler that
 * takes the tracers waits for it, so that its discards never overtake the
 * previous owner's collection. */
static sp__writer *records_writer;
static uint64_t records_writer_ticket;

/* Read-locked by start, step, stop, destroy and the exit hook; write-locked,
 * for good, by a terminating signal's helper thread (src/inject/
 * exit_signals.c), so that it never stops a profiler in the middle of one of
 * the program's calls, and those calls wait once it has. A reader lock, so
 * that program threads never wait for each other because of it (a callback
 * may drive another profiler, or wait for a thread that does); glibc's
 * default kind prefers readers, so a thread may take it again inside a
 * callback. Never taken by the range calls. */
static pthread_rwlock_t drive_lock = PTHREAD_RWLOCK_INITIALIZER;

static void drive_begin(void) { pthread_rwlock_rdlock(&drive_lock); }

static sp_status drive_end(sp_status s)
{
    pthread_rwlock_unlock(&drive_lock);
    return s;
}

/* ---- the live list, for the exit hook ---- */

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static sp_profiler *live;

static void live_add(sp_profiler *p)
{
    pthread_mutex_lock(&live_lock);
    p->live_prev = NULL;
    p->live_next = live;
    if (live) live->live_prev = p;
    live = p;
    pthread_mutex_unlock(&live_lock);
}

static void live_remove(sp_profiler *p)
{
    pthread_mutex_lock(&live_lock);
    if (p->live_prev)
        p->live_prev->live_next = p->live_next;
    else if (live == p)
        live = p->live_next;
    if (p->live_next) p->live_next->live_prev = p->live_prev;
    p->live_prev = p->live_next = NULL;
    pthread_mutex_unlock(&live_lock);
}

/* ---- fork() (reliability.md, "fork"): in a child process, a profiler
 * created before the fork is inert. Its calls fail with SP_ESTATE and change
 * nothing, so the child can neither write the parent's files nor steal the
 * tracers; destroy frees it without waiting for its writer thread, which does
 * not exist in the child (the writer's memory is leaked). The tracers are
 * free in the child, so a profiler created there records normally. ---- */

static void lock_owner(void)
{
    pthread_mutex_lock(&owner_lock);
    pthread_mutex_lock(&live_lock);
}

static void unlock_owner(void)
{
    pthread_mutex_unlock(&live_lock);
    pthread_mutex_unlock(&owner_lock);
}

/* drive_lock is left as it is: read locks of parent threads that do not
 * exist in the child never block a reader, and the writer (a signal's
 * helper thread) does not exist there either. */
static void forget_owner(void)
{
    records_writer = NULL; /* its thread is the parent's */
    owner = NULL;
    unlock_owner();
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

static void at_exit(void);

/* Also registers the exit hook: once per process, at the first create, so
 * it runs after the crash dump's own exit hook (registered later, at the
 * first arm; atexit handlers run in reverse order). */
static void register_fork_handlers(void)
{
    pthread_atfork(lock_owner, unlock_owner, forget_owner);
    atexit(at_exit);
}

/* Created in a parent process before a fork() that led to this one. */
static int inherited(const sp_profiler *p) { return p->fork_gen != sp__record_fork_generation(); }

static void default_log(sp_log_level level, const char *message, void *user)
{
    static const char *const names[] = {"info", "warning", "error"};
    (void)user;
    fprintf(stderr, "stepprof: %s: %s\n", names[level <= SP_LOG_ERROR ? level : SP_LOG_ERROR], message);
}

static void vlog(sp_profiler *p, sp_log_level level, const char *fmt, va_list ap)
{
    char text[1024];
    vsnprintf(text, sizeof text, fmt, ap);
    sp_log_fn fn = p && p->opts.log ? p->opts.log : default_log;
    fn(level, text, p ? p->opts.log_user : NULL);
}

void sp__profiler_warn(sp_profiler *p, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog(p, SP_LOG_WARNING, fmt, ap);
    va_end(ap);
}

void sp__profiler_export_failed(sp_profiler *p, sp_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char text[512];
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    sp__profiler_warn(p, "%s", text);
    if (p->export_status != SP_OK) return;
    p->export_status = code;
    memcpy(p->export_error, text, sizeof text);
}

static void writer_log(void *ctx, const char *message)
{
    sp__profiler_warn(ctx, "%s", message);
}

void sp_options_init(sp_options *opts)
{
    if (opts) memset(opts, 0, sizeof *opts);
}

/* ---- tracer actions (semantics.md §3.4) ---- */

/* Arms CUPTI when the targets ask for the GPU, or when they are the default
 * and the process uses CUDA. Unavailable: one line, then the CPU only. */
static void prepare_gpu(sp_profiler *p)
{
    unsigned targets = p->opts.targets;
    int asked = (targets & SP_TARGET_GPU) != 0;
    if (!asked && !(targets == 0 && sp__gpu_cuda_in_process())) return;
    char why[512];
    if (sp__gpu_prepare(why, sizeof why) == 0 || p->gpu_reported) return;
    p->gpu_reported = 1;
    sp__profiler_warn(p, "%s", why);
}

/* ---- crash dumps (reliability.md, "Crash safety"): armed while the
 * profiler holds the tracers, told where each recorded span starts. ---- */

/* The dump's path: crash_path, or stepprof_crash.<pid>.spdump. */
static void crash_file(const sp_profiler *p, char *path, size_t size)
{
    if (p->opts.crash_path && *p->opts.crash_path)
        snprintf(path, size, "%s", p->opts.crash_path);
    else
        snprintf(path, size, "stepprof_crash.%lld.spdump", (long long)getpid());
}

/* The process's name (/proc/self/comm), "" when unreadable. */
static void read_process_name(char *out, size_t size)
{
    out[0] = '\0';
    FILE *f = fopen("/proc/self/comm", "r");
    if (!f) return;
    if (fgets(out, (int)size, f)) out[strcspn(out, "\n")] = '\0';
    fclose(f);
}

static void crash_info(const sp_profiler *p, sp__crash_info *info)
{
    memset(info, 0, sizeof *info);
    info->flags = (p->opts.record_shapes ? SP__DUMP_RECORD_SHAPES : 0) |
                  (p->opts.profile_memory ? SP__DUMP_PROFILE_MEMORY : 0) |
                  (p->opts.with_flops ? SP__DUMP_WITH_FLOPS : 0) |
                  (p->opts.with_stack ? SP__DUMP_WITH_STACK : 0) |
                  (p->opts.overwrite_oldest ? SP__DUMP_OVERWRITE_OLDEST : 0);
    read_process_name(info->process_name, sizeof info->process_name);
    sp__span_meta m;
    memset(&m, 0, sizeof m);
    sp__dist_meta_fill(&m, p->dist_backend);
    info->dist.rank = m.rank;
    info->dist.world_size = m.world_size;
    info->dist.local_rank = m.local_rank;
    info->dist.local_world_size = m.local_world_size;
    memcpy(info->dist.hostname, m.hostname, sizeof info->dist.hostname);
    memcpy(info->dist.job, m.job, sizeof info->dist.job);
    memcpy(info->dist.backend, m.dist_backend, sizeof info->dist.backend);
}

static void arm_crash(sp_profiler *p)
{
    char path[4096], why[512];
    crash_file(p, path, sizeof path);
    sp__crash_info info;
    crash_info(p, &info);
    if (sp__crash_arm(path, &info, why, sizeof why) != 0)
        sp__profiler_warn(p, "save_on_crash is off for this profiler: %s", why);
}

/* Tells the crash dump where the span starts (NULL: no span). With
 * stream_to_disk, also starts the stream for a new span, or stops it (and
 * removes its file) before the span's buffers are collected or discarded:
 * the stream reads them without a lock (stream.c). */
static void crash_span(sp_profiler *p, const sp__sync *start)
{
    if (!p->opts.save_on_crash) return;
    if (p->opts.stream_to_disk) sp__stream_stop();
    sp__crash_set_span(start);
    if (start && p->opts.stream_to_disk) {
        char path[4096], why[512];
        crash_file(p, path, sizeof path);
        sp__crash_info info;
        crash_info(p, &info);
        if (sp__stream_start(path, &info, start, why, sizeof why) != 0)
            sp__profiler_warn(p, "stream_to_disk is off for this span: %s", why);
    }
}

static sp_status prepare(sp_profiler *p)
{
    pthread_mutex_lock(&owner_lock);
    int free_or_mine = !owner || owner == p;
    if (free_or_mine) owner = p;
    if (free_or_mine && records_writer && records_writer != p->writer) {
        /* The previous owner's collection may still drain the buffers. */
        sp__writer_reached(records_writer, records_writer_ticket, 1);
        records_writer = NULL;
    }
    pthread_mutex_unlock(&owner_lock);
    if (!free_or_mine) {
        p->holds_tracers = 0;
        if (p->busy_reported) return SP_OK;
        p->busy_reported = 1;
        sp__profiler_warn(p, "another profiler holds the tracers; this one records nothing until "
                             "they are free");
        return sp__fail(SP_EBUSY, "another profiler holds the tracers");
    }
    p->holds_tracers = 1;
    p->busy_reported = 0;
    prepare_gpu(p);
    sp__record_set_cap(p->opts.buffer_cap_bytes);
    sp__record_set_overwrite(p->opts.overwrite_oldest);
    sp__record_set_memory(p->opts.profile_memory);
    sp__record_set_active(1);
    if (p->opts.save_on_crash) arm_crash(p);
    return SP_OK;
}

/* ---- the recording buffers while a collection may be queued ---- */

static void note_records_job(sp_profiler *p, uint64_t ticket)
{
    p->records_ticket = ticket;
    pthread_mutex_lock(&owner_lock);
    records_writer = p->writer;
    records_writer_ticket = ticket;
    pthread_mutex_unlock(&owner_lock);
}

static int records_busy(sp_profiler *p)
{
    return p->writer && p->records_ticket && !sp__writer_reached(p->writer, p->records_ticket, 0);
}

static void wait_records(sp_profiler *p)
{
    if (p->writer && p->records_ticket) sp__writer_reached(p->writer, p->records_ticket, 1);
}

/* Drops the records so far, and the pooled chunks if trim: at once, or,
 * while a collection is queued, behind it on the writer thread. */
static void discard_records(sp_profiler *p, int trim)
{
    if (records_busy(p)) {
        uint64_t now = sp__ticks();
        uint64_t ticket;
        sp__record_mark_drained(now);
        if (sp__records_discard_queued(p->writer, now, trim, &ticket) == SP_OK) {
            note_records_job(p, ticket);
            return;
        }
        wait_records(p); /* out of memory: here, after the collection */
    }
    sp__record_discard();
    if (trim) sp__record_trim();
}

/* Makes the newest span collected on the writer thread p's result; waits
 * for those still being collected if wait. Never in a forked child, where
 * the writer thread does not exist. */
static void adopt(sp_profiler *p, int wait)
{
    if (inherited(p) || sp__span_queue_empty(&p->jobs)) return;
    sp_result *r = sp__span_queue_adopt(&p->jobs, p->writer, wait);
    if (!r) return;
    sp_result_release(p->result);
    p->result = r;
}

/* Tells span_hook, then the process-wide collection hooks, about the span:
 * BEGIN, then once COLLECT or DISCARD. */
static void call_span_hook(sp_profiler *p, sp_span_event event)
{
    p->in_hook = 1;
    if (p->opts.span_hook) p->opts.span_hook(p, event, p->opts.span_hook_user);
    sp__collect_hooks_run(p, event);
    p->in_hook = 0;
}

static void end_span_hook(sp_profiler *p, sp_span_event event)
{
    if (!p->span_hooked) return;
    p->span_hooked = 0;
    call_span_hook(p, event);
}

static void start_span(sp_profiler *p)
{
    end_span_hook(p, SP_SPAN_DISCARD);
    sp__external_clear(&p->external);
    discard_records(p, 0); /* READY's records only warmed the buffers */
    sp__gpu_discard();
    sp__clock_sync(&p->span_start);
    sp__cpu_sample_take(&p->cpu_start);
    crash_span(p, &p->span_start);
    p->span_hooked = 1;
    call_span_hook(p, SP_SPAN_BEGIN);
}

static void release(sp_profiler *p)
{
    if (!p->holds_tracers) return;
    end_span_hook(p, SP_SPAN_DISCARD);
    if (p->opts.save_on_crash) {
        crash_span(p, NULL); /* stops the stream before the discard below */
        sp__crash_disarm();
    }
    sp__record_set_active(0);
    sp__record_set_memory(0);
    /* Its memory goes too, as the recording buffers' does (the trim): a
     * stopped profiler holds nothing of the spans it recorded. */
    discard_records(p, 1);
    sp__external_fini(&p->external);
    sp__external_init(&p->external);
    sp__gpu_release();
    pthread_mutex_lock(&owner_lock);
    if (owner == p) owner = NULL;
    pthread_mutex_unlock(&owner_lock);
    p->holds_tracers = 0;
}

static void fill_meta(const sp_profiler *p, sp__span_meta *m)
{
    memset(m, 0, sizeof *m);
    m->record_shapes = p->opts.record_shapes;
    m->profile_memory = p->opts.profile_memory;
    m->with_flops = p->opts.with_flops;
    m->with_stack = p->opts.with_stack;
    m->overwrite_oldest = p->opts.overwrite_oldest;
    m->pid = (int64_t)getpid();
    read_process_name(m->process_name, sizeof m->process_name);
    sp__dist_meta_fill(m, p->dist_backend);
}

/* Ends the span and collects it into p->result. With queue (a step()),
 * the collection runs on the writer thread and p->result is the span's
 * once adopted; on_trace_ready may fire at once, since what reads the
 * result waits for it (sp_profiler_result) or queues behind it (the
 * built-in handlers). Otherwise, and where the buffers are being streamed
 * to disk (save_on_crash), it runs here. A failure keeps the previous
 * result. */
static sp_status stop_with_result(sp_profiler *p, int queue)
{
    /* The end sample right at the stop, before collection work (§9) and
     * before another tracer's hand-over, which is profiling work too. */
    sp__cpu_sample cpu_end;
    sp__cpu_sample_take(&cpu_end);
    end_span_hook(p, SP_SPAN_COLLECT); /* another tracer hands over its events */
    crash_span(p, NULL); /* the span is being collected: no dump of it now */
    sp__span_meta meta;
    fill_meta(p, &meta);
    if (sp__cpu_utilization(&p->cpu_start, &cpu_end, &meta.cpu_process, &meta.cpu_system) != 0) {
        if (!p->cpu_start.ok) sp__profiler_warn(p, "%s", SP__CPU_WARN_BEGIN);
        if (!cpu_end.ok) sp__profiler_warn(p, "%s", SP__CPU_WARN_END);
    }
    sp__free(p->trace_path);
    p->trace_path = NULL;
    sp__span_end e;
    sp__collect_span_end(&e, &p->span_start, &meta, &p->external);
    queue = queue && !p->opts.save_on_crash;
    if (queue && !p->writer)
        (void)sp__writer_create(&p->writer, writer_log, p); /* else collected here */
    queue = queue && p->writer;
    /* Back-pressure: spans that end faster than they are collected wait
     * here for the oldest, so the queue, and what its spans hold (external
     * data, the records the cap keeps), stays bounded. */
    while (queue && sp__span_queue_length(&p->jobs) >= SP__SPANS_IN_FLIGHT) {
        sp__writer_reached(p->writer, sp__span_queue_oldest_ticket(&p->jobs), 1);
        adopt(p, 0);
    }
    uint64_t ticket;
    if (queue && sp__span_queue_collect(&p->jobs, p->writer, &e, &ticket) == SP_OK) {
        note_records_job(p, ticket);
        return SP_OK;
    }
    wait_records(p);
    adopt(p, 1);
    sp_result *r = NULL;
    sp_status s = sp__collect_span_build(&e, &r);
    if (s != SP_OK) {
        sp__profiler_warn(p, "span lost: %s", sp_last_error());
        return s;
    }
    sp_result_release(p->result);
    p->result = r;
    return SP_OK;
}

static void fire_trace_ready(sp_profiler *p)
{
    if ((!p->result && sp__span_queue_empty(&p->jobs)) || !p->opts.on_trace_ready.fn) return;
    p->in_callback = 1;
    p->opts.on_trace_ready.fn(p, p->opts.on_trace_ready.user);
    p->in_callback = 0;
}

static int recording(sp_state s) { return s == SP_STATE_RECORD || s == SP_STATE_RECORD_AND_RETURN; }

/* Runs the actions of semantics.md §3.3 from p->state to next and sets
 * p->state to the state actually reached. */
static sp_status transition(sp_profiler *p, sp_state next)
{
    sp_state prev = p->state;
    sp_status s = SP_OK;
    int collected = 0;
    if (prev == SP_STATE_READY && next == SP_STATE_CLOSED)
        sp__profiler_warn(p, "Improper schedule: READY->CLOSED, profiler will start and stop "
                             "without saving data");
    if (prev == SP_STATE_RECORD && next == SP_STATE_CLOSED)
        sp__profiler_warn(p, "Improper schedule: RECORD->CLOSED, profiler will not save data");
    if (prev == SP_STATE_RECORD && next == SP_STATE_READY)
        sp__profiler_warn(p, "Improper schedule: RECORD->READY, profiler will stop and re-prepare");
    if (prev == SP_STATE_RECORD_AND_RETURN) {
        s = stop_with_result(p, 1);
        collected = s == SP_OK;
    }
    if (next == SP_STATE_CLOSED) {
        release(p);
    } else if (prev == SP_STATE_CLOSED) {
        sp_status prepared = prepare(p);
        if (s == SP_OK) s = prepared;
        if (p->holds_tracers && recording(next)) start_span(p);
    } else if (recording(next) && (!recording(prev) || prev == SP_STATE_RECORD_AND_RETURN)) {
        start_span(p);
    } else if (prev == SP_STATE_RECORD && next == SP_STATE_READY) {
        end_span_hook(p, SP_SPAN_DISCARD);
        crash_span(p, NULL);
        discard_records(p, 0);
        sp__gpu_discard();
        sp__external_clear(&p->external);
    }
    p->state = p->holds_tracers ? next : SP_STATE_CLOSED;
    if (collected) fire_trace_ready(p);
    return s;
}

/* ---- ProfileStep events ---- */

static void open_step_event(sp_profiler *p)
{
    p->step_open = p->holds_tracers && p->state != SP_STATE_CLOSED;
    if (p->step_open) p->step_begin_ticks = sp__ticks();
}

/* The step is recorded as one complete range rather than begin/end, so a
 * user range left open across step() cannot be mistaken for its end. A
 * known num_samples (>= 0) goes right behind it, for the throughput
 * figures; stop() closes the last step with none. */
static void close_step_event(sp_profiler *p, int64_t num_samples)
{
    if (!p->step_open) return;
    p->step_open = 0;
    char name[48];
    int len = snprintf(name, sizeof name, "ProfileStep#%lld", (long long)p->step_num);
    sp_range_add(SP_EVENT_PROFILE_STEP, name, (size_t)len, p->step_begin_ticks, sp__ticks());
    if (num_samples >= 0) sp__step_samples((double)num_samples);
}

/* ---- public API ---- */

static sp_status check_options(const sp_options *o)
{
    const sp_scheduler *s = &o->scheduler;
    if ((unsigned)s->form > SP_SCHEDULER_CUSTOM)
        return sp__fail(SP_EINVAL,
                        "Invalid profiler scheduler arguments: unknown scheduler form %d (make the "
                        "scheduler with sp_scheduler_make, _range, _torch or _custom)",
                        (int)s->form);
    if (s->form == SP_SCHEDULER_CUSTOM && !s->fn)
        return sp__fail(
            SP_EINVAL,
            "Invalid profiler scheduler arguments: a custom scheduler without a function");
    if (s->form == SP_SCHEDULER_CYCLE || s->form == SP_SCHEDULER_TORCH) {
        sp_scheduler check;
        if (sp_scheduler_make(&check, s->closed, s->ready, s->record, s->repeat, s->skip_first) != SP_OK)
            return SP_EINVAL;
    }
    if (o->targets & ~0xFu) return sp__fail(SP_EINVAL, "unknown profiler target bits 0x%x", o->targets);
    const struct {
        const char *name;
        double v, max;
    } figures[] = {{"tokens_per_sample", o->tokens_per_sample, 1e12},
                   {"flops_per_step", o->flops_per_step, 1e30},
                   {"peak_tflops", o->peak_tflops, 1e9}};
    for (size_t i = 0; i < sizeof figures / sizeof *figures; i++)
        if (figures[i].v != 0 && !(figures[i].v > 0 && figures[i].v <= figures[i].max))
            return sp__fail(SP_EINVAL,
                            "sp_options.%s must be 0 (not given) or a number above 0 and "
                            "at most %g, not %g",
                            figures[i].name, figures[i].max, figures[i].v);
    return SP_OK;
}

/* A GPU asked for but not there is said at creation, as paddle says it;
 * XPU and custom devices have no tracer. */
static void warn_targets(sp_profiler *p)
{
    static const char *const names[] = {"CPU", "GPU", "XPU", "CUSTOM_DEVICE"};
    char why[512];
    if ((p->opts.targets & SP_TARGET_GPU) && sp__gpu_probe(why, sizeof why) != 0) {
        p->gpu_reported = 1;
        sp__profiler_warn(p, "%s", why);
    }
    for (int bit = 2; bit < 4; bit++)
        if (p->opts.targets & (1u << bit))
            sp__profiler_warn(p, "Profiling %s is not supported in current context.", names[bit]);
}

sp_status sp_profiler_create(const sp_options *opts, sp_profiler **out)
{
    sp_options defaults;
    sp_options_init(&defaults);
    if (!opts) opts = &defaults;
    /* With STEPPROF_STEPS set, the program's first profiler takes the
     * environment's settings and place (src/inject/env.c). */
    sp_options adopted;
    int env_schedule = sp__env_creating();
    if (out && sp__env_adopt(opts, &adopted)) {
        opts = &adopted;
        env_schedule = 1;
    }
    sp_trace_handler h = opts->on_trace_ready;
    sp_status s = out ? check_options(opts) : sp__fail(SP_EINVAL, "sp_profiler_create: out is NULL");
    sp_profiler *p = s == SP_OK ? sp__alloc(sizeof *p) : NULL;
    if (s == SP_OK && !p) s = sp__fail(SP_ENOMEM, "out of memory creating the profiler");
    if (s == SP_OK && !h.fn) {
        s = sp_handler_chrome_tracing(&h, "./profiler_log/", NULL);
        if (s != SP_OK) h = opts->on_trace_ready;
    }
    if (s != SP_OK) {
        if (h.release) h.release(h.user);
        sp__free(p);
        return s;
    }
    sp__clock_init(); /* also registers the recording stage's fork handlers */
    pthread_once(&fork_once, register_fork_handlers);
    sp__gpu_fork_init(); /* after the handlers above: its prepare handler runs first */
    p->fork_gen = sp__record_fork_generation();
    sp__external_init(&p->external);
    live_add(p);
    p->opts = *opts;
    p->opts.on_trace_ready = h;
    p->state = SP_STATE_CLOSED;
    /* The warning about a schedule recording from step 0 is for a program
     * that wrote one; STEPPROF_STEPS=0:N asked for that step outright. */
    const char *warning = env_schedule ? NULL : sp__scheduler_warning(&p->opts.scheduler);
    if (warning) sp__profiler_warn(p, "%s", warning);
    warn_targets(p);
    *out = p;
    return SP_OK;
}

static sp_status misuse(sp_profiler *p, const char *what)
{
    atomic_fetch_add(&p->misuse, 1);
    return sp__fail(SP_ESTATE, "%s", what);
}

static sp_status inert(sp_profiler *p, const char *fn)
{
    atomic_fetch_add(&p->misuse, 1);
    return sp__fail(SP_ESTATE, "%s: the profiler was created before fork(); it is inert in the "
                               "child process (create a new one there)", fn);
}

/* A start, step or stop from inside this profiler's on_trace_ready or
 * span_hook would run a transition in the middle of another one: refused,
 * counted, and nothing changes. */
static sp_status reentered(sp_profiler *p, const char *fn)
{
    atomic_fetch_add(&p->misuse, 1);
    return sp__fail(SP_EBUSY, "%s: called from %s; the profiler cannot be driven from "
                              "its own callback (call it after the callback returns)", fn,
                    p->in_hook ? "span_hook" : "on_trace_ready");
}

static int in_own_callback(const sp_profiler *p) { return p->in_callback || p->in_hook; }

static void destroy_now(sp_profiler *p);

/* Ends a public call: a destroy that on_trace_ready asked for runs now,
 * after the call is done with p. The call's status and message stay. */
static sp_status done(sp_profiler *p, sp_status s)
{
    if (!p->destroy_deferred) return s;
    char text[1024];
    snprintf(text, sizeof text, "%s", sp_last_error());
    destroy_now(p);
    return s == SP_OK ? SP_OK : sp__fail(s, "%s", text);
}

/* Creates the directory of the crash dump (mkdir -p, as the trace handlers
 * do for their directory) and checks that a file can be made there, so that
 * save_on_crash never silently protects nothing. */
static sp_status check_crash_dir(sp_profiler *p)
{
    if (!p->opts.save_on_crash) return SP_OK;
    char path[4096];
    crash_file(p, path, sizeof path);
    char *slash = strrchr(path, '/');
    if (!slash) return SP_OK; /* the current directory */
    if (slash == path)
        slash[1] = '\0'; /* the root */
    else
        slash[0] = '\0';
    if (sp__mkdirs(path) != SP_OK || access(path, W_OK | X_OK) != 0)
        return sp__fail(SP_EIO, "sp_profiler_start: save_on_crash: cannot create or write the "
                                "directory '%s' of crash_path '%s'", path,
                        p->opts.crash_path ? p->opts.crash_path : "");
    return SP_OK;
}

static sp_status start_locked(sp_profiler *p)
{
    if (!p) return sp__fail(SP_EINVAL, "sp_profiler_start: profiler is NULL");
    if (inherited(p)) return inert(p, "sp_profiler_start");
    if (in_own_callback(p)) return reentered(p, "sp_profiler_start");
    if (p->started && !p->stopped) return misuse(p, "sp_profiler_start: the profiler was already started");
    sp_status s = check_crash_dir(p);
    if (s != SP_OK) return s;
    /* After stop, start begins a new span: the scheduler is asked for the
     * step number reached, which keeps counting (paddle's Profiler.start). */
    p->started = 1;
    p->stopped = 0;
    sp__exit_signals_install();
    sp__timer_push(&p->timer);
    if (p->opts.timer_only) return SP_OK;
    s = transition(p, sp_scheduler_state(&p->opts.scheduler, p->step_num));
    open_step_event(p);
    return done(p, s);
}

static sp_status step_locked(sp_profiler *p, int64_t num_samples)
{
    if (!p) return sp__fail(SP_EINVAL, "sp_profiler_step: profiler is NULL");
    if (inherited(p)) return inert(p, "sp_profiler_step");
    if (in_own_callback(p)) return reentered(p, "sp_profiler_step");
    if (!p->started) return misuse(p, "sp_profiler_step: called before sp_profiler_start");
    if (p->stopped) return misuse(p, "sp_profiler_step: called after sp_profiler_stop");
    adopt(p, 0);
    sp__timer_step(&p->timer, sp__timer_now_ns(), num_samples);
    if (p->opts.timer_only) {
        p->step_num++;
        return SP_OK;
    }
    close_step_event(p, num_samples);
    p->step_num++;
    sp_status s = transition(p, sp_scheduler_state(&p->opts.scheduler, p->step_num));
    open_step_event(p);
    return done(p, s);
}

/* Ends the running span at stop() or destroy; fires on_trace_ready if
 * asked. Returns the collection's status (a lost span is an error). */
static sp_status finish(sp_profiler *p, int fire)
{
    close_step_event(p, -1);
    if (p->state == SP_STATE_READY)
        sp__profiler_warn(p, "Improper profiler state transition: READY->CLOSED, profiler will "
                             "start and stop without saving data");
    sp_status s = recording(p->state) ? stop_with_result(p, 0) : SP_OK;
    int collected = recording(p->state) && s == SP_OK;
    release(p);
    p->state = SP_STATE_CLOSED;
    if (collected && fire) fire_trace_ready(p);
    return s;
}

static void default_report(const char *text, void *user)
{
    (void)user;
    fputs(text, stdout);
    fflush(stdout);
}

static void report_perf_summary(sp_profiler *p)
{
    sp__buf text;
    sp__buf_init(&text);
    sp__timer_perf_summary(&p->timer, &text);
    sp__timer_perf_throughput(&p->timer, p->opts.tokens_per_sample, p->opts.flops_per_step,
                              p->opts.peak_tflops, &text);
    if (text.len > 0 && !text.failed) {
        void (*fn)(const char *, void *) = p->opts.report ? p->opts.report : default_report;
        fn(sp__buf_cstr(&text), p->opts.report_user);
    }
    sp__buf_fini(&text);
}

sp_status sp_profiler_step_info(sp_profiler *p, const char *unit, char *buf, size_t size)
{
    if (!p || !buf || size == 0) return sp__fail(SP_EINVAL, "sp_profiler_step_info: no buffer");
    buf[0] = '\0';
    if (inherited(p)) return inert(p, "sp_profiler_step_info");
    if (!p->started) return misuse(p, "sp_profiler_step_info: called before sp_profiler_start");
    sp__buf text;
    sp__buf_init(&text);
    sp__timer_step_info(&p->timer, unit, &text);
    snprintf(buf, size, "%s", sp__buf_cstr(&text));
    sp_status s = text.failed ? sp__fail(SP_ENOMEM, "out of memory") : SP_OK;
    sp__buf_fini(&text);
    return s;
}

/* stop()'s work after the checks: ends the timer and the span, delivers the
 * span (on_trace_ready) and waits for the writer. perf: print the Perf
 * Summary. */
static sp_status stop_span(sp_profiler *p, int perf)
{
    p->stopped = 1;
    sp__timer_pop(&p->timer);
    if (perf) report_perf_summary(p);
    if (p->opts.timer_only) return SP_OK;
    adopt(p, 0);
    sp_status collected = finish(p, 1);
    char collect_error[512];
    snprintf(collect_error, sizeof collect_error, "%s", sp_last_error());
    sp_status s = sp__writer_wait(p->writer);
    adopt(p, 1); /* stop() with nothing to collect: those of earlier steps */
    if (s == SP_OK && collected != SP_OK) s = sp__fail(collected, "%s", collect_error);
    if (s == SP_OK && p->export_status != SP_OK) s = sp__fail(p->export_status, "%s", p->export_error);
    p->export_status = SP_OK;
    return s;
}

static sp_status stop_locked(sp_profiler *p)
{
    if (!p) return sp__fail(SP_EINVAL, "sp_profiler_stop: profiler is NULL");
    if (inherited(p)) return inert(p, "sp_profiler_stop");
    if (in_own_callback(p)) return reentered(p, "sp_profiler_stop");
    if (!p->started) return misuse(p, "sp_profiler_stop: called before sp_profiler_start");
    if (p->stopped) return misuse(p, "sp_profiler_stop: the profiler was already stopped");
    return done(p, stop_span(p, 1));
}

/* Stops a profiler that its program never stopped (at destroy or at exit)
 * as stop() does, without the Perf Summary: a span being recorded is
 * collected and delivered to on_trace_ready, and pending files are
 * finished. When there was a span, one line says so and where it went
 * (issue 17: no silent loss). */
static void stop_unstopped(sp_profiler *p, const char *when)
{
    int had_span = !p->opts.timer_only && p->holds_tracers && recording(p->state);
    p->finishing_unstopped = 1;
    sp_status s = stop_span(p, 0);
    p->finishing_unstopped = 0;
    if (!had_span) return;
    if (s != SP_OK)
        sp__profiler_warn(p, "%s: the profiler was still recording (sp_profiler_stop was never "
                             "called); it was stopped, but its span was not saved: %s",
                          when, sp_last_error());
    else if (p->trace_path)
        sp__profiler_warn(p, "%s: the profiler was still recording (sp_profiler_stop was never "
                             "called); it was stopped and its trace written to %s",
                          when, p->trace_path);
    else
        sp__profiler_warn(p, "%s: the profiler was still recording (sp_profiler_stop was never "
                             "called); it was stopped and its span passed to on_trace_ready",
                          when);
}

static void destroy_now(sp_profiler *p)
{
    live_remove(p);
    p->destroy_deferred = 0;
    int child = inherited(p); /* then the record stage and the writer thread are the parent's */
    if (p->started && !p->stopped && !child) stop_unstopped(p, "sp_profiler_destroy");
    else if (p->started && !p->stopped) sp__timer_pop(&p->timer);
    if (p->writer && !child) {
        sp__writer_wait(p->writer);
        pthread_mutex_lock(&owner_lock);
        if (records_writer == p->writer) records_writer = NULL;
        pthread_mutex_unlock(&owner_lock);
        sp__writer_destroy(p->writer);
    }
    sp__span_queue_fini(&p->jobs);
    if (p->opts.on_trace_ready.release) p->opts.on_trace_ready.release(p->opts.on_trace_ready.user);
    sp_result_release(p->result);
    sp__free(p->trace_path);
    sp__external_fini(&p->external);
    sp__free(p);
}

void sp__profiler_drop_spans(sp_profiler *p) { p->opts.on_trace_ready.fn = NULL; }

void sp_profiler_destroy(sp_profiler *p)
{
    if (!p) return;
    drive_begin();
    if (in_own_callback(p))
        /* From on_trace_ready or span_hook: p is still in use by the call
         * that ran it, which destroys it when it returns. */
        p->destroy_deferred = 1;
    else
        destroy_now(p);
    drive_end(SP_OK);
}

/* The exit hook: every profiler of this process that was started and never
 * stopped is stopped and delivered (stop_unstopped), and every writer
 * thread is waited for, so no file is left half-written. A profiler whose
 * callback is running (exit() called from on_trace_ready) is left alone.
 * One profiler at a time, without the lock: its callback may create or
 * destroy profilers. */
static void stop_all(const char *when)
{
    for (;;) {
        pthread_mutex_lock(&live_lock);
        sp_profiler *p = live;
        while (p && (p->exit_seen || inherited(p) || in_own_callback(p))) p = p->live_next;
        if (p) p->exit_seen = 1;
        pthread_mutex_unlock(&live_lock);
        if (!p) return;
        if (p->started && !p->stopped) stop_unstopped(p, when);
        if (p->destroy_deferred) {
            destroy_now(p);
            continue;
        }
        if (p->writer) sp__writer_wait(p->writer);
    }
}

static void at_exit(void)
{
    drive_begin();
    stop_all("at exit");
    drive_end(SP_OK);
}

void sp__profilers_stop_for_signal(const char *when)
{
    pthread_rwlock_wrlock(&drive_lock); /* kept: the process dies next */
    stop_all(when);
}

int sp__profiler_finishing_unstopped(const sp_profiler *p) { return p->finishing_unstopped; }

sp_state sp_profiler_state(const sp_profiler *p)
{
    return p && !inherited(p) ? p->state : SP_STATE_CLOSED;
}

int64_t sp_profiler_step_num(const sp_profiler *p) { return p ? p->step_num : 0; }
const sp_result *sp_profiler_result(const sp_profiler *p)
{
    if (!p) return NULL;
    /* A span still being collected on the writer thread: its result is
     * what the caller asks for. The profiler is the caller's to change. */
    adopt((sp_profiler *)p, 1);
    return p->result;
}
const char *sp_profiler_trace_path(const sp_profiler *p) { return p ? p->trace_path : NULL; }
uint64_t sp_profiler_misuse_count(const sp_profiler *p) { return p ? atomic_load(&p->misuse) : 0; }

sp_status sp__profiler_may_add(sp_profiler *p, const char *fn)
{
    if (!p) return sp__fail(SP_EINVAL, "%s: profiler is NULL", fn);
    if (inherited(p)) return inert(p, fn);
    if (p->in_callback) return reentered(p, fn);
    return SP_OK;
}

sp__external *sp__profiler_external(sp_profiler *p) { return &p->external; }

char *sp__profiler_dist_backend(sp_profiler *p) { return p->dist_backend; }

sp_status sp__profiler_span_open(const sp_profiler *p, const char *fn)
{
    if (!p->holds_tracers || !recording(p->state))
        return sp__fail(SP_ESTATE, "%s: the profiler records no span now", fn);
    return SP_OK;
}

sp_status sp_profiler_export(sp_profiler *p, const char *path, sp_format format)
{
    if (!p) return sp__fail(SP_EINVAL, "sp_profiler_export: profiler is NULL");
    if (inherited(p)) return inert(p, "sp_profiler_export");
    adopt(p, 1);
    if (!p->result) return sp__fail(SP_ENODATA, "no profiling result to export yet: a span is "
                                                "collected at the end of its last recorded step");
    return sp__export(p->result, path, format);
}

sp_status sp__profiler_submit(sp_profiler *p, const char *path, sp_format format)
{
    if (!p->result && sp__span_queue_empty(&p->jobs))
        return sp__fail(SP_ENODATA, "no result to export");
    if (!p->writer) {
        sp_status s = sp__writer_create(&p->writer, writer_log, p);
        if (s != SP_OK) return s;
    }
    char *copy = sp__strdup(path);
    if (!copy) return sp__fail(SP_ENOMEM, "out of memory");
    sp_status s = sp__span_queue_empty(&p->jobs)
                      ? sp__writer_submit(p->writer, p->result, path, format)
                      : sp__span_queue_export(&p->jobs, p->writer, path, format);
    if (s != SP_OK) {
        sp__free(copy);
        return s;
    }
    sp__free(p->trace_path);
    p->trace_path = copy;
    return SP_OK;
}

sp_status sp_profiler_start(sp_profiler *p)
{
    drive_begin();
    return drive_end(start_locked(p));
}

sp_status sp_profiler_stop(sp_profiler *p)
{
    drive_begin();
    return drive_end(stop_locked(p));
}

sp_status sp_profiler_step(sp_profiler *p, int64_t num_samples)
{
    drive_begin();
    return drive_end(step_locked(p, num_samples));
}

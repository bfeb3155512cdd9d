/* api.h: the glue between the public profiler object and the stages
 * (record, collect, export). Only src/api/ includes it. */
#ifndef SP_API_H
#define SP_API_H

#include "export.h"

/* Queues an export of the profiler's current result to path on its writer
 * thread, and remembers path as the profiler's trace path. Used by the
 * built-in handlers. */
sp_status sp__profiler_submit(sp_profiler *prof, const char *path, sp_format format);

/* Reports that a built-in handler could not write a span: logs the message
 * and makes the next stop() return code (the first failure wins). */
void sp__profiler_export_failed(sp_profiler *prof, sp_status code, const char *fmt, ...)
    SP__PRINTF(3, 4);

/* paddle's export_chrome_tracing handler writing format (JSON, JSON_GZ or
 * PROTOBUF, named ".paddle_trace.pb"), for the environment's profiler. */
sp_status sp__handler_paddle(sp_trace_handler *out, const char *dir_name, const char *worker_name,
                             sp_format format);

/* Whether prof is being stopped because its program never stopped it (at
 * destroy, at exit, or at a terminating signal), which logs its own line. */
int sp__profiler_finishing_unstopped(const sp_profiler *prof);
/* Its span, when stopped or destroyed, goes to no on_trace_ready: the
 * environment's profiler drops a start-up span (src/inject/env.c). */
void sp__profiler_drop_spans(sp_profiler *prof);

/* Stops every started, never stopped profiler as the exit hook does, the
 * line beginning with when ("at SIGTERM"), and then holds every profiler
 * call back for good: the process is about to die of a signal. */
void sp__profilers_stop_for_signal(const char *when);

/* What every sp_profiler_add_* call checks before its arguments: prof is
 * not NULL, not inherited across fork(), not called from on_trace_ready
 * (the misuse is counted and logged); fn names the call in the message. */
sp_status sp__profiler_may_add(sp_profiler *prof, const char *fn);
/* SP_OK while prof records a span (RECORD or RECORD_AND_RETURN, holding
 * the tracers), else SP_ESTATE with a message naming fn. */
sp_status sp__profiler_span_open(const sp_profiler *prof, const char *fn);
/* Where the data other tracers add to prof's current span is held until it
 * is collected (add_external.c). */
struct sp__external *sp__profiler_external(sp_profiler *prof);
/* prof's distributed backend (SP__DIST_BACKEND_MAX bytes, "" when unset),
 * copied into each span's result as it is collected. */
char *sp__profiler_dist_backend(sp_profiler *prof);

/* Calls every sp_collect_hook_add hook with prof and event, in the order
 * they were added (collect_hooks.c). */
void sp__collect_hooks_run(sp_profiler *prof, sp_span_event event);

/* Spans collected on a profiler's writer thread (span_jobs.c), in the order
 * they ended, until the profiler adopts their results. */
typedef struct sp__span_job sp__span_job;
typedef struct sp__span_queue {
    sp__span_job *head, *tail;
} sp__span_queue;
/* Queues e's collection on w (e's parts move into the job); *ticket gets
 * its writer ticket. On failure nothing is queued and e still holds its
 * parts. */
sp_status sp__span_queue_collect(sp__span_queue *q, sp__writer *w, sp__span_end *e,
                                 uint64_t *ticket);
/* Takes every queued span whose collection has finished (all of them,
 * waiting, if wait), in order, and returns the newest one collected (one
 * reference for the caller), or NULL if none was. */
sp_result *sp__span_queue_adopt(sp__span_queue *q, sp__writer *w, int wait);
int sp__span_queue_empty(const sp__span_queue *q);
/* Queued spans, and the writer ticket of the oldest (0 when none). */
size_t sp__span_queue_length(const sp__span_queue *q);
uint64_t sp__span_queue_oldest_ticket(const sp__span_queue *q);
/* Forgets the queued spans (once the writer is idle, or gone after fork). */
void sp__span_queue_fini(sp__span_queue *q);
/* Queues, behind its collection, an export of the newest queued span. */
sp_status sp__span_queue_export(sp__span_queue *q, sp__writer *w, const char *path,
                                sp_format format);
/* Tests: called on the writer thread as each queued collection begins. */
extern void (*sp__span_collect_hook)(void);
/* Queues on w a discard of every record written up to ticks, then, if
 * trim, a trim of the pooled chunks (sp__record_trim). */
sp_status sp__records_discard_queued(sp__writer *w, uint64_t ticks, int trim, uint64_t *ticket);

/* The benchmark timer stack (timer_stack.c). */
typedef struct sp__timer sp__timer;
int64_t sp__timer_now_ns(void);
void sp__timer_push(sp__timer *t);
void sp__timer_pop(sp__timer *t);

/* Sends a warning through the profiler's log callback. */
void sp__profiler_warn(sp_profiler *prof, const char *fmt, ...) SP__PRINTF(2, 3);

#endif

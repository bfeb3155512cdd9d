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

/* The benchmark timer stack (timer_stack.c). */
typedef struct sp__timer sp__timer;
int64_t sp__timer_now_ns(void);
void sp__timer_push(sp__timer *t);
void sp__timer_pop(sp__timer *t);

/* Sends a warning through the profiler's log callback. */
void sp__profiler_warn(sp_profiler *prof, const char *fmt, ...) SP__PRINTF(2, 3);

#endif

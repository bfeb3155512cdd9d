/* profiler.h: the Profiler object of stepprof._core and its callbacks
 * (profiler.c, callbacks.c). */
#ifndef STEPPROF_PY_PROFILER_H
#define STEPPROF_PY_PROFILER_H

#include "core.h"

#include <string.h>

typedef struct SpxProfiler SpxProfiler;

/* A Python callable the core calls back. owner is borrowed: the owner
 * destroys its sp_profiler (the only caller) before it goes away. */
typedef struct spx_callback {
    PyObject *fn;
    SpxProfiler *owner;
} spx_callback;

struct SpxProfiler {
    PyObject_HEAD
    sp_profiler *prof;
    spx_callback *sched;   /* Python scheduler: owned here */
    spx_callback *handler; /* Python on_trace_ready: owned by prof, borrowed here for GC */
    PyObject *pending;     /* exception raised by a callback, re-raised by the caller */
    unsigned long busy;    /* thread inside start/step/stop/export, 0 if none */
    int stop_deferred;     /* stop() was called from inside a callback */
    int running;           /* started and not stopped since */
    int misuse_warned;
    char *crash_path;      /* sp_options.crash_path: must outlive prof; owned here */
};

sp_state spx_py_schedule(int64_t step, void *user);
void spx_py_trace_ready(sp_profiler *prof, void *user);
void spx_py_release(void *user);
void spx_py_log(sp_log_level level, const char *message, void *user);
void spx_py_report(const char *text, void *user);
void spx_py_span(sp_profiler *prof, sp_span_event event, void *user);

#endif

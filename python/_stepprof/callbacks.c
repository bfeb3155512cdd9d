/* callbacks.c: the C callbacks through which the core reaches Python: a
 * Python scheduler, a Python on_trace_ready, and the log and report sinks.
 * Each runs on the thread that called start/step/stop (which released the
 * GIL around the call), so each takes the GIL with PyGILState_Ensure. An
 * exception raised by a Python callable is stashed on the profiler object
 * and re-raised by the start()/step()/stop() call that ran it.
 *
 * Warnings go through Python's warnings module as StepprofWarning, so that
 * filterwarnings can silence them or turn them into errors (an error is
 * raised by the call that warned). The library's own threads (the trace
 * writer) are not Python threads and must never wait for the GIL, since
 * stop() and destroy wait for them: their lines are queued and warned by the
 * main thread through Py_AddPendingCall (at its next bytecode), or written to
 * the C stderr when Python is finalizing or the queue is full.
 *
 * The span hook calls the Python object's _span_event(event) when it has
 * one (stepprof.profiler.Profiler: paddle's tracer follows the spans).
 *
 * The Perf Summary (the report) goes to the Python object's _report(text)
 * when it has one (stepprof.profiler.Profiler: it decides by dialect), else
 * to sys.stdout. */
#include "profiler.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static int python_usable(void)
{
#if PY_VERSION_HEX >= 0x030D0000
    if (Py_IsFinalizing()) return 0;
#else
    if (_Py_IsFinalizing()) return 0;
#endif
    return PyGILState_GetThisThreadState() != NULL;
}

sp_state spx_py_schedule(int64_t step, void *user)
{
    spx_callback *d = user;
    PyGILState_STATE g = PyGILState_Ensure();
    sp_state state = SP_STATE_CLOSED;
    PyObject *r = PyObject_CallFunction(d->fn, "L", (long long)step);
    if (r && !PyLong_Check(r)) { /* paddle's own ProfilerState (an Enum) too */
        PyObject *got = spx_enum_int(r, "ProfilerState");
        Py_DECREF(r);
        r = got;
    }
    if (r) {
        long v = PyLong_Check(r) ? PyLong_AsLong(r) : -1;
        if (v >= SP_STATE_CLOSED && v <= SP_STATE_RECORD_AND_RETURN)
            state = (sp_state)v;
        else if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError,
                         "the scheduler must return a ProfilerState, got %R for step %lld", r,
                         (long long)step);
        Py_DECREF(r);
    }
    spx_stash_exception(&d->owner->pending, d->fn);
    PyGILState_Release(g);
    return state;
}

void spx_py_trace_ready(sp_profiler *prof, void *user)
{
    (void)prof;
    spx_callback *d = user;
    /* Not after the interpreter is gone (the C exit hook, a profiler the
     * Python exit hook missed), nor for an owner being freed. */
    if (!d->owner || !python_usable()) return;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *r = PyObject_CallOneArg(d->fn, (PyObject *)d->owner);
    Py_XDECREF(r);
    spx_stash_exception(&d->owner->pending, d->fn);
    PyGILState_Release(g);
}

void spx_py_release(void *user)
{
    spx_callback *d = user;
    if (!d) return;
    PyGILState_STATE g = PyGILState_Ensure();
    if (d->owner && d->owner->handler == d) d->owner->handler = NULL;
    Py_XDECREF(d->fn);
    PyMem_RawFree(d);
    PyGILState_Release(g);
}

/* Warnings from threads that are not Python threads, waiting for the main
 * thread. */
#define QUEUED_MAX 16
static pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;
static char queued[QUEUED_MAX][1024];
static int queued_count, call_pending;

static int warn_queued(void *unused)
{
    (void)unused;
    char batch[QUEUED_MAX][1024];
    pthread_mutex_lock(&queue_lock);
    int n = queued_count;
    memcpy(batch, queued, sizeof batch[0] * (size_t)n);
    queued_count = 0;
    call_pending = 0;
    pthread_mutex_unlock(&queue_lock);
    for (int i = 0; i < n; i++)
        if (spx_warn(batch[i]) < 0) PyErr_WriteUnraisable(NULL); /* no caller to raise in */
    return 0;
}

static void queue_warning(const char *message)
{
    pthread_mutex_lock(&queue_lock);
    int queued_here = 0;
    if (queued_count < QUEUED_MAX && (call_pending || Py_AddPendingCall(warn_queued, NULL) == 0)) {
        snprintf(queued[queued_count++], sizeof queued[0], "%s", message);
        call_pending = 1;
        queued_here = 1;
    }
    pthread_mutex_unlock(&queue_lock);
    if (!queued_here) fprintf(stderr, "stepprof: warning: %s\n", message);
}

void spx_py_log(sp_log_level level, const char *message, void *user)
{
    SpxProfiler *self = user;
    if (level == SP_LOG_INFO || !python_usable()) {
#if PY_VERSION_HEX >= 0x030D0000
        int finalizing = Py_IsFinalizing();
#else
        int finalizing = _Py_IsFinalizing();
#endif
        if (level != SP_LOG_INFO && !finalizing && Py_IsInitialized()) {
            queue_warning(message);
            return;
        }
        char line[1200];
        int n = snprintf(line, sizeof line, "stepprof: %s: %s\n",
                         level == SP_LOG_INFO ? "info" : "warning", message);
        if (n < 0) return;
        size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
        if (!python_usable()) {
            fwrite(line, 1, len, stderr);
            return;
        }
        PyGILState_STATE g = PyGILState_Ensure();
        spx_write("stderr", line, len);
        PyGILState_Release(g);
        return;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    /* An error (a filter said "error") is raised by the call that warned. */
    if (spx_warn(message) < 0) {
        if (self)
            spx_stash_exception(&self->pending, Py_None);
        else
            PyErr_WriteUnraisable(NULL);
    }
    PyGILState_Release(g);
}

void spx_py_span(sp_profiler *prof, sp_span_event event, void *user)
{
    (void)prof;
    SpxProfiler *self = user;
    /* Not after the interpreter is gone, nor for an object being cleared
     * (pr_clear sets prof to NULL before it destroys the profiler). */
    if (!self || !python_usable()) return;
    PyGILState_STATE g = PyGILState_Ensure();
    if (!self->prof) {
        PyGILState_Release(g);
        return;
    }
    PyObject *r = PyObject_CallMethod((PyObject *)self, "_span_event", "i", (int)event);
    if (r) {
        Py_DECREF(r);
    } else if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear(); /* a bare _core.Profiler follows no spans */
    } else {
        spx_stash_exception(&self->pending, Py_None);
    }
    PyGILState_Release(g);
}

void spx_py_report(const char *text, void *user)
{
    PyObject *self = user;
    if (!python_usable()) {
        fputs(text, stdout);
        fflush(stdout);
        return;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *hook = self ? PyObject_GetAttrString(self, "_report") : NULL;
    if (hook) {
        PyObject *r = PyObject_CallFunction(hook, "s", text);
        Py_XDECREF(r);
        Py_DECREF(hook);
        spx_stash_exception(&((SpxProfiler *)self)->pending, Py_None);
    } else {
        PyErr_Clear();
        spx_write("stdout", text, strlen(text));
    }
    PyGILState_Release(g);
}

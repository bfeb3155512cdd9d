/* callbacks.c: the C callbacks through which the core reaches Python: a
 * Python scheduler, a Python on_trace_ready, and the log and report sinks.
 * Each runs on the thread that called start/step/stop (which released the
 * GIL around the call), so each takes the GIL with PyGILState_Ensure. An
 * exception raised by a Python callable is stashed on the profiler object
 * and re-raised by the start()/step()/stop() call that ran it. Log lines
 * from the library's own threads (the trace writer) go to the C stderr:
 * those threads are not Python threads and must never wait for the GIL,
 * since stop() and destroy wait for them. */
#include "profiler.h"

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

void spx_py_log(sp_log_level level, const char *message, void *user)
{
    (void)user;
    static const char *const names[] = {"info", "warning", "error"};
    const char *name = names[level <= SP_LOG_ERROR ? level : SP_LOG_ERROR];
    char line[1200];
    int n = snprintf(line, sizeof line, "stepprof: %s: %s\n", name, message);
    if (n < 0) return;
    size_t len = (size_t)n < sizeof line ? (size_t)n : sizeof line - 1;
    if (!python_usable()) {
        fwrite(line, 1, len, stderr);
        return;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    spx_write("stderr", line, len);
    PyGILState_Release(g);
}

void spx_py_report(const char *text, void *user)
{
    (void)user;
    if (!python_usable()) {
        fputs(text, stdout);
        fflush(stdout);
        return;
    }
    PyGILState_STATE g = PyGILState_Ensure();
    spx_write("stdout", text, strlen(text));
    PyGILState_Release(g);
}

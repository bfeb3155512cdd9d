/* main_watch.c: _core._watch_main(qualname, found), for `stepprof run
 * --step-fn __main__:NAME` (stepprof/_autorun.py). A step function of the
 * script run as __main__ cannot be wrapped as its module is imported, as
 * other modules' are: that module is running when the injection starts, and
 * the function does not exist yet. So a profile function on the main thread
 * waits for the first call of a function of __main__ with that qualified
 * name, and when that call returns calls found() (which counts the step and
 * wraps the function for the calls after it) and removes itself.
 *
 * It is in C because it sees every call and return of the program until
 * then (its imports, its set-up): a C check costs a few nanoseconds each,
 * a Python profile function about a microsecond. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>

static PyObject *want;    /* the qualified name (str), while watching */
static PyObject *found;   /* the callable */
static PyObject *globals; /* __main__'s dict (borrowed from the module, kept alive by it) */
static PyFrameObject *call; /* the first matching call, until it returns */

static void stop_watching(void)
{
    PyEval_SetProfile(NULL, NULL);
    Py_CLEAR(want);
    Py_CLEAR(found);
    Py_CLEAR(call);
    globals = NULL;
}

static int matches(PyFrameObject *frame)
{
    PyCodeObject *code = PyFrame_GetCode(frame);
    int yes = 0;
    /* The cheap test first: most calls are of other modules' functions. */
    PyObject *g = PyFrame_GetGlobals(frame);
    if (g == globals) yes = PyUnicode_Compare(code->co_qualname, want) == 0;
    Py_XDECREF(g);
    Py_DECREF(code);
    return yes;
}

static int on_event(PyObject *unused, PyFrameObject *frame, int what, PyObject *arg)
{
    (void)unused;
    (void)arg;
    if (what == PyTrace_CALL && !call) {
        if (matches(frame)) {
            Py_INCREF(frame);
            call = frame;
        }
    } else if (what == PyTrace_RETURN && frame == call) {
        PyObject *fn = found;
        Py_INCREF(fn);
        stop_watching();
        /* An error in found() (the function not reachable by its name) is
         * the hook's to report: it must not become the program's. */
        PyObject *r = PyObject_CallNoArgs(fn);
        Py_DECREF(fn);
        if (r)
            Py_DECREF(r);
        else
            PyErr_WriteUnraisable(NULL);
    }
    return 0;
}

/* _watch_main(qualname, found): see above. Replaces a watch not done yet. */
PyObject *spx_watch_main(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *name, *fn;
    if (!PyArg_ParseTuple(args, "UO:_watch_main", &name, &fn)) return NULL;
    PyObject *main = PyImport_AddModule("__main__"); /* borrowed */
    if (!main) return NULL;
    stop_watching();
    globals = PyModule_GetDict(main);
    Py_INCREF(name);
    want = name;
    Py_INCREF(fn);
    found = fn;
    PyEval_SetProfile(on_event, NULL);
    Py_RETURN_NONE;
}

/* _watching(): whether a watch waits (for tests). */
PyObject *spx_watching(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyBool_FromLong(want != NULL);
}

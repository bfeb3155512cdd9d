/* scheduler.c: the built-in schedulers as Python values. make_scheduler,
 * the (start, end) tuple and torch's schedule() give an SpxScheduler holding
 * the C sp_scheduler, so a profiler built from one never calls into Python
 * per step; calling the object (sched(step)) gives the state, as paddle's
 * scheduler functions do. Argument errors carry the core's message
 * ("Invalid profiler scheduler arguments: end (5) must be greater than
 * start (5)"). */
#include "core.h"

static PyObject *wrap(PyObject *cls, const sp_scheduler *sched)
{
    PyTypeObject *type = (PyTypeObject *)cls;
    if (!PyType_Check(cls) || !PyType_IsSubtype(type, &SpxScheduler_Type)) {
        PyErr_SetString(PyExc_TypeError, "not a Scheduler type");
        return NULL;
    }
    SpxScheduler *self = (SpxScheduler *)type->tp_alloc(type, 0);
    if (self) self->sched = *sched;
    return (PyObject *)self;
}

static PyObject *sc_make(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"closed", "ready", "record", "repeat", "skip_first", NULL};
    long long closed, ready, record, repeat = 0, skip_first = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LLL|LL:make_scheduler", kw, &closed, &ready,
                                     &record, &repeat, &skip_first))
        return NULL;
    sp_scheduler s;
    sp_status st = sp_scheduler_make(&s, closed, ready, record, repeat, skip_first);
    return st == SP_OK ? wrap(cls, &s) : spx_raise(st);
}

static PyObject *sc_range(PyObject *cls, PyObject *args)
{
    long long start, end;
    if (!PyArg_ParseTuple(args, "LL:range", &start, &end)) return NULL;
    sp_scheduler s;
    sp_status st = sp_scheduler_range(&s, start, end);
    return st == SP_OK ? wrap(cls, &s) : spx_raise(st);
}

static PyObject *sc_torch(PyObject *cls, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"wait", "warmup", "active", "repeat", "skip_first", "skip_first_wait", NULL};
    long long wait, warmup, active, repeat = 0, skip_first = 0, skip_first_wait = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "LLL|LLL:schedule", kw, &wait, &warmup, &active,
                                     &repeat, &skip_first, &skip_first_wait))
        return NULL;
    sp_scheduler s;
    sp_status st = sp_scheduler_torch(&s, wait, warmup, active, repeat, skip_first, skip_first_wait);
    return st == SP_OK ? wrap(cls, &s) : spx_raise(st);
}

/* sched(step) -> state as an int (the Python subclass makes it a
 * ProfilerState). */
static PyObject *sc_call(SpxScheduler *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"step", NULL};
    long long step;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "L:scheduler", kw, &step)) return NULL;
    return PyLong_FromLong((long)sp_scheduler_state(&self->sched, step));
}

static PyObject *sc_repr(SpxScheduler *self)
{
    const sp_scheduler *s = &self->sched;
    switch (s->form) {
    case SP_SCHEDULER_CYCLE:
        return PyUnicode_FromFormat("make_scheduler(closed=%lld, ready=%lld, record=%lld, "
                                    "repeat=%lld, skip_first=%lld)",
                                    (long long)s->closed, (long long)s->ready, (long long)s->record,
                                    (long long)s->repeat, (long long)s->skip_first);
    case SP_SCHEDULER_TORCH:
        return PyUnicode_FromFormat("schedule(wait=%lld, warmup=%lld, active=%lld, repeat=%lld, "
                                    "skip_first=%lld, skip_first_wait=%d)",
                                    (long long)s->closed, (long long)s->ready, (long long)s->record,
                                    (long long)s->repeat, (long long)s->skip_first,
                                    (int)s->skip_first_wait);
    default:
        return PyUnicode_FromString("Scheduler()");
    }
}

static PyMethodDef sc_methods[] = {
    {"_make", (PyCFunction)(void (*)(void))sc_make, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "paddle's make_scheduler(closed, ready, record, repeat=0, skip_first=0)."},
    {"_range", (PyCFunction)sc_range, METH_VARARGS | METH_CLASS,
     "paddle's (start, end) tuple: records steps [start, end) once."},
    {"_torch", (PyCFunction)(void (*)(void))sc_torch, METH_VARARGS | METH_KEYWORDS | METH_CLASS,
     "torch's schedule(wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0)."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject SpxScheduler_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stepprof._core.Scheduler",
    .tp_doc = "A built-in scheduler: call it with a step number to get its state.",
    .tp_basicsize = sizeof(SpxScheduler),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_call = (ternaryfunc)sc_call,
    .tp_repr = (reprfunc)sc_repr,
    .tp_methods = sc_methods,
};

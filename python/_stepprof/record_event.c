/* record_event.c: RecordEvent, the Python range marker (paddle's
 * profiler.RecordEvent, torch's record_function). A C type so that
 * `with RecordEvent(name):` costs a few hundred ns while recording.
 *
 * Names: sp_range_begin stores the name pointer, which must outlive every
 * result of the span. Each distinct name is therefore interned once into a
 * process-lifetime table (the strings are never freed, so their UTF-8 stays
 * put) and passed by pointer, which also lets the collector hash each name
 * once. Past NAME_CACHE_MAX distinct names (names built with f-strings per
 * step) or for names with NUL bytes, the bytes are copied per event with
 * sp_range_begin_copy instead, so memory stays bounded.
 *
 * A range is opened only if the library wanted ranges at begin(); end()
 * closes only what this object opened, on the thread that opened it (like
 * SP_SCOPE), so a `with` block that straddles start() stays balanced.
 *
 * Each end closes its own range. The core closes the innermost open range,
 * so every thread keeps a stack of its open RecordEvents (each holds a
 * reference while open). When A ends while B, begun after A, is still open
 * (A.begin, B.begin, A.end, B.end), A's end closes B's range with A's at
 * that moment, so the trace still nests and each RecordEvent is recorded
 * once; B's later end() does nothing. B is then shorter than it ran: each
 * such end is counted (record_event_interleaved()) and reported with a
 * StepprofWarning. */
#include "core.h"

#include "pythread.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NAME_CACHE_MAX 4096

typedef struct {
    PyObject_HEAD
    PyObject *name;        /* str */
    const char *utf8;      /* the name's UTF-8 */
    Py_ssize_t len;
    int stable;            /* utf8 lives forever: pass the pointer */
    int type;              /* sp_event_type */
    int open;              /* begun while the library wanted ranges */
    unsigned long thread;  /* who began it */
} SpxRecordEvent;

/* The calling thread's open RecordEvents, outermost first. Touched only
 * with the GIL held, by the owning thread. At thread exit the array is freed
 * and the references it held are leaked (no GIL there): those events can
 * never be ended anyway. */
typedef struct {
    SpxRecordEvent **items;
    size_t len, cap;
} open_stack;

static _Thread_local open_stack *tls_stack;
static pthread_key_t stack_key;
static pthread_once_t stack_once = PTHREAD_ONCE_INIT;
static unsigned long long interleaved_ends; /* under the GIL */

static void free_stack(void *p)
{
    open_stack *st = p;
    if (!st) return;
    free(st->items);
    free(st);
}

static void make_key(void) { (void)pthread_key_create(&stack_key, free_stack); }

static open_stack *thread_stack(void)
{
    if (tls_stack) return tls_stack;
    (void)pthread_once(&stack_once, make_key);
    open_stack *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    (void)pthread_setspecific(stack_key, st);
    return tls_stack = st;
}

static int push_open(SpxRecordEvent *self)
{
    open_stack *st = thread_stack();
    if (st && st->len == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 16;
        SpxRecordEvent **items = realloc(st->items, cap * sizeof *items);
        if (!items) st = NULL;
        else {
            st->items = items;
            st->cap = cap;
        }
    }
    if (!st) return -1;
    Py_INCREF(self);
    st->items[st->len++] = self;
    return 0;
}

/* Interned names: str -> the same str, kept alive for the process. */
static PyObject *name_cache;

static int intern_name(SpxRecordEvent *self, PyObject *name)
{
    if (!name_cache && !(name_cache = PyDict_New())) return -1;
    PyObject *canon = PyDict_GetItemWithError(name_cache, name); /* borrowed */
    if (!canon && PyErr_Occurred()) return -1;
    if (!canon && PyDict_GET_SIZE(name_cache) < NAME_CACHE_MAX) {
        if (PyDict_SetItem(name_cache, name, name) < 0) return -1;
        canon = name;
    }
    PyObject *src = canon ? canon : name;
    self->utf8 = PyUnicode_AsUTF8AndSize(src, &self->len);
    if (!self->utf8) return -1;
    self->stable = canon && strlen(self->utf8) == (size_t)self->len;
    Py_INCREF(src);
    self->name = src;
    return 0;
}

static int parse_type(PyObject *obj, int *out)
{
    if (!obj || obj == Py_None) {
        *out = SP_EVENT_PYTHON_USER_DEFINED;
        return 0;
    }
    long v;
    if (PyLong_Check(obj)) {
        v = PyLong_AsLong(obj);
    } else {
        PyObject *got = spx_enum_int(obj, "TracerEventType"); /* paddle's own */
        if (!got) return -1;
        if (!PyLong_Check(got)) {
            PyErr_Format(PyExc_TypeError, "event_type must be a TracerEventType, not %.100s",
                         Py_TYPE(obj)->tp_name);
            Py_DECREF(got);
            return -1;
        }
        v = PyLong_AsLong(got);
        Py_DECREF(got);
    }
    if (v == -1 && PyErr_Occurred()) return -1;
    if (v < 0 || v >= SP_EVENT_TYPE_COUNT) {
        PyErr_Format(PyExc_ValueError, "event_type must be a TracerEventType (0..%d), got %ld",
                     SP_EVENT_TYPE_COUNT - 1, v);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static PyObject *make(PyTypeObject *type, PyObject *name, PyObject *event_type)
{
    if (!PyUnicode_Check(name)) {
        PyErr_Format(PyExc_TypeError, "RecordEvent name must be a str, not %.100s",
                     Py_TYPE(name)->tp_name);
        return NULL;
    }
    int t;
    if (parse_type(event_type, &t) < 0) return NULL;
    SpxRecordEvent *self = (SpxRecordEvent *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    self->type = t;
    if (intern_name(self, name) < 0) {
        Py_DECREF(self);
        return NULL;
    }
    return (PyObject *)self;
}

static PyObject *re_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"name", "event_type", NULL};
    PyObject *name, *event_type = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:RecordEvent", kw, &name, &event_type))
        return NULL;
    return make(type, name, event_type);
}

/* The fast constructor: positional arguments only, no tuple built. */
static PyObject *re_vectorcall(PyObject *type, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (kwnames || n < 1 || n > 2) {
        PyObject *tuple = PyTuple_New(n);
        if (!tuple) return NULL;
        for (Py_ssize_t i = 0; i < n; i++) {
            Py_INCREF(args[i]);
            PyTuple_SET_ITEM(tuple, i, args[i]);
        }
        PyObject *kwargs = NULL;
        if (kwnames) {
            kwargs = PyDict_New();
            for (Py_ssize_t i = 0; kwargs && i < PyTuple_GET_SIZE(kwnames); i++)
                if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0)
                    Py_CLEAR(kwargs);
            if (!kwargs) {
                Py_DECREF(tuple);
                return NULL;
            }
        }
        PyObject *r = re_new((PyTypeObject *)type, tuple, kwargs);
        Py_DECREF(tuple);
        Py_XDECREF(kwargs);
        return r;
    }
    return make((PyTypeObject *)type, args[0], n > 1 ? args[1] : NULL);
}

static void re_dealloc(SpxRecordEvent *self)
{
    Py_XDECREF(self->name);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static inline int begin(SpxRecordEvent *self)
{
    if (self->open || !sp__wants_begin((sp_event_type)self->type)) return 0;
    if (push_open(self) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    if (self->stable)
        sp_range_begin((sp_event_type)self->type, self->utf8);
    else
        sp_range_begin_copy((sp_event_type)self->type, self->utf8, (size_t)self->len);
    self->open = 1;
    self->thread = PyThread_get_thread_ident();
    return 0;
}

/* Closes self's range and every range opened after it that is still open;
 * warns when there were such (see the top of this file). */
static int end(SpxRecordEvent *self)
{
    if (!self->open) return 0;
    if (self->thread != PyThread_get_thread_ident()) {
        PyErr_SetString(PyExc_RuntimeError,
                        "RecordEvent.end() must be called on the thread that called begin()");
        return -1;
    }
    self->open = 0;
    open_stack *st = tls_stack;
    size_t at = st ? st->len : 0;
    while (at > 0 && st->items[at - 1] != self) at--;
    if (at == 0) return 0; /* not on this thread's stack (a reused thread id) */
    if (at == st->len) { /* innermost: the usual case */
        sp_range_end();
        st->len--;
        Py_DECREF(self); /* the caller holds another reference */
        return 0;
    }
    SpxRecordEvent *inner = st->items[st->len - 1];
    PyObject *inner_name = inner->name;
    Py_INCREF(inner_name);
    size_t closed = st->len - at;
    while (st->len >= at) {
        SpxRecordEvent *e = st->items[--st->len];
        sp_range_end();
        e->open = 0;
        if (e != self) Py_DECREF(e);
    }
    interleaved_ends++;
    int rc = PyErr_WarnFormat(spx_warning_type ? spx_warning_type : PyExc_UserWarning, 1,
                              "RecordEvent %R ended while %zu RecordEvent(s) begun inside it were "
                              "still open (the innermost %R); they are closed with it, so their "
                              "ranges end early (ranges must nest)",
                              self->name, closed, inner_name);
    Py_DECREF(inner_name);
    Py_DECREF(self);
    return rc < 0 ? -1 : 0;
}

PyObject *spx_record_event_interleaved(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyLong_FromUnsignedLongLong(interleaved_ends);
}

static PyObject *re_begin(SpxRecordEvent *self, PyObject *unused)
{
    (void)unused;
    if (begin(self) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *re_end(SpxRecordEvent *self, PyObject *unused)
{
    (void)unused;
    if (end(self) < 0) return NULL;
    Py_RETURN_NONE;
}

static PyObject *re_enter(SpxRecordEvent *self, PyObject *unused)
{
    (void)unused;
    if (begin(self) < 0) return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *re_exit(SpxRecordEvent *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)args;
    (void)nargs;
    if (end(self) < 0) return NULL;
    Py_RETURN_FALSE;
}

/* Decorator use, @RecordEvent("name"): the wrapper (with functools.wraps) is
 * built by stepprof._record, which opens a fresh range per call. */
static PyObject *re_call(SpxRecordEvent *self, PyObject *args, PyObject *kwargs)
{
    PyObject *fn;
    if (kwargs && PyDict_GET_SIZE(kwargs)) {
        PyErr_SetString(PyExc_TypeError, "RecordEvent used as a decorator takes one function");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "O:RecordEvent.__call__", &fn)) return NULL;
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "RecordEvent decorates a callable, not %.100s",
                     Py_TYPE(fn)->tp_name);
        return NULL;
    }
    PyObject *mod = PyImport_ImportModule("stepprof._record");
    if (!mod) return NULL;
    PyObject *r = PyObject_CallMethod(mod, "decorate", "OO", (PyObject *)self, fn);
    Py_DECREF(mod);
    return r;
}

static PyObject *re_get_name(SpxRecordEvent *self, void *closure)
{
    (void)closure;
    Py_INCREF(self->name);
    return self->name;
}

static PyObject *re_get_type(SpxRecordEvent *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(self->type);
}

static PyObject *re_repr(SpxRecordEvent *self)
{
    return PyUnicode_FromFormat("RecordEvent(%R, %s)", self->name,
                                sp_event_type_name((sp_event_type)self->type));
}

static PyMethodDef re_methods[] = {
    {"begin", (PyCFunction)re_begin, METH_NOARGS, "Opens the range on the calling thread."},
    {"end", (PyCFunction)re_end, METH_NOARGS, "Closes the range opened by begin()."},
    {"__enter__", (PyCFunction)re_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))re_exit, METH_FASTCALL, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef re_getset[] = {
    {"name", (getter)re_get_name, NULL, "The range's name.", NULL},
    {"_event_type", (getter)re_get_type, NULL, "The range's TracerEventType value.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject SpxRecordEvent_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stepprof._core.RecordEvent",
    .tp_doc = "RecordEvent(name, event_type=TracerEventType.PythonUserDefined): a range "
              "recorded on the calling thread; begin()/end(), a context manager, or a "
              "decorator.",
    .tp_basicsize = sizeof(SpxRecordEvent),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_new = re_new,
    .tp_vectorcall = re_vectorcall,
    .tp_dealloc = (destructor)re_dealloc,
    .tp_call = (ternaryfunc)re_call,
    .tp_repr = (reprfunc)re_repr,
    .tp_methods = re_methods,
    .tp_getset = re_getset,
};

/* pytrace.c: the Python tracer of with_stack and with_modules. While a span
 * of a profiler made with either option records, stepprof.profiler calls
 * _pytrace_start() as the span begins and _pytrace_stop() before it is
 * collected or discarded. start() installs a C profile hook
 * (PyEval_SetProfile) on every thread of the interpreter, swapping to each
 * thread state in turn as torch's Python tracer does; stop() removes it from
 * every thread where it is still installed, so sys.getprofile() is what it
 * was before.
 *
 * Each Python call and each C call becomes one range of type PythonOp on the
 * thread that ran it, named as torch's tracer names them:
 * "path/file.py(LINE): name" (path without the sys.path / site-packages
 * prefix, LINE the line the frame was at when it started) and the repr of a
 * C function ("<built-in method items of dict object at 0x...>"). A call of
 * torch.nn.Module.__call__ is named "nn.Module: Class_N", N numbering the
 * instances of Class in the order the span first called them. In modules
 * mode (with_modules without with_stack) only those module calls are
 * recorded.
 *
 * Ranges are added whole (sp_range_add) when the call returns, not begun and
 * ended: other sources (record_function, torch's operators) begin ranges
 * inside a Python frame that end outside it (record_function.__enter__), and
 * a begin/end pair would close theirs. Each thread keeps a shadow stack of
 * its open calls; a return is matched to its call by frame, so a return the
 * hook saw no call for (a C call already running at start) is ignored, and
 * unwinding by exception (which the hook reports as returns) stays
 * balanced. Frames on the stack when the tracer starts begin at the span's
 * start, as torch begins them at its start. Those still open at stop end
 * there on the thread that stops the tracer; on other threads they are
 * dropped (a range can only be added by its own thread).
 *
 * The profiler's own frames (code in the stepprof package) and every call
 * they make are not recorded: they straddle step boundaries and are not the
 * user's code.
 *
 * Names are computed once per code object (with the line, for generators
 * and frames found at start) or C function, in a pointer-keyed table that
 * holds a reference to each key object, so pointers stay valid; the table
 * lives for the tracer's session and is freed at stop. The hook itself is a
 * hash probe, a clock read and, at return, one sp_range_add.
 *
 * All of this runs with the GIL held, which serialises the hook, start and
 * stop. */
#include "core.h"

#include "record.h"

#include <frameobject.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { MODE_OFF = 0, MODE_STACK = 1, MODE_MODULES = 2 };
enum { K_PY = 0, K_C = 1, K_SKIP = 2 };

/* One cached name. skip: the key is the profiler's own code (no range). */
typedef struct name_entry {
    const void *key;
    int line; /* -1 for a module instance, 0 when the line is the code's first */
    PyObject *owner; /* the key object, kept alive */
    PyObject *name;  /* str, NULL for skip */
    const char *utf8;
    Py_ssize_t len;
    int skip;
} name_entry;

typedef struct open_call {
    const void *frame; /* identity only: the frame (Python) or the caller's frame (C) */
    const void *callee; /* C calls: the function object */
    /* The name's UTF-8, owned by its str in the table (a str never moves,
     * while table entries do when it grows); NULL: not recorded. */
    const char *utf8;
    size_t len;
    uint64_t begin;
    int kind;
} open_call;

/* The hook's per-thread object (the `obj` PyEval_SetProfile hands back). */
typedef struct {
    PyObject_HEAD
    open_call *stack;
    size_t len, cap;
    uint64_t lost;      /* calls not recorded: no memory for the stack */
    uint64_t thread_id; /* PyThreadState_GetID of its thread (unique, never reused) */
} SpxTraceCtx;

static PyTypeObject SpxTraceCtx_Type;

static struct {
    int mode;
    PyObject *ctxs;        /* list of SpxTraceCtx, one per traced thread */
    PyObject *prefixes;    /* tuple of str: path prefixes cut off file names */
    PyObject *own_prefix;  /* str: the stepprof package's directory */
    PyObject *module_code; /* torch.nn.Module.__call__.__code__, or NULL */
    PyObject *module_counts; /* dict: class -> instances numbered so far */
    name_entry *table;
    size_t table_cap, table_used;
    int failed; /* a name could not be made: that call is left out */
} T;

/* ---- the name table ---- */

static size_t hash_key(const void *key, int line)
{
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(uint32_t)line * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29));
}

static name_entry *table_find(const void *key, int line)
{
    if (!T.table) return NULL;
    size_t mask = T.table_cap - 1;
    for (size_t i = hash_key(key, line) & mask;; i = (i + 1) & mask) {
        name_entry *e = &T.table[i];
        if (!e->key) return NULL;
        if (e->key == key && e->line == line) return e;
    }
}

static int table_grow(void)
{
    size_t cap = T.table_cap ? T.table_cap * 2 : 1024;
    name_entry *fresh = calloc(cap, sizeof *fresh);
    if (!fresh) return -1;
    for (size_t i = 0; i < T.table_cap; i++) {
        name_entry *e = &T.table[i];
        if (!e->key) continue;
        size_t j = hash_key(e->key, e->line) & (cap - 1);
        while (fresh[j].key) j = (j + 1) & (cap - 1);
        fresh[j] = *e;
    }
    free(T.table);
    T.table = fresh;
    T.table_cap = cap;
    return 0;
}

/* Stores name (stolen; NULL means skip) for key; owner gets a reference. */
static name_entry *table_put(const void *key, int line, PyObject *owner, PyObject *name)
{
    if ((T.table_used + 1) * 2 > T.table_cap && table_grow() < 0) {
        Py_XDECREF(name);
        return NULL;
    }
    const char *utf8 = NULL;
    Py_ssize_t len = 0;
    if (name && !(utf8 = PyUnicode_AsUTF8AndSize(name, &len))) {
        PyErr_Clear();
        Py_DECREF(name);
        return NULL;
    }
    size_t mask = T.table_cap - 1, i = hash_key(key, line) & mask;
    while (T.table[i].key) i = (i + 1) & mask;
    Py_XINCREF(owner);
    T.table[i] = (name_entry){key, line, owner, name, utf8, len, name == NULL};
    T.table_used++;
    return &T.table[i];
}

static void table_clear(void)
{
    for (size_t i = 0; i < T.table_cap; i++) {
        Py_XDECREF(T.table[i].owner);
        Py_XDECREF(T.table[i].name);
    }
    free(T.table);
    T.table = NULL;
    T.table_cap = T.table_used = 0;
}

/* ---- making names (cold: once per key) ---- */

static int starts_with_str(PyObject *s, PyObject *prefix)
{
    Py_ssize_t n = PyUnicode_GET_LENGTH(prefix);
    if (PyUnicode_GET_LENGTH(s) < n) return 0;
    return PyUnicode_Tailmatch(s, prefix, 0, n, -1) == 1;
}

/* torch's spelling: the file without the first matching prefix. */
static PyObject *short_file(PyObject *file)
{
    Py_ssize_t n = T.prefixes ? PyTuple_GET_SIZE(T.prefixes) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *p = PyTuple_GET_ITEM(T.prefixes, i);
        if (starts_with_str(file, p))
            return PyUnicode_Substring(file, PyUnicode_GET_LENGTH(p), PyUnicode_GET_LENGTH(file));
    }
    Py_INCREF(file);
    return file;
}

static int is_own_code(PyCodeObject *code)
{
    return T.own_prefix && PyUnicode_Check(code->co_filename) &&
           starts_with_str(code->co_filename, T.own_prefix);
}

static const name_entry *code_name(PyCodeObject *code, int line)
{
    name_entry *e = table_find(code, line);
    if (e) return e;
    if (is_own_code(code)) return table_put(code, line, (PyObject *)code, NULL);
    PyObject *file = short_file(code->co_filename);
    PyObject *name = file ? PyUnicode_FromFormat("%U(%d): %U", file,
                                                 line ? line : code->co_firstlineno,
                                                 code->co_name)
                          : NULL;
    Py_XDECREF(file);
    if (!name) {
        PyErr_Clear();
        return NULL;
    }
    return table_put(code, line, (PyObject *)code, name);
}

/* "nn.Module: Class_N" for the module instance that frame's
 * Module.__call__ runs on. */
static const name_entry *module_name(PyFrameObject *frame)
{
    PyObject *locals = PyFrame_GetLocals(frame);
    PyObject *self = locals ? PyDict_GetItemString(locals, "self") : NULL; /* borrowed */
    if (!self) {
        Py_XDECREF(locals);
        PyErr_Clear();
        return NULL;
    }
    name_entry *e = table_find(self, -1);
    if (e) {
        Py_DECREF(locals);
        return e;
    }
    PyObject *cls = (PyObject *)Py_TYPE(self);
    PyObject *count = PyDict_GetItemWithError(T.module_counts, cls);
    long n = count ? PyLong_AsLong(count) : 0;
    PyObject *next = PyLong_FromLong(n + 1);
    PyObject *name = NULL;
    if (next && PyDict_SetItem(T.module_counts, cls, next) == 0)
        name = PyUnicode_FromFormat("nn.Module: %s_%ld", _PyType_Name(Py_TYPE(self)), n);
    Py_XDECREF(next);
    if (!name) {
        PyErr_Clear();
        Py_DECREF(locals);
        return NULL;
    }
    e = table_put(self, -1, self, name);
    Py_DECREF(locals);
    return e;
}

static const name_entry *c_name(PyObject *fn)
{
    /* torch keys a built-in by its method table entry: one name per
     * function, whatever object it is bound to. */
    const void *key = PyCFunction_Check(fn) ? (const void *)((PyCFunctionObject *)fn)->m_ml
                                            : (const void *)fn;
    name_entry *e = table_find(key, 0);
    if (e) return e;
    /* The profiler's own methods (RecordEvent.__exit__ ends its range
     * inside the call) are the profiler's, not the program's. */
    PyObject *self = PyCFunction_Check(fn) ? PyCFunction_GET_SELF(fn) : NULL;
    if (self && strncmp(Py_TYPE(self)->tp_name, "stepprof.", 9) == 0)
        return table_put(key, 0, fn, NULL);
    PyObject *name = PyObject_Repr(fn);
    if (!name) {
        PyErr_Clear();
        return NULL;
    }
    return table_put(key, 0, fn, name);
}

static int is_generator_code(PyCodeObject *code)
{
    return (code->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)) != 0;
}

/* ---- the hook (hot) ---- */

static int push(SpxTraceCtx *c, const void *frame, const void *callee, const name_entry *name,
                uint64_t begin, int kind)
{
    if (c->len == c->cap) {
        size_t cap = c->cap ? c->cap * 2 : 64;
        open_call *s = realloc(c->stack, cap * sizeof *s);
        if (!s) {
            c->lost++;
            return -1;
        }
        c->stack = s;
        c->cap = cap;
    }
    const char *utf8 = name && !name->skip ? name->utf8 : NULL;
    size_t len = utf8 ? (size_t)name->len : 0;
    c->stack[c->len++] = (open_call){frame, callee, utf8, len, begin, kind};
    return 0;
}

static void record(const open_call *o, uint64_t end)
{
    if (o->utf8) sp_range_add(SP_EVENT_PYTHON_OP, o->utf8, o->len, o->begin, end);
}

/* The caller's frame is the profiler's own: its calls are not the user's. */
static int in_own_frame(const SpxTraceCtx *c)
{
    return c->len > 0 && c->stack[c->len - 1].kind == K_SKIP;
}

static void on_py_call(SpxTraceCtx *c, PyFrameObject *frame)
{
    if (in_own_frame(c)) {
        push(c, frame, NULL, NULL, 0, K_SKIP);
        return;
    }
    PyCodeObject *code = PyFrame_GetCode(frame); /* new reference */
    const name_entry *name = NULL;
    int kind = K_PY;
    if (T.module_code && (PyObject *)code == T.module_code) {
        name = module_name(frame);
    } else if (T.mode == MODE_STACK) {
        name = code_name(code, is_generator_code(code) ? PyFrame_GetLineNumber(frame) : 0);
        if (name && name->skip) kind = K_SKIP;
    }
    Py_DECREF(code);
    if (!name && T.mode == MODE_MODULES) return; /* nothing to match at return */
    push(c, frame, NULL, name, sp_clock_ticks(), kind);
}

static void on_py_return(SpxTraceCtx *c, PyFrameObject *frame)
{
    size_t at = c->len;
    while (at > 0 && (c->stack[at - 1].kind == K_C || c->stack[at - 1].frame != frame)) at--;
    if (at == 0) return; /* a frame begun before the tracer saw it */
    uint64_t end = sp_clock_ticks();
    while (c->len >= at) record(&c->stack[--c->len], end);
}

static void on_c_call(SpxTraceCtx *c, PyFrameObject *frame, PyObject *fn)
{
    if (T.mode != MODE_STACK || in_own_frame(c)) return;
    push(c, frame, fn, c_name(fn), sp_clock_ticks(), K_C);
}

static void on_c_return(SpxTraceCtx *c, PyObject *fn)
{
    if (c->len == 0) return;
    open_call *o = &c->stack[c->len - 1];
    if (o->kind != K_C || o->callee != fn) return; /* a call that began before the tracer */
    c->len--;
    record(o, sp_clock_ticks());
}

static int hook(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
    SpxTraceCtx *c = (SpxTraceCtx *)obj;
    if (T.mode == MODE_OFF) return 0;
    switch (what) {
    case PyTrace_CALL: on_py_call(c, frame); break;
    case PyTrace_RETURN: on_py_return(c, frame); break;
    case PyTrace_C_CALL: on_c_call(c, frame, arg); break;
    case PyTrace_C_RETURN:
    case PyTrace_C_EXCEPTION: on_c_return(c, arg); break;
    default: break;
    }
    return 0;
}

/* ---- start and stop ---- */

static void ctx_dealloc(SpxTraceCtx *self)
{
    free(self->stack);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject SpxTraceCtx_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stepprof._core._PythonTracer",
    .tp_doc = "stepprof's Python tracer on one thread (what sys.getprofile() gives while a "
              "with_stack span records).",
    .tp_basicsize = sizeof(SpxTraceCtx),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = NULL,
    .tp_dealloc = (destructor)ctx_dealloc,
};

/* Begins every frame on ts's stack, outermost first, at `begin` plus its
 * depth in ticks: frames that begin (and, at stop, end) together must
 * still nest outermost first when the collector sorts them. */
static void push_existing(SpxTraceCtx *c, PyThreadState *ts, uint64_t begin)
{
    enum { MAX_DEPTH = 512 };
    PyFrameObject *frames[MAX_DEPTH];
    int n = 0;
    PyFrameObject *f = PyThreadState_GetFrame(ts); /* new reference */
    while (f && n < MAX_DEPTH) {
        frames[n++] = f;
        f = PyFrame_GetBack(f);
    }
    Py_XDECREF(f);
    while (n-- > 0) {
        PyFrameObject *fr = frames[n];
        PyCodeObject *code = PyFrame_GetCode(fr);
        const name_entry *name = NULL;
        int kind = K_PY;
        if (T.module_code && (PyObject *)code == T.module_code) {
            name = module_name(fr);
        } else if (T.mode == MODE_STACK) {
            name = code_name(code, PyFrame_GetLineNumber(fr));
            if (name && name->skip) kind = K_SKIP;
        }
        Py_DECREF(code);
        if (name || T.mode == MODE_STACK) push(c, fr, NULL, name, begin + c->len, kind);
        Py_DECREF(fr);
    }
}

static void reset(void)
{
    T.mode = MODE_OFF;
    Py_CLEAR(T.ctxs);
    Py_CLEAR(T.prefixes);
    Py_CLEAR(T.own_prefix);
    Py_CLEAR(T.module_code);
    Py_CLEAR(T.module_counts);
    table_clear();
}

/* _pytrace_start(mode, prefixes, own_prefix, module_code) -> list of the ids
 * of the threads left alone because they had a profile function already. */
PyObject *spx_pytrace_start(PyObject *mod, PyObject *args)
{
    (void)mod;
    int mode;
    PyObject *prefixes, *own, *module_code;
    if (!PyArg_ParseTuple(args, "iO!UO:_pytrace_start", &mode, &PyTuple_Type, &prefixes, &own,
                          &module_code))
        return NULL;
    if (T.mode != MODE_OFF) {
        PyErr_SetString(PyExc_RuntimeError, "stepprof's Python tracer is already running");
        return NULL;
    }
    if (mode != MODE_STACK && mode != MODE_MODULES) {
        PyErr_SetString(PyExc_ValueError, "_pytrace_start: mode must be 1 (stack) or 2 (modules)");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(prefixes); i++)
        if (!PyUnicode_Check(PyTuple_GET_ITEM(prefixes, i))) {
            PyErr_SetString(PyExc_TypeError, "_pytrace_start: prefixes must be str");
            return NULL;
        }
    PyObject *skipped = PyList_New(0);
    if (!skipped) return NULL;
    if (PyType_Ready(&SpxTraceCtx_Type) < 0 || !(T.ctxs = PyList_New(0)) ||
        !(T.module_counts = PyDict_New())) {
        reset();
        Py_DECREF(skipped);
        return NULL;
    }
    Py_INCREF(prefixes);
    T.prefixes = prefixes;
    Py_INCREF(own);
    T.own_prefix = own;
    if (module_code != Py_None) {
        Py_INCREF(module_code);
        T.module_code = module_code;
    }
    T.mode = mode;
    uint64_t begin = sp__record_drained_at();
    PyThreadState *me = PyThreadState_Get();
    PyInterpreterState *interp = PyThreadState_GetInterpreter(me);
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(interp); ts;
         ts = PyThreadState_Next(ts)) {
        if (ts->c_profilefunc && ts->c_profilefunc != hook) {
            PyObject *id = PyLong_FromUnsignedLong(PyThreadState_GetID(ts));
            if (!id || PyList_Append(skipped, id) < 0) PyErr_Clear();
            Py_XDECREF(id);
            continue;
        }
        SpxTraceCtx *c = PyObject_New(SpxTraceCtx, &SpxTraceCtx_Type);
        if (!c) break;
        c->stack = NULL;
        c->len = c->cap = 0;
        c->lost = 0;
        c->thread_id = PyThreadState_GetID(ts);
        if (PyList_Append(T.ctxs, (PyObject *)c) < 0) {
            Py_DECREF(c);
            break;
        }
        Py_DECREF(c); /* the list holds it */
        push_existing(c, ts, begin);
        PyThreadState_Swap(ts);
        PyEval_SetProfile(hook, (PyObject *)c);
        PyThreadState_Swap(me);
    }
    if (PyErr_Occurred()) {
        Py_DECREF(skipped);
        PyObject *t, *v, *tb;
        PyErr_Fetch(&t, &v, &tb);
        PyObject *r = spx_pytrace_stop(NULL, NULL);
        Py_XDECREF(r);
        PyErr_Restore(t, v, tb);
        return NULL;
    }
    return skipped;
}

/* _pytrace_stop(): removes the hook from every thread that still has it,
 * ends the calling thread's open calls now, frees the session. Returns the
 * number of calls left out for want of memory. */
PyObject *spx_pytrace_stop(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    if (T.mode == MODE_OFF && !T.ctxs) return PyLong_FromLong(0);
    T.mode = MODE_OFF;
    PyThreadState *me = PyThreadState_Get();
    /* A thread whose hook was taken off during the span (sys.setprofile)
     * saw no returns since: its open calls are stale, not running. */
    int me_hooked = me->c_profilefunc == hook;
    PyInterpreterState *interp = PyThreadState_GetInterpreter(me);
    for (PyThreadState *ts = PyInterpreterState_ThreadHead(interp); ts;
         ts = PyThreadState_Next(ts)) {
        if (ts->c_profilefunc != hook) continue;
        PyThreadState_Swap(ts);
        PyEval_SetProfile(NULL, NULL);
        PyThreadState_Swap(me);
    }
    unsigned long long lost = 0;
    uint64_t end = sp_clock_ticks();
    Py_ssize_t n = T.ctxs ? PyList_GET_SIZE(T.ctxs) : 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        SpxTraceCtx *c = (SpxTraceCtx *)PyList_GET_ITEM(T.ctxs, i);
        lost += c->lost;
        /* The calling thread's open calls end now, the outermost last;
         * other threads' cannot be added from here and are dropped. */
        if (me_hooked && c->thread_id == PyThreadState_GetID(me))
            for (size_t k = 0; k < c->len; k++) record(&c->stack[k], end - k);
        c->len = 0;
    }
    reset();
    return PyLong_FromUnsignedLongLong(lost);
}

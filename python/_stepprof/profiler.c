/* profiler.c: stepprof._core.Profiler, the C half of stepprof.profiler's
 * Profiler (the Python subclass parses paddle's arguments and passes plain
 * values to _configure). It owns one sp_profiler and the Python callables
 * the core calls back.
 *
 * Re-entrancy: on_trace_ready and a Python scheduler run inside step() or
 * stop(), on the calling thread. From there, reading calls (summary, export,
 * result, step_info) work; stop() is deferred until the outer call returns
 * (paddle's guide calls prof.stop() inside on_trace_ready); start() and step()
 * raise RuntimeError. A call from another thread while one is running raises
 * RuntimeError instead of racing on the C object.
 *
 * A profiler started and never stopped is not lost (issue 17): at exit,
 * stepprof.profiler's atexit hook calls _stop_at_exit(), and a profiler
 * dropped while running is stopped by its finalizer (tp_finalize, where the
 * object is still alive and may be passed to on_trace_ready). Either way the
 * span is delivered and one line on sys.stderr says where it went. */
#include "inject.h"
#include "profiler.h"
#include "record_api.h"
#include "paddle_pb.h"

#include "pythread.h"
#include <stdio.h>
#include <string.h>

#define SELF ((SpxProfiler *)self)

static int ready(SpxProfiler *self)
{
    if (self->prof) return 0;
    PyErr_SetString(PyExc_RuntimeError, "the profiler is not configured (or was cleared)");
    return -1;
}

/* Reading calls may run inside a callback of this thread, not beside a call
 * on another thread. */
static int check_reader(SpxProfiler *self)
{
    if (ready(self) < 0) return -1;
    if (self->busy && self->busy != PyThread_get_thread_ident()) {
        PyErr_SetString(PyExc_RuntimeError, "the profiler is in use by another thread");
        return -1;
    }
    return 0;
}

static int enter(SpxProfiler *self, const char *what)
{
    if (check_reader(self) < 0) return -1;
    if (self->busy) {
        PyErr_Format(PyExc_RuntimeError,
                     "Profiler.%s() cannot be called from on_trace_ready or a scheduler", what);
        return -1;
    }
    self->busy = PyThread_get_thread_ident();
    return 0;
}

/* Ends a start/step/stop call: a callback's exception first, then the C
 * status. Misuse (step after stop, ...) is counted by the core and warned
 * once here, not raised: paddle's loops call step() after stop(). */
static PyObject *leave(SpxProfiler *self, sp_status s, const char *msg)
{
    self->busy = 0;
    if (spx_raise_stashed(&self->pending)) return NULL;
    if (s == SP_OK || s == SP_EBUSY) Py_RETURN_NONE; /* EBUSY: the core warned */
    if (s == SP_ESTATE) {
        if (!self->misuse_warned) {
            self->misuse_warned = 1;
            if (spx_warn(msg) < 0) return NULL; /* a filter made it an error */
        }
        Py_RETURN_NONE;
    }
    PyObject *type = s == SP_ENOMEM ? PyExc_MemoryError : s == SP_EIO ? PyExc_OSError : PyExc_RuntimeError;
    PyErr_SetString(type, msg);
    return NULL;
}

/* ---- configuration ---- */

static int set_scheduler(SpxProfiler *self, PyObject *obj, sp_options *o)
{
    if (obj == Py_None) return 0;
    if (PyObject_TypeCheck(obj, &SpxScheduler_Type)) {
        o->scheduler = ((SpxScheduler *)obj)->sched;
        return 0;
    }
    if (!PyCallable_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "scheduler must be a callable, a (start, end) tuple or None, "
                                      "not %.100s", Py_TYPE(obj)->tp_name);
        return -1;
    }
    spx_callback *d = PyMem_RawMalloc(sizeof *d);
    if (!d) {
        PyErr_NoMemory();
        return -1;
    }
    Py_INCREF(obj);
    d->fn = obj;
    d->owner = self;
    self->sched = d;
    sp_status s = sp_scheduler_custom(&o->scheduler, spx_py_schedule, d);
    return s == SP_OK ? 0 : (spx_raise(s), -1);
}

/* spec: None (paddle's default), ("none",), ("chrome", dir, worker),
 * ("tensorboard", dir, worker, gzip), ("env",) (`stepprof run`'s handler:
 * src/inject/inject.h, sp__env_handler), or a callable. */
static sp_status builtin_handler(PyObject *spec, sp_trace_handler *h)
{
    const char *kind, *worker = NULL;
    PyObject *dir = NULL;
    int gzip = 0;
    if (!PyArg_ParseTuple(spec, "s|O&zp:on_trace_ready", &kind, PyUnicode_FSConverter, &dir, &worker,
                          &gzip))
        return SP_EINVAL;
    sp_status s = SP_OK;
    if (strcmp(kind, "none") == 0) {
        *h = sp_handler_none();
    } else if (strcmp(kind, "env") == 0) {
        s = sp__env_handler(h);
        if (s != SP_OK) spx_raise(s);
    } else if (!dir) {
        PyErr_SetString(PyExc_ValueError, "on_trace_ready: a directory is required");
        s = SP_EINVAL;
    } else if (strcmp(kind, "chrome") == 0) {
        s = sp_handler_chrome_tracing(h, PyBytes_AS_STRING(dir), worker);
        if (s != SP_OK) spx_raise(s);
    } else if (strcmp(kind, "tensorboard") == 0) {
        s = sp_handler_tensorboard(h, PyBytes_AS_STRING(dir), worker, gzip != 0);
        if (s != SP_OK) spx_raise(s);
    } else {
        PyErr_Format(PyExc_ValueError, "unknown handler kind '%s'", kind);
        s = SP_EINVAL;
    }
    Py_XDECREF(dir);
    return s;
}

static int set_handler(SpxProfiler *self, PyObject *obj, sp_options *o)
{
    if (obj == Py_None) return 0;
    if (PyTuple_Check(obj)) return builtin_handler(obj, &o->on_trace_ready) == SP_OK ? 0 : -1;
    if (!PyCallable_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "on_trace_ready must be a callable or None, not %.100s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    spx_callback *d = PyMem_RawMalloc(sizeof *d);
    if (!d) {
        PyErr_NoMemory();
        return -1;
    }
    Py_INCREF(obj);
    d->fn = obj;
    d->owner = self;
    self->handler = d;
    o->on_trace_ready.fn = spx_py_trace_ready;
    o->on_trace_ready.user = d;
    o->on_trace_ready.release = spx_py_release;
    return 0;
}

static PyObject *pr_configure(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"targets", "scheduler", "on_trace_ready", "timer_only", "record_shapes",
                         "profile_memory", "with_flops", "with_stack", "buffer_cap_bytes",
                         "overwrite_oldest", "save_on_crash", "crash_path", "stream_to_disk", NULL};
    unsigned int targets = 0;
    PyObject *sched = Py_None, *handler = Py_None;
    int timer_only = 0, record_shapes = 0, profile_memory = 0, with_flops = 0, with_stack = 0;
    int overwrite_oldest = 0, save_on_crash = 0, stream_to_disk = 0;
    Py_ssize_t buffer_cap_bytes = 0;
    const char *crash_path = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|IOOpppppnppzp:_configure", kw, &targets, &sched,
                                     &handler, &timer_only, &record_shapes, &profile_memory,
                                     &with_flops, &with_stack, &buffer_cap_bytes, &overwrite_oldest,
                                     &save_on_crash, &crash_path, &stream_to_disk))
        return NULL;
    if (SELF->prof || SELF->sched || SELF->handler) {
        PyErr_SetString(PyExc_RuntimeError, "the profiler is already configured");
        return NULL;
    }
    if (buffer_cap_bytes < 0) {
        PyErr_SetString(PyExc_ValueError, "buffer_cap_bytes must be >= 0 (0: the default cap)");
        return NULL;
    }
    PyMem_RawFree(SELF->crash_path);
    SELF->crash_path = NULL;
    if (crash_path && *crash_path) {
        size_t n = strlen(crash_path) + 1;
        if (!(SELF->crash_path = PyMem_RawMalloc(n))) return PyErr_NoMemory();
        memcpy(SELF->crash_path, crash_path, n);
    }
    sp_options o;
    sp_options_init(&o);
    o.targets = targets;
    o.buffer_cap_bytes = (size_t)buffer_cap_bytes;
    o.overwrite_oldest = overwrite_oldest;
    o.save_on_crash = save_on_crash;
    o.crash_path = SELF->crash_path;
    o.stream_to_disk = stream_to_disk;
    o.timer_only = timer_only;
    o.record_shapes = record_shapes;
    o.profile_memory = profile_memory;
    o.with_flops = with_flops;
    o.with_stack = with_stack;
    o.log = spx_py_log;
    o.log_user = self;
    o.report = spx_py_report;
    o.report_user = self;
    o.span_hook = spx_py_span;
    o.span_hook_user = self;
    if (set_scheduler(SELF, sched, &o) < 0 || set_handler(SELF, handler, &o) < 0) goto fail;
    /* create releases the handler itself when it fails. */
    sp_profiler *p = NULL;
    sp_status s = sp_profiler_create(&o, &p);
    if (s != SP_OK) {
        SELF->handler = NULL;
        spx_raise(s);
        goto fail;
    }
    SELF->prof = p;
    Py_RETURN_NONE;
fail:
    /* The handler is never left allocated on failure: set_handler fails
     * before allocating, and create releases it (py_release clears
     * SELF->handler). */
    SELF->handler = NULL;
    if (SELF->sched) {
        Py_DECREF(SELF->sched->fn);
        PyMem_RawFree(SELF->sched);
        SELF->sched = NULL;
    }
    return NULL;
}

/* ---- start / step / stop ---- */

static PyObject *do_stop(SpxProfiler *self)
{
    sp_status s;
    char msg[512] = "";
    self->stop_deferred = 0;
    self->running = 0;
    Py_BEGIN_ALLOW_THREADS
    s = sp_profiler_stop(self->prof);
    if (s != SP_OK) snprintf(msg, sizeof msg, "%s", sp_last_error());
    Py_END_ALLOW_THREADS
    return leave(self, s, msg);
}

/* Runs a stop() that a callback asked for during the call that just ended. */
static PyObject *after_call(SpxProfiler *self, PyObject *result)
{
    if (!self->stop_deferred) return result;
    if (!result) {
        self->stop_deferred = 0;
        return NULL;
    }
    Py_DECREF(result);
    self->busy = PyThread_get_thread_ident();
    return do_stop(self);
}

static PyObject *pr_start(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (enter(SELF, "start") < 0) return NULL;
    sp_status s;
    char msg[512] = "";
    Py_BEGIN_ALLOW_THREADS
    s = sp_profiler_start(SELF->prof);
    if (s != SP_OK) snprintf(msg, sizeof msg, "%s", sp_last_error());
    Py_END_ALLOW_THREADS
    if (s == SP_OK || s == SP_EBUSY) SELF->running = 1;
    return after_call(SELF, leave(SELF, s, msg));
}

static PyObject *pr_step(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"num_samples", NULL};
    PyObject *n_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:step", kw, &n_obj)) return NULL;
    long long n = -1;
    if (n_obj != Py_None) {
        n = PyLong_AsLongLong(n_obj);
        if (n == -1 && PyErr_Occurred()) return NULL;
        if (n < 0) {
            PyErr_SetString(PyExc_ValueError, "num_samples must be a non-negative int or None");
            return NULL;
        }
    }
    if (enter(SELF, "step") < 0) return NULL;
    sp_status s;
    char msg[512] = "";
    Py_BEGIN_ALLOW_THREADS
    s = sp_profiler_step(SELF->prof, n);
    if (s != SP_OK) snprintf(msg, sizeof msg, "%s", sp_last_error());
    Py_END_ALLOW_THREADS
    return after_call(SELF, leave(SELF, s, msg));
}

static PyObject *pr_stop(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (check_reader(SELF) < 0) return NULL;
    if (SELF->busy) { /* inside a callback of this thread: after the outer call */
        SELF->stop_deferred = 1;
        Py_RETURN_NONE;
    }
    SELF->busy = PyThread_get_thread_ident();
    return do_stop(SELF);
}

/* Stops a profiler that was never stopped (at exit, or dropped while
 * running): as stop() does; when a span was being recorded, one line on
 * sys.stderr says that it was delivered and where. `when` begins the line.
 * Returns 0, or -1 with an exception set. */
static int stop_unstopped(SpxProfiler *self, const char *when)
{
    if (!self->prof || !self->running || self->busy) return 0;
    sp_state state = sp_profiler_state(self->prof);
    int had_span = state == SP_STATE_RECORD || state == SP_STATE_RECORD_AND_RETURN;
    self->busy = PyThread_get_thread_ident();
    PyObject *r = do_stop(self);
    if (!r) return -1;
    Py_DECREF(r);
    if (!had_span) return 0;
    const char *path = sp_profiler_trace_path(self->prof);
    char line[1400];
    int n = path ? snprintf(line, sizeof line, "stepprof: warning: %s: the profiler was still "
                            "recording (stop() was never called); it was stopped and its trace "
                            "written to %s\n", when, path)
                 : snprintf(line, sizeof line, "stepprof: warning: %s: the profiler was still "
                            "recording (stop() was never called); it was stopped and its span "
                            "passed to on_trace_ready\n", when);
    if (n > 0) spx_write("stderr", line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
    return 0;
}

static PyObject *pr_stop_at_exit(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (stop_unstopped(SELF, "at exit") < 0) return NULL;
    Py_RETURN_NONE;
}

/* ---- reading calls ---- */

static PyObject *pr_step_info(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"unit", NULL};
    const char *unit = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|z:step_info", kw, &unit)) return NULL;
    if (check_reader(SELF) < 0) return NULL;
    char buf[512];
    sp_status s = sp_profiler_step_info(SELF->prof, unit, buf, sizeof buf);
    if (s == SP_ESTATE) return PyUnicode_FromString(""); /* before start: nothing timed yet */
    if (s != SP_OK) return spx_raise(s);
    return PyUnicode_FromString(buf);
}

static PyObject *pr_result(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (check_reader(SELF) < 0) return NULL;
    /* It may wait for the span's collection on the writer thread, which
     * may log a warning, and so take the GIL. */
    unsigned long was_busy = SELF->busy;
    SELF->busy = PyThread_get_thread_ident();
    const sp_result *r;
    Py_BEGIN_ALLOW_THREADS
    r = sp_profiler_result(SELF->prof);
    Py_END_ALLOW_THREADS
    SELF->busy = was_busy;
    return spx_result_wrap(r);
}

static PyObject *pr_trace_path(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (check_reader(SELF) < 0) return NULL;
    const char *path = sp_profiler_trace_path(SELF->prof);
    if (!path) Py_RETURN_NONE;
    return PyUnicode_DecodeFSDefault(path);
}

static PyObject *pr_export(PyObject *self, PyObject *args)
{
    PyObject *path_obj;
    int format;
    if (!PyArg_ParseTuple(args, "O&i:_export", PyUnicode_FSConverter, &path_obj, &format)) return NULL;
    if (check_reader(SELF) < 0) {
        Py_DECREF(path_obj);
        return NULL;
    }
    unsigned long was_busy = SELF->busy;
    SELF->busy = PyThread_get_thread_ident();
    sp_status s;
    char msg[512] = "";
    Py_BEGIN_ALLOW_THREADS
    /* sp_profiler_export writes JSON; the protobuf goes through the result
     * (without a result, sp_profiler_export gives the usual ENODATA text). */
    const sp_result *result = sp_profiler_result(SELF->prof);
    if (format == SP_FORMAT_PROTOBUF && result)
        s = sp_result_export_protobuf(result, PyBytes_AS_STRING(path_obj));
    else
        s = sp_profiler_export(SELF->prof, PyBytes_AS_STRING(path_obj), (sp_format)format);
    if (s != SP_OK) snprintf(msg, sizeof msg, "%s", sp_last_error());
    Py_END_ALLOW_THREADS
    SELF->busy = was_busy;
    Py_DECREF(path_obj);
    if (s == SP_OK) Py_RETURN_NONE;
    PyObject *type = s == SP_EINVAL ? PyExc_ValueError : s == SP_EIO ? PyExc_OSError
                     : s == SP_ENOMEM ? PyExc_MemoryError : PyExc_RuntimeError;
    PyErr_SetString(type, msg);
    return NULL;
}

/* _add_events(events): sp_profiler_add_events with a sequence of
 * (tid, type, name, start_ns, end_ns) tuples, times on CLOCK_REALTIME.
 * Returns True when they were added, False when no span records now (or
 * inside on_trace_ready), and raises ValueError for a bad tuple or type. */
static PyObject *pr_add_events(PyObject *self, PyObject *arg)
{
    if (check_reader(SELF) < 0) return NULL;
    PyObject *seq = PySequence_Fast(arg, "_add_events: a sequence of tuples expected");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    sp_external_event *ev = PyMem_RawMalloc(sizeof *ev * (size_t)(n ? n : 1));
    if (!ev) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long long tid;
        int type;
        const char *name;
        Py_ssize_t len;
        long long start, end;
        if (!PyTuple_Check(items[i]) || !PyArg_ParseTuple(items[i], "Kis#LL:_add_events", &tid,
                                                          &type, &name, &len, &start, &end)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError,
                                "_add_events: (tid, type, name, start_ns, end_ns) expected");
            PyMem_RawFree(ev);
            Py_DECREF(seq);
            return NULL;
        }
        ev[i] =
            (sp_external_event){(uint64_t)tid, (sp_event_type)type, name, (size_t)len, start, end};
    }
    /* The names are borrowed from the tuples, which seq keeps alive. */
    sp_status s = sp_profiler_add_events(SELF->prof, ev, (size_t)n);
    PyMem_RawFree(ev);
    Py_DECREF(seq);
    if (s == SP_OK) Py_RETURN_TRUE;
    if (s == SP_ESTATE || s == SP_EBUSY) Py_RETURN_FALSE;
    return spx_raise(s);
}

/* _add_comm_info(comms): sp_profiler_add_comm_info with a sequence of
 * (tid, time_ns, collective, group, group_size, bytes, seq) tuples, each
 * describing the Communication range of thread tid open at time_ns
 * (CLOCK_REALTIME). Returns as _add_events does. */
static PyObject *pr_add_comm_info(PyObject *self, PyObject *arg)
{
    if (check_reader(SELF) < 0) return NULL;
    PyObject *seq = PySequence_Fast(arg, "_add_comm_info: a sequence of tuples expected");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    sp_comm_info *c = PyMem_RawMalloc(sizeof *c * (size_t)(n ? n : 1));
    if (!c) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long long tid;
        long long time_ns, group_size, bytes, seq_no;
        const char *coll, *group;
        Py_ssize_t coll_len, group_len;
        if (!PyTuple_Check(items[i]) ||
            !PyArg_ParseTuple(items[i], "KLs#s#LLL:_add_comm_info", &tid, &time_ns, &coll, &coll_len,
                              &group, &group_len, &group_size, &bytes, &seq_no)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "_add_comm_info: (tid, time_ns, collective, group, "
                                                 "group_size, bytes, seq) expected");
            PyMem_RawFree(c);
            Py_DECREF(seq);
            return NULL;
        }
        c[i] = (sp_comm_info){(uint64_t)tid, time_ns,   coll,  (size_t)coll_len, group, (size_t)group_len,
                              group_size,     bytes,     seq_no};
    }
    /* The texts are borrowed from the tuples, which seq keeps alive. */
    sp_status s = sp_profiler_add_comm_info(SELF->prof, c, (size_t)n);
    PyMem_RawFree(c);
    Py_DECREF(seq);
    if (s == SP_OK) Py_RETURN_TRUE;
    if (s == SP_ESTATE || s == SP_EBUSY) Py_RETURN_FALSE;
    return spx_raise(s);
}

/* _handle(): the sp_profiler in a capsule (SPX_PROFILER_CAPSULE), for the
 * torch adapter's sp_profiler_add_op_info (record_api.h). Valid while this
 * object lives; the caller holds it. */
static PyObject *pr_handle(PyObject *self, PyObject *unused)
{
    (void)unused;
    if (check_reader(SELF) < 0) return NULL;
    return PyCapsule_New(SELF->prof, SPX_PROFILER_CAPSULE, NULL);
}

/* _add_paddle_pb(fd, event_map, mem_map): paddle_pb.h. */
static PyObject *pr_add_paddle_pb(PyObject *self, PyObject *args)
{
    if (check_reader(SELF) < 0) return NULL;
    return spx_add_paddle_pb(SELF->prof, args);
}

/* _add_memory_events(events): sp_profiler_add_memory_events with a sequence
 * of (tid, type, place, ts_ns, addr, bytes, current_allocated,
 * current_reserved, peak_allocated, peak_reserved) tuples, the time on
 * CLOCK_REALTIME. Returns as _add_events does. */
static PyObject *pr_add_memory_events(PyObject *self, PyObject *arg)
{
    if (check_reader(SELF) < 0) return NULL;
    PyObject *seq = PySequence_Fast(arg, "_add_memory_events: a sequence of tuples expected");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    sp_external_mem_event *ev = PyMem_RawMalloc(sizeof *ev * (size_t)(n ? n : 1));
    if (!ev) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long long tid, addr, cur_alloc, cur_res, peak_alloc, peak_res;
        int type;
        const char *place;
        Py_ssize_t len;
        long long ts, bytes;
        if (!PyTuple_Check(items[i]) ||
            !PyArg_ParseTuple(items[i], "Kis#LKLKKKK:_add_memory_events", &tid, &type, &place, &len,
                              &ts, &addr, &bytes, &cur_alloc, &cur_res, &peak_alloc, &peak_res)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError,
                                "_add_memory_events: (tid, type, place, ts_ns, addr, bytes, "
                                "current_allocated, current_reserved, peak_allocated, "
                                "peak_reserved) expected");
            PyMem_RawFree(ev);
            Py_DECREF(seq);
            return NULL;
        }
        ev[i] = (sp_external_mem_event){(uint64_t)tid,
                                        (sp_mem_event_type)type,
                                        place,
                                        (size_t)len,
                                        ts,
                                        {addr, bytes, cur_alloc, cur_res, peak_alloc, peak_res}};
    }
    /* The places are borrowed from the tuples, which seq keeps alive. */
    sp_status s = sp_profiler_add_memory_events(SELF->prof, ev, (size_t)n);
    PyMem_RawFree(ev);
    Py_DECREF(seq);
    if (s == SP_OK) Py_RETURN_TRUE;
    if (s == SP_ESTATE || s == SP_EBUSY) Py_RETURN_FALSE;
    return spx_raise(s);
}

/* An op's inputs as a fast sequence of (key, dims, dtype) tuples, with
 * their count and their dims' total; NULL with an exception set. */
static PyObject *op_inputs(PyObject *op_inputs_obj, Py_ssize_t *dims)
{
    PyObject *seq = PySequence_Fast(op_inputs_obj, "_add_op_info: inputs must be a sequence");
    if (!seq) return NULL;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(seq); k++) {
        Py_ssize_t rank = PyTuple_Check(items[k]) && PyTuple_GET_SIZE(items[k]) == 3
                              ? PySequence_Size(PyTuple_GET_ITEM(items[k], 1))
                              : -1;
        if (rank < 0) {
            PyErr_Clear();
            PyErr_SetString(PyExc_TypeError, "_add_op_info: an input is (key, dims, dtype)");
            Py_DECREF(seq);
            return NULL;
        }
        *dims += rank;
    }
    return seq;
}

/* _add_op_info(ops): sp_profiler_add_op_info with a sequence of
 * (tid, time_ns, op_type, [(key, dims, dtype), ...], callstack, flops)
 * tuples, times on CLOCK_REALTIME. Returns True when they were added, False
 * when no span records now (or inside on_trace_ready), and raises for a bad
 * tuple (ValueError for what the C API refuses, such as a rank over 64). */
static PyObject *pr_add_op_info(PyObject *self, PyObject *arg)
{
    if (check_reader(SELF) < 0) return NULL;
    PyObject *seq = PySequence_Fast(arg, "_add_op_info: a sequence of tuples expected");
    if (!seq) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq), inputs = 0, dims = 0;
    PyObject **items = PySequence_Fast_ITEMS(seq);
    PyObject **lists = PyMem_RawCalloc((size_t)(n ? n : 1), sizeof *lists);
    sp_op_info *ops = PyMem_RawCalloc((size_t)(n ? n : 1), sizeof *ops);
    sp_op_input *in = NULL;
    int64_t *dv = NULL;
    PyObject *ret = NULL;
    if (!lists || !ops) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned long long tid, flops;
        long long time_ns;
        const char *type, *stack;
        Py_ssize_t type_len, stack_len;
        PyObject *list;
        if (!PyTuple_Check(items[i]) ||
            !PyArg_ParseTuple(items[i], "KLs#Os#K:_add_op_info", &tid, &time_ns, &type, &type_len,
                              &list, &stack, &stack_len, &flops)) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "_add_op_info: (tid, time_ns, op_type, inputs, "
                                                 "callstack, flops) expected");
            goto done;
        }
        if (!(lists[i] = op_inputs(list, &dims))) goto done;
        ops[i] = (sp_op_info){.tid = (uint64_t)tid,
                              .time_ns = time_ns,
                              .op_type = type,
                              .op_type_len = (size_t)type_len,
                              .callstack = stack,
                              .callstack_len = (size_t)stack_len,
                              .flops = (uint64_t)flops,
                              .input_count = (size_t)PySequence_Fast_GET_SIZE(lists[i])};
        inputs += PySequence_Fast_GET_SIZE(lists[i]);
    }
    in = PyMem_RawMalloc(sizeof *in * (size_t)(inputs ? inputs : 1));
    dv = PyMem_RawMalloc(sizeof *dv * (size_t)(dims ? dims : 1));
    if (!in || !dv) {
        PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t at = 0, dat = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        ops[i].inputs = &in[at];
        PyObject **tuples = PySequence_Fast_ITEMS(lists[i]);
        for (size_t k = 0; k < ops[i].input_count; k++, at++) {
            PyObject *key = PyTuple_GET_ITEM(tuples[k], 0), *dtype = PyTuple_GET_ITEM(tuples[k], 2);
            PyObject *shape = PySequence_Fast(PyTuple_GET_ITEM(tuples[k], 1),
                                              "_add_op_info: dims must be a sequence");
            Py_ssize_t key_len, dtype_len;
            const char *k8 = shape ? PyUnicode_AsUTF8AndSize(key, &key_len) : NULL;
            const char *d8 = k8 ? PyUnicode_AsUTF8AndSize(dtype, &dtype_len) : NULL;
            if (!d8) {
                Py_XDECREF(shape);
                goto done;
            }
            Py_ssize_t rank = PySequence_Fast_GET_SIZE(shape);
            if (rank > dims - dat) rank = dims - dat; /* the sequence grew since it was counted */
            for (Py_ssize_t d = 0; d < rank; d++) {
                dv[dat + d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(shape, d));
                if (dv[dat + d] == -1 && PyErr_Occurred()) break;
            }
            Py_DECREF(shape);
            if (PyErr_Occurred()) goto done;
            /* The keys and dtypes are borrowed from the tuples, which seq keeps alive. */
            in[at] =
                (sp_op_input){k8, (size_t)key_len, &dv[dat], (size_t)rank, d8, (size_t)dtype_len};
            dat += rank;
        }
    }
    sp_status s = sp_profiler_add_op_info(SELF->prof, ops, (size_t)n);
    if (s == SP_OK)
        ret = Py_True;
    else if (s == SP_ESTATE || s == SP_EBUSY)
        ret = Py_False;
    else
        spx_raise(s);
    Py_XINCREF(ret);
done:
    for (Py_ssize_t i = 0; lists && i < n; i++)
        Py_XDECREF(lists[i]);
    PyMem_RawFree(lists);
    PyMem_RawFree(ops);
    PyMem_RawFree(in);
    PyMem_RawFree(dv);
    Py_DECREF(seq);
    return ret;
}

/* _set_dist_backend(name): sp_profiler_set_dist_backend; None or "" forgets
 * the name. A name the core refuses raises ValueError. */
static PyObject *pr_set_dist_backend(PyObject *self, PyObject *arg)
{
    if (check_reader(SELF) < 0) return NULL;
    const char *name = NULL;
    if (arg != Py_None && !(name = PyUnicode_AsUTF8(arg))) return NULL;
    sp_status s = sp_profiler_set_dist_backend(SELF->prof, name);
    if (s != SP_OK) return spx_raise(s);
    Py_RETURN_NONE;
}

static PyObject *pr_get_state(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(SELF->prof ? (long)sp_profiler_state(SELF->prof) : 0);
}

static PyObject *pr_get_running(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(SELF->prof && SELF->running);
}

static PyObject *pr_get_step_num(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromLongLong(SELF->prof ? (long long)sp_profiler_step_num(SELF->prof) : 0);
}

static PyObject *pr_get_misuse(PyObject *self, void *closure)
{
    (void)closure;
    return PyLong_FromUnsignedLongLong(SELF->prof ? sp_profiler_misuse_count(SELF->prof) : 0);
}

/* ---- lifetime ---- */

static int pr_traverse(PyObject *self, visitproc visit, void *arg)
{
    if (SELF->sched) Py_VISIT(SELF->sched->fn);
    if (SELF->handler) Py_VISIT(SELF->handler->fn);
    Py_VISIT(SELF->pending);
    return 0;
}

/* Destroys the C profiler (which releases the Python on_trace_ready) and
 * drops the callables. Safe to repeat. */
static int pr_clear(PyObject *self)
{
    sp_profiler *p = SELF->prof;
    SELF->prof = NULL;
    /* The object is going away: a destroy that still delivers a span (never
     * stopped, the finalizer could not) must not hand it to Python. */
    if (SELF->handler) SELF->handler->owner = NULL;
    sp_profiler_destroy(p);
    SELF->handler = NULL;
    if (SELF->sched) {
        Py_CLEAR(SELF->sched->fn);
        PyMem_RawFree(SELF->sched);
        SELF->sched = NULL;
    }
    Py_CLEAR(SELF->pending);
    return 0;
}

/* A running profiler that is being dropped: stopped and delivered while
 * the object is still whole (PEP 442). An exception is reported as
 * unraisable, as in any finalizer. */
static void pr_finalize(PyObject *self)
{
    if (!SELF->prof || !SELF->running) return;
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *saved = PyErr_GetRaisedException();
#else
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
#endif
    if (stop_unstopped(SELF, "Profiler deleted") < 0) PyErr_WriteUnraisable(self);
#if PY_VERSION_HEX >= 0x030C0000
    PyErr_SetRaisedException(saved);
#else
    PyErr_Restore(type, value, tb);
#endif
}

static void pr_dealloc(PyObject *self)
{
    if (PyObject_CallFinalizerFromDealloc(self) < 0) return; /* resurrected */
    PyObject_GC_UnTrack(self);
    pr_clear(self);
    PyMem_RawFree(SELF->crash_path); /* after the profiler that used it */
    Py_TYPE(self)->tp_free(self);
}

static PyMethodDef pr_methods[] = {
    {"_configure", (PyCFunction)(void (*)(void))pr_configure, METH_VARARGS | METH_KEYWORDS,
     "Creates the C profiler from plain values (see stepprof.profiler.Profiler)."},
    {"start", pr_start, METH_NOARGS, "Starts profiling: CLOSED -> scheduler(0)."},
    {"step", (PyCFunction)(void (*)(void))pr_step, METH_VARARGS | METH_KEYWORDS,
     "Ends the current step and begins the next; num_samples is the batch size."},
    {"stop", pr_stop, METH_NOARGS, "Stops profiling; collects the span and calls on_trace_ready."},
    {"step_info", (PyCFunction)(void (*)(void))pr_step_info, METH_VARARGS | METH_KEYWORDS,
     "paddle's step_info(unit): reader_cost, batch_cost and ips since the last call."},
    {"_result", pr_result, METH_NOARGS, "The most recent span's result, or None."},
    {"_trace_path", pr_trace_path, METH_NOARGS, "The file a built-in handler chose last."},
    {"_export", pr_export, METH_VARARGS, "_export(path, sp_format)"},
    {"_add_events", pr_add_events, METH_O,
     "_add_events([(tid, type, name, start_ns, end_ns), ...]): ranges another tracer measured "
     "(CLOCK_REALTIME ns), added to the span being recorded; False when none is."},
    {"_add_comm_info", pr_add_comm_info, METH_O,
     "_add_comm_info([(tid, time_ns, collective, group, group_size, bytes, seq), ...]): what "
     "collectives another tracer saw, each describing the Communication range of its thread open "
     "at time_ns (CLOCK_REALTIME ns); False when no span records."},
    {"_handle", pr_handle, METH_NOARGS,
     "_handle(): the C profiler in a capsule, for the torch adapter (record_api.h)."},
    {"_add_paddle_pb", pr_add_paddle_pb, METH_VARARGS,
     "_add_paddle_pb(fd, event_map, mem_map): the host events (and, with mem_map, the memory "
     "events) of the paddle .pb in the open file fd, added to the span being recorded; False "
     "when none is. The maps are bytes: paddle's type value -> stepprof's, 0xff for none."},
    {"_add_memory_events", pr_add_memory_events, METH_O,
     "_add_memory_events([(tid, type, place, ts_ns, addr, bytes, current_allocated, "
     "current_reserved, peak_allocated, peak_reserved), ...]): allocations and frees another "
     "tracer measured (CLOCK_REALTIME ns), added to the span being recorded; False when none "
     "is."},
    {"_add_op_info", pr_add_op_info, METH_O,
     "_add_op_info([(tid, time_ns, op_type, [(key, dims, dtype), ...], callstack, flops), ...]): "
     "operators' inputs and FLOPs another tracer recorded, added to the span being recorded; "
     "False when none is."},
    {"_set_dist_backend", pr_set_dist_backend, METH_O,
     "_set_dist_backend(name): the distributed backend distributedInfo names (None forgets it)."},
    {"_stop_at_exit", pr_stop_at_exit, METH_NOARGS,
     "Stops a profiler still running at exit, saying so on sys.stderr."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef pr_getset[] = {
    {"_state", pr_get_state, NULL, "The current ProfilerState value.", NULL},
    {"_running", pr_get_running, NULL, "Started and not stopped since.", NULL},
    {"step_num", pr_get_step_num, NULL, "The current step number.", NULL},
    {"misuse_count", pr_get_misuse, NULL, "Misuses of the API counted (step after stop, ...).", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

PyTypeObject SpxProfiler_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stepprof._core.Profiler",
    .tp_doc = "The C half of stepprof.profiler.Profiler.",
    .tp_basicsize = sizeof(SpxProfiler),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .tp_new = PyType_GenericNew,
    .tp_dealloc = pr_dealloc,
    .tp_finalize = pr_finalize,
    .tp_traverse = pr_traverse,
    .tp_clear = pr_clear,
    .tp_methods = pr_methods,
    .tp_getset = pr_getset,
};

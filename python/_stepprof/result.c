/* result.c: stepprof._core.Result, one collected span as Python data. It
 * retains the sp_result, so it stays valid after the profiler moves on or is
 * destroyed. Events come out as tuples (stepprof._result builds the tree
 * from their parent indexes); summary tables come out as lines of cells from
 * sp_result_summary_table, never by parsing the printed text. Results are
 * immutable, so these calls run with the GIL released where they take long. */
#include "core.h"
#include "table_torch.h"

typedef struct {
    PyObject_HEAD
    sp_result *result;
} SpxResult;

#define SELF ((SpxResult *)self)

PyObject *spx_result_wrap(const sp_result *result)
{
    if (!result) Py_RETURN_NONE;
    SpxResult *self = PyObject_New(SpxResult, &SpxResult_Type);
    if (!self) return NULL;
    self->result = sp_result_retain(result);
    return (PyObject *)self;
}

static void rs_dealloc(PyObject *self)
{
    sp_result_release(SELF->result);
    PyObject_Free(self);
}

int spx_summary_options(sp_summary_options *o, PyObject *sorted_by, int op_detail, int thread_sep,
                        const char *time_unit, PyObject *views)
{
    sp_summary_options_init(o);
    if (sorted_by && sorted_by != Py_None) {
        PyObject *key = spx_enum_int(sorted_by, "SortedKeys"); /* paddle's own too */
        if (!key) return -1;
        if (!PyLong_Check(key)) {
            PyErr_Format(PyExc_TypeError, "sorted_by must be a SortedKeys, not %.100s",
                         Py_TYPE(key)->tp_name);
            Py_DECREF(key);
            return -1;
        }
        long v = PyLong_AsLong(key);
        Py_DECREF(key);
        if (v == -1 && PyErr_Occurred()) return -1;
        if (v < SP_SORTED_CPU_TOTAL || v > SP_SORTED_GPU_MIN) {
            PyErr_Format(PyExc_ValueError, "sorted_by must be a SortedKeys (0..7), got %ld", v);
            return -1;
        }
        o->sorted_by = (sp_sorted_key)v;
    }
    o->op_detail = op_detail != 0;
    o->thread_sep = thread_sep != 0;
    if (time_unit) o->time_unit = time_unit;
    o->views = 0;
    if (!views || views == Py_None) return 0;
    PyObject *one = spx_enum_int(views, "SummaryView"); /* one view, maybe paddle's */
    if (!one) return -1;
    PyObject *list = PyLong_Check(one) ? PyTuple_Pack(1, one) : PySequence_Tuple(views);
    Py_DECREF(one);
    if (!list) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "views must be a SummaryView or a list of them, not %.100s",
                     Py_TYPE(views)->tp_name);
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(list); i++) {
        PyObject *item = spx_enum_int(PyTuple_GET_ITEM(list, i), "SummaryView");
        if (!item) {
            Py_DECREF(list);
            return -1;
        }
        long v = PyLong_Check(item) ? PyLong_AsLong(item) : -2;
        PyTypeObject *item_type = Py_TYPE(item);
        Py_DECREF(item);
        if (v == -2 && !PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "views must hold SummaryView values, not %.100s",
                         item_type->tp_name);
        else if (!PyErr_Occurred() && (v < SP_VIEW_DEVICE || v > SP_VIEW_UDF))
            PyErr_Format(PyExc_ValueError, "views must hold SummaryView values (0..8), got %ld", v);
        if (PyErr_Occurred()) {
            Py_DECREF(list);
            return -1;
        }
        o->views |= 1u << v;
    }
    Py_DECREF(list);
    return 0;
}

static int parse_summary(PyObject *args, PyObject *kwargs, const char *fmt, sp_summary_options *o,
                         int *view)
{
    static char *kw_view[] = {"view", "sorted_by", "op_detail", "thread_sep", "time_unit", NULL};
    static char *kw_all[] = {"sorted_by", "op_detail", "thread_sep", "time_unit", "views", NULL};
    PyObject *sorted_by = Py_None, *views = Py_None;
    int op_detail = 1, thread_sep = 0;
    const char *time_unit = "ms";
    int ok = view ? PyArg_ParseTupleAndKeywords(args, kwargs, fmt, kw_view, view, &sorted_by,
                                                &op_detail, &thread_sep, &time_unit)
                  : PyArg_ParseTupleAndKeywords(args, kwargs, fmt, kw_all, &sorted_by, &op_detail,
                                                &thread_sep, &time_unit, &views);
    if (!ok) return -1;
    return spx_summary_options(o, sorted_by, op_detail, thread_sep, time_unit, views);
}

/* ---- threads and events ---- */

static PyObject *rs_threads(PyObject *self, PyObject *unused)
{
    (void)unused;
    size_t n = sp_result_thread_count(SELF->result);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        sp_thread_info t;
        if (sp_result_thread(SELF->result, i, &t) != SP_OK) {
            Py_DECREF(list);
            return spx_raise(SP_EINVAL);
        }
        PyObject *item = Py_BuildValue("(Ksnn)", (unsigned long long)t.tid, t.name ? t.name : "",
                                       (Py_ssize_t)t.event_count, (Py_ssize_t)t.dropped);
        if (!item) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* events(t) -> [(name, type, flags, start_ns, end_ns, parent, depth, value)].
 * Names are interned in the result, so equal names share one pointer: one
 * Python str per distinct pointer. */
static PyObject *rs_events(PyObject *self, PyObject *args)
{
    Py_ssize_t t;
    if (!PyArg_ParseTuple(args, "n:events", &t)) return NULL;
    sp_thread_info ti;
    if (t < 0 || sp_result_thread(SELF->result, (size_t)t, &ti) != SP_OK) {
        PyErr_Format(PyExc_IndexError, "thread index %zd out of range", t);
        return NULL;
    }
    PyObject *list = PyList_New((Py_ssize_t)ti.event_count);
    PyObject *names = PyDict_New(); /* pointer -> str */
    if (!list || !names) goto fail;
    for (size_t i = 0; i < ti.event_count; i++) {
        sp_event_info e;
        if (sp_result_event(SELF->result, (size_t)t, i, &e) != SP_OK) {
            spx_raise(SP_EINVAL);
            goto fail;
        }
        const char *cname = e.name ? e.name : "";
        PyObject *key = PyLong_FromVoidPtr((void *)cname);
        PyObject *name = key ? PyDict_GetItemWithError(names, key) : NULL;
        if (name) {
            Py_INCREF(name);
        } else if (key && !PyErr_Occurred()) {
            name = PyUnicode_DecodeUTF8(cname, (Py_ssize_t)strlen(cname), "replace");
            if (name && PyDict_SetItem(names, key, name) < 0) Py_CLEAR(name);
        }
        Py_XDECREF(key);
        if (!name) goto fail;
        PyObject *item = Py_BuildValue("(NiILLLId)", name, (int)e.type, (unsigned int)e.flags,
                                       (long long)e.start_ns, (long long)e.end_ns,
                                       (long long)e.parent, (unsigned int)e.depth, e.value);
        if (!item) goto fail;
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    Py_DECREF(names);
    return list;
fail:
    Py_XDECREF(list);
    Py_XDECREF(names);
    return NULL;
}

static int thread_arg(PyObject *self, PyObject *args, const char *fmt, size_t *t)
{
    Py_ssize_t i;
    if (!PyArg_ParseTuple(args, fmt, &i)) return -1;
    if (i < 0 || (size_t)i >= sp_result_thread_count(SELF->result)) {
        PyErr_Format(PyExc_IndexError, "thread index %zd out of range", i);
        return -1;
    }
    *t = (size_t)i;
    return 0;
}

static PyObject *str_of(const char *s)
{
    return PyUnicode_DecodeUTF8(s ? s : "", s ? (Py_ssize_t)strlen(s) : 0, "replace");
}

/* One input as (key, (dims...), dtype). */
static PyObject *op_input(const sp_result *r, size_t t, size_t i, size_t j)
{
    sp_op_input in;
    if (sp_result_op_input(r, t, i, j, &in) != SP_OK) return spx_raise(SP_EINVAL);
    PyObject *dims = PyTuple_New((Py_ssize_t)in.rank);
    for (size_t d = 0; dims && d < in.rank; d++) {
        PyObject *v = PyLong_FromLongLong((long long)in.dims[d]);
        if (!v) Py_CLEAR(dims);
        else PyTuple_SET_ITEM(dims, (Py_ssize_t)d, v);
    }
    if (!dims) return NULL;
    return Py_BuildValue("(NNN)", str_of(in.key), dims, str_of(in.dtype));
}

/* ops(t) -> [(time_ns, event, op_type, callstack, flops, [(key, dims, dtype)])]. */
static PyObject *rs_ops(PyObject *self, PyObject *args)
{
    size_t t;
    if (thread_arg(self, args, "n:ops", &t) < 0) return NULL;
    size_t n = sp_result_op_count(SELF->result, t);
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        sp_op_record op;
        if (sp_result_op(SELF->result, t, i, &op) != SP_OK) {
            Py_DECREF(list);
            return spx_raise(SP_EINVAL);
        }
        PyObject *inputs = PyList_New((Py_ssize_t)op.input_count);
        for (size_t j = 0; inputs && j < op.input_count; j++) {
            PyObject *in = op_input(SELF->result, t, i, j);
            if (!in) Py_CLEAR(inputs);
            else PyList_SET_ITEM(inputs, (Py_ssize_t)j, in);
        }
        PyObject *item = inputs ? Py_BuildValue("(LLNNKN)", (long long)op.time_ns,
                                                (long long)op.event, str_of(op.op_type),
                                                str_of(op.callstack),
                                                (unsigned long long)op.flops, inputs)
                                : NULL;
        if (!item) Py_CLEAR(list);
        else PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

/* mem_events(t) -> [(ts_ns, type, place, addr, bytes, current_allocated,
 * current_reserved, peak_allocated, peak_reserved, event)]. Places repeat,
 * so one str per distinct pointer, as events() does for names. */
static PyObject *rs_mem_events(PyObject *self, PyObject *args)
{
    size_t t;
    if (thread_arg(self, args, "n:mem_events", &t) < 0) return NULL;
    size_t n = sp_result_mem_event_count(SELF->result, t);
    PyObject *list = PyList_New((Py_ssize_t)n);
    PyObject *places = PyDict_New();
    if (!list || !places) goto fail;
    for (size_t i = 0; i < n; i++) {
        sp_mem_event_info m;
        if (sp_result_mem_event(SELF->result, t, i, &m) != SP_OK) {
            spx_raise(SP_EINVAL);
            goto fail;
        }
        PyObject *key = PyLong_FromVoidPtr((void *)m.place);
        PyObject *place = key ? PyDict_GetItemWithError(places, key) : NULL;
        if (place) {
            Py_INCREF(place);
        } else if (key && !PyErr_Occurred()) {
            place = str_of(m.place);
            if (place && PyDict_SetItem(places, key, place) < 0) Py_CLEAR(place);
        }
        Py_XDECREF(key);
        if (!place) goto fail;
        PyObject *item = Py_BuildValue(
            "(LiNKLKKKKL)", (long long)m.ts_ns, (int)m.type, place, (unsigned long long)m.info.addr,
            (long long)m.info.bytes, (unsigned long long)m.info.current_allocated,
            (unsigned long long)m.info.current_reserved, (unsigned long long)m.info.peak_allocated,
            (unsigned long long)m.info.peak_reserved, (long long)m.event);
        if (!item) goto fail;
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    Py_DECREF(places);
    return list;
fail:
    Py_XDECREF(list);
    Py_XDECREF(places);
    return NULL;
}

static PyObject *rs_counters(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *d = PyDict_New();
    for (int c = 0; d && c < SP_COUNTER_COUNT; c++) {
        PyObject *v = PyLong_FromUnsignedLongLong(sp_result_counter(SELF->result, (sp_counter_kind)c));
        if (!v || PyDict_SetItemString(d, sp_counter_name((sp_counter_kind)c), v) < 0) Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

static PyObject *rs_span(PyObject *self, PyObject *unused)
{
    (void)unused;
    int64_t start, end;
    sp_result_span(SELF->result, &start, &end);
    return Py_BuildValue("(LL)", (long long)start, (long long)end);
}

static PyObject *rs_span_index(PyObject *self, PyObject *unused)
{
    (void)unused;
    return PyLong_FromUnsignedLong(sp_result_span_index(SELF->result));
}

static PyObject *rs_export(PyObject *self, PyObject *args)
{
    PyObject *path;
    int format;
    if (!PyArg_ParseTuple(args, "O&i:export", PyUnicode_FSConverter, &path, &format)) return NULL;
    sp_status s;
    Py_BEGIN_ALLOW_THREADS
    s = format == SP_FORMAT_PROTOBUF ? sp_result_export_protobuf(SELF->result, PyBytes_AS_STRING(path))
                                     : sp_result_export(SELF->result, PyBytes_AS_STRING(path), (sp_format)format);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (s != SP_OK) return spx_raise(s);
    Py_RETURN_NONE;
}

/* ---- tables ---- */

typedef struct {
    const sp_result *result;
    const sp_summary_options *opts;
    sp__torch_table_opts torch;
} print_job;

static sp_status print_summary(FILE *out, void *ctx)
{
    print_job *j = ctx;
    return sp_result_summary(j->result, j->opts, out);
}

static sp_status print_torch(FILE *out, void *ctx)
{
    print_job *j = ctx;
    return sp__result_table_torch_with(j->result, &j->torch, out);
}

static PyObject *rs_summary(PyObject *self, PyObject *args, PyObject *kwargs)
{
    sp_summary_options o;
    if (parse_summary(args, kwargs, "|OppsO:summary", &o, NULL) < 0) return NULL;
    print_job j = {SELF->result, &o, {0}};
    return spx_capture(print_summary, &j);
}

static PyObject *rs_table_torch(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"sort_by",         "row_limit",        "max_name_width", "time_unit",
                         "by_input_shapes", "max_shapes_width", NULL};
    print_job j = {SELF->result, NULL, {0}};
    sp__torch_table_opts_init(&j.torch);
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|zilzpl:table_torch", kw, &j.torch.sort_by,
                                     &j.torch.row_limit, &j.torch.max_name_width,
                                     &j.torch.time_unit, &j.torch.by_input_shapes,
                                     &j.torch.max_shapes_width))
        return NULL;
    return spx_capture(print_torch, &j);
}

/* table(view, ...) -> [(line_kind, [cells])] or None when the view prints
 * no table for this result. */
static PyObject *rs_table(PyObject *self, PyObject *args, PyObject *kwargs)
{
    sp_summary_options o;
    int view = 0;
    if (parse_summary(args, kwargs, "i|Opps:table", &o, &view) < 0) return NULL;
    if (view < SP_VIEW_DEVICE || view > SP_VIEW_UDF) {
        PyErr_Format(PyExc_ValueError, "view must be a SummaryView (0..8), got %d", view);
        return NULL;
    }
    sp_summary_table *t = NULL;
    sp_status s;
    Py_BEGIN_ALLOW_THREADS
    s = sp_result_summary_table(SELF->result, (sp_summary_view)view, &o, &t);
    Py_END_ALLOW_THREADS
    if (s != SP_OK) return spx_raise(s);
    if (!t) Py_RETURN_NONE;
    size_t lines = sp_summary_table_lines(t), cols = sp_summary_table_columns(t);
    PyObject *out = PyList_New((Py_ssize_t)lines);
    for (size_t i = 0; out && i < lines; i++) {
        sp_line_kind kind = sp_summary_table_line_kind(t, i);
        int one = kind != SP_LINE_HEADER && kind != SP_LINE_ROW && kind != SP_LINE_SEPARATOR;
        size_t n = one ? 1 : cols;
        PyObject *cells = PyList_New((Py_ssize_t)n);
        for (size_t c = 0; cells && c < n; c++) {
            PyObject *cell = PyUnicode_DecodeUTF8(sp_summary_table_cell(t, i, c),
                                                  (Py_ssize_t)strlen(sp_summary_table_cell(t, i, c)),
                                                  "replace");
            if (!cell) Py_CLEAR(cells);
            else PyList_SET_ITEM(cells, (Py_ssize_t)c, cell);
        }
        PyObject *item = cells ? Py_BuildValue("(iN)", (int)kind, cells) : NULL;
        if (!item) Py_CLEAR(out);
        else PyList_SET_ITEM(out, (Py_ssize_t)i, item);
    }
    sp_summary_table_destroy(t);
    return out;
}

static PyMethodDef rs_methods[] = {
    {"threads", rs_threads, METH_NOARGS, "[(tid, name, event_count, dropped)] in tid order."},
    {"events", rs_events, METH_VARARGS,
     "events(t) -> [(name, type, flags, start_ns, end_ns, parent, depth, value)]."},
    {"ops", rs_ops, METH_VARARGS,
     "ops(t) -> [(time_ns, event, op_type, callstack, flops, [(key, dims, dtype)])]."},
    {"mem_events", rs_mem_events, METH_VARARGS,
     "mem_events(t) -> [(ts_ns, type, place, addr, bytes, current_allocated, current_reserved, "
     "peak_allocated, peak_reserved, event)]."},
    {"counters", rs_counters, METH_NOARGS, "{counter name: count} of the span."},
    {"span", rs_span, METH_NOARGS, "(start_ns, end_ns) of the recording window."},
    {"span_index", rs_span_index, METH_NOARGS, "The process-wide index of the span."},
    {"export", rs_export, METH_VARARGS, "export(path, sp_format)"},
    {"summary", (PyCFunction)(void (*)(void))rs_summary, METH_VARARGS | METH_KEYWORDS,
     "The summary tables as text."},
    {"table", (PyCFunction)(void (*)(void))rs_table, METH_VARARGS | METH_KEYWORDS,
     "One summary view as [(line_kind, [cells])], or None."},
    {"table_torch", (PyCFunction)(void (*)(void))rs_table_torch, METH_VARARGS | METH_KEYWORDS,
     "torch's key_averages().table() as text: table_torch(sort_by, row_limit, max_name_width, "
     "time_unit, by_input_shapes, max_shapes_width)."},
    {NULL, NULL, 0, NULL},
};

PyTypeObject SpxResult_Type = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "stepprof._core.Result",
    .tp_doc = "One collected span (immutable).",
    .tp_basicsize = sizeof(SpxResult),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = rs_dealloc,
    .tp_methods = rs_methods,
};

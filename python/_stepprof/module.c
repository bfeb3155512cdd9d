/* module.c: stepprof._core, the CPython extension over the stepprof C core.
 * It registers the types (RecordEvent, Scheduler, Profiler, Result) and a few
 * functions; stepprof.profiler builds paddle's Python API on top. */
#include "core.h"
#include "inject.h"
#include "record_api.h"

/* Validates a built-in handler's arguments with the core's own checks (and
 * messages) when the Python handler object is made, not at first use. */
static PyObject *check_handler(PyObject *mod, PyObject *args)
{
    (void)mod;
    const char *kind, *worker = NULL;
    PyObject *dir;
    int gzip = 0;
    if (!PyArg_ParseTuple(args, "sO&z|p:_check_handler", &kind, PyUnicode_FSConverter, &dir, &worker,
                          &gzip))
        return NULL;
    sp_trace_handler h;
    sp_status s = kind[0] == 't' ? sp_handler_tensorboard(&h, PyBytes_AS_STRING(dir), worker, gzip != 0)
                                 : sp_handler_chrome_tracing(&h, PyBytes_AS_STRING(dir), worker);
    Py_DECREF(dir);
    if (s != SP_OK) return spx_raise(s);
    if (h.release) h.release(h.user);
    Py_RETURN_NONE;
}

static PyObject *is_recording(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    return PyBool_FromLong(sp_is_recording());
}

static PyObject *event_type_name(PyObject *mod, PyObject *arg)
{
    (void)mod;
    long v = PyLong_AsLong(arg);
    if (v == -1 && PyErr_Occurred()) return NULL;
    return PyUnicode_FromString(sp_event_type_name((sp_event_type)v));
}

/* load(path) -> Result: a result saved as .pb (stepprof or paddle) or as
 * stepprof's Chrome-trace JSON. */
static PyObject *load(PyObject *mod, PyObject *args)
{
    (void)mod;
    PyObject *path;
    if (!PyArg_ParseTuple(args, "O&:load", PyUnicode_FSConverter, &path)) return NULL;
    sp_result *r = NULL;
    sp_status s;
    Py_BEGIN_ALLOW_THREADS
    s = sp_result_load(PyBytes_AS_STRING(path), NULL, &r);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (s != SP_OK) return spx_raise(s);
    PyObject *wrapped = spx_result_wrap(r); /* retains */
    sp_result_release(r);
    return wrapped;
}

/* _env_discard(): the profiler that STEPPROF_STEPS made as this module
 * loaded goes, silently (src/inject/inject.h, sp__env_discard): the process
 * is one that zero-code profiling leaves alone (stepprof/_autorun.py). */
static PyObject *env_discard(PyObject *mod, PyObject *unused)
{
    (void)mod;
    (void)unused;
    sp__env_discard();
    Py_RETURN_NONE;
}

static const spx_record_api record_api = {
    .version = SPX_RECORD_API_VERSION,
    .active = &sp__host_active,
    .range_begin = sp__range_begin,
    .range_begin_copy = sp__range_begin_copy,
    .range_end = sp__range_end,
    .add_op_info = sp_profiler_add_op_info,
    .memory_event = sp__memory_event,
    .add_comm_info = sp_profiler_add_comm_info,
};

static PyMethodDef module_methods[] = {
    {"load", load, METH_VARARGS, "load(path): a saved result (.pb or stepprof's .json / .json.gz)."},
    {"_pytrace_start", spx_pytrace_start, METH_VARARGS,
     "_pytrace_start(mode, prefixes, own_prefix, module_code): hooks every thread (pytrace.c)."},
    {"_pytrace_stop", spx_pytrace_stop, METH_NOARGS,
     "_pytrace_stop(): unhooks every thread; returns the calls lost for want of memory."},
    {"_check_handler", check_handler, METH_VARARGS, "_check_handler(kind, dir, worker, gzip)"},
    {"is_recording", is_recording, METH_NOARGS, "True while some profiler records ranges."},
    {"event_type_name", event_type_name, METH_O, "paddle's name of a TracerEventType value."},
    {"record_event_interleaved", spx_record_event_interleaved, METH_NOARGS,
     "How many RecordEvent ends closed ranges begun inside them that were still open."},
    {"_reader_load_begin", spx_reader_load_begin, METH_O,
     "_reader_load_begin(reader_id): a data load begins on this thread (reader_cost)."},
    {"_env_discard", env_discard, METH_NOARGS,
     "_env_discard(): drops the profiler STEPPROF_STEPS started at load, writing nothing."},
    {"_watch_main", spx_watch_main, METH_VARARGS,
     "_watch_main(qualname, found): found() once the first call of __main__.<qualname> returns."},
    {"_watching", spx_watching, METH_NOARGS, "Whether _watch_main still waits."},
    {"_reader_load_end", spx_reader_load_end, METH_NOARGS,
     "_reader_load_end(): the load begun on this thread ends; the benchmark timer takes it."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "stepprof._core",
    .m_doc = "The C core of stepprof (see stepprof.profiler for the Python API).",
    .m_size = -1,
    .m_methods = module_methods,
};

static int add_type(PyObject *m, PyTypeObject *type, const char *name)
{
    if (PyType_Ready(type) < 0) return -1;
    Py_INCREF(type);
    if (PyModule_AddObject(m, name, (PyObject *)type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

PyMODINIT_FUNC PyInit__core(void);

PyMODINIT_FUNC PyInit__core(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return NULL;
    if (add_type(m, &SpxRecordEvent_Type, "RecordEvent") < 0 ||
        add_type(m, &SpxScheduler_Type, "Scheduler") < 0 ||
        add_type(m, &SpxProfiler_Type, "Profiler") < 0 || add_type(m, &SpxResult_Type, "Result") < 0 ||
        PyModule_AddStringConstant(m, "CORE_VERSION", SP_VERSION_STRING) < 0 ||
        PyModule_AddIntConstant(m, "FORMAT_AUTO", SP_FORMAT_AUTO) < 0 ||
        PyModule_AddIntConstant(m, "FORMAT_JSON", SP_FORMAT_JSON) < 0 ||
        PyModule_AddIntConstant(m, "FORMAT_JSON_GZ", SP_FORMAT_JSON_GZ) < 0 ||
        PyModule_AddIntConstant(m, "FORMAT_PROTOBUF", SP_FORMAT_PROTOBUF) < 0 ||
        PyModule_AddIntConstant(m, "FORMAT_PERFETTO", SP_FORMAT_PERFETTO) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    if (!spx_warning_type &&
        !(spx_warning_type = PyErr_NewExceptionWithDoc(
              "stepprof._core.StepprofWarning",
              "The category of stepprof's warnings (a UserWarning): silence them with "
              "warnings.filterwarnings('ignore', category=StepprofWarning).",
              PyExc_UserWarning, NULL))) {
        Py_DECREF(m);
        return NULL;
    }
    Py_INCREF(spx_warning_type);
    if (PyModule_AddObject(m, "StepprofWarning", spx_warning_type) < 0) {
        Py_DECREF(spx_warning_type);
        Py_DECREF(m);
        return NULL;
    }
    PyObject *capsule = PyCapsule_New((void *)&record_api, SPX_RECORD_API_CAPSULE, NULL);
    if (!capsule || PyModule_AddObject(m, "_record_api", capsule) < 0) {
        Py_XDECREF(capsule);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

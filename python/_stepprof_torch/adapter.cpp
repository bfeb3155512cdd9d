/* adapter.cpp: stepprof._torch_adapter, stepprof's one C++ file. torch's
 * operators, autograd nodes, optimizer steps and DataLoader fetches all pass
 * through RecordFunction; a global callback (the mechanism Kineto uses) turns
 * each into a stepprof range on the thread that ran it. Its API is C++ and
 * its layout is torch's, so this file is compiled against the installed
 * torch's headers (setup.py), and the Python side (stepprof/_torch_capture.py)
 * loads it only for the torch it was built for.
 *
 * The ranges go through _core's recording calls (record_api.h): the adapter
 * has no recorder of its own. The callback is registered only while a span
 * records (enable/disable, counted), so a loop pays nothing between spans,
 * and the empty callback is torch's floor for the rest. */
#include <ATen/record_function.h>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <cstring>

#include "record_api.h"

namespace {

const spx_record_api *api;
at::CallbackHandle handle;
int enabled; /* enable() calls not yet disabled; under the GIL */

bool starts_with(const char *s, const char *prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

/* torch's profiler writes ProfilerStep#N itself; stepprof has its own steps. */
bool is_torch_step(const at::RecordFunction &fn)
{
    return fn.scope() == at::RecordScope::USER_SCOPE && starts_with(fn.name(), "ProfilerStep#");
}

/* The stepprof type of a torch range, so that paddle's Overview and the
 * TensorBoard plugin's both read true (docs/semantics.md, "torch's events"). */
sp_event_type type_of(at::RecordScope scope, const char *name)
{
    switch (scope) {
    case at::RecordScope::USER_SCOPE:
        if (starts_with(name, "enumerate(DataLoader)")) return SP_EVENT_DATALOADER;
        if (starts_with(name, "Optimizer.")) return SP_EVENT_OPTIMIZATION;
        return SP_EVENT_USER_DEFINED;
    case at::RecordScope::BACKWARD_FUNCTION:
        return SP_EVENT_OPERATOR; /* an autograd node: the engine's range around it is below */
    default:
        /* The engine's range around each node it runs: FUNCTION scope. */
        if (starts_with(name, "autograd::engine::evaluate_function: ")) return SP_EVENT_BACKWARD;
        if (starts_with(name, "c10d::") || starts_with(name, "gloo:") || starts_with(name, "nccl:"))
            return SP_EVENT_COMMUNICATION;
        return SP_EVENT_OPERATOR;
    }
}

bool active() { return __atomic_load_n(api->active, __ATOMIC_RELAXED) != 0; }

/* Names are copied: only an operator's name outlives its RecordFunction
 * (user scopes and autograd nodes build theirs per call). */
std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction &fn)
{
    if (!active() || is_torch_step(fn)) return nullptr;
    const char *name = fn.name();
    api->range_begin_copy(type_of(fn.scope(), name), name, std::strlen(name));
    return nullptr;
}

void on_exit(const at::RecordFunction &fn, at::ObserverContext *)
{
    if (!active() || is_torch_step(fn)) return;
    api->range_end();
}

PyObject *attach(PyObject *, PyObject *capsule)
{
    auto *given = static_cast<const spx_record_api *>(PyCapsule_GetPointer(capsule, SPX_RECORD_API_CAPSULE));
    if (!given) return nullptr;
    if (given->version != SPX_RECORD_API_VERSION) {
        PyErr_Format(PyExc_ImportError, "stepprof's torch adapter expects recording calls of version %u, "
                     "and stepprof._core has %u: reinstall stepprof", SPX_RECORD_API_VERSION, given->version);
        return nullptr;
    }
    api = given;
    Py_RETURN_NONE;
}

PyObject *enable(PyObject *, PyObject *)
{
    if (!api) {
        PyErr_SetString(PyExc_RuntimeError, "attach() first");
        return nullptr;
    }
    if (enabled++ == 0) {
        try {
            handle = at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit));
        } catch (const std::exception &e) {
            enabled = 0;
            PyErr_Format(PyExc_RuntimeError, "torch refused the callback: %s", e.what());
            return nullptr;
        }
    }
    Py_RETURN_NONE;
}

PyObject *disable(PyObject *, PyObject *)
{
    if (enabled > 0 && --enabled == 0) {
        at::removeCallback(handle);
        handle = 0;
    }
    Py_RETURN_NONE;
}

PyObject *is_enabled(PyObject *, PyObject *) { return PyBool_FromLong(enabled > 0); }

/* The benchmarks' floor (bench/bench_torch.py): a registered callback that
 * does nothing costs what torch's machinery costs, and capture is measured
 * above it. */
std::unique_ptr<at::ObserverContext> on_enter_nothing(const at::RecordFunction &) { return nullptr; }
void on_exit_nothing(const at::RecordFunction &, at::ObserverContext *) {}
at::CallbackHandle floor_handle;

PyObject *floor_on(PyObject *, PyObject *)
{
    if (!floor_handle)
        floor_handle = at::addGlobalCallback(at::RecordFunctionCallback(on_enter_nothing, on_exit_nothing));
    Py_RETURN_NONE;
}

PyObject *floor_off(PyObject *, PyObject *)
{
    if (floor_handle) at::removeCallback(floor_handle);
    floor_handle = 0;
    Py_RETURN_NONE;
}

PyMethodDef methods[] = {
    {"attach", attach, METH_O, "attach(capsule): record through stepprof._core's recording calls."},
    {"enable", enable, METH_NOARGS, "Registers the RecordFunction callback (counted)."},
    {"disable", disable, METH_NOARGS, "Undoes one enable(); the last one removes the callback."},
    {"is_enabled", is_enabled, METH_NOARGS, "True while the callback is registered."},
    {"_floor_on", floor_on, METH_NOARGS, "Benchmarks: registers a callback that does nothing."},
    {"_floor_off", floor_off, METH_NOARGS, "Benchmarks: removes the callback of _floor_on."},
    {nullptr, nullptr, 0, nullptr},
};

PyModuleDef module_def = {PyModuleDef_HEAD_INIT, "stepprof._torch_adapter",
                          "torch's RecordFunction events into stepprof spans (stepprof/_torch_capture.py).",
                          -1, methods, nullptr, nullptr, nullptr, nullptr};

} // namespace

PyMODINIT_FUNC PyInit__torch_adapter(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (!m) return nullptr;
    if (PyModule_AddStringConstant(m, "BUILT_FOR", SPX_TORCH_BUILT_FOR) < 0) {
        Py_DECREF(m);
        return nullptr;
    }
    return m;
}

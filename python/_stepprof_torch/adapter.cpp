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
#include <c10/core/Allocator.h>
#include <c10/util/ThreadLocalDebugInfo.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_set>
#include <vector>

#include "flops.h"
#include "record_api.h"

namespace {

const spx_record_api *api;
at::CallbackHandle handle;
int enabled;      /* enable() calls not yet disabled; under the GIL */
int shapes_asked; /* of those, the ones with record_shapes or with_flops */
int flops_asked;  /* of those, the ones with with_flops */
int comms_asked;  /* of those, the ones in a run with a torch.distributed process group */
bool with_comms;  /* collectives' records are logged */
bool with_flops;  /* FLOPs computed for the ops logged */
bool with_inputs; /* the registered callback takes the inputs */

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
        /* A process group's work as it runs (gloo's worker threads). */
        if (starts_with(name, "gloo:") || starts_with(name, "nccl:")) return SP_EVENT_COMMUNICATION;
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

/* record_shapes: each op's inputs as Kineto writes them ("Input Dims",
 * "Input type"), kept per thread until the span is collected and then
 * handed to it with sp_profiler_add_op_info, which attaches each to the
 * innermost range of its thread at its time. The time is taken just after
 * the op's range begins, before any child's. Type names are torch's static
 * strings, so an op costs no allocation once the vectors have grown. */
struct Input {
    size_t dims_at, rank;
    const char *type;
    size_t type_len;
};
struct Op {
    int64_t time_ns;
    size_t inputs_at, input_count;
    const char *name; /* interned (it names the op's range to the span), or "" */
    uint64_t flops;   /* with_flops: torch's count; else 0 */
};
/* A torch.distributed collective (a c10d:: operator), read from its
 * inputs as Kineto reads record_param_comms': the process group's name and
 * size, its sequence number for the group (the same on every rank for the
 * same collective), and the bytes of the first tensor input. */
struct Comm {
    int64_t time_ns;
    char collective[32]; /* the operator's name less "c10d::" and '_' around it */
    std::string group;
    int64_t group_size = 0, bytes = -1, seq = -1;
    bool moved = false; /* handed to the work's range (take_pending): not flushed */
};
struct ShapeLog {
    std::mutex lock; /* the thread appends, the collecting thread takes */
    uint64_t tid = 0;
    std::vector<Op> ops;
    std::vector<Input> inputs;
    std::vector<int64_t> dims;
    std::vector<Comm> comms;
};
std::mutex logs_lock;
std::vector<std::shared_ptr<ShapeLog>> logs; /* kept after their threads end */
thread_local std::shared_ptr<ShapeLog> thread_log;

ShapeLog *my_log()
{
    if (!thread_log) {
        auto log = std::make_shared<ShapeLog>();
        log->tid = (uint64_t)syscall(SYS_gettid);
        std::lock_guard<std::mutex> g(logs_lock);
        logs.push_back(log);
        thread_log = std::move(log);
    }
    return thread_log.get();
}

void put_type(ShapeLog *log, size_t dims_at, size_t rank, const char *type)
{
    log->inputs.push_back(Input{dims_at, rank, type, std::strlen(type)});
}

void log_inputs(const at::RecordFunction &fn, const char *interned_name)
{
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    ShapeLog *log = my_log();
    std::lock_guard<std::mutex> g(log->lock);
    size_t first = log->inputs.size();
    for (const c10::IValue &v : fn.inputs()) {
        size_t at = log->dims.size();
        if (v.isTensor()) {
            const at::Tensor &t = v.toTensor();
            if (!t.defined()) {
                put_type(log, at, 0, "");
                continue;
            }
            size_t rank = 0;
            try {
                if (!t.is_nested())
                    for (int64_t d : t.sizes()) log->dims.push_back(d), rank++;
            } catch (const std::exception &) { /* symbolic sizes: none kept */
                log->dims.resize(at);
                rank = 0;
            }
            auto name = t.dtype().name();
            log->inputs.push_back(Input{at, rank, name.data(), name.size()});
        } else if (v.isTensorList()) {
            put_type(log, at, 0, "TensorList");
        } else if (v.isScalar()) {
            put_type(log, at, 0, "Scalar");
        } else if (v.isIntList() || v.isDoubleList() || v.isBoolList()) {
            put_type(log, at, 0, "ScalarList");
        } else {
            put_type(log, at, 0, "");
        }
    }
    uint64_t flops = with_flops && interned_name ? spx::torch_flops(interned_name, fn.inputs()) : 0;
    log->ops.push_back(Op{(int64_t)now.tv_sec * 1000000000 + now.tv_nsec, first, log->inputs.size() - first,
                          interned_name ? interned_name : "", flops});
}

int64_t now_ns()
{
    timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

int64_t tensor_bytes(const at::Tensor &t)
{
    return t.defined() ? (int64_t)(t.numel() * (int64_t)t.element_size()) : 0;
}

/* A collective's work runs later, on a backend's thread (gloo's workers),
 * in a range of its own ("gloo:all_reduce") that ends when the collective
 * is done, where the c10d:: operator's range ended when it was queued. The
 * record goes to the work's range, which is what other ranks wait in: it is
 * found by its first tensor, the operator's, oldest first (DDP reuses a
 * bucket's tensor every step, but waits for one step's work before the
 * next). Records no work claims stay with their operator. */
struct Pending {
    const void *data;
    std::shared_ptr<ShapeLog> log;
    size_t index; /* in log->comms */
};
std::mutex pending_lock;
std::vector<Pending> pending; /* oldest first, at most PENDING_MAX */
constexpr size_t PENDING_MAX = 1024;

const void *first_data(const at::RecordFunction &fn)
{
    for (const c10::IValue &v : fn.inputs()) {
        if (v.isTensor()) return v.toTensor().defined() ? v.toTensor().data_ptr() : nullptr;
        if (v.isTensorList()) {
            for (const at::Tensor &t : v.toTensorList()) return t.defined() ? t.data_ptr() : nullptr;
            return nullptr;
        }
    }
    return nullptr;
}

/* The work range fn now beginning on this thread takes the record of the
 * operator that queued it, if one is pending. */
void take_pending(const at::RecordFunction &fn)
{
    const void *data = first_data(fn);
    if (!data) return;
    Comm c;
    {
        std::lock_guard<std::mutex> g(pending_lock);
        size_t i = 0;
        while (i < pending.size() && pending[i].data != data) i++;
        if (i == pending.size()) return;
        Pending p = pending[i];
        pending.erase(pending.begin() + (ptrdiff_t)i);
        std::lock_guard<std::mutex> l(p.log->lock);
        if (p.index >= p.log->comms.size() || p.log->comms[p.index].moved) return;
        p.log->comms[p.index].moved = true;
        c = p.log->comms[p.index];
    }
    c.moved = false;
    c.time_ns = now_ns();
    ShapeLog *log = my_log();
    std::lock_guard<std::mutex> g(log->lock);
    log->comms.push_back(std::move(c));
}

/* torch's ProcessGroup class, or null where torch.distributed registered
 * none. Inputs are matched against it before any cast: a failed cast
 * throws, and torch's exceptions take a backtrace (tens of microseconds). */
const c10::Type *process_group_type()
{
    static const c10::Type *type = []() -> const c10::Type * {
        try {
            return c10::getCustomClassType<c10::intrusive_ptr<c10d::ProcessGroup>>().get();
        } catch (const std::exception &) {
            return nullptr;
        }
    }();
    return type;
}

/* A backend without sequence numbers throws each time: asked once. */
std::atomic<bool> no_seq{false};

void read_group(const c10::IValue &v, Comm *c)
{
    try {
        auto pg = v.toCustomClass<c10d::ProcessGroup>();
        c->group = pg->getGroupName();
        c->group_size = pg->getSize();
        if (!no_seq.load(std::memory_order_relaxed)) {
            try {
                c->seq = (int64_t)pg->getSequenceNumberForGroup();
            } catch (const std::exception &) {
                no_seq.store(true, std::memory_order_relaxed);
            }
        }
    } catch (const std::exception &) { /* left unknown */
    }
}

void log_comm(const at::RecordFunction &fn, const char *name)
{
    Comm c;
    c.time_ns = now_ns();
    const char *op = name + std::strlen("c10d::");
    while (*op == '_') op++;
    size_t n = std::strlen(op);
    while (n > 0 && op[n - 1] == '_') n--;
    if (n >= sizeof c.collective) n = sizeof c.collective - 1;
    std::memcpy(c.collective, op, n);
    c.collective[n] = '\0';
    const c10::Type *pg_type = process_group_type();
    for (const c10::IValue &v : fn.inputs()) {
        if (c.bytes < 0 && v.isTensor()) {
            c.bytes = tensor_bytes(v.toTensor());
        } else if (c.bytes < 0 && v.isTensorList()) {
            c.bytes = 0;
            for (const at::Tensor &t : v.toTensorList()) c.bytes += tensor_bytes(t);
        } else if (pg_type && v.isObject() && v.type().get() == pg_type) {
            read_group(v, &c);
        }
    }
    ShapeLog *log = my_log();
    size_t index;
    {
        std::lock_guard<std::mutex> g(log->lock);
        index = log->comms.size();
        log->comms.push_back(std::move(c));
    }
    const void *data = first_data(fn);
    if (!data) return;
    std::lock_guard<std::mutex> g(pending_lock);
    if (pending.size() == PENDING_MAX) pending.erase(pending.begin());
    pending.push_back(Pending{data, thread_log, index});
}

void clear_logs()
{
    {
        std::lock_guard<std::mutex> g(pending_lock);
        pending.clear();
    }
    std::lock_guard<std::mutex> g(logs_lock);
    for (auto &log : logs) {
        std::lock_guard<std::mutex> l(log->lock);
        log->ops.clear();
        log->inputs.clear();
        log->dims.clear();
        log->comms.clear();
    }
}

/* Hands every thread's ops to prof; 0, or -1 with an exception. */
int flush_logs(sp_profiler *prof)
{
    std::lock_guard<std::mutex> g(logs_lock);
    for (auto &log : logs) {
        ShapeLog taken;
        {
            std::lock_guard<std::mutex> l(log->lock);
            taken.ops.swap(log->ops);
            taken.inputs.swap(log->inputs);
            taken.dims.swap(log->dims);
            taken.comms.swap(log->comms);
        }
        std::vector<sp_op_input> inputs(taken.inputs.size());
        for (size_t i = 0; i < inputs.size(); i++) {
            const Input &in = taken.inputs[i];
            inputs[i] = sp_op_input{"", 0, in.rank ? &taken.dims[in.dims_at] : nullptr, in.rank, in.type,
                                    in.type_len};
        }
        std::vector<sp_op_info> ops(taken.ops.size());
        for (size_t i = 0; i < ops.size(); i++) {
            const Op &op = taken.ops[i];
            ops[i] = sp_op_info{log->tid, op.time_ns, op.name, std::strlen(op.name),
                                op.input_count ? &inputs[op.inputs_at] : nullptr, op.input_count, "", 0,
                                op.flops};
        }
        sp_status st = ops.empty() ? SP_OK : api->add_op_info(prof, ops.data(), ops.size());
        if (st != SP_OK && st != SP_ESTATE) {
            PyErr_Format(PyExc_RuntimeError, "handing torch's input shapes to the span failed (sp_status %d)",
                         (int)st);
            return -1;
        }
        std::vector<sp_comm_info> comms;
        for (const Comm &c : taken.comms) {
            if (c.moved) continue;
            comms.push_back(sp_comm_info{log->tid, c.time_ns, c.collective, std::strlen(c.collective),
                                         c.group.data(), c.group.size(), c.group_size, c.bytes, c.seq});
        }
        st = comms.empty() ? SP_OK : api->add_comm_info(prof, comms.data(), comms.size());
        if (st != SP_OK && st != SP_ESTATE) {
            PyErr_Format(PyExc_RuntimeError, "handing torch's collectives to the span failed (sp_status %d)",
                         (int)st);
            return -1;
        }
    }
    return 0;
}

/* Names. A range name is recorded by pointer, so it must outlive the span:
 * only an operator's does (its schema's, never freed); user scopes and
 * autograd nodes build theirs per call. So names are interned by content,
 * once, in a table that lives as long as the process, and a per-thread
 * direct-mapped cache keyed by the name's pointer finds the interned copy
 * and the type without a lock: a hit on an operator's name needs no check,
 * any other hit one strcmp. Past INTERN_MAX distinct names (a loop that
 * names each range afresh) a name is copied into the buffer instead. */
constexpr size_t INTERN_MAX = (size_t)1 << 20;
constexpr size_t CACHE_SLOTS = 256;
constexpr sp_event_type SKIPPED = SP_EVENT_TYPE_COUNT; /* torch.profiler's own steps */

struct CacheEntry {
    const char *name;   /* the pointer RecordFunction gave */
    const char *copy;   /* interned, or NULL: copy at each begin */
    sp_event_type type; /* SKIPPED: not recorded */
    at::RecordScope scope;
    bool stable; /* an operator's name: the pointer alone decides */
};

std::mutex intern_lock;
/* Node-based: an element's c_str() never moves. Never destroyed, as
 * callbacks may still run while the process exits. */
auto *interned = new std::unordered_set<std::string>();

const char *intern(const char *name)
{
    std::lock_guard<std::mutex> g(intern_lock);
    auto it = interned->find(name);
    if (it == interned->end()) {
        if (interned->size() >= INTERN_MAX) return nullptr;
        it = interned->emplace(name).first;
    }
    return it->c_str();
}

__attribute__((tls_model("initial-exec"))) thread_local CacheEntry *cache;

/* Frees the thread's cache when the thread ends (touched on a miss only). */
struct CacheOwner {
    ~CacheOwner()
    {
        std::free(cache);
        cache = nullptr;
    }
};

CacheEntry *fill(const at::RecordFunction &fn, const char *name, CacheEntry *e)
{
    if (!cache) {
        static thread_local CacheOwner owner;
        (void)owner;
        cache = static_cast<CacheEntry *>(std::calloc(CACHE_SLOTS, sizeof *cache));
        if (!cache) return nullptr;
        e = &cache[(reinterpret_cast<uintptr_t>(name) >> 4) % CACHE_SLOTS];
    }
    e->name = name;
    e->scope = fn.scope();
    e->stable = fn.scope() == at::RecordScope::FUNCTION && fn.operator_name().has_value();
    e->type = is_torch_step(fn) ? SKIPPED : type_of(fn.scope(), name);
    e->copy = intern(name);
    return e;
}

std::unique_ptr<at::ObserverContext> on_enter(const at::RecordFunction &fn)
{
    if (!active()) return nullptr;
    const char *name = fn.name();
    CacheEntry *e = cache ? &cache[(reinterpret_cast<uintptr_t>(name) >> 4) % CACHE_SLOTS] : nullptr;
    if (!e || e->name != name || !e->copy || (!e->stable && (e->scope != fn.scope() || std::strcmp(e->copy, name) != 0)))
        e = fill(fn, name, e);
    sp_event_type type = e ? e->type : type_of(fn.scope(), name);
    if (type == SKIPPED || (!e && is_torch_step(fn))) return nullptr;
    if (e && e->copy)
        api->range_begin(type, e->copy);
    else
        api->range_begin_copy(type, name, std::strlen(name));
    if (with_comms && type == SP_EVENT_COMMUNICATION) {
        if (starts_with(name, "c10d::"))
            log_comm(fn, name);
        else
            take_pending(fn);
    }
    if (with_inputs && shapes_asked > 0) log_inputs(fn, e ? e->copy : nullptr);
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

/* profile_memory: torch's allocators report each allocation and free to
 * the MemoryReportingInfoBase found in the thread's debug info under
 * PROFILER_STATE, as they report to Kineto; that info propagates to the
 * threads torch runs work on for this one (autograd's among them). The
 * reports become stepprof memory events (Memory Summary, [memory] trace
 * events) on the thread that allocated. Peaks are this reporter's own, per
 * device, since it was pushed. */
/* The place names, which the recorder keeps by pointer: static strings. */
const char *const *places()
{
    static char names[65][16];
    static const char *table[65];
    static std::once_flag once;
    std::call_once(once, [] {
        for (int i = 0; i < 65; i++) {
            if (i == 0)
                std::snprintf(names[i], sizeof names[i], "Place(cpu)");
            else
                std::snprintf(names[i], sizeof names[i], "Place(gpu:%d)", i - 1);
            table[i] = names[i];
        }
    });
    return table;
}

struct MemoryReporter final : public c10::MemoryReportingInfoBase {
    std::atomic<bool> on{true};
    std::mutex peaks_lock;
    size_t peak_allocated[65] = {}, peak_reserved[65] = {}; /* [0] CPU, [1 + i] cuda:i */

    void reportMemoryUsage(void *ptr, int64_t alloc_size, size_t total_allocated, size_t total_reserved,
                           c10::Device device) override
    {
        if (!on.load(std::memory_order_relaxed) || (__atomic_load_n(api->active, __ATOMIC_RELAXED) & 1) == 0)
            return;
        int slot = device.is_cuda() && device.index() >= 0 && device.index() < 64 ? 1 + device.index() : 0;
        if (!device.is_cpu() && slot == 0) return; /* a device stepprof has no place for */
        sp_mem_info info;
        info.addr = (uint64_t)(uintptr_t)ptr;
        info.bytes = alloc_size;
        info.current_allocated = total_allocated;
        info.current_reserved = total_reserved;
        {
            std::lock_guard<std::mutex> g(peaks_lock);
            if (total_allocated > peak_allocated[slot]) peak_allocated[slot] = total_allocated;
            if (total_reserved > peak_reserved[slot]) peak_reserved[slot] = total_reserved;
            info.peak_allocated = peak_allocated[slot];
            info.peak_reserved = peak_reserved[slot];
        }
        api->memory_event(alloc_size < 0 ? SP_MEM_FREE : SP_MEM_ALLOCATE, places()[slot], &info);
    }

    bool memoryProfilingEnabled() const override { return on.load(std::memory_order_relaxed); }
};

std::shared_ptr<MemoryReporter> reporter; /* pushed on reporter_thread */
uint64_t reporter_thread;
int memory_asked;

/* Pushes the reporter on this thread unless some PROFILER_STATE is there
 * already (torch.profiler's: its reports stay its own). 1 when pushed. */
int push_reporter()
{
    if (reporter || c10::ThreadLocalDebugInfo::get(c10::DebugInfoKind::PROFILER_STATE)) return 0;
    reporter = std::make_shared<MemoryReporter>();
    c10::ThreadLocalDebugInfo::_push(c10::DebugInfoKind::PROFILER_STATE, reporter);
    reporter_thread = (uint64_t)syscall(SYS_gettid);
    return 1;
}

/* Turns the reporter off, and takes it off the thread's debug info when
 * this is the thread it was pushed on and it is on top there. */
void pop_reporter()
{
    if (!reporter) return;
    reporter->on.store(false);
    if (reporter_thread == (uint64_t)syscall(SYS_gettid)) {
        try {
            if (c10::ThreadLocalDebugInfo::_peek(c10::DebugInfoKind::PROFILER_STATE) == reporter)
                c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
        } catch (const std::exception &) { /* another kind on top: left, and off */
        }
    }
    reporter.reset();
}

/* (Re)registers the callback, taking the inputs while any enable() asked. */
int register_callback()
{
    bool inputs = shapes_asked > 0 || comms_asked > 0;
    if (handle && inputs == with_inputs) return 0;
    if (handle) at::removeCallback(handle);
    handle = 0;
    try {
        handle = at::addGlobalCallback(at::RecordFunctionCallback(on_enter, on_exit).needsInputs(inputs));
    } catch (const std::exception &e) {
        PyErr_Format(PyExc_RuntimeError, "torch refused the callback: %s", e.what());
        return -1;
    }
    with_inputs = inputs;
    return 0;
}

/* enable(record_shapes=False, profile_memory=False, with_flops=False,
 * comms=False) -> bool: whether the memory reports come (False with
 * profile_memory when torch.profiler holds them). comms: collectives are
 * logged (log_comm), which makes the callback take every op's inputs, as
 * record_shapes does; the Python side asks for it once torch.distributed
 * has a process group. */
PyObject *enable(PyObject *, PyObject *args)
{
    int shapes = 0, memory = 0, flops = 0, comms = 0;
    if (!PyArg_ParseTuple(args, "|pppp:enable", &shapes, &memory, &flops, &comms)) return nullptr;
    shapes = shapes || flops; /* FLOPs come from the inputs */
    if (!api) {
        PyErr_SetString(PyExc_RuntimeError, "attach() first");
        return nullptr;
    }
    enabled++;
    shapes_asked += shapes;
    flops_asked += flops;
    comms_asked += comms;
    with_flops = flops_asked > 0;
    with_comms = comms_asked > 0;
    if (register_callback() < 0) {
        enabled--;
        shapes_asked -= shapes;
        flops_asked -= flops;
        comms_asked -= comms;
        with_flops = flops_asked > 0;
        with_comms = comms_asked > 0;
        return nullptr;
    }
    if (!memory) Py_RETURN_FALSE;
    memory_asked++;
    return PyBool_FromLong(push_reporter() || (reporter && reporter->on.load()));
}

/* disable(record_shapes=False, profiler_handle=None, profile_memory=False,
 * with_flops=False, comms=False): undoes one enable(); with a handle, the
 * shapes and collectives logged so far go to that profiler's span. */
PyObject *disable(PyObject *, PyObject *args)
{
    int shapes = 0, memory = 0, flops = 0, comms = 0;
    PyObject *target = Py_None;
    if (!PyArg_ParseTuple(args, "|pOppp:disable", &shapes, &target, &memory, &flops, &comms))
        return nullptr;
    if (enabled == 0) Py_RETURN_NONE;
    shapes = shapes || flops;
    enabled--;
    shapes_asked -= shapes && shapes_asked > 0;
    flops_asked -= flops && flops_asked > 0;
    comms_asked -= comms && comms_asked > 0;
    if (memory && memory_asked > 0 && --memory_asked == 0) pop_reporter();
    int rc = 0;
    if (target != Py_None) {
        auto *prof = static_cast<sp_profiler *>(PyCapsule_GetPointer(target, SPX_PROFILER_CAPSULE));
        rc = prof ? flush_logs(prof) : -1;
    }
    if (enabled == 0) {
        at::removeCallback(handle);
        handle = 0;
        with_inputs = false;
        with_flops = false;
        with_comms = false;
        clear_logs();
    } else {
        with_comms = comms_asked > 0;
        if (register_callback() < 0) rc = -1;
    }
    if (rc < 0) return nullptr;
    Py_RETURN_NONE;
}

PyObject *is_enabled(PyObject *, PyObject *) { return PyBool_FromLong(enabled > 0); }

/* In a child forked while a span recorded (a DataLoader worker): the child's
 * recording is off (its profilers are inert), so the callback would cost
 * every op torch's floor for nothing. It goes, and the adapter starts clean:
 * the parent's other threads, which held the shape logs' locks perhaps, do
 * not exist here, so the logs are dropped unread and their locks made anew
 * (the old ones are leaked: destroying a held mutex is undefined). */
PyObject *forget_after_fork(PyObject *, PyObject *)
{
    if (handle) at::removeCallback(handle);
    handle = 0;
    enabled = shapes_asked = flops_asked = comms_asked = memory_asked = 0;
    with_inputs = with_flops = with_comms = false;
    if (reporter) {
        reporter->on.store(false);
        try { /* the forking thread pushed it: it is this thread now */
            if (c10::ThreadLocalDebugInfo::_peek(c10::DebugInfoKind::PROFILER_STATE) == reporter)
                c10::ThreadLocalDebugInfo::_pop(c10::DebugInfoKind::PROFILER_STATE);
        } catch (const std::exception &) {
        }
        new (&reporter) std::shared_ptr<MemoryReporter>(); /* its lock may be held: leaked */
    }
    new (&logs_lock) std::mutex();
    new (&logs) std::vector<std::shared_ptr<ShapeLog>>();
    new (&pending_lock) std::mutex();
    new (&pending) std::vector<Pending>();
    new (&thread_log) std::shared_ptr<ShapeLog>();
    Py_RETURN_NONE;
}

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
    {"enable", enable, METH_VARARGS,
     "enable(record_shapes=False, profile_memory=False, with_flops=False, comms=False): registers the "
     "RecordFunction callback (counted), and with profile_memory takes torch's memory reports on "
     "this thread; returns whether they come."},
    {"disable", disable, METH_VARARGS,
     "disable(record_shapes=False, profiler_handle=None, profile_memory=False, with_flops=False, "
     "comms=False): "
     "undoes one "
     "enable(), handing the input shapes logged so far to the profiler's span; the last one "
     "removes the callback."},
    {"is_enabled", is_enabled, METH_NOARGS, "True while the callback is registered."},
    {"forget_after_fork", forget_after_fork, METH_NOARGS,
     "In a forked child: removes the callback and the memory reporter, and drops the parent's "
     "shape logs unread."},
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

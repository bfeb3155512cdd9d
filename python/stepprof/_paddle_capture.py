"""paddle's own host tracer run beside a stepprof span.

When paddle is imported and a stepprof Profiler whose targets include the
CPU begins a span, this module starts paddle's C++ host tracer through the
objects paddle.profiler itself drives (paddle.base.core._Profiler,
ProfilerOptions), and sets the flag paddle.profiler sets while it runs
(paddle.profiler.utils._is_profiler_used), which paddle.io.DataLoader and the
optimizers wrapped by paddle.profiler.utils.wrap_optimizers read to record
their Dataloader and Optimization ranges. Just before the span is collected
the tracer is stopped and its events handed over: every host event
(operators, OperatorInner, kernel launches, backward nodes, the optimizer,
the DataLoader, paddle's RecordEvents) goes to the span with paddle's own
type, its thread's OS id and its CLOCK_REALTIME times, which the C core puts
on the span's time line. With profile_memory, paddle's memory recorder runs
with the tracer, as under paddle.profiler, and the allocations and frees
hanging on the tree's nodes go to the span the same way.

The hand-over (hand_over_pb): paddle writes its tree as a protobuf in C++
(its public _ProfilerResult.save(path, "pb")) into an unnamed memory file,
and Profiler._add_paddle_pb reads it in C with the core's loader of paddle's
.pb, adding the events through the public sp_profiler_add_events and
sp_profiler_add_memory_events: no pybind11 call per node, a quarter to a
third of the walk's cost. paddle's glog line at each save is kept off stderr
(_save_quietly says how, and what that costs). The walk of the tree
(_batches, through Profiler._add_events and _add_memory_events) gives the
same events and is used where the protobuf cannot serve: with op info (its
FLOPs need node attributes, which the protobuf lacks, so such a span is
walked whole, in one pass), without save or memory files, or once a save
failed (one StepprofWarning per process).

With record_shapes or with_flops the span also runs paddle's op info
recorder (paddle.base.core.enable_op_info_recorder, as paddle.profiler's
start does), and each Operator node's input shapes, dtypes and call stack go
to the span through Profiler._add_op_info, with the FLOPs that paddle's
public paddle.utils.flops.flops gives for them: the numbers paddle.profiler
prints. paddle 3.3.1's dygraph and PIR executors record no op info, so there
every Operator has empty shapes and 0 FLOPs, in paddle.profiler as here.

paddle's tracer serves one profiler at a time (a second _Profiler.create
returns None), so the tracer is created at each span's start and released at
its end: between spans paddle.profiler can run. While paddle.profiler holds
it, a span records the hand-marked ranges only, and one StepprofWarning per
profiler says so. A paddle without these objects, or outside the versions
this was written for, gets one StepprofWarning per process and the same
fallback; nothing is ever patched in paddle."""
import os
import sys
import warnings

from . import _core, _paddle_flag
from ._enums import TracerEventType

#: paddle versions whose tracer objects this module was written against and
#: tested with (3.3.1): [low, high) as (major, minor). A development build
#: ("0.0.0") is accepted when it has the objects.
SUPPORTED = ((3, 0), (4, 0))

_NEEDED_CORE = ("_Profiler", "ProfilerOptions", "TracerEventType")

# Process-wide: id(module) -> (module, verdict), the verdict None when usable,
# else why not, so the unsupported warning is given once per process. The
# module is held so that its id cannot be reused by another module (a stand-in
# paddle in the tests) while its verdict is kept.
_verdict = {}


def _version(paddle):
    text = getattr(paddle, "__version__", "") or ""
    try:
        major, minor = (int(p) for p in text.split(".")[:2])
    except ValueError:
        return text, None
    return text, (major, minor)


def unsupported_reason(paddle):
    """Why paddle's tracer cannot be used with this paddle, or None."""
    text, version = _version(paddle)
    low, high = SUPPORTED
    if version is None or (version != (0, 0) and not low <= version < high):
        return (f"paddle {text or '(no version)'} is not supported for capturing paddle's "
                f"operators (supported: {low[0]}.{low[1]} up to {high[0]}.{high[1]}, "
                f"exclusive)")
    try:
        from paddle.base import core
        from paddle.profiler import utils
    except Exception as e:  # an import failure inside paddle: say it, never raise
        return f"paddle {text}: cannot import paddle.base.core / paddle.profiler.utils ({e})"
    missing = [f"paddle.base.core.{n}" for n in _NEEDED_CORE if not hasattr(core, n)]
    missing += [f"paddle.profiler.utils.{n}" for n in ("_is_profiler_used", "wrap_optimizers")
                if not hasattr(utils, n)]
    if missing:
        return f"paddle {text} lacks {', '.join(missing)}"
    return None


def _check(paddle):
    """The verdict for this paddle, warning once per process when unusable."""
    key = id(paddle)
    if key not in _verdict:
        why = unsupported_reason(paddle)
        _verdict[key] = (paddle, why)
        if why:
            warnings.warn(f"{why}; stepprof records the hand-marked ranges only",
                          _core.StepprofWarning, stacklevel=3)
    return _verdict[key][1]


def _type_map(core):
    """paddle's TracerEventType values -> stepprof's, matched by name (so a
    renumbering in paddle cannot mistype events); names stepprof lacks map
    to UserDefined. Keyed by int: hashing paddle's pybind11 enum members
    costs about 1 us each, reading .value a third of that."""
    out = {}
    for name, member in core.TracerEventType.__members__.items():
        out[int(member.value)] = int(TracerEventType[name]) \
            if name in TracerEventType.__members__ else int(TracerEventType.UserDefined)
    return out


#: paddle's TracerMemEventType names, as sp_mem_event_type numbers them.
_MEM_TYPES = {"Allocate": 0, "Free": 1, "ReservedAllocate": 2, "ReservedFree": 3}


def _mem_type_map(core):
    """paddle's TracerMemEventType values -> stepprof's, matched by name;
    a kind stepprof lacks maps to -1 and its events are left out."""
    return {int(member.value): _MEM_TYPES.get(name, -1)
            for name, member in core.TracerMemEventType.__members__.items()}


#: Events handed to the span at a time: the tuples of one batch (about 200
#: bytes each) are all that is held on the Python side, however long the span.
BATCH = 65536


def events_of(result, types, batch=None, memory=None):
    """The host events of a paddle _ProfilerResult as (tid, type, name,
    start_ns, end_ns) tuples, parents before children: one list, or, with
    batch=n, a generator of lists of at most n. paddle's ProfileStep ranges
    are left out: the stepprof profiler records its own steps. Each
    attribute read crosses pybind11 (0.3 to 0.9 us), so a node is read once,
    its type by value, and its thread id comes from the tree it hangs in.
    memory, when given, is (mem_types, add): the memory events of every node
    (roots and paddle's steps included) go to add as lists of at most batch
    memory_tuples, in the same walk."""
    if batch is None:
        return [e for part in events_of(result, types, BATCH, memory) for e in part]
    return _batches(result, types, batch, memory)


def memory_tuples(tid, node, mem_types):
    """The memory events hanging on a paddle host node as (tid, type, place,
    ts_ns, addr, bytes, current_allocated, current_reserved, peak_allocated,
    peak_reserved) tuples, for Profiler._add_memory_events. The tree's thread
    id is used, as for the node's own event: paddle hangs a memory event on
    a node of the thread that made it."""
    out = []
    for m in node.mem_node:
        kind = mem_types.get(m.type.value, -1)
        if kind >= 0:
            out.append((tid, kind, m.place, m.timestamp_ns, m.addr, m.increase_bytes,
                        m.current_allocated, m.current_reserved, m.peak_allocated,
                        m.peak_reserved))
    return out


def _opname(name):
    """The op type FLOPs are computed for, from an Operator node's name, as
    paddle's statistic reads it ("matmul dygraph" -> "matmul")."""
    for suffix in (" compute", " dygraph", " pybind_imperative_func"):
        name = name.replace(suffix, "")
    return name


def op_info_of(result, types, flops=None):
    """The op info of a paddle _ProfilerResult's Operator nodes, as
    (tid, time_ns, op_type, [(key, dims, dtype), ...], callstack, flops)
    tuples for Profiler._add_op_info: only nodes that carry some (shapes or
    a call stack). The capture gets the same from the one walk that hands
    over the events (_batches' ops, then op_info_from). types: _type_map's."""
    ops = []
    for _ in _batches(result, types, BATCH, ops=ops):
        pass
    return op_info_from(ops, flops)


def op_info_from(ops, flops=None):
    """op_info_of's tuples for the (tid, node, name, start_ns) of Operator
    nodes. time_ns is the node's start, which the C core places where it
    places the node's. flops is paddle.utils.flops.flops or None (then 0);
    it is called, as paddle's statistic calls it, with the op type (the name
    without " dygraph", ...), the shapes and the attributes, but only for a
    node with shapes: each of paddle's counters needs them and answers 0
    without (paddle 3.3.1's 20 counters all do), and reading a node's
    attributes and calling the counter cost more than the rest. A node
    without op info costs two pybind11 reads (input_shapes, callstack)."""
    out = []
    for tid, node, name, start_ns in ops:
        shapes = node.input_shapes
        callstack = node.callstack
        if not shapes and not callstack:
            continue
        if not isinstance(callstack, str):
            callstack = ";".join(callstack)
        op_type = _opname(name)
        n = 0
        inputs = []
        if shapes:
            if flops is not None:
                n = flops(op_type, shapes, node.attributes)
            dtypes = node.dtypes or {}
            for key, dims_list in shapes.items():
                types_of = dtypes.get(key) or []
                for i, dims in enumerate(dims_list):
                    if len(dims) <= 64:  # SP_OP_RANK_MAX
                        inputs.append((str(key), dims,  # ints: the C side reads any sequence
                                       str(types_of[i]) if i < len(types_of) else ""))
        out.append((tid, start_ns, op_type, inputs, callstack, max(0, int(n or 0))))
    return out


def _batches(result, types, batch, memory=None, ops=None):
    """events_of's batches; memory as events_of's; with a list as ops,
    (tid, node, name, start_ns) of each Operator node is appended to it."""
    step = int(TracerEventType.ProfileStep)
    other = int(TracerEventType.UserDefined)
    operator = int(TracerEventType.Operator)
    keep = ops.append if ops is not None else None
    get = types.get
    mem_types, add_memory = memory if memory else (None, None)
    mems = []
    out = []
    for tid, root in result.get_data().items():
        if add_memory:
            mems += memory_tuples(tid, root, mem_types)
        # Depth first, parents before children, with an explicit stack of
        # iterators: paddle's trees can nest deeper than Python's recursion.
        stack = [iter(root.children_node)]
        while stack:
            node = next(stack[-1], None)
            if node is None:
                stack.pop()
                continue
            t = get(node.type.value, other)
            if t != step:
                name, start = node.name, node.start_ns
                out.append((tid, t, name, start, node.end_ns))
                if keep is not None and t == operator:
                    keep((tid, node, name, start))
                if len(out) >= batch:
                    yield out
                    out = []
            if add_memory:
                mems += memory_tuples(tid, node, mem_types)
                if len(mems) >= batch:
                    add_memory(mems)
                    mems = []
            kids = node.children_node
            if kids:
                stack.append(iter(kids))
    if mems:
        add_memory(mems)
    if out:
        yield out


def _byte_map(mapping):
    """A {paddle value: stepprof value} map as bytes indexed by paddle's
    value, 0xff for none (a negative stepprof value), for _add_paddle_pb;
    None when a paddle value does not fit in a byte."""
    if not mapping:
        return b""
    if min(mapping) < 0 or max(mapping) > 254:
        return None
    out = bytearray(b"\xff" * (max(mapping) + 1))
    for k, v in mapping.items():
        out[k] = v if 0 <= v < 255 else 255
    return bytes(out)


#: paddle's glog line at every _ProfilerResult.save, kept from the user.
_SAVE_LOG = (b"serialization_logger.cc", b"writing profiling data to")

#: Why the protobuf hand-over failed in this process, once it has (then
#: every later span is walked); None while it works.
_pb_broken = None


def _save_quietly(result, path):
    """result.save(path, "pb") with file descriptor 2 sent to a memory file
    meanwhile, and what reached it written back to stderr afterwards, less
    paddle's "writing profiling data to" line: paddle logs it with glog's
    LOG(INFO), which no flag settable at run time silences (glog's
    minloglevel is read at paddle's start; paddle.set_flags refuses it).
    The trade-off: whatever another thread writes to fd 2 during the save
    (milliseconds) comes out after it, in its order, and is lost if the
    process dies inside the save."""
    try:
        sys.stderr.flush()
    except Exception:
        pass
    try:
        saved = os.dup(2)
    except OSError:  # no stderr: nothing to keep the line from
        result.save(path, "pb")
        return
    err = os.memfd_create("stepprof-paddle-stderr", os.MFD_CLOEXEC)
    try:
        os.dup2(err, 2)
        try:
            result.save(path, "pb")
        finally:
            os.dup2(saved, 2)
            _write_back(err)  # a failing save's own messages included
    finally:
        os.close(err)
        os.close(saved)


def _write_back(err):
    """What reached the memory file err, to stderr, less paddle's line."""
    try:
        size = os.fstat(err).st_size
        text = os.pread(err, size, 0) if size else b""
        keep = b"".join(line for line in text.splitlines(keepends=True)
                        if not all(p in line for p in _SAVE_LOG))
        while keep:
            keep = keep[os.write(2, keep):]
    except OSError:  # stderr gone meanwhile: nothing to write it to
        pass


def hand_over_pb(result, add_pb, types, mem_types=None):
    """Hands a paddle _ProfilerResult's host events (and, with mem_types,
    its memory events) to the span through add_pb (Profiler._add_paddle_pb):
    paddle writes its tree as a protobuf in C++ (_ProfilerResult.save) into
    an unnamed memory file, and the C core reads it, without a pybind11 call
    per node. The same events as _batches gives, at a quarter to a third of
    its cost (bench/bench_paddle.py).
    Returns False, having added nothing, when this cannot be done (no
    save, no memory files, or it failed: then one StepprofWarning per
    process, and the caller walks the tree)."""
    global _pb_broken
    if _pb_broken is not None or not hasattr(result, "save") or \
            not hasattr(os, "memfd_create"):
        return False
    event_map = _byte_map(types)
    mem_map = _byte_map(mem_types) if mem_types is not None else None
    if event_map is None or (mem_types is not None and mem_map is None):
        return False
    try:
        fd = os.memfd_create("stepprof-paddle-events", os.MFD_CLOEXEC)
        try:
            _save_quietly(result, f"/proc/self/fd/{fd}")
            add_pb(fd, event_map, mem_map)
        finally:
            os.close(fd)
    except MemoryError:
        raise
    except Exception as e:  # paddle's save or the file it wrote: walk instead
        _pb_broken = f"{type(e).__name__}: {e}"
        warnings.warn(f"handing paddle's events over through paddle's protobuf failed "
                      f"({_pb_broken}); stepprof walks paddle's event tree instead, which "
                      f"is slower", _core.StepprofWarning, stacklevel=2)
        return False
    return True


def _flops_function():
    """paddle's public FLOPs counter (paddle.utils.flops.flops), or None."""
    try:
        from paddle.utils.flops import flops
    except Exception:
        return None
    return flops


# The process whose stepprof span holds paddle's tracer, or None. A process
# forked while it was held inherits paddle's "taken" state (paddle's tracer
# is a process-wide single instance) and cannot take it.
_held_in = None


def _busy_reason():
    if _held_in is not None and _held_in != os.getpid():
        return ("paddle's tracer was held by a stepprof span of the parent process when this "
                "process was forked, and a forked child cannot take it: stepprof spans here "
                "record the hand-marked ranges only")
    return ("paddle.profiler holds paddle's tracer (a paddle.profiler.Profiler exists, or "
            "something else holds paddle.base.core._Profiler; it serves one profiler at a "
            "time): stepprof spans record the hand-marked ranges only until it is deleted")


def _memory_recorder(core, on):
    """Turns paddle's memory recorder on or off as paddle.profiler does
    (enable_memory_recorder / disable_memory_recorder) and returns whether
    it was on before (FLAGS_enable_record_memory, the flag those two set;
    None when paddle cannot say)."""
    try:
        import paddle
        before = bool(paddle.get_flags(["FLAGS_enable_record_memory"])
                      ["FLAGS_enable_record_memory"])
    except Exception:  # a paddle without the flag: assume off, as paddle starts
        before = None
    (core.enable_memory_recorder if on else core.disable_memory_recorder)()
    return before


class PaddleCapture:
    """paddle's host tracer for one stepprof Profiler: begin() at the start of
    each recorded span, end() just before the span is collected (with the
    profiler's _add_events) or discarded (None). With memory, paddle's
    memory recorder runs while the tracer does, and is put back as it was
    at end()."""

    def __init__(self, memory=False, op_info=False):
        self._op_info = bool(op_info)  # record_shapes or with_flops
        self._recorder_on = False
        self._tracer = None
        self._busy_warned = False
        self._types = None
        self._memory = bool(memory)
        self._mem_types = None
        self._memory_before = None  # the recorder's state before begin(), while it runs
        self._memory_on = False

    @property
    def running(self):
        return self._tracer is not None

    def begin(self):
        paddle = sys.modules.get("paddle")
        if paddle is None or self._tracer is not None:
            return  # paddle imported later: captured from the next span on
        if _check(paddle):
            return
        from paddle.base import core
        from paddle.profiler import utils
        options = core.ProfilerOptions()
        options.trace_switch = 1  # the CPU: paddle's host tracer
        tracer = core._Profiler.create(options, [])
        if tracer is None:
            if not self._busy_warned:
                self._busy_warned = True
                warnings.warn(_busy_reason(), _core.StepprofWarning, stacklevel=3)
            return
        if self._types is None:
            self._types = _type_map(core)
        utils.wrap_optimizers()  # idempotent; paddle.profiler.Profiler() does the same
        _paddle_flag.hold(utils)
        try:
            if self._memory:
                self._memory_start(core)
            if self._op_info and hasattr(core, "enable_op_info_recorder"):
                core.enable_op_info_recorder()
                self._recorder_on = True
            tracer.prepare()
            tracer.start()
        except BaseException:
            self._recorder_off()
            # end() will not run for a tracer that never started: put paddle's
            # flag back, or its DataLoader and optimizer would record events
            # for the rest of the process; the memory recorder likewise.
            _paddle_flag.release(utils)
            self._memory_stop(core)
            raise
        self._tracer = tracer
        global _held_in
        _held_in = os.getpid()

    def _memory_start(self, core):
        """paddle's memory recorder on for the span, as paddle.profiler turns
        it on at start (before its tracer starts)."""
        if self._mem_types is None:
            if not all(hasattr(core, n) for n in ("enable_memory_recorder",
                                                   "disable_memory_recorder",
                                                   "TracerMemEventType")):
                self._memory = False
                warnings.warn("this paddle has no memory recorder (paddle.base.core."
                              "enable_memory_recorder): profile_memory shows no paddle "
                              "allocations", _core.StepprofWarning, stacklevel=4)
                return
            self._mem_types = _mem_type_map(core)
        self._memory_before = _memory_recorder(core, True)
        self._memory_on = True

    def _memory_stop(self, core):
        """Puts paddle's memory recorder back as begin() found it: off, unless
        something had turned it on before."""
        if self._memory_on:
            self._memory_on = False
            if not self._memory_before:
                core.disable_memory_recorder()

    def _recorder_off(self):
        if self._recorder_on:
            self._recorder_on = False
            from paddle.base import core
            core.disable_op_info_recorder()

    def end(self, add, add_memory=None, add_ops=None, add_pb=None):
        """Stops paddle's tracer; add(events) receives its events, unless add
        is None (the span is discarded), add_memory(memory events) the
        memory recorder's, when it ran and add_memory is given, and
        add_ops(ops) its op info when op info is recorded. With add_pb (the
        profiler's _add_paddle_pb), paddle's tree goes over as a protobuf
        paddle writes (hand_over_pb) when it can, else it is walked."""
        tracer, self._tracer = self._tracer, None
        if tracer is None:
            return
        global _held_in
        _held_in = None
        memory = self._memory_on
        try:
            result = tracer.stop()
        finally:
            self._recorder_off()
            from paddle.base import core
            from paddle.profiler import utils
            _paddle_flag.release(utils)
            self._memory_stop(core)
            del tracer  # frees paddle's single tracer for the next span or paddle.profiler
        if add is None or result is None:
            return
        mem = (self._mem_types, add_memory) if memory and add_memory is not None else None
        want_ops = self._op_info and add_ops is not None
        # Op info needs each Operator node's attributes (for FLOPs), which the
        # protobuf lacks: with it the whole span is walked, in one pass.
        if add_pb is not None and not want_ops and \
                hand_over_pb(result, add_pb, self._types, self._mem_types if mem else None):
            return
        nodes = [] if want_ops else None
        for part in _batches(result, self._types, BATCH, mem, nodes):
            add(part)
        if nodes:
            ops = op_info_from(nodes, _flops_function())
            if ops:
                add_ops(ops)

"""torch.profiler's event objects over a stepprof result: prof.events()
(one FunctionEvent per recorded range) and prof.key_averages() (one
FunctionEventAvg per name, with .table()).

Names are spelled as in the written trace and in the table: a step is
"ProfilerStep#N", a Dataloader range "enumerate(DataLoader)#<name>.__next__".
Times are in microseconds (floats), as torch's. The events carry CPU times;
their device-time and memory fields are 0 (the table, built in C from the
whole result, has the real device and memory columns). Device ranges
(kernels, copies, memsets) are not host events and are left out, as in
torch's events().

With with_stack, the Python calls of the span (PythonOp ranges) are
events too (is_python_function), and every event's stack holds the Python
calls around it, innermost first, as torch's does with
experimental_config=_ExperimentalConfig(verbose=True) (without it, torch
2.15 leaves stacks empty). Python calls are transparent to the self time
of other events (docs/python.md, "with_stack")."""
import collections.abc

from ._enums import TracerEventType

__all__ = ["FunctionEvent", "FunctionEventAvg", "KeyAverages", "function_events", "TABLE_KEYS",
           "STACK_METRICS"]

_DEVICE = (TracerEventType.Kernel, TracerEventType.Memcpy, TracerEventType.Memset)
_PYTHON = TracerEventType.PythonOp
# torch's profiler_util._filter_stack_entry: frames of torch's own backward
# and test wrappers are left out of stacks.
_FILTERED_FRAMES = (("autograd/__init__", "_make_grads"), ("autograd/__init__", "backward"),
                    ("torch/tensor", "backward"), ("_internal/common_utils", "prof_callable"),
                    ("_internal/common_utils", "prof_func_call"),
                    ("_internal/common_utils", "prof_meth_call"))


def _keep_frame(entry):
    return all(not (a in entry and b in entry) for a, b in _FILTERED_FRAMES)
_FLAG_INSTANT, _FLAG_COUNTER = 1, 2

# torch's sort keys, as _build_table reads them (getattr after the device
# spellings become "device"); the C table takes the same list.
TABLE_KEYS = frozenset(
    ["self_cpu_time_total", "cpu_time_total", "cpu_time", "count"] +
    [f"{pre}{dev}_{suffix}" for dev in ("cuda", "xpu", "privateuse1", "device")
     for pre, suffix in (("self_", "time_total"), ("", "time_total"), ("", "time"),
                         ("", "memory_usage"), ("self_", "memory_usage"))] +
    ["cpu_memory_usage", "self_cpu_memory_usage"])

STACK_METRICS = ("self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                 "self_privateuse1_time_total", "self_device_time_total")


def _torch_name(name, event_type):
    if event_type == TracerEventType.ProfileStep and name.startswith("ProfileStep#"):
        return "ProfilerStep#" + name[len("ProfileStep#"):]
    if event_type == TracerEventType.Dataloader and not (
            name.startswith("enumerate(DataLoader)#") and name.endswith(".__next__")):
        return f"enumerate(DataLoader)#{name}.__next__"
    return name


def _older_spelling(name):
    """A read-only alias of attribute name, under torch's older cuda_* spelling."""
    return property(lambda self: getattr(self, name), doc=f"{name} (torch's older spelling).")


class _Times:
    """The time and memory fields torch's events and averages share, with
    torch's older cuda_* spellings of the device ones."""

    __slots__ = ()

    @property
    def cpu_time(self):
        """Average CPU time per call, us."""
        return self.cpu_time_total / self.count if self.count else 0.0

    @property
    def device_time(self):
        """Average device time per call, us (0: see the module's note)."""
        return self.device_time_total / self.count if self.count else 0.0

    cuda_time = _older_spelling("device_time")
    cuda_time_total = _older_spelling("device_time_total")
    self_cuda_time_total = _older_spelling("self_device_time_total")
    cuda_memory_usage = _older_spelling("device_memory_usage")
    self_cuda_memory_usage = _older_spelling("self_device_memory_usage")


class FunctionEvent(_Times):
    """One recorded range, as torch's FunctionEvent: id, name (= key),
    thread (the OS thread id), start_us and end_us (from the span's start,
    as torch's time_range from the trace's), cpu_time_total,
    self_cpu_time_total (us), count (1), cpu_parent and cpu_children (the
    nesting), input_shapes (with record_shapes: a list per input, the
    tensor's sizes or [] for another input, as torch's; else []), stack
    (the enclosing Python calls, innermost first, with with_stack; else
    empty), is_python_function, and device/memory fields (0)."""

    __slots__ = ("id", "name", "thread", "start_us", "end_us", "cpu_time_total",
                 "self_cpu_time_total", "cpu_parent", "cpu_children", "event_type", "_top",
                 "input_shapes", "stack", "_frames")

    count = 1
    device_time_total = self_device_time_total = 0.0
    cpu_memory_usage = self_cpu_memory_usage = 0
    device_memory_usage = self_device_memory_usage = 0
    flops = 0
    node_id = -1
    is_async = False

    def __init__(self, id, name, thread, start_ns, end_ns, event_type, origin_ns=0):
        self.id = id
        self.name = name
        self.thread = thread
        self.start_us = (start_ns - origin_ns) / 1000.0
        self.end_us = (end_ns - origin_ns) / 1000.0
        self.cpu_time_total = self.self_cpu_time_total = (end_ns - start_ns) / 1000.0
        self.cpu_parent = None
        self.cpu_children = []
        self.event_type = event_type
        self.input_shapes = []
        self.stack = []
        self._frames = ()  # the Python calls around it, itself included

    @property
    def is_python_function(self):
        """Whether this is a Python call (with_stack), as torch's."""
        return self.event_type == _PYTHON

    @property
    def key(self):
        """The name key_averages groups by (the name)."""
        return self.name

    @property
    def trace_name(self):
        """The name as the trace spells it (the name)."""
        return self.name

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name!r} thread={self.thread} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


def _take_self_time(child, parent):
    """Subtracts child's time from the self time of its parent when that is
    a Python call, and, when child is not one, from its nearest ancestor
    that is not (the C model's rule, src/analyze/model.c)."""
    def take(e):
        e.self_cpu_time_total = max(0.0, e.self_cpu_time_total - child.cpu_time_total)
    if parent.event_type == _PYTHON:
        take(parent)
    if child.event_type == _PYTHON:
        return
    while parent is not None and parent.event_type == _PYTHON:
        parent = parent.cpu_parent
    if parent is not None:
        take(parent)


def _input_shapes(result, index):
    """{event index: (record number, input shapes)} of one thread: each
    range's shapes, as torch's lists of ints, from the first op record
    (in time order) attached to it, as the C table takes them."""
    out = {}
    for k, op in enumerate(result.ops(index)):
        if op.event >= 0 and op.event not in out:
            out[op.event] = (k, [list(i.dims) for i in op.inputs])
    return out


def _remove_dups(events, records):
    """Drops each range that is the only child of a range of the same name
    (an op re-entering the dispatcher under its own name), its children
    going to the parent, as torch's EventList does (and the C table): the
    parent keeps its total, and takes the child's self time. records:
    {id(event): its op record's number}; the parent takes the child's
    shapes when the child's record is the earlier (the two records of such
    a pair may land on either range; the first is the outer op's)."""
    dropped = set()
    for e in events:
        p = e.cpu_parent
        if p is not None and p.name == e.name and len(p.cpu_children) == 1:
            p.cpu_children = e.cpu_children
            p.self_cpu_time_total += e.self_cpu_time_total
            for c in e.cpu_children:
                c.cpu_parent = p
            mine, theirs = records.get(id(e)), records.get(id(p))
            if mine is not None and (theirs is None or mine < theirs):
                p.input_shapes, records[id(p)] = e.input_shapes, mine
            dropped.add(id(e))
    return [e for e in events if id(e) not in dropped] if dropped else events


def function_events(result):
    """The FunctionEvents of a ProfilerResult, every thread's, by start
    time (a parent before its children)."""
    out, records = [], {}
    if result is None:
        return out
    origin = result.span[0]
    for index, info in enumerate(result.threads):
        events = result.events(index)
        shapes = _input_shapes(result, index)
        made = []
        for e in events:
            if e.type in _DEVICE or e.flags & (_FLAG_INSTANT | _FLAG_COUNTER):
                made.append(None)
                continue
            fe = FunctionEvent(0, _torch_name(e.name, e.type), info.tid, e.start_ns, e.end_ns,
                               e.type, origin)
            record = shapes.get(len(made))
            if record is not None:
                records[id(fe)], fe.input_shapes = record
            parent = made[e.parent] if e.parent >= 0 else None
            if parent is not None:
                fe.cpu_parent = parent
                parent.cpu_children.append(fe)
                fe.stack = list(parent._frames)
                fe._frames = parent._frames
                _take_self_time(fe, parent)
            if e.type == _PYTHON and _keep_frame(fe.name):
                fe._frames = (fe.name,) + fe._frames
            made.append(fe)
        out.extend(fe for fe in made if fe is not None)
    out.sort(key=lambda fe: (fe.start_us, -fe.end_us))
    out = _remove_dups(out, records)
    for i, fe in enumerate(out):
        fe.id = i
    return out


class FunctionEventAvg(_Times):
    """The events of one name together, as torch's FunctionEventAvg: key,
    count, cpu_time_total, self_cpu_time_total (us), cpu_time (average),
    cpu_parent (the first event's), device/memory fields (0)."""

    __slots__ = ("key", "count", "cpu_time_total", "self_cpu_time_total", "cpu_parent",
                 "input_shapes", "stack")

    device_time_total = self_device_time_total = 0.0
    cpu_memory_usage = self_cpu_memory_usage = 0
    device_memory_usage = self_device_memory_usage = 0
    flops = 0
    node_id = -1
    is_async = False

    def __init__(self, first, stack_n=0):
        self.key = first.name
        self.count = 0
        self.cpu_time_total = self.self_cpu_time_total = 0.0
        self.cpu_parent = first.cpu_parent
        self.input_shapes = first.input_shapes
        self.stack = first.stack[:stack_n]

    def add(self, event):
        """Counts one more event of this key."""
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        return self

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key!r} count={self.count} "
                f"cpu_time_total={self.cpu_time_total:.3f}us "
                f"self_cpu_time_total={self.self_cpu_time_total:.3f}us>")


def _cut(name, width):
    # torch's cut of the name column, for matching the C table's rows.
    if width is None:
        return name
    width = max(4, int(width))
    return name[:width - 3] + "..." if len(name) >= width - 3 else name


class KeyAverages(collections.abc.Sequence):
    """prof.key_averages(): a sequence of FunctionEventAvg in
    first-occurrence order, and table() as torch's EventList.table(). The
    averages are made on first use: table() alone reads the C table and
    never builds an object per event."""

    def __init__(self, result, group_by_input_shape=False, group_by_stack_n=0,
                 include_python_functions=False):
        self._result = result
        self._items = None
        self._by_shapes = bool(group_by_input_shape)
        self._stack_n = max(0, int(group_by_stack_n))
        self._python = bool(include_python_functions)

    def _averages(self):
        if self._items is None:
            groups = {}
            for e in function_events(self._result):
                if e.is_python_function and not self._python:
                    continue  # as torch's key_averages
                # every step is one row, as torch's key_averages (and the table) name it
                key = "ProfilerStep*" if e.name.startswith("ProfilerStep#") else e.name
                group_key = (key, str(e.input_shapes)) if self._by_shapes else key
                if self._stack_n:
                    group_key = (group_key, *e.stack[:self._stack_n])
                g = groups.get(group_key)
                if g is None:
                    g = groups[group_key] = FunctionEventAvg(e, self._stack_n)
                    g.key = key
                    if not self._by_shapes:
                        g.input_shapes = ""  # as torch's, when not grouped by them
                g.add(e)
            self._items = list(groups.values())
        return self._items

    def __getitem__(self, index):
        return self._averages()[index]

    def __len__(self):
        return len(self._averages())

    def __repr__(self):
        return repr(self._averages())

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None):
        """torch's table: columns, widths, formats and sort keys as torch's
        (every torch sort key; None: first-occurrence order), header,
        top_level_events_only, max_name_column_width (None: no limit) and
        time_unit ("s", "ms", "us") as torch's; grouped by input shapes,
        torch's Input Shapes column, max_shapes_column_width wide at most;
        the source width has no column here. Raises AttributeError for an
        unknown sort key, as torch."""
        del max_src_column_width
        if sort_by is not None and sort_by not in TABLE_KEYS:
            raise AttributeError(f"'FunctionEventAvg' object has no attribute {sort_by!r} "
                                 f"(sort keys: {', '.join(sorted(TABLE_KEYS))})")
        if self._result is None:
            return ""
        limit = -1 if top_level_events_only else int(row_limit)
        text = self._result.table_torch("none" if sort_by is None else sort_by, limit,
                                        max_name_column_width,
                                        time_unit if isinstance(time_unit, str) else None,
                                        self._by_shapes, max_shapes_column_width)
        if not text:
            return text
        lines = text.split("\n")
        line_length = len(lines[0]) - 2  # the separator: every column + 2 spaces
        if top_level_events_only:
            lines = self._top_level(lines, int(row_limit), max_name_column_width)
            lines[0:0] = ["=" * line_length, "This report only display top-level ops statistics"]
        if header is not None:
            lines[0:0] = ["=" * line_length, str(header)]
        return "\n".join(lines)

    def _top_level(self, lines, row_limit, width):
        """The table's rows of top-level keys only, row_limit of them."""
        top = {_cut(g.key, width) for g in self if g.cpu_parent is None}
        out, seps, kept = [], 0, 0
        for line in lines:
            if line.startswith("-"):
                seps += 1
            elif seps == 2:
                if kept == row_limit or line.strip().split("  ")[0] not in top:
                    continue
                kept += 1
            out.append(line)
        return out

"""Results as Python objects: ProfilerResult (one collected span), its event
tree (EventNode) and the summary tables as data (SummaryTable). Everything
comes from the C result's accessors, never from parsing printed text."""
import collections
import operator
import os
import sys

from . import _core
from ._enums import LineKind, SortedKeys, SummaryView, TracerEventType, coerce, foreign_value

__all__ = ["ProfilerResult", "EventNode", "SummaryTable", "ThreadInfo", "load_profiler_result"]

ThreadInfo = collections.namedtuple("ThreadInfo", "tid name event_count dropped")
Event = collections.namedtuple("Event", "name type flags start_ns end_ns parent depth value")
OpRecord = collections.namedtuple("OpRecord", "time_ns event op_type callstack flops inputs")
OpInput = collections.namedtuple("OpInput", "key dims dtype")
MemoryEvent = collections.namedtuple(
    "MemoryEvent", "ts_ns type place addr bytes current_allocated current_reserved "
    "peak_allocated peak_reserved event")
# paddle's TracerMemEventType names, by sp_mem_event_type.
_MEM_TYPES = ("Allocate", "Free", "ReservedAllocate", "ReservedFree")

FLAG_INSTANT, FLAG_COUNTER, FLAG_UNCLOSED, FLAG_OVERLAP = 1, 2, 4, 8

_FORMATS = {"json": _core.FORMAT_AUTO, "json.gz": _core.FORMAT_JSON_GZ, "gz": _core.FORMAT_JSON_GZ,
            "pb": _core.FORMAT_PROTOBUF, "pftrace": _core.FORMAT_PERFETTO}


def format_code(format):
    """Maps export()'s format string to the core's sp_format; None for
    "txt", which paddle accepts and writes nothing for (export_skipped)."""
    if not isinstance(format, str):
        raise TypeError(f"format must be a str, not {type(format).__name__}")
    if format == "txt":
        return None
    try:
        return _FORMATS[format]
    except KeyError:
        raise ValueError(f"format must be 'json', 'json.gz', 'pb' or 'pftrace', got {format!r}") from None


def export_skipped(path, format):
    """What export(path, "txt") does: paddle's ProfilerResult.save writes
    only "json" and "pb" and silently ignores other formats, so a paddle
    script that asks for "txt" runs on; stepprof also writes nothing there,
    but says so with one StepprofWarning (use summary() for text)."""
    import warnings
    warnings.warn(f"export({path!r}, format={format!r}): nothing written; paddle writes only "
                  f"'json' and 'pb' (summary() prints the tables as text)",
                  _core.StepprofWarning, stacklevel=3)


class EventNode:
    """One host event and the events nested in it (paddle's HostPythonNode
    names: name, type, start_ns, end_ns, children_node)."""

    __slots__ = ("name", "type", "start_ns", "end_ns", "thread_id", "flags", "value", "depth",
                 "children_node")

    def __init__(self, name, type, start_ns, end_ns, thread_id, flags=0, value=0.0, depth=0):
        self.name = name
        self.type = type
        self.start_ns = start_ns
        self.end_ns = end_ns
        self.thread_id = thread_id
        self.flags = flags
        self.value = value
        self.depth = depth
        self.children_node = []

    @property
    def children(self):
        """The nested EventNodes (children_node, torch's spelling)."""
        return self.children_node

    @property
    def duration_ns(self):
        """end_ns - start_ns."""
        return self.end_ns - self.start_ns

    @property
    def unclosed(self):
        """The range never ended within the span (closed at its end)."""
        return bool(self.flags & FLAG_UNCLOSED)

    def walk(self):
        """Yields this node and every node below it, parents first."""
        stack = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children_node))

    def __repr__(self):
        kind = self.type.name if isinstance(self.type, TracerEventType) else self.type
        return (f"EventNode({self.name!r}, {kind}, {self.duration_ns} ns, "
                f"{len(self.children_node)} children)")


class SummaryTable:
    """One summary table as data. lines holds every line as (LineKind,
    cells): header and row lines have one cell per column, title and text
    lines their text in cells[0]. headers is the first header line; rows the
    data lines; records() the rows as dicts keyed by header, with the thread
    group ("All threads merged", or a thread's name with thread_sep)."""

    def __init__(self, view, lines):
        self.view = view
        self.lines = [(LineKind(kind), cells) for kind, cells in lines]
        self.title = next((c[0] for k, c in self.lines if k == LineKind.TITLE), "")
        self.headers = next((c for k, c in self.lines if k == LineKind.HEADER), [])
        self.rows = [c for k, c in self.lines if k == LineKind.ROW]

    def records(self):
        """The rows as dicts keyed by header; with thread_sep, a "thread" key
        names the row's thread group."""
        out, group = [], None
        for kind, cells in self.lines:
            if kind == LineKind.TITLE and cells[0].startswith("Thread:"):
                group = cells[0][len("Thread:"):].strip()
            elif kind == LineKind.ROW:
                rec = dict(zip(self.headers, cells))
                if group is not None:
                    rec["thread"] = group
                out.append(rec)
        return out

    def column(self, header):
        """The cells of one column, stripped (row names keep no indent)."""
        i = self.headers.index(header)
        return [row[i].strip() for row in self.rows]

    def __repr__(self):
        return f"SummaryTable({self.title!r}, {len(self.rows)} rows)"


class ProfilerResult:
    """One collected span. It keeps the C result alive, so it stays valid
    after the profiler collects another span or is gone."""

    def __init__(self, core_result):
        self._r = core_result

    @property
    def threads(self):
        """The span's threads as ThreadInfo(tid, name, event_count, dropped),
        in tid order; a thread's position here is its index."""
        return [ThreadInfo(*t) for t in self._r.threads()]

    @property
    def counters(self):
        """Events lost or repaired in the span ({"host_dropped": 0, ...})."""
        return self._r.counters()

    @property
    def span(self):
        """(start_ns, end_ns) of the recording window, CLOCK_REALTIME."""
        return self._r.span()

    @property
    def span_index(self):
        """The span's number among those its profiler collected."""
        return self._r.span_index()

    def thread_index(self, thread):
        """The index into threads of `thread`, which is either an OS thread
        id of this result (ThreadInfo.tid, threading.get_native_id()) or an
        index into threads. An OS thread id is looked up first: an int that
        is the tid of one of the result's threads means that thread, else a
        valid index (0 <= thread < len(threads)) means the thread at that
        index. Raises IndexError naming the valid indices and thread ids
        when it is neither, TypeError when thread is not an int."""
        if isinstance(thread, bool):
            raise TypeError("thread must be an int (an OS thread id or an index), not bool")
        try:
            thread = operator.index(thread)
        except TypeError:
            raise TypeError(f"thread must be an int (an OS thread id or an index), not "
                            f"{type(thread).__name__}") from None
        tids = [t[0] for t in self._r.threads()]
        if thread in tids:
            return tids.index(thread)
        if 0 <= thread < len(tids):
            return thread
        if not tids:
            raise IndexError(f"thread {thread}: this result holds no threads")
        raise IndexError(f"thread {thread} is neither an OS thread id of this result nor an index "
                         f"into its threads: the indices are 0..{len(tids) - 1}, the thread ids "
                         f"{', '.join(str(t) for t in tids)}")

    def events(self, thread=0):
        """The events of one thread, ordered by start (a parent before its
        children); parent is an index into the same list. thread: an OS
        thread id or an index into threads (thread_index says which wins)."""
        return [Event(n, TracerEventType(t), f, s, e, p, d, v)
                for n, t, f, s, e, p, d, v in self._r.events(self.thread_index(thread))]

    def ops(self, thread=0):
        """The operator records of one thread (input shapes, dtypes, call
        stack, FLOPs), in time order, as OpRecord(time_ns, event, op_type,
        callstack, flops, inputs); event is the index in events(thread) of
        the range it belongs to (-1: none), inputs a list of OpInput(key,
        dims, dtype)."""
        return [OpRecord(t, e, o, c, f, [OpInput(k, d, dt) for k, d, dt in ins])
                for t, e, o, c, f, ins in self._r.ops(self.thread_index(thread))]

    def memory_events(self, thread=0):
        """The allocations and frees of one thread, in time order, as
        MemoryEvent(ts_ns, type, place, addr, bytes, current_allocated,
        current_reserved, peak_allocated, peak_reserved, event): type one of
        "Allocate", "Free", "ReservedAllocate", "ReservedFree"; bytes
        negative for a free; event the index in events(thread) of the range
        it is charged to (-1: none)."""
        return [MemoryEvent(ts, _MEM_TYPES[ty] if 0 <= ty < 4 else str(ty), *rest)
                for ts, ty, *rest in self._r.mem_events(self.thread_index(thread))]

    def tree(self, thread=0):
        """The outermost events of one thread, as EventNodes. thread: an OS
        thread id or an index into threads (thread_index says which wins)."""
        return self._tree_at(self.thread_index(thread))

    def _tree_at(self, index):
        tid = self._r.threads()[index][0]
        nodes, roots = [], []
        for n, t, f, s, e, p, d, v in self._r.events(index):
            node = EventNode(n, TracerEventType(t), s, e, tid, f, v, d)
            nodes.append(node)
            (nodes[p].children_node if p >= 0 else roots).append(node)
        return roots

    def get_data(self):
        """paddle's ProfilerResult.get_data(): {thread id: root node}, the
        root named after the thread, holding its outermost events."""
        start, end = self.span
        data = {}
        for i, (tid, name, _, _) in enumerate(self._r.threads()):
            root = EventNode(name or f"thread {tid}", None, start, end, tid)
            root.children_node = self._tree_at(i)  # an index, never read as a tid
            data[tid] = root
        return data

    def summary_table(self, view, sorted_by=SortedKeys.CPUTotal, op_detail=True, thread_sep=False,
                      time_unit="ms"):
        """One view's table as a SummaryTable, or None when the view prints
        nothing for this span."""
        view = coerce(view, SummaryView, "view")
        lines = self._r.table(int(view), sorted_by, op_detail, thread_sep, time_unit)
        return None if lines is None else SummaryTable(view, lines)

    def summary_tables(self, sorted_by=SortedKeys.CPUTotal, op_detail=True, thread_sep=False,
                       time_unit="ms", views=None):
        """{SummaryView: SummaryTable} for the views that have a table."""
        single = isinstance(views, int) or foreign_value(views, "SummaryView") is not None
        wanted = list(SummaryView) if views is None else ([views] if single else list(views))
        out = {}
        for v in wanted:
            table = self.summary_table(v, sorted_by, op_detail, thread_sep, time_unit)
            if table is not None:
                out[table.view] = table
        return out

    def summary_text(self, sorted_by=SortedKeys.CPUTotal, op_detail=True, thread_sep=False,
                     time_unit="ms", views=None):
        """paddle's summary tables as the text summary() prints."""
        return self._r.summary(sorted_by, op_detail, thread_sep, time_unit, views)

    def summary(self, sorted_by=SortedKeys.CPUTotal, op_detail=True, thread_sep=False,
                time_unit="ms", views=None):
        """Prints paddle's summary tables to sys.stdout (summary_text's text)."""
        text = self.summary_text(sorted_by, op_detail, thread_sep, time_unit, views)
        if sys.stdout is not None:  # None (pythonw, daemons): dropped, as print() does
            sys.stdout.write(text)
            sys.stdout.flush()

    def table_torch(self, sort_by="self_cpu_time_total", row_limit=100, max_name_width=55,
                    time_unit=None, group_by_input_shape=False, max_shapes_width=80):
        """torch's key_averages().table(sort_by, row_limit) as text; sort_by: any
        torch sort key (docs/semantics.md §6.11) or "none"; max_name_width:
        torch's max_name_column_width (None: no limit); time_unit: torch's
        ("s", "ms", "us"; None: automatic); group_by_input_shape: rows by
        name and input shapes, with torch's Input Shapes column, at most
        max_shapes_width wide (None: no limit)."""
        return self._r.table_torch(sort_by, row_limit,
                                   0 if max_name_width is None else max(1, int(max_name_width)),
                                   time_unit, bool(group_by_input_shape),
                                   -1 if max_shapes_width is None else max(0, int(max_shapes_width)))

    def export(self, path, format="json"):
        """Writes the span as Chrome-trace JSON (gzip for "json.gz" or a
        path ending in .gz; "pb" for paddle's protobuf; "pftrace" or a path
        ending in .pftrace for a Perfetto trace). The file appears whole
        (temporary + rename). "txt": nothing written (export_skipped)."""
        code = format_code(format)
        if code is None:
            export_skipped(path, format)
            return
        self._r.export(path, code)


_NO_FILE = object()


def load_profiler_result(filename=_NO_FILE, *, file_name=_NO_FILE):
    """paddle's load_profiler_result(filename): reads a result saved by
    export_protobuf or export(path, "pb") (stepprof's or paddle's .pb files),
    or a Chrome-trace JSON (.json, .json.gz: stepprof's own, or paddle's from
    export_chrome_tracing / export(path, "json")), as a ProfilerResult
    whose summary() and tables work as on a live one. file_name= (stepprof's
    earlier spelling) still works. Raises OSError when the file cannot be
    read and ValueError when it is not a valid trace."""
    if filename is _NO_FILE and file_name is _NO_FILE:
        raise TypeError("load_profiler_result() missing required argument: 'filename'")
    if filename is not _NO_FILE and file_name is not _NO_FILE:
        raise TypeError("load_profiler_result() takes filename or file_name, not both")
    path = file_name if filename is _NO_FILE else filename
    if not isinstance(path, (str, bytes, os.PathLike)):
        raise TypeError(f"filename must be a str or path, not {type(path).__name__}")
    return ProfilerResult(_core.load(os.fsdecode(os.fspath(path))))

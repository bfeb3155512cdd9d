"""paddle.distributed's collectives in the trace.

On the CPU, paddle's collectives (gloo) pass through no host tracer event,
so paddle.profiler's trace does not show them. While a span records, the
functions of paddle.distributed named below are replaced by wrappers that
run the collective inside a Communication range named after it and note
what it did: the collective, its process group (the group's id, "0" for
the global group), the group's size, the bytes this rank sends and its
sequence number within the group (counted from the profiler's start, the
same on every rank for the same call). At collection the notes are handed
to the span (sp_profiler_add_comm_info), so the cross-rank summary and
`stepprof merge` match the ranks' collectives as they do torch's.

Only calls through the module attribute are seen (`dist.all_reduce(x)`);
a function imported by name before the span began is paddle's own.
"""
import threading
import time

# paddle.distributed's name -> the collective's name in the trace.
COLLECTIVES = {
    "all_reduce": "allreduce",
    "broadcast": "broadcast",
    "reduce": "reduce",
    "all_gather": "allgather",
    "scatter": "scatter",
    "alltoall": "alltoall",
    "reduce_scatter": "reduce_scatter",
    "barrier": "barrier",
}


def _tensor_bytes(t):
    """A tensor's (or a list of tensors') bytes, -1 when unknown."""
    try:
        if isinstance(t, (list, tuple)):
            return sum(_tensor_bytes(x) for x in t) if t else 0
        return int(t.numel()) * int(t.element_size())
    except Exception:
        return -1


def _sent_bytes(name, args, kwargs):
    """What this rank sends: the tensor argument's bytes (the list's for
    alltoall), 0 for a barrier."""
    if name == "barrier":
        return 0
    if name == "all_gather":  # all_gather(tensor_list, tensor, ...)
        t = args[1] if len(args) > 1 else kwargs.get("tensor")
    elif name in ("alltoall", "reduce_scatter", "scatter"):
        t = args[1] if len(args) > 1 else (kwargs.get("in_tensor_list") or kwargs.get("tensor_list"))
    else:
        t = args[0] if args else kwargs.get("tensor")
    return -1 if t is None else _tensor_bytes(t)


def _group_of(name, args, kwargs, dist):
    """(group name, group size) of a call."""
    group = kwargs.get("group")
    if group is None and name == "barrier" and args:
        group = args[0]
    try:
        if group is None:
            return "0", int(dist.get_world_size())
        return str(group.id), int(group.nranks)
    except Exception:
        return "", 0


class CommCapture:
    """Wraps paddle.distributed's collectives for one profiler; begin()
    and end() follow its spans."""

    def __init__(self, dist):
        self._dist = dist
        self._lock = threading.Lock()
        self._notes = []
        self._seq = {}
        self._originals = {}

    def begin(self):
        with self._lock:
            self._notes = []
        for name in COLLECTIVES:
            fn = getattr(self._dist, name, None)
            if fn is None or name in self._originals:
                continue
            self._originals[name] = fn
            setattr(self._dist, name, self._wrap(name, fn))

    def end(self, add_comm_info):
        """Puts paddle's functions back; hands the notes to the span when
        add_comm_info is given (the span is collected, not discarded)."""
        for name, fn in self._originals.items():
            setattr(self._dist, name, fn)
        self._originals = {}
        with self._lock:
            notes, self._notes = self._notes, []
        if add_comm_info is not None and notes:
            add_comm_info(notes)

    def _wrap(self, name, fn):
        from .profiler import RecordEvent, TracerEventType
        collective = COLLECTIVES[name]
        capture = self

        def collective_call(*args, **kwargs):
            group, size = _group_of(name, args, kwargs, capture._dist)
            with capture._lock:
                seq = capture._seq.get(group, 0)
                capture._seq[group] = seq + 1
            start = time.time_ns()
            with RecordEvent(name, event_type=TracerEventType.Communication):
                result = fn(*args, **kwargs)
            end = time.time_ns()
            note = (threading.get_native_id(), (start + end) // 2, collective, group, size,
                    _sent_bytes(name, args, kwargs), seq)
            with capture._lock:
                capture._notes.append(note)
            return result

        collective_call.__wrapped__ = fn
        collective_call.__name__ = getattr(fn, "__name__", name)
        collective_call.__doc__ = getattr(fn, "__doc__", None)
        return collective_call

"""stepprof.torch_profiler: torch.profiler's API on stepprof's C core.

A torch script changes only its import:

    import stepprof.torch_profiler as profiler     # was: import torch.profiler
    from stepprof.torch_profiler import profile, ProfilerActivity, schedule

    with profile(activities=[ProfilerActivity.CPU],
                 schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
                 on_trace_ready=profiler.tensorboard_trace_handler("./log")) as prof:
        for batch in loader:
            train(batch)
            prof.step()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=10))

torch's own objects work as they are: a torch.profiler.schedule(...)
result, torch's tensorboard_trace_handler(dir) and any on_trace_ready(prof)
callable. profile is stepprof.profiler.Profiler underneath, so everything
that profiler records (hand-marked ranges, steps, the GPU through CUPTI,
operators where a capture is installed) is in its spans."""
import enum
import os
import sys
import warnings

from . import _core
from . import profiler as _sp
from ._enums import ProfilerTarget as _Target
from ._handlers import TraceHandler as _TraceHandler
from ._python_tracer import PythonTracer as _PythonTracer
from ._record import record_function
from ._torch_events import STACK_METRICS as _STACK_METRICS
from ._torch_events import KeyAverages as _KeyAverages
from ._torch_events import function_events as _function_events
from ._torch_memory import export as _memory_timeline
from ._torch_trace import export_trace as _export_trace
from ._torch_trace import metadata_value as _metadata_value

__all__ = ["profile", "ProfilerActivity", "ProfilerAction", "schedule",
           "tensorboard_trace_handler", "record_function", "supported_activities",
           "StepprofWarning"]

StepprofWarning = _core.StepprofWarning


class ProfilerActivity(enum.Enum):
    """torch's ProfilerActivity, with torch's values. CPU and CUDA are
    recorded (CUDA is stepprof's GPU target); the others warn and are left
    out. torch's own members are accepted wherever these are."""

    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


class ProfilerAction(enum.Enum):
    """torch's ProfilerAction: what a schedule asks of a step. Its values
    are stepprof's ProfilerState values (NONE = CLOSED, WARMUP = READY,
    RECORD, RECORD_AND_SAVE = RECORD_AND_RETURN); DEVICE_STOPPED, which
    torch sets itself, must not come from a schedule."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3
    DEVICE_STOPPED = 4


_TARGETS = {"CPU": _Target.CPU, "CUDA": _Target.GPU}


def _warn(text, stacklevel=3):
    warnings.warn(text, StepprofWarning, stacklevel=stacklevel)


def supported_activities():
    """The activities stepprof records here: CPU, and CUDA when torch is
    imported and sees a CUDA device (stepprof traces it through CUPTI)."""
    out = {ProfilerActivity.CPU}
    torch = sys.modules.get("torch")
    try:
        if torch is not None and torch.cuda.is_available():
            out.add(ProfilerActivity.CUDA)
    except Exception:  # a broken CUDA setup: CPU only, as torch's
        pass
    return out


class _ActionSchedule(_sp._TorchScheduler):
    """schedule(...)'s result: runs in C like stepprof's own; called, it
    gives a ProfilerAction, as torch's schedule function does."""

    __slots__ = ()

    def __call__(self, step):
        return ProfilerAction(int(super().__call__(step)))


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """torch.profiler.schedule: after skip_first steps, cycles of `wait`
    idle, `warmup` warm-up and `active` recorded steps, `repeat` times (0:
    while the profiler runs); skip_first_wait skips the first cycle's wait.
    The result, called with a step, gives its ProfilerAction."""
    try:
        return _ActionSchedule._torch(wait, warmup, active, repeat, skip_first, skip_first_wait)
    except ValueError as e:
        raise _sp._invalid(e) from None


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False,
                              use_python_export=False):
    """torch's tensorboard_trace_handler: each span goes to
    <dir_name>/<worker>.<ns>.pt.trace.json[.gz] (worker: <hostname>_<pid>
    by default), written by prof.export_chrome_trace, so the metadata of
    add_metadata is in it. use_python_export is accepted and ignored."""
    del use_python_export
    return _TraceHandler("tensorboard", dir_name, worker_name, use_gzip)


class _Schedule:
    """A schedule from outside stepprof (torch's schedule(), a function):
    its ProfilerAction (torch's, ours, a ProfilerState or an int) as the
    core's state value."""

    __slots__ = ("fn",)

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, step):
        action = self.fn(step)
        if isinstance(action, enum.Enum) and type(action).__name__ == "ProfilerAction":
            if action.name not in ProfilerAction.__members__ or action.name == "DEVICE_STOPPED":
                raise ValueError(f"the schedule returned {action}, which a schedule must not "
                                 f"return")
            return ProfilerAction[action.name].value
        return action  # the core takes ints and ProfilerStates, and says what else it got


def _activities_targets(activities, use_cuda):
    """profile's activities as stepprof's targets (None: the default, CPU
    and the GPU when there is one)."""
    if activities is None and use_cuda is None:
        return None
    if activities is None:
        activities = supported_activities()
    targets = []
    for a in activities:
        name = getattr(a, "name", None)
        if not isinstance(name, str):
            raise TypeError(f"activities must hold ProfilerActivity values, got {a!r}")
        if name in _TARGETS:
            targets.append(_TARGETS[name])
        else:
            _warn(f"ProfilerActivity.{name} is not recorded by stepprof (CPU and CUDA are); "
                  f"left out", stacklevel=4)
    if use_cuda:
        targets.append(_Target.GPU)
    if not targets:
        if not activities:
            raise ValueError("No valid profiler activities found")
        _warn("no activity stepprof records was given; recording the CPU", stacklevel=4)
        targets.append(_Target.CPU)
    return sorted(set(targets))


def _deliver(prof):
    """The core's on_trace_ready: torch's handler, a user's callable or a
    stepprof TraceHandler, run with the profile (no handler: nothing is
    written, as torch writes nothing)."""
    handler = prof.on_trace_ready
    if handler is None:
        return
    if isinstance(handler, _TraceHandler):
        os.makedirs(handler.dir_name, exist_ok=True)
        path = handler._path()
        prof.export_chrome_trace(path)
        prof._last_trace_path = path
        return
    handler(prof)


class profile(_sp.Profiler):
    """torch.profiler.profile, over stepprof.profiler.Profiler.

    activities: ProfilerActivity values (stepprof's or torch's): CPU, CUDA;
        others warn. None: CPU, and CUDA when there is a GPU.
    schedule: schedule(...) (stepprof's, run in C), torch's own
        torch.profiler.schedule(...), or any callable step -> ProfilerAction.
        None: every step from start() to stop() is recorded, in one span.
    on_trace_ready: called with this profile when a span is ready (torch's
        tensorboard_trace_handler, stepprof's, or any callable); None:
        nothing is written.
    record_shapes, profile_memory, with_stack, with_flops: passed to the
        core, whose spans carry what it records for them.
    with_modules, experimental_config, acc_events, custom_trace_id_callback,
    post_processing_timeout_s, use_cuda (torch's older flag: adds CUDA):
        accepted; execution_trace_observer warns that no execution trace is
        written. Other keyword arguments warn (StepprofWarning) and are
        ignored.
    Unlike torch, every span has its ProfilerStep#N ranges, with or without
    a schedule, and nothing is printed at stop."""

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes=False, profile_memory=False, with_stack=False, with_flops=False,
                 with_modules=False, experimental_config=None, execution_trace_observer=None,
                 acc_events=False, custom_trace_id_callback=None, post_processing_timeout_s=None,
                 use_cuda=None, **unknown):
        for name in sorted(unknown):
            _warn(f"profile(): argument {name!r} is not one of torch.profiler.profile's; ignored")
        if execution_trace_observer is not None:
            _warn("profile(execution_trace_observer=...): stepprof writes no execution trace")
        if use_cuda is not None:
            _warn("profile(use_cuda=...) is deprecated in torch; use activities=[...CUDA]")
        if schedule is not None and not callable(schedule):
            raise TypeError(f"schedule must be a callable or None, not {type(schedule).__name__}")
        core_schedule = schedule if schedule is None or isinstance(
            schedule, _core.Scheduler) else _Schedule(schedule)
        if on_trace_ready is not None and not callable(on_trace_ready):
            raise TypeError(f"on_trace_ready must be a callable or None, not "
                            f"{type(on_trace_ready).__name__}")
        if activities is not None:
            activities = list(activities)  # torch's {activity: config} form: its keys
        targets = _activities_targets(activities, use_cuda)
        # The core's warnings (no GPU, ...) are given again from the caller's line.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", StepprofWarning)
            super().__init__(targets=targets, scheduler=core_schedule, on_trace_ready=_deliver,
                             record_shapes=record_shapes, profile_memory=profile_memory,
                             with_flops=with_flops, with_stack=with_stack, perf_summary=False)
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
        # torch's attributes (stepprof.profiler's paddle attributes stay too).
        self.activities = supported_activities() if activities is None else set(activities)
        self.schedule = schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.with_modules = bool(with_modules)
        if self._pytrace is not None:  # nn.Module calls alone (_python_tracer.py)
            self._pytrace = _PythonTracer(with_stack, with_modules)
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = bool(acc_events)
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.use_device = "cuda" if _Target.GPU in self.targets else None
        self._trace_metadata = {}

    def step(self):
        """Ends the current step and begins the next (torch's step(): no
        arguments); a span that ends here goes to on_trace_ready now."""
        super().step()

    def stop(self):
        """Stops profiling; a span still recording goes to on_trace_ready.
        Stopped in a warm-up step, nothing is saved and, as torch, nothing
        is said (paddle's dialect warns there)."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            super().stop()
        for w in caught:
            if not str(w.message).startswith("Improper profiler state transition: READY->CLOSED"):
                warnings.warn(w.message, w.category, stacklevel=2)

    @property
    def current_action(self):
        """The ProfilerAction of the current step (when not started, what the
        schedule says of it, as torch's)."""
        if self._running:
            return ProfilerAction(int(self._state))
        if self.schedule is None:
            return ProfilerAction.RECORD
        action = self.scheduler(self.step_num)
        return action if isinstance(action, ProfilerAction) else ProfilerAction(int(action))

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False, include_python_functions=False):
        """The most recent span's events grouped by name, as a list of
        FunctionEventAvg with table() (torch's EventList.table);
        group_by_input_shape groups by name and input shapes (record_shapes)
        as torch's, and table() shows torch's Input Shapes column.
        group_by_stack_n=N (with_stack) groups the list by the first N frames
        of each event's stack too, as torch's; the table still has one row
        per name (and shapes). Python calls (with_stack) are left out unless
        include_python_functions, as torch's; the table always leaves them
        out. Overload names are not part of the events, so that option
        groups by name alone."""
        del group_by_overload_name
        result = self.get_result()
        return _KeyAverages(result, group_by_input_shape, group_by_stack_n,
                            include_python_functions)

    def events(self):
        """The most recent span's ranges as FunctionEvent objects (every
        thread's, by start time): name, thread, start_us, end_us,
        cpu_time_total and self_cpu_time_total in us, count (1), cpu_parent,
        cpu_children, input_shapes (record_shapes), stack and
        is_python_function (with_stack: the Python calls are events, and each
        event's stack lists the calls around it, innermost first); device and
        memory fields 0. As torch's, a range that is the only child of one of
        its own name is merged into it."""
        return _function_events(self.get_result())

    def export_chrome_trace(self, path, use_python_export=False, cuda_graph_annotations=None,
                            graph_lanes="none", default_stream=7):
        """Writes the most recent span as stepprof's Chrome-trace JSON (gzip
        when path ends in .gz), with the metadata of add_metadata and
        add_metadata_json as top-level keys. torch's other arguments are
        accepted and ignored."""
        del use_python_export, cuda_graph_annotations, graph_lanes, default_stream
        if self.get_result() is None:
            raise RuntimeError("export_chrome_trace(): no span has been collected yet (a span "
                               "ends at stop() or at the last step of a schedule's cycle)")
        _export_trace(lambda p: self.export(p, "json"), path,
                      list(self._trace_metadata.items()))

    def add_metadata(self, key, value):
        """Adds a top-level key with a string value to the traces written
        from now on by export_chrome_trace."""
        self._trace_metadata[str(key)] = _metadata_value(value, False, _warn)

    def add_metadata_json(self, key, value):
        """Adds a top-level key with a JSON value (a string holding JSON;
        invalid JSON warns and is written as a string)."""
        self._trace_metadata[str(key)] = _metadata_value(value, True, _warn)

    def preset_metadata_json(self, key, value):
        """add_metadata_json (torch presets it for the next span; here
        metadata is kept for every later trace)."""
        self.add_metadata_json(key, value)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """Writes the most recent span in the folded-stacks format that
        flamegraph.pl and speedscope read, as torch's: one line per event
        with a stack (with_stack) and a non-zero metric: its stack from the
        outermost frame, ';' between frames (spaces, ';', tabs and newlines
        in a frame become '_'), then the value in us. Like torch's, the
        event's own name is not a frame. metric: self_cpu_time_total, or a
        self device time (0 per event here, so those lines are left out).
        Raises AssertionError without with_stack, as torch's."""
        if metric not in _STACK_METRICS:
            raise ValueError(f"metric should be one of: {list(_STACK_METRICS)}")
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        table = str.maketrans(" ;\t\n", "____")
        with open(path, "w", encoding="utf-8") as f:
            if metric != "self_cpu_time_total":
                return
            for e in self.events():
                value = int(e.self_cpu_time_total)
                if not e.stack or value <= 0:
                    continue
                f.write(";".join(frame.translate(table) for frame in reversed(e.stack)) +
                        f" {value}\n")

    def export_memory_timeline(self, path, device=None):
        """Writes the most recent span's memory timeline at device ("cpu",
        "cuda:N"; None: "cuda:0" when CUDA is among supported_activities(),
        else "cpu", as torch) in torch's forms, by path's suffix: ".html" a
        page with the plot (inline SVG, no matplotlib), ".raw.json.gz" the
        raw points, ".json.gz" or another suffix [times, sizes] (docs/python.md).
        torch's categories come from a graph analysis stepprof does not make:
        every byte is in category None (Unknown). Needs profile_memory=True
        (record_shapes and with_stack, which torch also asks for, are not
        needed); a span without memory events on that device warns and
        writes an empty timeline."""
        if not self.profile_memory:
            raise ValueError("profile_memory=True required for memory profiling.")
        result = self.get_result()
        if result is None:
            raise RuntimeError("export_memory_timeline(): no span has been collected yet (a span "
                               "ends at stop() or at the last step of a schedule's cycle)")
        if device is None:
            device = "cuda:0" if ProfilerActivity.CUDA in supported_activities() else "cpu"
        _memory_timeline(result, path, device)

    def set_custom_trace_id_callback(self, callback):
        """Sets the callable get_trace_id() asks."""
        self.custom_trace_id_callback = callback

    def get_trace_id(self):
        """custom_trace_id_callback()'s id, or None without one."""
        cb = self.custom_trace_id_callback
        return None if cb is None else cb()

    def toggle_collection_dynamic(self, enable, activities):
        """Accepted with a warning: stepprof records its targets for the
        whole span."""
        del enable, activities
        _warn("toggle_collection_dynamic(): stepprof records its targets for the whole span")

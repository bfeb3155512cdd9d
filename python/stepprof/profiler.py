"""stepprof.profiler: paddle.profiler's API on stepprof's C core.

    import stepprof.profiler as profiler
    with profiler.Profiler(scheduler=(2, 10),
                           on_trace_ready=profiler.export_chrome_tracing("./profiler_demo")) as prof:
        for batch in loader:
            with profiler.RecordEvent("forward", profiler.TracerEventType.Forward):
                ...
            prof.step()
    prof.summary()

torch.profiler's spellings are here too: schedule, tensorboard_trace_handler,
record_function."""
import atexit
import os
import sys
import warnings
import weakref

from . import _core
# Helpers are imported under private names: every public name of this module
# is part of the API that docs/python.md documents (tests/python/test_docs.py).
from ._dropin import PaddleAttributes as _PaddleAttributes
from ._dropin import SchedulerArgumentError
from ._dropin import invalid as _invalid
from ._dropin import register_submodules as _register_submodules
from ._dropin import wants_perf_summary as _wants_perf_summary
from ._enums import (LineKind, ProfilerState, ProfilerTarget, SortedKeys, SummaryView,
                     TracerEventType)
from ._enums import coerce as _coerce
from . import _paddle_reader
from ._paddle_comm import CommCapture as _PaddleCommCapture
from ._paddle_capture import PaddleCapture as _PaddleCapture
from ._python_tracer import PythonTracer as _PythonTracer
from ._torch_capture import TorchCapture as _TorchCapture
from ._torch_capture import dist_backend as _torch_dist_backend
from ._torch_capture import forget_after_fork as _torch_forget_after_fork
from ._handlers import TraceHandler, export_chrome_tracing, export_protobuf, tensorboard_trace_handler
from ._record import RecordEvent, record_function
from ._result import EventNode, ProfilerResult, SummaryTable, load_profiler_result
from ._result import export_skipped as _export_skipped
from ._result import format_code as _format_code

__all__ = [
    "Profiler", "ProfilerTarget", "ProfilerState", "TracerEventType", "SortedKeys", "SummaryView",
    "make_scheduler", "export_chrome_tracing", "export_protobuf", "load_profiler_result",
    "RecordEvent", "schedule", "tensorboard_trace_handler", "record_function", "ProfilerResult",
    "EventNode", "SummaryTable", "LineKind", "is_recording", "StepprofWarning",
]

is_recording = _core.is_recording
StepprofWarning = _core.StepprofWarning


class _Scheduler(_core.Scheduler):
    """A built-in scheduler: the profiler runs it in C; calling it gives the
    ProfilerState of a step, as paddle's scheduler functions do."""

    __slots__ = ()

    def __call__(self, step):
        if isinstance(step, int) and step < 0:
            # paddle's scheduler functions assert step >= 0
            raise _invalid(why=f"step ({step}) must be >= 0")
        return ProfilerState(super().__call__(step))


class _TorchScheduler(_Scheduler):
    """schedule(...)'s scheduler: a profiler given one speaks torch's dialect."""

    __slots__ = ()


def make_scheduler(*, closed, ready, record, repeat=0, skip_first=0):
    """paddle's make_scheduler: after skip_first CLOSED steps, cycles of
    `closed` CLOSED, `ready` READY and `record` recorded steps (the last one
    RECORD_AND_RETURN), `repeat` times (0: forever). Raises ValueError
    "Invalid profiler scheduler arguments: <which argument is wrong>" (such
    as "record (0) must be greater than 0") unless closed >= 0, ready >= 0,
    record > 0, repeat >= 0 and skip_first >= 0 (SchedulerArgumentError, an
    AssertionError as paddle's assert and a ValueError)."""
    try:
        return _Scheduler._make(closed, ready, record, repeat, skip_first)
    except ValueError as e:
        raise _invalid(e) from None


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """torch.profiler.schedule: make_scheduler with torch's names. A profiler
    given it speaks torch's dialect (no Perf Summary at stop)."""
    try:
        return _TorchScheduler._torch(wait, warmup, active, repeat, skip_first, skip_first_wait)
    except ValueError as e:
        raise _invalid(e) from None


def _targets_mask(targets):
    if targets is None:
        return 0
    if isinstance(targets, (int, str)):
        raise TypeError("targets must be an iterable of ProfilerTarget, e.g. [ProfilerTarget.CPU]")
    mask = 0
    for t in targets:
        # stepprof's values or paddle's own ProfilerTarget members; ValueError
        # for unknown values.
        mask |= 1 << _coerce(t, ProfilerTarget, "targets")
    return mask


def _scheduler_value(scheduler):
    if scheduler is None or isinstance(scheduler, _core.Scheduler):
        return scheduler
    if isinstance(scheduler, (tuple, list)):
        # paddle's (start, end): records steps [start, end) once.
        if len(scheduler) != 2:
            raise _invalid(why=f"a (start, end) pair expected, got {len(scheduler)} "
                               f"value{'' if len(scheduler) == 1 else 's'}")
        start, end = scheduler
        try:
            return _Scheduler._range(start, end)
        except ValueError as e:
            raise _invalid(e) from None
    if callable(scheduler):
        return scheduler
    raise TypeError(f"scheduler must be a callable, a (start, end) tuple or None, "
                    f"not {type(scheduler).__name__}")


def _handler_value(on_trace_ready):
    if on_trace_ready is None:
        return None
    if isinstance(on_trace_ready, TraceHandler):
        return on_trace_ready._spec()  # the C handler: writes on a background thread
    if callable(on_trace_ready):
        return on_trace_ready
    raise TypeError(f"on_trace_ready must be a callable or None, not "
                    f"{type(on_trace_ready).__name__}")


# Profilers started in this process, for the exit hook below.
_started = weakref.WeakSet()


@atexit.register
def _stop_at_exit():
    """A profiler started and never stopped is stopped at exit, its span
    delivered to on_trace_ready, with one line on stderr saying where it went
    (the C library does the same for C programs, after Python is gone)."""
    for prof in list(_started):
        try:
            prof._stop_at_exit()
        except Exception as e:  # at exit: say it, never hide the others
            _warn(f"at exit: stopping the profiler failed: {e}")


def _warn(text):
    warnings.warn(text, StepprofWarning, stacklevel=3)


# Profilers whose span records now, for the fork hooks below.
_recording = weakref.WeakSet()


def _forked_while_recording():
    """In the parent, after os.fork() (a DataLoader worker, multiprocessing's
    fork): the child is not profiled (its copies of the profilers are inert,
    docs/semantics.md section 3), so what it runs is missing from the trace.
    Said once per profiler, not per worker or per epoch."""
    for prof in list(_recording):
        if not getattr(prof, "_fork_said", False):
            prof._fork_said = True
            warnings.warn("a process forked while this profiler recorded (a DataLoader worker, or "
                          "multiprocessing) is not profiled: what it runs is not in the trace, "
                          "only this process's wait for it (a DataLoader with num_workers=0 loads "
                          "in this process, and in the trace)", StepprofWarning, stacklevel=2)


def _forked_child():
    _recording.clear()
    _torch_forget_after_fork()


os.register_at_fork(after_in_parent=_forked_while_recording, after_in_child=_forked_child)


def _torch_dialect(scheduler, on_trace_ready):
    """Whether a profiler is configured with torch's spellings (schedule(),
    tensorboard_trace_handler()): torch prints nothing at stop."""
    return isinstance(scheduler, _TorchScheduler) or (
        isinstance(on_trace_ready, TraceHandler) and on_trace_ready.kind == "tensorboard")


class Profiler(_PaddleAttributes, _core.Profiler):
    """paddle.profiler.Profiler.

    targets: ProfilerTarget values (default: what can be traced, CPU here).
    scheduler: a callable step -> ProfilerState, a (start, end) tuple, or
        make_scheduler(...) / schedule(...); default: every step recorded.
    on_trace_ready: called with the profiler when a span's result is ready;
        default export_chrome_tracing("./profiler_log/"). Exceptions raised
        inside it (or inside a scheduler) are re-raised by the step() or
        stop() call that ran it.
    timer_only: only the benchmark timer runs (step_info, Perf Summary).
    perf_summary: print the benchmark's Perf Summary to sys.stdout at stop
        (True) or not (False). None (the default): as the dialect does:
        printed as paddle does, unless the profiler is configured with
        torch's spellings (schedule(...) or tensorboard_trace_handler(...)),
        since torch prints nothing. Warnings are StepprofWarnings, through
        Python's warnings module (warnings.filterwarnings silences them).
    record_shapes, profile_memory, with_flops, with_stack: as paddle/torch.
    emit_nvtx: as paddle's: paddle's RecordEvents are turned on from
        start() to stop(), also with timer_only (NVTX on a GPU build of
        paddle is paddle's doing).
    custom_device_types: accepted for compatibility.

    stepprof's own options (sp_options in the C header says more):
    buffer_cap_bytes: the cap on event buffer memory, in bytes (None: the
        library's default); events past it are dropped and counted.
    overwrite_oldest: at the cap, reuse the oldest events' memory instead of
        dropping new events (a flight recorder keeps the span's end).
    save_on_crash, crash_path, stream_to_disk: write a crash dump of the
        span if the process dies while recording (stream_to_disk keeps it
        current about once a second, for SIGKILL); load it with
        load_profiler_result or the stepprof command.
    """

    def __init__(self, *, targets=None, scheduler=None, on_trace_ready=None, record_shapes=False,
                 profile_memory=False, timer_only=False, emit_nvtx=False, custom_device_types=None,
                 with_flops=False, with_stack=False, buffer_cap_bytes=None, overwrite_oldest=False,
                 save_on_crash=False, crash_path=None, stream_to_disk=False, perf_summary=None):
        # Under `stepprof run`, the program's first profiler takes the
        # injected one's place, with the run's steps and output (_autorun.py).
        if "stepprof._autorun" in sys.modules:
            scheduler, on_trace_ready, targets = sys.modules["stepprof._autorun"].program_profiler(
                scheduler, on_trace_ready, targets)
        self._last_trace_path = None
        self._perf_summary = _wants_perf_summary(perf_summary,
                                                _torch_dialect(scheduler, on_trace_ready))
        # The core's warnings at creation (GPU not available, ...) are given
        # again from the caller's line, as paddle's warn() in __init__ is.
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", StepprofWarning)
            self._configure(_targets_mask(targets), _scheduler_value(scheduler),
                            _handler_value(on_trace_ready), bool(timer_only), bool(record_shapes),
                            bool(profile_memory), bool(with_flops), bool(with_stack),
                            0 if buffer_cap_bytes is None else int(buffer_cap_bytes),
                            bool(overwrite_oldest), bool(save_on_crash),
                            None if crash_path is None else os.fsdecode(os.fspath(crash_path)),
                            bool(stream_to_disk))
        for w in caught:
            warnings.warn(w.message, w.category, stacklevel=2)
        self._timer_only = bool(timer_only)
        self._emit_nvtx = bool(emit_nvtx)
        # paddle's own tracer beside each span, when paddle is imported and
        # the CPU is a target (_paddle_capture.py).
        host = not self._timer_only and not (
            targets and ProfilerTarget.CPU not in {_coerce(t, ProfilerTarget, "targets")
                                                   for t in targets})
        self._paddle = _PaddleCapture(memory=profile_memory,
                                      op_info=bool(record_shapes or with_flops)) if host else None
        # torch's operators through its RecordFunction callbacks, when torch
        # is imported (_torch_capture.py).
        self._torch = _TorchCapture(record_shapes, profile_memory, with_flops) if host else None
        # Python calls as python_function ranges (_python_tracer.py).
        self._pytrace = _PythonTracer(with_stack) if host else None
        self._set_paddle_attributes(
            targets, _scheduler_value(scheduler) if isinstance(scheduler, (tuple, list))
            else scheduler, on_trace_ready, lambda: export_chrome_tracing("./profiler_log/"),
            timer_only, record_shapes, profile_memory, with_flops, with_stack, emit_nvtx,
            custom_device_types)

    def start(self):
        """Starts profiling (CLOSED -> scheduler(step_num)). After stop(),
        start() begins a new span as paddle's does: the step number keeps
        counting. A profiler never stopped is stopped at exit (or when it is
        deleted), and its span delivered."""
        super().start()
        _started.add(self)
        # paddle's DataLoader feeds the timer; emit_nvtx sets paddle's flag
        # (_paddle_reader.py).
        _paddle_reader.started(self, self._emit_nvtx)

    def stop(self):
        """Stops profiling: the span is collected and delivered to
        on_trace_ready, and the Perf Summary printed (paddle's dialect)."""
        try:
            super().stop()
        finally:
            _paddle_reader.sync()

    def _span_event(self, event):
        """Called by the core when a span begins (0), is about to be
        collected (1) or is discarded (2): torch's callback is registered
        for the span and torch.distributed's backend handed to the trace
        (_torch_capture.py); paddle's tracer follows the spans
        (_paddle_capture.py), and hands its events to the span at 1. A
        failure there never stops the training loop: one warning, and the
        span keeps its hand-marked ranges."""
        if event != 2:
            backend = _torch_dist_backend()
            if backend:
                try:
                    self._set_dist_backend(backend)
                except ValueError:  # not a name the trace can hold: the default stays
                    pass
        if event == 0:
            _recording.add(self)
        else:
            _recording.discard(self)
        pytrace = getattr(self, "_pytrace", None)
        if pytrace is not None and event != 0:
            pytrace.end()
        torch = getattr(self, "_torch", None)
        if torch is not None:
            if event == 0:
                torch.begin()
            else:
                torch.end(self._handle() if event == 1 else None)
        if pytrace is not None and event == 0:
            try:
                pytrace.begin()
            except RuntimeError as e:  # another profiler's tracer runs
                _warn(f"with_stack / with_modules: {e}; this span has no Python calls")
        self._paddle_collectives(event)
        cap = getattr(self, "_paddle", None)
        if cap is None:
            return
        try:
            if event == 0:
                cap.begin()
            else:
                cap.end(self._add_events if event == 1 else None, self._add_memory_events,
                        self._add_op_info if event == 1 else None, self._add_paddle_pb)
        except Exception as e:  # paddle's tracer failed: say so once, go on
            self._paddle = None
            _warn(f"capturing paddle's events failed ({type(e).__name__}: {e}); this profiler "
                  f"records the hand-marked ranges only from now on")

    def _paddle_collectives(self, event):
        """paddle.distributed's collectives as Communication ranges with
        their records (_paddle_comm.py), while a span records, once the
        program has imported paddle.distributed."""
        comm = getattr(self, "_paddle_comm", None)
        if comm is False:  # failed once: left out
            return
        try:
            if event == 0:
                dist = sys.modules.get("paddle.distributed")
                if comm is None and dist is not None:
                    comm = self._paddle_comm = _PaddleCommCapture(dist)
                if comm is not None:
                    comm.begin()
            elif comm is not None:
                comm.end(self._add_comm_info if event == 1 else None)
        except Exception as e:  # never stop the loop: say so once, go on without them
            if comm is not None:
                comm.end(None)
            self._paddle_comm = False
            _warn(f"capturing paddle.distributed's collectives failed ({type(e).__name__}: {e}); "
                  f"they are left out from now on")

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.stop()
        return False

    @property
    def current_state(self):
        """The ProfilerState of the current step."""
        return ProfilerState(self._state)

    def get_result(self):
        """The most recent span as a ProfilerResult, or None."""
        r = self._result()
        return None if r is None else ProfilerResult(r)

    profiler_result = property(get_result)

    @property
    def trace_path(self):
        """The file written for the most recent span by a handler, or None."""
        return self._trace_path() or self._last_trace_path

    def export(self, path="", format="json"):
        """Writes the most recent span to path ("json"; "json.gz" or a path
        ending in .gz for gzip; "pb" for paddle's protobuf). Repeatable."""
        code = _format_code(format)
        if code is None:  # "txt": paddle writes nothing for it either
            _export_skipped(path, format)
            return
        if not path:
            raise ValueError("export() needs a file path")
        self._export(path, code)

    def summary(self, sorted_by=SortedKeys.CPUTotal, op_detail=True, thread_sep=False,
                time_unit="ms", views=None):
        """Prints paddle's summary tables of the most recent span to
        sys.stdout. views: a SummaryView or a list of them (default all)."""
        result = self.get_result()
        if result is None:
            if not self._timer_only:
                _warn("summary(): no profiling result yet; a span is collected at the end of its "
                      "last recorded step")
            return
        result.summary(sorted_by, op_detail, thread_sep, time_unit, views)

# paddle's submodules: stepprof.profiler.utils, .timer, .profiler_statistic, .statistic_helper
globals().update(_register_submodules(__name__))

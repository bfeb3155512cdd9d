"""What makes stepprof.profiler.Profiler a drop-in for paddle's beyond its
methods (issue 17): paddle's attributes, the dialect rule for the Perf
Summary, AssertionError where paddle asserts, and paddle's submodule names.
Kept apart from profiler.py so that file stays about the API's calls."""
import sys

from . import _core
from ._enums import ProfilerState, ProfilerTarget, coerce


class SchedulerArgumentError(AssertionError, ValueError):
    """Bad scheduler arguments: paddle (and torch's schedule) assert them, so
    this is an AssertionError, and a ValueError as stepprof raised before."""


def invalid(error=None, why=None):
    """The error for bad scheduler arguments: the core's ValueError (error),
    whose text says which argument was wrong, or paddle's words followed by
    why."""
    if error is not None:
        return SchedulerArgumentError(str(error))
    text = "Invalid profiler scheduler arguments"
    return SchedulerArgumentError(f"{text}: {why}" if why else text)


def record_every_step(step):
    """The default scheduler (paddle's _default_state_scheduler): every step
    recorded; the profiler runs it in C, this is what Profiler.scheduler
    shows."""
    del step
    return ProfilerState.RECORD


def wants_perf_summary(perf_summary, torch_dialect):
    """perf_summary True/False as given; None: printed as paddle does (its
    benchmark().end() at stop), not in torch's dialect (torch prints
    nothing)."""
    return (not torch_dialect) if perf_summary is None else bool(perf_summary)


class PaddleAttributes:
    """The attributes paddle.profiler.Profiler.__init__ sets, for a
    Profiler subclass of the core's Profiler (which gives step_num and the
    state)."""

    def _set_paddle_attributes(self, targets, scheduler, on_trace_ready, default_handler,
                               timer_only, record_shapes, profile_memory, with_flops, with_stack,
                               emit_nvtx, custom_device_types):
        self.targets = ({ProfilerTarget.CPU} if not targets
                        else {coerce(t, ProfilerTarget, "targets") for t in targets})
        self.scheduler = record_every_step if scheduler is None else scheduler
        self.on_trace_ready = default_handler() if on_trace_ready is None else on_trace_ready
        self.record_event = None  # the core records the ProfileStep ranges itself
        self.timer_only = bool(timer_only)
        self.record_shapes = bool(record_shapes)
        self.profile_memory = bool(profile_memory)
        self.with_flops = bool(with_flops)
        self.with_stack = bool(with_stack)
        self.emit_nvtx = emit_nvtx
        self.custom_device_types = [] if custom_device_types is None else custom_device_types

    @property
    def profiler(self):
        """paddle's Profiler.profiler (its C++ profiler): the C half here."""
        return self

    @property
    def previous_state(self):
        """paddle's previous_state: the scheduler's state for the step before
        the current one (CLOSED at step 0)."""
        n = self.step_num
        if n <= 0:
            return ProfilerState.CLOSED
        return coerce(self.scheduler(n - 1), ProfilerState, "the scheduler's result")

    def _report(self, text):
        """Where the core sends the Perf Summary at stop
        (python/_stepprof/callbacks.c): sys.stdout unless this profiler's
        dialect or perf_summary says not to; nothing when sys.stdout is None."""
        if getattr(self, "_perf_summary", True) and sys.stdout is not None:
            sys.stdout.write(text)
            sys.stdout.flush()


def register_submodules(package_name):
    """paddle scripts import paddle.profiler.utils, .timer,
    .profiler_statistic and .statistic_helper: the same names work under
    stepprof.profiler (a module, so they are registered in sys.modules, which
    the import system consults first). Returns {name: module}."""
    from . import _paddle_statistic, _paddle_statistic_helper, _paddle_timer, _paddle_utils
    mods = {"utils": _paddle_utils, "timer": _paddle_timer,
            "profiler_statistic": _paddle_statistic, "statistic_helper": _paddle_statistic_helper}
    for name, mod in mods.items():
        sys.modules[f"{package_name}.{name}"] = mod
    return mods


StepprofWarning = _core.StepprofWarning

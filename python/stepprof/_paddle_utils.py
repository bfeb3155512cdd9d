"""stepprof.profiler.utils: the names paddle scripts import from
paddle.profiler.utils (RecordEvent, load_profiler_result, in_profiler_mode,
wrap_optimizers). Registered as the submodule stepprof.profiler.utils, so
`from stepprof.profiler.utils import RecordEvent` works as paddle's does."""
from . import _core
from ._record import RecordEvent
from ._result import load_profiler_result

__all__ = ["RecordEvent", "load_profiler_result", "in_profiler_mode", "wrap_optimizers"]


def in_profiler_mode():
    """paddle's in_profiler_mode(): True while a profiler records."""
    return bool(_core.is_recording())


def wrap_optimizers():
    """paddle's wrap_optimizers() wraps paddle's optimizers' step() in an
    Optimization RecordEvent. stepprof has no optimizers of its own to wrap,
    so this does nothing; mark steps with
    RecordEvent("optimizer", TracerEventType.Optimization)."""
    return None

"""stepprof: a profiler for deep-learning training loops, on a C core.

    import stepprof.profiler as profiler   # instead of paddle.profiler

stepprof.profiler offers paddle.profiler's names (Profiler, RecordEvent,
make_scheduler, export_chrome_tracing, ...) and torch.profiler's spellings
(schedule, tensorboard_trace_handler, record_function)."""
from ._core import CORE_VERSION as __version__

__all__ = ["__version__"]

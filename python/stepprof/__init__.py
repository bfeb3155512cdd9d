"""stepprof: a profiler for deep-learning training loops, on a C core.

    import stepprof.profiler as profiler   # instead of paddle.profiler
    import stepprof.torch_profiler         # instead of torch.profiler

stepprof.profiler offers paddle.profiler's names (Profiler, RecordEvent,
make_scheduler, export_chrome_tracing, ...) and torch.profiler's spellings
(schedule, tensorboard_trace_handler, record_function); stepprof.torch_profiler
offers torch.profiler's API (profile, ProfilerActivity, key_averages, ...)."""
from ._core import CORE_VERSION as __version__

__all__ = ["__version__"]

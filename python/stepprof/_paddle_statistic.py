"""stepprof.profiler.profiler_statistic: the public names of
paddle.profiler.profiler_statistic (SortedKeys, and the enums its tables
use). The tables themselves are the C core's (ProfilerResult.summary_table).
Registered as the submodule stepprof.profiler.profiler_statistic."""
from ._enums import SortedKeys, SummaryView, TracerEventType

__all__ = ["SortedKeys", "SummaryView", "TracerEventType"]

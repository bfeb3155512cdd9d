"""The enums' values are paddle's (paddle.profiler.SortedKeys, SummaryView,
ProfilerState, ProfilerTarget, TracerEventType and the .pb's
TracerMemEventType): paddle scripts and saved files pass them as integers,
and the C core reads them as its own sp_* values."""
from stepprof.profiler import (ProfilerState, ProfilerTarget, SortedKeys, SummaryView,
                               TracerEventType)


def test_enum_values_are_paddles():
    assert [(k.name, k.value) for k in SortedKeys] == [
        ("CPUTotal", 0), ("CPUAvg", 1), ("CPUMax", 2), ("CPUMin", 3),
        ("GPUTotal", 4), ("GPUAvg", 5), ("GPUMax", 6), ("GPUMin", 7)]
    assert [(v.name, v.value) for v in SummaryView][:9] == [
        ("DeviceView", 0), ("OverView", 1), ("ModelView", 2), ("DistributedView", 3),
        ("KernelView", 4), ("OperatorView", 5), ("MemoryView", 6),
        ("MemoryManipulationView", 7), ("UDFView", 8)]
    assert [(s.name, s.value) for s in ProfilerState] == [
        ("CLOSED", 0), ("READY", 1), ("RECORD", 2), ("RECORD_AND_RETURN", 3)]
    assert [(t.name, t.value) for t in ProfilerTarget][:2] == [("CPU", 0), ("GPU", 1)]
    assert [(t.name, t.value) for t in TracerEventType][:15] == [
        ("Operator", 0), ("Dataloader", 1), ("ProfileStep", 2), ("CudaRuntime", 3),
        ("Kernel", 4), ("Memcpy", 5), ("Memset", 6), ("UserDefined", 7),
        ("OperatorInner", 8), ("Forward", 9), ("Backward", 10), ("Optimization", 11),
        ("Communication", 12), ("PythonOp", 13), ("PythonUserDefined", 14)]

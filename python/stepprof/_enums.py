"""The enumerations of paddle.profiler, with paddle's numeric values
(semantics.md section 1). They are IntEnums so that the C core takes them as
they are and a user's scheduler may return either a ProfilerState or its
value."""
import enum


class ProfilerTarget(enum.IntEnum):
    """A device to profile. Only CPU can be traced on this build; GPU, XPU
    and CUSTOM_DEVICE are accepted and removed with one warning line."""
    CPU = 0
    GPU = 1
    XPU = 2
    CUSTOM_DEVICE = 3


class ProfilerState(enum.IntEnum):
    """The state a scheduler gives a step."""
    CLOSED = 0
    READY = 1
    RECORD = 2
    RECORD_AND_RETURN = 3


class TracerEventType(enum.IntEnum):
    """The type of a recorded event (paddle's TracerEventType)."""
    Operator = 0
    Dataloader = 1
    ProfileStep = 2
    CudaRuntime = 3
    Kernel = 4
    Memcpy = 5
    Memset = 6
    UserDefined = 7
    OperatorInner = 8
    Forward = 9
    Backward = 10
    Optimization = 11
    Communication = 12
    PythonOp = 13
    PythonUserDefined = 14
    DygraphKernelLaunch = 15
    StaticKernelLaunch = 16


class SortedKeys(enum.IntEnum):
    """How the Operator, Kernel and UserDefined tables are sorted."""
    CPUTotal = 0
    CPUAvg = 1
    CPUMax = 2
    CPUMin = 3
    GPUTotal = 4
    GPUAvg = 5
    GPUMax = 6
    GPUMin = 7


class SummaryView(enum.IntEnum):
    """One table of summary()."""
    DeviceView = 0
    OverView = 1
    ModelView = 2
    DistributedView = 3
    KernelView = 4
    OperatorView = 5
    MemoryView = 6
    MemoryManipulationView = 7
    UDFView = 8


class LineKind(enum.IntEnum):
    """The kind of a line of a SummaryTable (sp_line_kind)."""
    TITLE = 0
    TEXT = 1
    SEPARATOR = 2
    HEADER = 3
    ROW = 4
    DASHES = 5
    BLANK = 6


_BY_NAME = {cls.__name__: cls for cls in (ProfilerTarget, ProfilerState, TracerEventType,
                                           SortedKeys, SummaryView)}


def foreign_value(value, class_name):
    """The stepprof member matching paddle's own enum member `value` (paddle's
    ProfilerTarget, ProfilerState, SortedKeys, SummaryView are plain Enums and
    TracerEventType a pybind11 enum, none of them ints), or None when value
    is not one. Matched by the class name, a module under paddle, and the
    member's name (its value only when it has no name), without importing
    paddle: scripts that mix `import paddle.profiler` and stepprof work.
    Raises ValueError for a paddle member stepprof does not have."""
    cls = _BY_NAME.get(class_name)
    t = type(value)
    if cls is None or t.__name__ != class_name:
        return None
    module = getattr(t, "__module__", None) or ""
    if module.split(".")[0] != "paddle":
        return None
    name = getattr(value, "name", None)
    if isinstance(name, str):
        if name in cls.__members__:
            return cls[name]
        raise ValueError(f"paddle's {class_name}.{name} has no stepprof counterpart "
                         f"(stepprof's: {', '.join(cls.__members__)})")
    number = getattr(value, "value", None)
    if isinstance(number, int):
        return cls(number)
    return None


def coerce(value, cls, what):
    """value as a member of cls: an int (stepprof's own members are ints) or
    paddle's member of the same enum (foreign_value). TypeError names the
    type it got; ValueError an unknown value."""
    if isinstance(value, int):
        return cls(value)
    got = foreign_value(value, cls.__name__)
    if got is None:
        t = type(value)
        raise TypeError(f"{what} must hold {cls.__name__} values, not "
                        f"{getattr(t, '__module__', '?')}.{t.__qualname__}")
    return got

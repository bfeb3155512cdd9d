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

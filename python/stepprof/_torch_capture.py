"""torch's own events in a stepprof span.

When torch is imported and a stepprof Profiler whose targets include the
CPU begins a span, the torch adapter (stepprof._torch_adapter, compiled
against the installed torch: python/_stepprof_torch/adapter.cpp) registers a
global RecordFunction callback, the mechanism Kineto uses, and removes it
just before the span is collected. Every operator, autograd node, optimizer
step, DataLoader fetch, c10d collective and record_function range that torch
runs in between becomes a stepprof range on the thread that ran it, typed so
that both table families read true (docs/semantics.md, "torch's events").

The adapter is used only with the torch it was built for (its BUILT_FOR
against torch.__version__): another torch, or no adapter at all (stepprof
installed while torch was missing, or the compile failed), gives one
StepprofWarning per process, and spans record the hand-marked ranges only.
torch is never imported here: a program that does not import torch pays
nothing, and one that imports it after a span began is captured from the
next span on.

Under torch.distributed, the backend of the default process group is handed
to the core as each span begins and ends (dist_backend), so that the trace's
distributedInfo names the real one (docs/trace-format.md section 2)."""
import os
import sys
import warnings

from . import _core

# Process-wide: the adapter once usable, and whether torch has been checked.
_adapter = None
_checked = False


def unusable_reason(torch, load=None):
    """Why the adapter cannot record this torch, or None. load() imports the
    adapter module (a parameter so that the tests can hand another one)."""
    try:
        adapter = load() if load else _import_adapter()
    except ImportError as e:
        return (f"stepprof's torch adapter did not load ({e}); stepprof was probably installed "
                f"while torch was missing or could not be compiled against it: reinstall stepprof "
                f"after torch to record torch's operators")
    version = getattr(torch, "__version__", "?")
    if adapter.BUILT_FOR != version:
        return (f"stepprof's torch adapter was built for torch {adapter.BUILT_FOR}, and this is "
                f"torch {version}: reinstall stepprof to record torch's operators")
    return None


def _import_adapter():
    from . import _torch_adapter
    return _torch_adapter


def adapter():
    """The attached adapter when torch is imported and usable, else None; the
    first check that finds it unusable warns, once per process."""
    global _adapter, _checked
    if _checked:
        return _adapter
    torch = sys.modules.get("torch")
    if torch is None:
        return None  # checked again at the next span: torch may come later
    _checked = True
    why = unusable_reason(torch)
    if why:
        warnings.warn(f"{why}; stepprof records the hand-marked ranges only", _core.StepprofWarning,
                      stacklevel=4)
        return None
    a = _import_adapter()
    a.attach(_core._record_api)
    _adapter = a
    return a


def dist_backend():
    """torch.distributed's backend ("gloo", "nccl", ...) once the program
    made its default process group, else None. Never imports torch."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is None or not dist.is_available() or not dist.is_initialized():
            return None
        return str(dist.get_backend())
    except Exception:  # a torch that answers otherwise: distributedInfo guesses
        return None


def forget_after_fork():
    """In a child forked while a span recorded: the child records nothing,
    so torch's callback goes (it would cost every op of a DataLoader worker),
    and the captures inherited from the parent are off."""
    if _adapter is not None and _adapter.is_enabled():
        _adapter.forget_after_fork()


class TorchCapture:
    """torch's callback for the spans of one profiler: begin() when a span
    begins, end(handle) just before it is collected (handle: the profiler's
    _handle(), which receives the input shapes with record_shapes) or
    end(None) when it is discarded."""

    __slots__ = ("_on", "_shapes", "_memory", "_flops", "_comms", "_memory_warned")

    def __init__(self, record_shapes=False, profile_memory=False, with_flops=False):
        self._on = 0  # the pid that enabled the callback: a forked child's copy is off
        self._shapes = bool(record_shapes)
        self._memory = bool(profile_memory)
        self._flops = bool(with_flops)
        self._comms = False  # this span logs torch.distributed's collectives
        self._memory_warned = False

    def begin(self):
        a = adapter()
        if a is not None and self._on != os.getpid():
            # Collectives' process groups and bytes are in their inputs, which
            # the callback then takes for every op (as with record_shapes):
            # only in a run that has a process group when the span begins.
            self._comms = dist_backend() is not None
            memory = a.enable(self._shapes, self._memory, self._flops, self._comms)
            self._on = os.getpid()
            if self._memory and not memory and not self._memory_warned:
                self._memory_warned = True
                warnings.warn("torch.profiler takes torch's memory reports on this thread while it "
                              "runs: this span has no torch allocations", _core.StepprofWarning,
                              stacklevel=4)

    def end(self, handle=None):
        if self._on:
            mine = self._on == os.getpid()
            self._on = 0
            if not mine:  # the parent's span, inherited through fork: forget_after_fork undid it
                return
            _adapter.disable(self._shapes,
                             handle if self._shapes or self._flops or self._comms else None,
                             self._memory, self._flops, self._comms)

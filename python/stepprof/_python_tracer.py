"""The Python tracer of with_stack and with_modules, beside each span.

with_stack=True: every Python call and C call of every thread becomes a
PythonOp range (a python_function event in the trace), named as torch's
Python tracer names it; nn.Module calls are "nn.Module: Class_N".
with_modules=True alone: only the nn.Module calls are recorded (torch 2.15
records nothing for eager models there, and says so in a FutureWarning).

The hook is C (python/_stepprof/pytrace.c); this module hands it what it
needs once per span: the path prefixes torch cuts off file names, the
stepprof package's own directory (its frames are left out) and
torch.nn.Module.__call__'s code, when torch.nn is imported. torch is never
imported here.

A thread that already has a profile function (sys.setprofile, cProfile) is
left alone, with one StepprofWarning per span: stepprof never replaces or
chains another profiler's hook."""
import os
import site
import sys
import warnings

from . import _core

_STACK, _MODULES = 1, 2
_OWN = os.path.dirname(os.path.abspath(__file__)) + os.sep


def path_prefixes():
    """The prefixes cut off file names, longest first among nested ones, as
    torch.profiler.python_tracer._prefix_regex gives them."""
    raw = list(site.getsitepackages()) + list(sys.path)
    try:
        raw += [site.getuserbase(), site.getusersitepackages()]
    except Exception:  # a site module without user paths
        pass
    torch = sys.modules.get("torch")
    if torch is not None and getattr(torch, "__file__", None):
        raw.append(os.path.dirname(os.path.dirname(torch.__file__)))
    paths = sorted({os.path.abspath(p) for p in raw if isinstance(p, str)}, reverse=True)
    return tuple(p + os.sep for p in paths)


def _module_call_code():
    nn = sys.modules.get("torch.nn")
    try:
        return nn.Module.__call__.__code__ if nn is not None else None
    except AttributeError:  # a torch whose Module.__call__ is not a Python function
        return None


class PythonTracer:
    """The tracer for the spans of one profiler: begin() when a span begins,
    end() before it is collected or discarded."""

    __slots__ = ("mode", "_on")

    def __init__(self, with_stack=False, with_modules=False):
        self.mode = _STACK if with_stack else _MODULES if with_modules else 0
        self._on = False

    def begin(self):
        if not self.mode or self._on:
            return
        skipped = _core._pytrace_start(self.mode, path_prefixes(), _OWN, _module_call_code())
        self._on = True
        if skipped:
            warnings.warn(f"{len(skipped)} thread(s) already had a Python profile function "
                          f"(sys.setprofile, cProfile...): stepprof leaves them alone, so their "
                          f"Python calls are not in this span (with_stack / with_modules)",
                          _core.StepprofWarning, stacklevel=4)

    def end(self):
        if self._on:
            self._on = False
            _core._pytrace_stop()

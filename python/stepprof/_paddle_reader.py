"""paddle.io.DataLoader feeds stepprof's benchmark timer, and emit_nvtx sets
paddle's profiler flag, as both do under paddle.profiler.

paddle's DataLoader iterators call paddle.profiler.timer.benchmark()'s
check_if_need_record(self), before_reader() and after_reader() around every
batch, in timer_only and full mode alike, and paddle's Benchmark hands
before_reader and after_reader to every timer.Hook in its `hooks` dict
(paddle: "All types of hooks should inherit from it"). While a stepprof
profiler runs, one Hook of stepprof's sits in that dict and times each load
on the C benchmark timer (_core._reader_load_begin / _end), which gives
reader_cost, step_info() and the Perf Summary's Reader Ratio. It records no
range: in a recorded span, paddle's own Dataloader event reaches the trace
through paddle's tracer (_paddle_capture.py), once per batch. The timer of
the innermost running profiler takes the load, when the loading thread is
the one that started the timers (docs/semantics.md, section 7).

Which loader: paddle does not pass check_if_need_record's iterator on to
hooks, so the hook reads it from the frame that called the Benchmark (the
iterator's __next__), read only, and uses its dataset's id, as paddle
compares datasets: a batch of another dataset (evaluation inside training,
without a start() of its own) pauses timing until the bound dataset loads
again. Where that frame holds no iterator with a dataset, every load counts
as one loader's (nothing pauses).

The hook is added when a stepprof profiler starts and removed by the stop()
that leaves none running. paddle's dict is replaced, never changed in
place, so that a DataLoader iterating it on another thread cannot see it
change under it. A stop() deferred from on_trace_ready, or done at exit or
by the finalizer, leaves the hook in place until the next start() or
stop(), timing nothing (no timer runs). paddle imported after start():
from the next start() on. No function or method of paddle's is replaced."""
import sys
import warnings
import weakref
from collections import OrderedDict

from . import _core, _paddle_capture, _paddle_flag
from ._paddle_capture import SUPPORTED, _version

#: The key of stepprof's hook in paddle's Benchmark.hooks.
KEY = "stepprof_reader"

# Process-wide: id(paddle module) -> (module, verdict), as in _paddle_capture.
_verdict = {}
# id(profiler) -> (weak reference, whether it holds paddle's flag for
# emit_nvtx): the profilers started and not yet seen stopped.
_running = {}
# timer module -> the Hook subclass made for it
_classes = weakref.WeakKeyDictionary()


def _version_reason(paddle):
    text, version = _version(paddle)
    low, high = SUPPORTED
    if version is None or (version != (0, 0) and not low <= version < high):
        return (f"paddle {text or '(no version)'} is not supported for timing "
                f"paddle.io.DataLoader (supported: {low[0]}.{low[1]} up to {high[0]}.{high[1]}, "
                f"exclusive)")
    return None


def unsupported_reason(paddle):
    """Why paddle's DataLoader cannot feed stepprof's timer, or None."""
    why = _version_reason(paddle)
    if why:
        return why
    text = _version(paddle)[0]
    try:
        from paddle.profiler import timer, utils
        hooks = getattr(timer.benchmark(), "hooks", None)
    except Exception as e:  # an import failure inside paddle: say it, never raise
        return f"paddle {text}: cannot reach paddle.profiler.timer.benchmark() ({e})"
    missing = [] if isinstance(getattr(timer, "Hook", None), type) else ["timer.Hook"]
    if not isinstance(hooks, dict):
        missing.append("timer.benchmark().hooks")
    if not hasattr(utils, "_is_profiler_used"):
        missing.append("utils._is_profiler_used")
    if missing:
        return f"paddle {text} lacks " + ", ".join("paddle.profiler." + m for m in missing)
    return None


def _usable(paddle):
    """The paddle module when usable, else None, warning once per process."""
    if paddle is None:
        return None
    key = id(paddle)
    if key not in _verdict:
        why = unsupported_reason(paddle)
        _verdict[key] = (paddle, why)
        # A version that paddle's capture already warned about (it checks
        # first, when a recording profiler starts) is not warned twice.
        told = _paddle_capture._verdict.get(key, (None, None))[1]
        if why and not (told and _version_reason(paddle)):
            warnings.warn(f"{why}; reader_cost comes from Dataloader ranges marked by hand only, "
                          f"and emit_nvtx does nothing", _core.StepprofWarning, stacklevel=4)
    return None if _verdict[key][1] else paddle


def loader_id(frame):
    """The id of the dataset of the DataLoader iterator whose __next__ runs
    in frame (paddle compares iterators by their _dataset), or 0."""
    it = frame.f_locals.get("self") if frame is not None else None
    dataset = getattr(it, "__dict__", {}).get("_dataset")
    return 0 if dataset is None else id(dataset)


def _hook_class(timer):
    cls = _classes.get(timer)
    if cls is None:
        class StepprofReaderHook(timer.Hook):
            """Times each paddle.io.DataLoader load on stepprof's benchmark
            timer; paddle's Benchmark calls it from the iterator's __next__."""

            def before_reader(self, benchmark):
                # frames: this, Benchmark.before_reader, the iterator's __next__
                _core._reader_load_begin(loader_id(sys._getframe(2)))

            def after_reader(self, benchmark):
                _core._reader_load_end()

        cls = _classes[timer] = StepprofReaderHook
    return cls


def _set_hook(paddle, wanted):
    """Adds or removes stepprof's hook in paddle's Benchmark.hooks."""
    timer = sys.modules.get("paddle.profiler.timer")
    if timer is None:
        return
    bench = timer.benchmark()
    hooks = bench.hooks
    if wanted == (KEY in hooks):
        return
    # A new dict, swapped in whole: an iteration running on another thread
    # goes on over the old one.
    new = OrderedDict(hooks)
    if wanted:
        new[KEY] = _hook_class(timer)()
    else:
        del new[KEY]
    bench.hooks = new


def _utils():
    return sys.modules.get("paddle.profiler.utils")


def started(prof, emit_nvtx):
    """A stepprof profiler started: paddle's DataLoader feeds the timers
    from now on, and emit_nvtx holds paddle's flag until it stops."""
    paddle = _usable(sys.modules.get("paddle"))
    key = id(prof)
    if key not in _running:
        nvtx = bool(emit_nvtx) and paddle is not None
        if nvtx:
            _paddle_flag.hold(_utils())
        _running[key] = (weakref.ref(prof, lambda ref, key=key: _gone(key, ref)), nvtx)
    if paddle is not None:
        _set_hook(paddle, True)


def _gone(key, ref):
    """A started profiler was garbage collected (its finalizer stopped it)."""
    entry = _running.get(key)
    if entry is not None and entry[0] is ref:
        try:
            sync()
        except Exception:  # at interpreter exit paddle may be half torn down
            pass


def sync():
    """Forgets the profilers that stopped (or are gone): lets go of their
    flag holds, and removes the hook when none runs."""
    for key, (ref, nvtx) in list(_running.items()):
        prof = ref()
        # pop, not del: a collection inside this loop may run _gone first
        if (prof is None or not prof._running) and _running.pop(key, None) is not None:
            if nvtx and _utils() is not None:
                _paddle_flag.release(_utils())
    if not _running:
        paddle = sys.modules.get("paddle")
        if paddle is not None and _verdict.get(id(paddle), (None, "unchecked"))[1] is None:
            _set_hook(paddle, False)

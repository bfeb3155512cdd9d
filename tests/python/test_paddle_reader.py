"""paddle.io.DataLoader feeds stepprof's benchmark timer (reader_cost,
step_info, the Perf Summary's Reader Ratio) through paddle's benchmark hooks,
in timer_only and full mode, without a second Dataloader event in the trace;
emit_nvtx sets paddle's profiler flag from start() to stop().

The runs with paddle go through subprocesses (a fresh paddle each), and
paddle.profiler runs the same loop as a sanity check. Times are only checked
against floors that hold on any machine (tests/python/paddle_reader.py says
how the load gets one), never against ceilings. The tests that need paddle
skip, saying why, without it; the ones on a stand-in paddle always run."""
import json
import os
import re
import sys
import types
import warnings
from collections import OrderedDict

import pytest

import stepprof.profiler as profiler
from stepprof import _paddle_flag, _paddle_reader
from test_paddle_capture import needs_paddle, run_python

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "paddle_reader.py")
SLEEP_S = 0.004  # paddle_reader.py's floor of one load


def run(tmp_path, who, mode, workers=0):
    stdout, _ = run_python([SCRIPT, who, mode, str(workers)], tmp_path)
    return json.loads(stdout.split("=== result ===", 1)[1])


def perf_row(perf, name):
    """(avg, max, min) of a Perf Summary row."""
    m = re.search(rf"\|\s+{name}\s+\|\s+(\S+)\s+\|\s+(\S+)\s+\|\s+(\S+)\s+\|", perf)
    assert m, f"no {name} row in:\n{perf}"
    return tuple(float(v) for v in m.groups())


def reader_ratio(perf):
    m = re.search(r"Reader Ratio: ([0-9.]+)%", perf)
    assert m, f"no Reader Ratio in:\n{perf}"
    return float(m.group(1))


def info_reader_cost(info):
    m = re.search(r"reader_cost: ([0-9.]+) s", info)
    assert m, f"no reader_cost in step_info {info!r}"
    return float(m.group(1))


@needs_paddle
@pytest.mark.parametrize("mode", ["timer", "full"])
def test_paddle_reader_dataloader_feeds_reader_cost(tmp_path, mode):
    """Every load lasts at least SLEEP_S, so reader_cost's average, maximum
    and minimum do too, in step_info and in the Perf Summary; the Reader
    Ratio is there. paddle.profiler, on the same loop, shows the same rows."""
    mine = run(tmp_path, "stepprof", mode)
    assert mine["batches"] == 14
    assert mine["hooks_running"] == ["timer_hook", _paddle_reader.KEY, "test_gate"]
    assert mine["hooks_after"] == ["timer_hook"]  # removed at stop
    assert info_reader_cost(mine["info"]) >= SLEEP_S
    avg, hi, lo = perf_row(mine["perf"], "reader_cost")
    assert min(avg, hi, lo) >= SLEEP_S
    batch_avg, _, batch_lo = perf_row(mine["perf"], "batch_cost")
    assert batch_lo >= SLEEP_S and batch_avg >= avg  # a step holds its load
    assert 0 < reader_ratio(mine["perf"]) <= 100
    theirs = run(tmp_path, "paddle", mode)
    assert perf_row(theirs["perf"], "reader_cost")[0] >= SLEEP_S
    assert reader_ratio(theirs["perf"]) > 0
    if mode == "full":
        # One Dataloader event per batch (paddle's own, from its tracer), as
        # paddle.profiler records: never a second one of stepprof's.
        assert mine["profile_steps"] == 12
        assert mine["dataloader"] == mine["profile_steps"] == theirs["dataloader"]


@needs_paddle
@pytest.mark.parametrize("mode", ["timer", "full"])
def test_paddle_reader_worker_processes(tmp_path, mode):
    """num_workers=2: the hook runs in the main process; the workers load
    every batch, untouched, and the loads are still reader cost."""
    mine = run(tmp_path, "stepprof", mode, workers=2)
    assert mine["batches"] == 14
    # The row and the ratio are printed only for a non-zero reader_cost: their
    # presence is the check (with prefetching workers no floor holds).
    assert perf_row(mine["perf"], "reader_cost")[0] >= 0
    assert reader_ratio(mine["perf"]) >= 0
    if mode == "full":
        assert mine["dataloader"] == mine["profile_steps"] == 12


EDGES = r"""
import contextlib, io
import paddle
import paddle.profiler as pp
import stepprof.profiler as profiler
from stepprof.profiler.timer import benchmark

class D(paddle.io.Dataset):
    def __getitem__(self, i):
        return [float(i)]
    def __len__(self):
        return 40

def hooks():
    return list(paddle.profiler.timer.benchmark().hooks)

def batches(it, n, prof=None):
    for _ in range(n):
        next(it)
        if prof is not None:
            prof.step()

def quiet_stop(prof):
    with contextlib.redirect_stdout(io.StringIO()):
        prof.stop()

def pause(prof):
    # training binds the timer; a loop over another dataset without its own
    # start() pauses it (no step counts, step_info is empty); training resumes.
    train = iter(paddle.io.DataLoader(D(), batch_size=1))
    evaluation = paddle.io.DataLoader(D(), batch_size=1)
    batches(train, 3, prof)
    before = prof.step_info()
    batches(iter(evaluation), 3, prof)
    paused = prof.step_info()
    batches(train, 1, prof)
    return bool(before), paused, bool(prof.step_info())

# paddle.profiler before stepprof, and its timer's own answer to the pause
theirs = pp.Profiler(timer_only=True)
theirs.start()
print("paddle pause:", pause(theirs))
quiet_stop(theirs)
print("hooks after paddle:", hooks())

mine = profiler.Profiler(timer_only=True)
mine.start()
print("stepprof pause:", pause(mine))
quiet_stop(mine)

# nested: an evaluation profiler inside training times its own loads
outer = profiler.Profiler(timer_only=True)
outer.start()
train = iter(paddle.io.DataLoader(D(), batch_size=1))
batches(train, 2, outer)
inner = profiler.Profiler(timer_only=True)
inner.start()
batches(iter(paddle.io.DataLoader(D(), batch_size=1)), 2, inner)
print("nested hooks:", hooks().count("stepprof_reader"))
print("inner:", "reader_cost" in inner.step_info())
quiet_stop(inner)
print("hooks after inner:", hooks().count("stepprof_reader"))
batches(train, 2, outer)
print("outer:", "reader_cost" in outer.step_info())
quiet_stop(outer)
print("hooks after outer:", hooks())

# stepprof's benchmark() shim, as paddle's timer.benchmark() is used
bench = benchmark()
bench.begin()
batches(iter(paddle.io.DataLoader(D(), batch_size=1)), 3, bench)
print("shim:", "reader_cost" in bench.step_info("samples"))
with contextlib.redirect_stdout(io.StringIO()):
    bench.end()

# paddle.profiler after stepprof: its timer still works alone
theirs = pp.Profiler(timer_only=True)
theirs.start()
batches(iter(paddle.io.DataLoader(D(), batch_size=1)), 3, theirs)
print("paddle after:", "reader_cost" in theirs.step_info(), hooks())
quiet_stop(theirs)

# emit_nvtx: paddle's flag is set from start() to stop(), as paddle does
flag = lambda: paddle.profiler.utils._is_profiler_used
nvtx = profiler.Profiler(timer_only=True, emit_nvtx=True)
plain = profiler.Profiler(timer_only=True)
plain.start(); during_plain = flag(); quiet_stop(plain)
nvtx.start(); during = flag(); quiet_stop(nvtx)
print("nvtx:", during_plain, during, flag())
"""


@needs_paddle
def test_paddle_reader_pause_nesting_shim_and_paddle_profiler(tmp_path):
    stdout, _ = run_python(["-c", EDGES], tmp_path)
    # paddle's check_if_need_record semantics, and stepprof's the same way
    assert "paddle pause: (True, '', True)" in stdout, stdout
    assert "stepprof pause: (True, '', True)" in stdout, stdout
    assert "hooks after paddle: ['timer_hook']" in stdout, stdout
    assert "nested hooks: 1" in stdout and "inner: True" in stdout, stdout
    assert "hooks after inner: 1" in stdout and "outer: True" in stdout, stdout
    assert "hooks after outer: ['timer_hook']" in stdout, stdout
    assert "shim: True" in stdout, stdout
    assert "paddle after: True ['timer_hook']" in stdout, stdout
    assert "nvtx: False True False" in stdout, stdout


# ---- a stand-in paddle: the mechanism, without paddle installed ----

class _Hook:
    def before_reader(self, benchmark):
        pass

    def after_reader(self, benchmark):
        pass


class _Benchmark:
    """paddle's Benchmark as far as the DataLoader uses it: the hooks."""

    def __init__(self):
        self.hooks = OrderedDict(timer_hook=_Hook())

    def before_reader(self):
        for hook in self.hooks.values():
            hook.before_reader(self)

    def after_reader(self):
        for hook in self.hooks.values():
            hook.after_reader(self)


class _Iter:
    """A DataLoader iterator: __next__ calls the Benchmark, as paddle's does."""

    def __init__(self, dataset, bench):
        self._dataset, self.bench = dataset, bench

    def __next__(self):
        self.bench.before_reader()
        self.bench.after_reader()


@pytest.fixture
def stand_in(monkeypatch):
    paddle = types.ModuleType("paddle")
    paddle.__version__ = "3.3.1"
    prof_mod = types.ModuleType("paddle.profiler")
    timer = types.ModuleType("paddle.profiler.timer")
    utils = types.ModuleType("paddle.profiler.utils")
    utils._is_profiler_used = False
    bench = _Benchmark()
    timer.Hook, timer.benchmark = _Hook, lambda: bench
    prof_mod.timer, prof_mod.utils, paddle.profiler = timer, utils, prof_mod
    for name, mod in (("paddle", paddle), ("paddle.profiler", prof_mod),
                      ("paddle.profiler.timer", timer), ("paddle.profiler.utils", utils)):
        monkeypatch.setitem(sys.modules, name, mod)
    return types.SimpleNamespace(paddle=paddle, timer=timer, utils=utils, bench=bench)


def _timer_only(**kw):
    # no tracer objects in the stand-in: timer_only keeps paddle's capture out
    return profiler.Profiler(timer_only=True, perf_summary=False, **kw)


def test_paddle_reader_stand_in_hook_times_loads_and_pauses(stand_in):
    hooks_before = stand_in.bench.hooks
    prof = _timer_only()
    prof.start()
    hook = stand_in.bench.hooks[_paddle_reader.KEY]
    assert isinstance(hook, stand_in.timer.Hook)  # a Hook, as paddle asks
    assert stand_in.bench.hooks is not hooks_before  # swapped, not changed in place
    train, evaluation = _Iter(object(), stand_in.bench), _Iter(object(), stand_in.bench)
    for _ in range(3):
        next(train)
        prof.step(1)
    assert "batch_cost" in prof.step_info()
    for _ in range(3):  # another dataset: paused, as check_if_need_record would
        next(evaluation)
        prof.step(1)
    assert prof.step_info() == ""
    next(train)
    prof.step(1)
    assert "batch_cost" in prof.step_info()
    prof.stop()
    assert list(stand_in.bench.hooks) == ["timer_hook"]


def test_paddle_reader_stand_in_loader_id_reads_the_iterators_dataset(stand_in):
    dataset, seen = object(), []

    class Spy(stand_in.timer.Hook):
        def before_reader(self, benchmark):
            seen.append(_paddle_reader.loader_id(sys._getframe(2)))

    stand_in.bench.hooks["spy"] = Spy()
    next(_Iter(dataset, stand_in.bench))
    assert seen == [id(dataset)]
    assert _paddle_reader.loader_id(sys._getframe()) == 0  # no iterator here: one loader


def test_paddle_reader_stand_in_nested_profilers_share_one_hook(stand_in):
    outer, inner = _timer_only(), _timer_only()
    outer.start()
    inner.start()
    assert list(stand_in.bench.hooks).count(_paddle_reader.KEY) == 1
    inner.stop()
    assert _paddle_reader.KEY in stand_in.bench.hooks
    outer.stop()
    assert _paddle_reader.KEY not in stand_in.bench.hooks


def test_paddle_reader_stand_in_emit_nvtx_holds_the_flag(stand_in):
    prof = _timer_only(emit_nvtx=True)
    prof.start()
    assert stand_in.utils._is_profiler_used is True
    prof.stop()
    assert stand_in.utils._is_profiler_used is False
    del prof
    plain = _timer_only()
    plain.start()
    assert stand_in.utils._is_profiler_used is False
    plain.stop()


def test_paddle_reader_stand_in_dropped_profiler_lets_go(stand_in):
    """A running profiler that is garbage collected (stopped by its
    finalizer) lets go of the flag and the hook."""
    prof = _timer_only(emit_nvtx=True)
    prof.start()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        del prof
    assert stand_in.utils._is_profiler_used is False
    assert _paddle_reader.KEY not in stand_in.bench.hooks


def test_paddle_reader_flag_holds_end_in_any_order():
    """A span's hold and an emit_nvtx hold: the flag stays set until the
    last one lets go, then gets its first value back."""
    utils = types.SimpleNamespace(_is_profiler_used=False)
    _paddle_flag.hold(utils)  # emit_nvtx profiler
    _paddle_flag.hold(utils)  # a span begins inside it
    _paddle_flag.release(utils)  # the emit_nvtx profiler stops first
    assert utils._is_profiler_used is True
    _paddle_flag.release(utils)
    assert utils._is_profiler_used is False
    _paddle_flag.release(utils)  # one release too many does nothing
    assert utils._is_profiler_used is False


def test_paddle_reader_unsupported_paddle_warns_once(monkeypatch):
    """A paddle whose timer has no hooks: one StepprofWarning, and the
    profiler times its steps as usual."""
    paddle = types.ModuleType("paddle")
    paddle.__version__ = "3.3.1"
    prof_mod = types.ModuleType("paddle.profiler")
    timer = types.ModuleType("paddle.profiler.timer")
    timer.benchmark = lambda: types.SimpleNamespace()  # no hooks, no Hook
    utils = types.ModuleType("paddle.profiler.utils")
    utils._is_profiler_used = False
    prof_mod.timer, prof_mod.utils, paddle.profiler = timer, utils, prof_mod
    for name, mod in (("paddle", paddle), ("paddle.profiler", prof_mod),
                      ("paddle.profiler.timer", timer), ("paddle.profiler.utils", utils)):
        monkeypatch.setitem(sys.modules, name, mod)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            prof = _timer_only(emit_nvtx=True)
            prof.start()
            prof.step(1)
            prof.stop()
    texts = [str(w.message) for w in caught if w.category is profiler.StepprofWarning]
    assert len(texts) == 1, texts
    assert "lacks paddle.profiler.timer.Hook, paddle.profiler.timer.benchmark().hooks" in texts[0]
    assert "reader_cost comes from Dataloader ranges" in texts[0]
    assert utils._is_profiler_used is False  # emit_nvtx does nothing then


@pytest.mark.parametrize("timer_only", [True, False])
def test_paddle_reader_unsupported_version_is_warned_once(monkeypatch, timer_only):
    """A paddle outside 3.x: one warning in all, whether the capture (a
    recording profiler, which checks first) or the timer names the version."""
    paddle = types.ModuleType("paddle")
    paddle.__version__ = "2.1.0"
    monkeypatch.setitem(sys.modules, "paddle", paddle)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prof = profiler.Profiler(timer_only=timer_only, perf_summary=False,
                                 on_trace_ready=lambda p: None)
        prof.start()
        prof.step(1)
        prof.stop()
    texts = [str(w.message) for w in caught if w.category is profiler.StepprofWarning
             and "2.1.0" in str(w.message)]
    assert len(texts) == 1, texts

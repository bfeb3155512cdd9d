"""stepprof.profiler sees what paddle.profiler sees (issue 19): the same
small paddle training loop (tests/python/paddle_mlp.py: a 3-layer MLP, SGD,
paddle.io.DataLoader) runs once under paddle.profiler and once under
stepprof.profiler, each in its own process, and the summary tables they
print are compared: the Operator Summary's rows and their calls per step,
the Overview's event types, and the Model Summary's Dataloader row. Times
are never compared. Also: paddle's profiler holding paddle's tracer, paddle
imported after the profiler started, and a paddle version that is not
supported.

The tests that need paddle skip, saying why, when paddle cannot be imported;
`make test-python` installs it (python/test.sh) when PyPI is reachable."""
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
import types
import warnings

import pytest

import stepprof.profiler as profiler
from conftest import event_type, load_trace

HERE = os.path.dirname(os.path.abspath(__file__))
MLP = os.path.join(HERE, "paddle_mlp.py")

HAVE_PADDLE = importlib.util.find_spec("paddle") is not None


def _why_no_paddle():
    why = ("paddle is not installed in this Python; `make test-python` installs paddlepaddle "
           "from PyPI into build/python-venv (python/test.sh), or: pip install paddlepaddle")
    failed = os.path.join(sys.prefix, ".stepprof-paddle-failed")  # python/test.sh's marker
    if os.path.exists(failed):
        with open(failed, encoding="utf-8", errors="replace") as f:
            last = [line.strip() for line in f if line.strip()]
        why += f". pip failed here ({last[-1] if last else 'no output'}); remove {failed} to retry"
    return why


needs_paddle = pytest.mark.skipif(not HAVE_PADDLE, reason=_why_no_paddle())


def run_python(args, cwd, timeout=600):
    proc = subprocess.run([sys.executable] + args, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout, proc.stderr


def table(text, title):
    """The data rows of the summary table titled `title` in printed text, as
    (indent, cells) (cells are separated by two or more spaces; the name
    loses its indent, which is returned). Stops at the table's end or at the
    Overview's GPU half (a header line that begins with blanks)."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if re.fullmatch(rf"-+{title}-+", line)), None)
    assert start is not None, f"no {title} in:\n{text}"
    i = next(i for i in range(start, len(lines)) if lines[i].startswith("Name")
             or lines[i].startswith("Event Type"))
    rows = []
    for line in lines[i + 1:]:
        if not line.strip() or line.startswith("Note:"):
            break
        if line.startswith("-"):
            continue
        cells = re.split(r"\s{2,}", line.strip())
        if cells[0] == "Calls":  # the Overview's GPU half
            break
        rows.append((len(line) - len(line.lstrip()), cells))
    return rows


def summary(text):
    """{title: {name: calls}} for the tables compared here. The Operator
    Summary's inner rows (op_detail) are named "<op> > <inner>"."""
    out = {}
    for title in ("Overview Summary", "Model Summary", "Operator Summary"):
        rows, op = {}, None
        for indent, cells in table(text, title):
            name = cells[0]
            if title == "Operator Summary":
                if indent == 0:
                    op = name
                else:
                    name = f"{op} > {name}"
            rows[name] = cells[1]
            if len(cells) > 2 and "/" in cells[2]:  # "CPU Total / Avg / ...": the total
                out.setdefault(title + " CPU", {})[name] = float(cells[2].split("/")[0])
        out[title] = rows
    return out


@pytest.fixture(scope="module")
def both_runs(tmp_path_factory):
    if not HAVE_PADDLE:
        pytest.skip("paddle is not installed (see needs_paddle)")
    cwd = tmp_path_factory.mktemp("paddle_mlp")
    out = {}
    for mode in ("paddle", "stepprof"):
        stdout, stderr = run_python([MLP, mode, str(cwd / f"{mode}.json")], cwd)
        out[mode] = summary(stdout.split("=== summary ===", 1)[1])
        out[mode + "_stderr"] = stderr
    out["trace"] = str(cwd / "stepprof.json")
    return out


def per_step(rows):
    steps = int(rows["Overview Summary"]["ProfileStep"])
    return {name: int(calls) / steps for name, calls in rows["Operator Summary"].items()}


@needs_paddle
def test_paddle_capture_operator_rows_and_calls_match(both_runs):
    """The Operator Summary (op_detail, as printed by default): the same
    operators and inner rows, each with the same calls per step."""
    paddle_ops, ours = per_step(both_runs["paddle"]), per_step(both_runs["stepprof"])
    assert set(ours) == set(paddle_ops), (sorted(set(paddle_ops) ^ set(ours)))
    assert ours == paddle_ops
    assert "matmul dygraph" in ours and "Global_MatmulGradNode" in ours
    assert "matmul dygraph > matmul infer_meta" in ours


@needs_paddle
def test_paddle_capture_operator_times_are_sane(both_runs):
    """Times are never compared between the two runs (a preemption of a few
    ms in either, on a busy machine, would break any ratio between operators
    of 50 us): each operator's CPU total is only checked to be positive and
    within the steps' total."""
    ours = both_runs["stepprof"]
    step_total = float(ours["Model Summary CPU"]["ProfileStep"])
    for name, total in ours["Operator Summary CPU"].items():
        assert 0 < total <= step_total, (name, total, step_total)


@needs_paddle
def test_paddle_capture_overview_has_paddles_event_types(both_runs):
    assert set(both_runs["stepprof"]["Overview Summary"]) == set(
        both_runs["paddle"]["Overview Summary"])
    for kind in ("Operator", "OperatorInner", "DygraphKernelLaunch", "Dataloader", "Forward",
                 "Backward", "Optimization"):
        assert kind in both_runs["stepprof"]["Overview Summary"], kind


@needs_paddle
def test_paddle_capture_model_summary_has_dataloader(both_runs):
    model = both_runs["stepprof"]["Model Summary"]
    assert model.get("Dataloader") == both_runs["paddle"]["Model Summary"]["Dataloader"]
    assert "StepprofWarning" not in both_runs["stepprof_stderr"]


@needs_paddle
def test_paddle_capture_trace_is_valid_and_typed(both_runs):
    """The exported trace passes the trace checker; paddle's events are in it
    with paddle's types in args["Event Type"] (Kineto's dialect), inside the
    ProfileStep ranges of the same thread (paddle's thread ids are the OS
    ids stepprof's own ranges carry, or the operators would sit on a thread
    of their own and the tables would still agree)."""
    trace = load_trace(both_runs["trace"])
    spans = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    kinds = {event_type(e) for e in spans}
    for kind in ("Operator", "OperatorInner", "DygraphKernelLaunch", "Dataloader"):
        assert kind in kinds, (kind, sorted(k for k in kinds if k))
    steps = [e for e in spans if e["name"].startswith("ProfilerStep#")]
    ops = [e for e in spans if event_type(e) == "Operator"]
    assert len(steps) == 5 and ops
    inside = [o for o in ops if any(s["tid"] == o["tid"] and s["pid"] == o["pid"]
                                    and s["ts"] <= o["ts"] and o["ts"] + o["dur"] <= s["ts"] + s["dur"]
                                    for s in steps)]
    assert len(inside) == len(ops)


CONCURRENT = r"""
import warnings
import paddle
import paddle.profiler as pp
import stepprof.profiler as profiler

def span():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], on_trace_ready=lambda p: None)
        prof.start()
        with profiler.RecordEvent("mine"):
            paddle.matmul(paddle.ones([4, 4]), paddle.ones([4, 4]))
        prof.stop()
    names = {e.name for t in range(len(prof.get_result().threads)) for e in prof.get_result().events(t)}
    return names, [str(w.message) for w in caught if w.category is profiler.StepprofWarning]

theirs = pp.Profiler(targets=[pp.ProfilerTarget.CPU], on_trace_ready=lambda p: None)
names, warned = span()
print("held:", "mine" in names, "matmul dygraph" in names, len(warned), warned[0][:60] if warned else "")
del theirs  # paddle's tracer is free again
names, warned = span()
print("free:", "mine" in names, "matmul dygraph" in names, len(warned))
# paddle's own RecordEvents (paddle.profiler.RecordEvent) are captured too.
prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], on_trace_ready=lambda p: None)
prof.start()
with pp.RecordEvent("theirs"):
    paddle.ones([2]) + 1
prof.stop()
r = prof.get_result()
theirs_events = [e for t in range(len(r.threads)) for e in r.events(t) if e.name == "theirs"]
print("paddle RecordEvent:", [int(e.type) for e in theirs_events])
# And paddle.profiler still works after a stepprof span.
theirs = pp.Profiler(targets=[pp.ProfilerTarget.CPU], on_trace_ready=lambda p: None)
theirs.start(); paddle.ones([2]) + 1; theirs.stop()
print("paddle after:", theirs.profiler_result is not None)
"""


@needs_paddle
def test_paddle_capture_paddle_profiler_holding_the_tracer(tmp_path):
    """While paddle.profiler holds paddle's tracer, a stepprof span records
    its hand-marked ranges only, with one warning; once it is gone, paddle's
    operators and paddle's own RecordEvents are captured again;
    paddle.profiler works after stepprof."""
    stdout, _ = run_python(["-c", CONCURRENT], tmp_path)
    assert "held: True False 1 paddle.profiler holds paddle's tracer" in stdout, stdout
    assert "free: True True 0" in stdout, stdout
    assert "paddle after: True" in stdout, stdout
    assert "paddle RecordEvent: [14]" in stdout, stdout  # PythonUserDefined, as paddle types it


IMPORTED_LATE = r"""
import stepprof.profiler as profiler
prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=profiler.make_scheduler(
    closed=0, ready=0, record=1), on_trace_ready=lambda p: None)
prof.start()
import paddle
x = paddle.ones([4, 4])
def names():
    r = prof.get_result()
    return {e.name for t in range(len(r.threads)) for e in r.events(t)}
paddle.matmul(x, x); prof.step()
print("first span:", "matmul dygraph" in names())
paddle.matmul(x, x); prof.step()
print("next span:", "matmul dygraph" in names())
prof.stop()
"""


@needs_paddle
def test_paddle_capture_paddle_imported_after_start(tmp_path):
    stdout, _ = run_python(["-c", IMPORTED_LATE], tmp_path)
    assert "first span: False" in stdout and "next span: True" in stdout, stdout


def test_paddle_capture_unsupported_version_warns_once(monkeypatch):
    """A paddle outside the supported versions: one StepprofWarning that
    names the version, and the hand-marked ranges are recorded as usual."""
    fake = types.ModuleType("paddle")
    fake.__version__ = "2.1.0"
    monkeypatch.setitem(sys.modules, "paddle", fake)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            prof = profiler.Profiler(on_trace_ready=lambda p: None)
            prof.start()
            with profiler.RecordEvent("mine"):
                pass
            prof.stop()
            assert "mine" in {e.name for e in prof.get_result().events(0)}
    ours = [str(w.message) for w in caught if w.category is profiler.StepprofWarning]
    assert len(ours) == 1, ours
    assert "paddle 2.1.0 is not supported" in ours[0] and "hand-marked ranges only" in ours[0]


def test_paddle_capture_add_events_outside_a_span_is_refused():
    prof = profiler.Profiler(on_trace_ready=lambda p: None)
    assert prof._add_events([(1, 0, "x", 0, 1)]) is False
    prof.start()
    with pytest.raises(ValueError):
        prof._add_events([(1, 99, "x", 0, 1)])
    with pytest.raises(TypeError):
        prof._add_events([(1, 0)])
    prof.stop()


# ---- The capture's plumbing against a stand-in paddle (runs without paddle) ----

class _Enum:
    def __init__(self, value):
        self.value = value


class _Node:
    def __init__(self, name, kind, start_ns, end_ns, children=()):
        self.name, self.type, self.start_ns, self.end_ns = name, kind, start_ns, end_ns
        self.children_node = list(children)


class _FakeTracer:
    """paddle.base.core._Profiler as the capture uses it: one alive at a time;
    stop() gives a result whose tree lies inside the time it ran."""
    alive = None
    fail_stop = False
    fail_start = False
    created = 0

    @classmethod
    def create(cls, options, custom_device_types):
        assert options.trace_switch == 1 and custom_device_types == []
        if cls.alive is not None:
            return None
        cls.alive = cls()
        cls.created += 1
        return cls.alive

    def prepare(self):
        pass

    def start(self):
        if self.fail_start:
            type(self).alive = None
            raise RuntimeError("tracer would not start")
        self.t0 = time.time_ns()

    def stop(self):
        type(self).alive = None
        if self.fail_stop:
            raise RuntimeError("tracer broke")
        t0, t1 = self.t0, time.time_ns()
        mid = (t0 + t1) // 2
        kinds = _FakeCore.TracerEventType.__members__
        tree = _Node("root", None, 0, 0, [
            _Node("op", kinds["Operator"], t0 + 10, mid, [
                _Node("inner", kinds["OperatorInner"], t0 + 20, t0 + 30)]),
            _Node("paddle step", kinds["ProfileStep"], t0 + 5, t1 - 5),
            _Node("new kind", kinds["Brandnew"], mid, t1 - 10),
        ])
        return types.SimpleNamespace(get_data=lambda: {threading.get_native_id(): tree})


class _FakeCore:
    _Profiler = _FakeTracer
    ProfilerOptions = lambda: types.SimpleNamespace(trace_switch=0)  # noqa: E731
    TracerEventType = types.SimpleNamespace(__members__={
        "Operator": _Enum(0), "ProfileStep": _Enum(2), "OperatorInner": _Enum(8),
        "Brandnew": _Enum(77)})


@pytest.fixture
def fake_paddle(monkeypatch):
    """A stand-in paddle 3.3.1 in sys.modules: paddle.base.core with a fake
    tracer, paddle.profiler.utils with paddle's flag and wrap_optimizers."""
    paddle = types.ModuleType("paddle")
    paddle.__version__ = "3.3.1"
    base = types.ModuleType("paddle.base")
    core = types.ModuleType("paddle.base.core")
    for name in ("_Profiler", "ProfilerOptions", "TracerEventType"):
        setattr(core, name, getattr(_FakeCore, name))
    base.core = core
    prof_mod = types.ModuleType("paddle.profiler")
    utils = types.ModuleType("paddle.profiler.utils")
    utils._is_profiler_used = False
    utils.wrapped = 0

    def wrap_optimizers():
        utils.wrapped += 1

    utils.wrap_optimizers = wrap_optimizers
    # paddle's benchmark timer, whose hooks stepprof's timer joins (_paddle_reader.py)
    timer = types.ModuleType("paddle.profiler.timer")
    timer.Hook = type("Hook", (), {})
    bench = types.SimpleNamespace(hooks={})
    timer.benchmark = lambda: bench
    prof_mod.utils, prof_mod.timer = utils, timer
    paddle.base, paddle.profiler = base, prof_mod
    for name, mod in (("paddle", paddle), ("paddle.base", base), ("paddle.base.core", core),
                      ("paddle.profiler", prof_mod), ("paddle.profiler.utils", utils),
                      ("paddle.profiler.timer", timer)):
        monkeypatch.setitem(sys.modules, name, mod)
    _FakeTracer.alive, _FakeTracer.fail_stop, _FakeTracer.created = None, False, 0
    _FakeTracer.fail_start = False
    yield utils
    _FakeTracer.alive = None


def _one_span(flag_seen=None):
    prof = profiler.Profiler(on_trace_ready=lambda p: None)
    prof.start()
    with profiler.RecordEvent("mine"):
        if flag_seen is not None:
            flag_seen.append(sys.modules["paddle.profiler.utils"]._is_profiler_used)
    prof.stop()
    return prof.get_result()


def test_paddle_capture_fake_events_typed_by_name_and_nested(fake_paddle):
    seen = []
    r = _one_span(seen)
    events = {e.name: e for e in r.events(threading.get_native_id())}
    evs = r.events(threading.get_native_id())
    assert events["op"].type == profiler.TracerEventType.Operator
    assert events["inner"].type == profiler.TracerEventType.OperatorInner
    assert evs[events["inner"].parent].name == "op"
    assert events["new kind"].type == profiler.TracerEventType.UserDefined  # unknown: UserDefined
    assert "paddle step" not in events  # paddle's steps are left out
    assert "mine" in events
    assert seen == [True] and fake_paddle._is_profiler_used is False  # set while recording only
    assert fake_paddle.wrapped == 1 and _FakeTracer.alive is None  # released at the span's end
    assert r.counters["out_of_window"] == 0


def test_paddle_capture_fake_busy_tracer_warns_once(fake_paddle):
    holder = _FakeTracer.create(types.SimpleNamespace(trace_switch=1), [])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prof = profiler.Profiler(on_trace_ready=lambda p: None,
                                 scheduler=profiler.make_scheduler(closed=0, ready=0, record=1))
        prof.start()
        for _ in range(3):
            with profiler.RecordEvent("mine"):
                pass
            prof.step()
        with profiler.RecordEvent("mine"):
            pass
        prof.stop()
    ours = [str(w.message) for w in caught
            if w.category is profiler.StepprofWarning and "paddle" in str(w.message)]
    assert len(ours) == 1 and ours[0].startswith("paddle.profiler holds paddle's tracer"), ours
    names = {e.name for e in prof.get_result().events(threading.get_native_id())}
    assert "mine" in names and "op" not in names
    assert _FakeTracer.alive is holder and fake_paddle._is_profiler_used is False


def test_paddle_capture_fake_tracer_failure_warns_and_goes_on(fake_paddle):
    _FakeTracer.fail_stop = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prof = profiler.Profiler(on_trace_ready=lambda p: None,
                                 scheduler=profiler.make_scheduler(closed=0, ready=0, record=1))
        prof.start()
        for _ in range(3):
            with profiler.RecordEvent("mine"):
                pass
            prof.step()  # never raises
        with profiler.RecordEvent("mine"):
            pass
        prof.stop()
    ours = [str(w.message) for w in caught
            if w.category is profiler.StepprofWarning and "paddle" in str(w.message)]
    assert len(ours) == 1 and "capturing paddle's events failed (RuntimeError: tracer broke)" \
        in ours[0], ours
    assert _FakeTracer.created == 1  # not tried again by this profiler
    assert fake_paddle._is_profiler_used is False
    assert "mine" in {e.name for e in prof.get_result().events(threading.get_native_id())}


def test_paddle_capture_fake_tracer_start_failure_puts_the_flag_back(fake_paddle):
    """A tracer that fails to start is never stopped (end() has nothing to
    stop), so paddle's flag must be put back at once: left on, paddle's
    DataLoader and optimizer would record events for the rest of the
    process."""
    _FakeTracer.fail_start = True
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = _one_span()
    ours = [str(w.message) for w in caught
            if w.category is profiler.StepprofWarning and "paddle" in str(w.message)]
    assert len(ours) == 1 and "tracer would not start" in ours[0], ours
    assert fake_paddle._is_profiler_used is False
    assert "mine" in {e.name for e in r.events(threading.get_native_id())}


def test_paddle_capture_fake_discarded_span_stops_the_tracer(fake_paddle):
    """RECORD -> CLOSED discards the span: paddle's tracer is stopped and
    released with it, and its events go nowhere."""
    prof = profiler.Profiler(on_trace_ready=lambda p: None,
                             scheduler=lambda step: profiler.ProfilerState.RECORD
                             if step == 0 else profiler.ProfilerState.CLOSED)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prof.start()
        assert _FakeTracer.alive is not None
        prof.step()
        assert _FakeTracer.alive is None and fake_paddle._is_profiler_used is False
        prof.stop()
    assert prof.get_result() is None


def test_paddle_capture_events_handed_over_in_batches(fake_paddle):
    """The tree is read in batches (the Python side never holds a whole
    span's tuples), parents before children, the same events in the same
    order as in one list."""
    from stepprof import _paddle_capture
    tracer = _FakeTracer.create(types.SimpleNamespace(trace_switch=1), [])
    tracer.start()
    result = tracer.stop()
    kinds = _paddle_capture._type_map(_FakeCore)
    whole = _paddle_capture.events_of(result, kinds)
    parts = list(_paddle_capture.events_of(result, kinds, batch=2))
    assert [len(p) for p in parts] == [2, 1]
    assert [e for p in parts for e in p] == whole
    assert [e[2] for e in whole] == ["op", "inner", "new kind"]  # the paddle step left out


def test_paddle_capture_fake_forked_child_says_so(fake_paddle, monkeypatch):
    """A process forked while a stepprof span held paddle's tracer inherits
    paddle's taken tracer: the warning says that, not that paddle.profiler
    holds it. (The fork is simulated: the tracer is held, and the holder's
    pid is not this process's.)"""
    from stepprof import _paddle_capture
    _FakeTracer.create(types.SimpleNamespace(trace_switch=1), [])
    monkeypatch.setattr(_paddle_capture, "_held_in", os.getpid() + 1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _one_span()
    ours = [str(w.message) for w in caught
            if w.category is profiler.StepprofWarning and "paddle" in str(w.message)]
    assert len(ours) == 1 and ours[0].startswith(
        "paddle's tracer was held by a stepprof span of the parent process"), ours


# ---- record_shapes and with_flops: paddle's op info recorder ----

def operator_rows(text):
    """{operator row name: its cells} of the Operator Summary (op rows only)."""
    return {cells[0]: cells for indent, cells in table(text, "Operator Summary") if indent == 0}


def matmul_inputs(path):
    """The input shapes and dtypes of every "matmul dygraph" operator of a
    trace file, as (shapes, dtypes) flat lists in trace order. stepprof
    writes Kineto's "Input Dims" / "Input type" lists (absent: none); paddle
    names its events "matmul dygraph[<dur>]" and writes "input_shapes" /
    "input_dtypes" as dicts of input name -> list, which are flattened in
    key order. paddle's trace is plain JSON, not in the exact form
    load_trace checks."""
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    out = []
    for e in trace["traceEvents"]:
        if e.get("ph") != "X" or re.sub(r"\[[^\]]*\]$", "", e.get("name", "")) != "matmul dygraph":
            continue
        args = e.get("args", {})
        if "input_shapes" in args:
            shapes = [s for v in args["input_shapes"].values() for s in v]
            dtypes = [d for v in args.get("input_dtypes", {}).values() for d in v]
        else:
            shapes, dtypes = args.get("Input Dims", []), args.get("Input type", [])
        out.append((shapes, dtypes))
    return out


@pytest.fixture(scope="module")
def op_info_runs(tmp_path_factory):
    if not HAVE_PADDLE:
        pytest.skip("paddle is not installed (see needs_paddle)")
    cwd = tmp_path_factory.mktemp("paddle_mlp_op_info")
    out = {}
    for mode in ("paddle", "stepprof"):
        stdout, stderr = run_python([MLP, mode, str(cwd / f"{mode}.json"), "--op-info"], cwd)
        out[mode] = stdout.split("=== summary ===", 1)[1]
        out[mode + "_trace"] = str(cwd / f"{mode}.json")
        out[mode + "_stderr"] = stderr
    return out


@needs_paddle
def test_paddle_capture_op_info_flops_column_matches_paddle(op_info_runs):
    """with_flops: every operator row's FLOPs equal paddle.profiler's, exactly
    (FLOPs are computed from shapes, never timed). paddle 3.3.1's dygraph
    records no op info, so paddle prints 0 for each: so must stepprof."""
    theirs, ours = operator_rows(op_info_runs["paddle"]), operator_rows(op_info_runs["stepprof"])
    assert set(ours) == set(theirs)
    assert {n: c[-1] for n, c in ours.items()} == {n: c[-1] for n, c in theirs.items()}
    assert "matmul dygraph" in ours
    assert "StepprofWarning" not in op_info_runs["stepprof_stderr"]


@needs_paddle
def test_paddle_capture_op_info_matmul_shapes_match_paddle(op_info_runs):
    """record_shapes: the matmul operators carry the input shapes and dtypes
    paddle.profiler's trace gives them (none at all in paddle 3.3.1, whose
    dygraph records no op info), as many matmuls in both."""
    theirs = matmul_inputs(op_info_runs["paddle_trace"])
    ours = matmul_inputs(op_info_runs["stepprof_trace"])
    assert len(ours) == len(theirs) == 15
    assert sorted(map(repr, ours)) == sorted(map(repr, theirs))


OP_INFO_FLOPS = r"""
import types
from paddle.base import core
from paddle.utils.flops import flops
from stepprof._paddle_capture import op_info_of, _type_map

class Node:
    def __init__(self, name, kind, start, shapes=None, attrs=None, children=()):
        self.name, self.type, self.start_ns, self.end_ns = name, kind, start, start + 100
        self.input_shapes, self.dtypes = shapes or {}, {k: ["float32"] * len(v) for k, v in (shapes or {}).items()}
        self.attributes, self.callstack, self.children_node = attrs or {}, "", list(children)

T = core.TracerEventType
shapes = {"X": [[8, 16]], "Y": [[16, 32]]}
attrs = {"transpose_x": False, "transpose_y": False}
root = Node("root", T.PythonUserDefined, 0, children=[
    Node("matmul dygraph", T.Operator, 10, shapes, attrs,
         [Node("matmul infer_meta", T.OperatorInner, 20, {"X": [[1]]})]),
    Node("relu dygraph", T.Operator, 200)])
ops = op_info_of(types.SimpleNamespace(get_data=lambda: {7: root}), _type_map(core), flops)
print(ops)
print(flops("matmul", shapes, attrs))
"""


@needs_paddle
def test_paddle_capture_op_info_flops_are_paddles(tmp_path):
    """The FLOPs handed to the span are paddle.utils.flops.flops of the
    Operator node's op type (its name without " dygraph"), shapes and
    attributes, the function paddle.profiler's statistic calls; a node
    without op info is not handed over, nor are non-Operator nodes."""
    stdout, _ = run_python(["-c", OP_INFO_FLOPS], tmp_path)
    ops_line, want = stdout.strip().splitlines()[-2:]
    want = int(want)
    assert want > 0
    assert ops_line == repr([(7, 10, "matmul", [("X", [8, 16], "float32"), ("Y", [16, 32], "float32")],
                              "", want)])


@pytest.fixture
def fake_op_info(fake_paddle, monkeypatch):
    """The stand-in paddle with paddle's op info recorder switches and
    paddle.utils.flops: its tracer's Operator node carries shapes, dtypes,
    attributes and a call stack, its FLOPs counter answers 2*M*K*N for
    matmul."""
    core = sys.modules["paddle.base.core"]
    state = {"on": False, "calls": []}

    def switch(on):
        def f():
            state["on"] = on
            state["calls"].append(on)
        return f

    monkeypatch.setattr(core, "enable_op_info_recorder", switch(True), raising=False)
    monkeypatch.setattr(core, "disable_op_info_recorder", switch(False), raising=False)
    utils_mod = types.ModuleType("paddle.utils")
    flops_mod = types.ModuleType("paddle.utils.flops")

    def flops(op_type, input_shapes, attrs):
        if op_type != "matmul" or attrs != {"transpose_y": False}:
            return 0
        (m, k), (_, n) = input_shapes["X"][0], input_shapes["Y"][0]
        return 2 * m * k * n

    flops_mod.flops = flops
    utils_mod.flops = flops_mod
    monkeypatch.setitem(sys.modules, "paddle.utils", utils_mod)
    monkeypatch.setitem(sys.modules, "paddle.utils.flops", flops_mod)
    real_stop = _FakeTracer.stop

    def stop(self):
        state["on_at_stop"] = state["on"]
        result = real_stop(self)
        op = next(iter(result.get_data().values())).children_node[0]
        op.name = "matmul dygraph"
        op.input_shapes = {"X": [[8, 16]], "Y": [[16, 32]]}
        op.dtypes = {"X": ["float32"], "Y": ["float16"]}
        op.attributes = {"transpose_y": False}
        op.callstack = "train.py(3)"
        return result

    monkeypatch.setattr(_FakeTracer, "stop", stop)
    return state


def _op_info_span(tmp_path, **options):
    prof = profiler.Profiler(on_trace_ready=lambda p: None, **options)
    prof.start()
    with profiler.RecordEvent("mine"):
        pass
    prof.stop()
    path = str(tmp_path / "trace.json")
    prof.export(path, "json")
    with open(path, encoding="utf-8") as f:  # the fake's ranges may overlap "mine"
        return prof, json.load(f)


def test_paddle_capture_fake_op_info_reaches_table_and_trace(fake_op_info, tmp_path, capsys):
    """record_shapes and with_flops: the recorder runs while the span records
    and is switched off after; the Operator node's shapes and dtypes are its
    trace args, its FLOPs (paddle.utils.flops' answer) the Operator
    Summary's, and a .pb export keeps them."""
    prof, trace = _op_info_span(tmp_path, record_shapes=True, with_flops=True)
    assert fake_op_info["calls"] == [True, False] and fake_op_info["on_at_stop"] is True
    op = next(e for e in trace["traceEvents"] if e.get("name") == "matmul dygraph")
    assert op["args"]["Input Dims"] == [[8, 16], [16, 32]]
    assert op["args"]["Input type"] == ["float32", "float16"]
    assert op["args"]["Call stack"] == "train.py(3)"
    prof.summary(views=[profiler.SummaryView.OperatorView])
    rows = operator_rows(capsys.readouterr().out)
    assert rows["matmul dygraph"][-1] == str(2 * 8 * 16 * 32)
    pb = tmp_path / "trace.paddle_trace.pb"
    prof.export(str(pb), "pb")
    loaded = profiler.load_profiler_result(str(pb))
    text = loaded.summary_text(views=profiler.SummaryView.OperatorView)
    assert operator_rows(text)["matmul dygraph"][-1] == str(2 * 8 * 16 * 32)


def test_paddle_capture_fake_op_info_off_by_default(fake_op_info, tmp_path, capsys):
    """Without record_shapes and with_flops paddle's recorder is never
    switched on and nothing is read: no args, FLOPs 0, as paddle.profiler."""
    prof, trace = _op_info_span(tmp_path)
    assert fake_op_info["calls"] == []
    op = next(e for e in trace["traceEvents"] if e.get("name") == "matmul dygraph")
    assert "Input Dims" not in op.get("args", {})
    prof.summary(views=[profiler.SummaryView.OperatorView])
    assert operator_rows(capsys.readouterr().out)["matmul dygraph"][-1] == "0"


def test_paddle_capture_fake_op_info_record_shapes_alone_counts_flops(fake_op_info, tmp_path):
    """Either option runs the recorder, as paddle's start() does; the FLOPs
    are computed either way (paddle's statistic always computes them)."""
    prof, trace = _op_info_span(tmp_path, record_shapes=True)
    assert fake_op_info["calls"] == [True, False]
    op = next(e for e in trace["traceEvents"] if e.get("name") == "matmul dygraph")
    assert op["args"]["Input Dims"] == [[8, 16], [16, 32]]

"""stepprof reads paddle's own chrome trace: the MLP of paddle_mlp.py runs
under paddle.profiler, which prints its summary tables and writes its JSON
(Profiler.export(path, "json")); stepprof.profiler.load_profiler_result loads
that JSON, and its tables must hold the same Operator Summary rows with the
same calls, the same Overview event types and the Model Summary's rows, as
paddle printed for that very run. Times are compared only as sanity bounds
(the file keeps paddle's times to the nanosecond, so totals agree to the
printed digit when the trace is short; see docs/trace-format.md §10.3).

Skips, saying why, when paddle cannot be imported."""
import json
import os

import pytest

import stepprof.profiler as profiler
from conftest import event_type
from test_paddle_capture import HAVE_PADDLE, MLP, needs_paddle, run_python, summary


@pytest.fixture(scope="module")
def paddle_run(tmp_path_factory):
    if not HAVE_PADDLE:
        pytest.skip("paddle is not installed (see needs_paddle)")
    cwd = tmp_path_factory.mktemp("paddle_json")
    trace = cwd / "paddle_mlp.paddle_trace.json"
    stdout, _ = run_python([MLP, "paddle", str(trace)], cwd)
    printed = stdout.split("=== summary ===", 1)[1]
    with open(trace, encoding="utf-8") as f:
        head = f.read(4096)
    # The file is paddle's dialect, not stepprof's: string tids, cat as type.
    assert '(Python)"' in head and '"cat": "ProfileStep"' in head, head[:500]
    result = profiler.load_profiler_result(str(trace))
    return {"paddle": summary(printed), "stepprof": summary(result.summary_text(time_unit="us")),
            "result": result, "trace": str(trace)}


@needs_paddle
def test_paddle_json_operator_rows_and_calls_match(paddle_run):
    theirs, ours = paddle_run["paddle"]["Operator Summary"], paddle_run["stepprof"]["Operator Summary"]
    assert len(theirs) > 10
    assert ours == theirs


@needs_paddle
def test_paddle_json_overview_and_model_match(paddle_run):
    for title in ("Overview Summary", "Model Summary"):
        assert paddle_run["stepprof"][title] == paddle_run["paddle"][title], title
    assert "Dataloader" in paddle_run["stepprof"]["Model Summary"]
    assert int(paddle_run["stepprof"]["Overview Summary"]["ProfileStep"]) == 5


@needs_paddle
def test_paddle_json_times_are_paddles(paddle_run):
    """Sanity bounds only: each operator's CPU total within 1% (or 0.02 us)
    of what paddle printed."""
    theirs = paddle_run["paddle"]["Operator Summary CPU"]
    ours = paddle_run["stepprof"]["Operator Summary CPU"]
    assert ours.keys() == theirs.keys()
    for name, total in theirs.items():
        assert abs(ours[name] - total) <= max(0.02, 0.01 * total), name


@needs_paddle
def test_paddle_json_export_keeps_paddle_types(paddle_run, tmp_path):
    """Written back in stepprof's (Kineto) dialect, the paddle types stay in
    args "Event Type" and the tables load back unchanged."""
    out = tmp_path / "again.json"
    paddle_run["result"].export(str(out), "json")
    with open(out, encoding="utf-8") as f:
        text = f.read()
    kinds = {event_type(e) for e in json.loads(text)["traceEvents"] if e.get("ph") == "X"}
    for kind in ("DygraphKernelLaunch", "OperatorInner", "Forward", "Dataloader"):
        assert kind in kinds, kind
    assert "(Python)" not in text
    again = profiler.load_profiler_result(str(out))
    assert summary(again.summary_text(time_unit="us")) == paddle_run["stepprof"]
    os.remove(out)

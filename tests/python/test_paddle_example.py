"""The README's paddle example, examples/paddle/train.py, run as written
twice in fresh directories: as shipped (stepprof.profiler) and with --paddle
(paddle.profiler, the one import line swapped). What the README says of it
holds: the same Operator Summary rows and calls, the same Overview event
types, the Model Summary's Dataloader row, reader_cost in both Perf
Summaries, the same Memory Summary rows, and one trace file each. Times are
never compared. (ctest example_readme_blocks checks that the README's copy
equals the file.)"""
import json
import os

import pytest
from conftest import event_type, step_names, steps
from test_paddle_capture import needs_paddle, run_python, summary
from test_paddle_memory import memory_tables

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "paddle", "train.py")


def perf_rows(text):
    """{row: avg} of the Perf Summary printed in text."""
    lines = text.split("Perf Summary", 1)[1].splitlines()
    out = {}
    for line in lines[1:]:
        if line.startswith("-"):
            break
        cells = [c.strip() for c in line.split("|") if c.strip()]
        if len(cells) == 4 and cells[0] in ("reader_cost", "batch_cost", "ips"):
            out[cells[0]] = float(cells[1])
    return out


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    out = {}
    for mode, args in (("stepprof", []), ("paddle", ["--paddle"])):
        cwd = tmp_path_factory.mktemp(mode)
        stdout, stderr = run_python([EXAMPLE] + args, str(cwd))
        logs = os.listdir(cwd / "profiler_log")
        out[mode] = {"text": stdout, "stderr": stderr, "tables": summary(stdout),
                     "logs": [str(cwd / "profiler_log" / f) for f in logs]}
    return out


@needs_paddle
def test_paddle_example_operator_rows_and_calls_equal_paddles(both):
    ours, theirs = both["stepprof"]["tables"], both["paddle"]["tables"]
    assert ours["Operator Summary"] == theirs["Operator Summary"]
    assert "matmul dygraph" in ours["Operator Summary"]
    assert set(ours["Overview Summary"]) == set(theirs["Overview Summary"])
    assert ours["Model Summary"]["Dataloader"] == theirs["Model Summary"]["Dataloader"] == "5"


@needs_paddle
def test_paddle_example_perf_summary_has_reader_cost_in_both(both):
    for mode in ("stepprof", "paddle"):
        rows = perf_rows(both[mode]["text"])
        assert set(rows) == {"reader_cost", "batch_cost", "ips"}, (mode, rows)
        assert 0 < rows["reader_cost"] < rows["batch_cost"], (mode, rows)
        assert "Reader Ratio: " in both[mode]["text"]


@needs_paddle
def test_paddle_example_memory_summary_rows_equal_paddles(both):
    ours = memory_tables(both["stepprof"]["text"])
    theirs = memory_tables(both["paddle"]["text"])
    assert set(ours) == set(theirs) == {"Place(cpu)"}
    # The operators' rows (allocations made on the training thread between
    # the recorded steps' boundaries) are the same run to run.
    for key in (("matmul dygraph", "Allocated"), ("relu dygraph", "Allocated"),
                ("Global_GradNodeAccumulation", "Allocated")):
        assert ours["Place(cpu)"]["rows"][key] == theirs["Place(cpu)"]["rows"][key], key


@needs_paddle
def test_paddle_example_writes_one_trace_with_paddles_operators(both):
    logs = both["stepprof"]["logs"]
    assert len(logs) == 1 and logs[0].endswith(".paddle_trace.json"), logs
    with open(logs[0], encoding="utf-8") as f:
        trace = json.load(f)
    assert sorted(step_names(trace)) == steps(10, 15)
    # paddle's types are kept in args (the trace is in Kineto's dialect)
    ops = [e for e in trace["traceEvents"]
           if e.get("ph") == "X" and event_type(e) == "Operator"]
    assert len(ops) == int(both["stepprof"]["tables"]["Overview Summary"]["Operator"]) == 170
    assert not [line for line in both["stepprof"]["stderr"].splitlines()
                if "StepprofWarning" in line], both["stepprof"]["stderr"]


def test_paddle_example_is_in_the_readme_check():
    """The README must show this file (tests/examples/test_readme_examples.py)."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples",
                       "test_readme_examples.py")
    with open(src, encoding="utf-8") as f:
        assert "examples/paddle/train.py" in f.read()

"""examples/torch/train.py (the README's torch example) under stepprof and,
with --torch, under torch.profiler, each in its own process: the operator
tables have the same columns, and every row both print has the same calls
and memory; each run writes one trace for TensorBoard, stepprof's holding
ProfilerStep#2 to #4 with torch's operators in them. Times are never
compared. Skipped, saying why, without torch."""
import os
import re

import pytest

from conftest import load_trace
from test_torch_capture import HAVE_TORCH, _why_no_torch, run_python

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = os.path.join(HERE, "..", "..", "examples", "torch", "train.py")

pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason=_why_no_torch())


def table_rows(out):
    """(header cells, {name: cells}) of the table the example printed."""
    lines = [line for line in out.splitlines() if line.strip()]
    seps = [i for i, line in enumerate(lines) if line.startswith("---")]
    header = re.split(r"\s{2,}", lines[seps[0] + 1].strip())
    rows = {}
    for line in lines[seps[1] + 1:seps[2]]:
        cells = re.split(r"\s{2,}", line.strip())
        rows[cells[0]] = dict(zip(header, cells))
    return header, rows


def test_torch_example_same_table_as_torch_profilers(tmp_path):
    ours_dir, theirs_dir = tmp_path / "stepprof", tmp_path / "torch"
    ours_dir.mkdir()
    theirs_dir.mkdir()
    ours, _ = run_python([EXAMPLE], cwd=str(ours_dir))
    theirs, _ = run_python([EXAMPLE, "--torch"], cwd=str(theirs_dir))
    o_header, o_rows = table_rows(ours)
    t_header, t_rows = table_rows(theirs)
    assert o_header == t_header and "CPU Mem" in o_header
    common = set(o_rows) & set(t_rows)
    assert {"aten::addmm", "ProfilerStep*", "forward", "Optimizer.step#SGD.step"} <= common
    for name in common:
        for col in ("# of Calls", "CPU Mem", "Self CPU Mem"):
            assert o_rows[name][col] == t_rows[name][col], (name, col)
    for d in (ours_dir, theirs_dir):
        files = os.listdir(d / "log")
        assert len(files) == 1 and files[0].endswith(".pt.trace.json"), files
    trace = load_trace(str(ours_dir / "log" / os.listdir(ours_dir / "log")[0]))
    steps = sorted(e["name"] for e in trace["traceEvents"] if e.get("name", "").startswith("ProfilerStep#"))
    assert steps == ["ProfilerStep#2", "ProfilerStep#3", "ProfilerStep#4"]
    assert any(e.get("name") == "aten::addmm" and "Input Dims" in e.get("args", {})
               for e in trace["traceEvents"])

"""The README's Python example, examples/quickstart/quickstart.py, runs as
written: plain Python, no paddle or torch, in a fresh directory. (The ctest
example_readme_blocks checks that the README's copy equals the file.)"""
import os
import subprocess
import sys

from conftest import load_trace, step_names, steps

EXAMPLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples",
                       "quickstart", "quickstart.py")


def test_quickstart_runs_as_written(in_tmp_dir):
    run = subprocess.run([sys.executable, EXAMPLE], cwd=in_tmp_dir, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "Overview Summary" in run.stdout
    assert run.stderr == ""
    trace_lines = [l for l in run.stdout.splitlines() if l.startswith("trace: ")]
    assert len(trace_lines) == 1
    path = trace_lines[0][len("trace: "):]
    assert path.startswith("./profiler_demo/") and path.endswith(".paddle_trace.json")
    trace = load_trace(os.path.join(in_tmp_dir, path))
    assert step_names(trace) == steps(2, 10)
    names = {e["name"] for e in trace["traceEvents"] if e.get("ph") == "X"}
    assert {"DataPrepare", "forward"} <= names

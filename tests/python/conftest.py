"""Shared fixtures of the Python package's tests. Each test runs in its own
temporary directory (the default handler writes ./profiler_log/), and traces
are read with tests/trace/tracecheck.py, the checker the C tests use."""
import ctypes
import glob
import json
import os
import re
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "trace"))

import tracecheck  # noqa: E402


@pytest.fixture(autouse=True)
def in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def work(n=200):
    """The model code of the guide's examples, in pure Python: a small
    matrix-vector product and an update."""
    w = [[(i * 7 + j) % 5 / 5.0 for j in range(13)] for i in range(5)]
    x = [float(k % 3) for k in range(13)]
    out = [sum(wi * xi for wi, xi in zip(row, x)) for row in w]
    for _ in range(n // 100):
        out = [o * 0.999 for o in out]
    return out


def trace_files(directory):
    return sorted(glob.glob(os.path.join(str(directory), "*.json")) +
                  glob.glob(os.path.join(str(directory), "*.json.gz")))


def load_trace(path):
    """Parses a trace and checks it against trace-format.md."""
    raw, trace = tracecheck.load_trace(path)
    problems = tracecheck.check_trace(raw, trace, path)
    assert problems == [], problems[:5]
    assert trace == json.loads(raw)
    return trace


def event_type(e):
    """The paddle type stepprof's loader gives host range e: its args
    "Event Type" where written, else what its cat and name tell
    (trace-format.md §6: the file leaves out the types they imply)."""
    written = e.get("args", {}).get("Event Type")
    if written:
        return written
    cat, name = e.get("cat"), e.get("name", "")
    if cat in ("cpu_op", "user_annotation"):
        if cat == "user_annotation" and re.fullmatch(r"ProfilerStep#[0-9]+", name):
            return "ProfileStep"
        if name.startswith("enumerate(DataLoader)#") and name.endswith(".__next__"):
            return "Dataloader"
        if cat == "user_annotation" and name.startswith("Optimizer.step#"):
            return "Optimization"
        if name.startswith(("nccl:", "gloo:")) or (cat == "cpu_op" and name == "record_param_comms"):
            return "Communication"
    return {"cpu_op": "Operator", "python_function": "PythonOp"}.get(cat, "UserDefined")


def step_names(trace):
    return [e["name"] for e in trace["traceEvents"]
            if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#")]


def event_names(trace):
    return [e["name"] for e in trace["traceEvents"] if e.get("ph") == "X"]


def steps(a, b):
    return [f"ProfilerStep#{i}" for i in range(a, b)]


GPU_WARNING = "Profiling GPU is not supported in current context: "


def cuda_driver_present():
    """Whether libcuda.so.1 loads here. Without it, a profiler asked for the
    GPU must warn (GPU_WARNING); with it, the warning depends on the device."""
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False

"""stepprof.profiler records torch's own events through torch's RecordFunction
callbacks (python/_stepprof_torch/adapter.cpp, stepprof/_torch_capture.py):
the same small torch training loop (tests/python/torch_mlp.py) runs once
under torch.profiler and once under stepprof.profiler, each in its own
process, and their key_averages-style tables are compared: the same names
with the same calls. Times are never compared. Also: the types the events
get, both profilers at once, forked DataLoader workers, an adapter built for
another torch, and a program that never imports torch.

The tests that need torch skip, saying why, when torch cannot be imported;
`make test-python` installs it (python/test.sh) when PyPI is reachable."""
import collections
import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest

from conftest import event_type, load_trace

HERE = os.path.dirname(os.path.abspath(__file__))
MLP = os.path.join(HERE, "torch_mlp.py")

HAVE_TORCH = importlib.util.find_spec("torch") is not None


def _why_no_torch():
    why = ("torch is not installed in this Python; `make test-python` installs it from PyPI into "
           "build/python-venv (python/test.sh), or: pip install torch, then reinstall stepprof")
    failed = os.path.join(sys.prefix, ".stepprof-torch-failed")  # python/test.sh's marker
    if os.path.exists(failed):
        with open(failed, encoding="utf-8", errors="replace") as f:
            last = [line.strip() for line in f if line.strip()]
        why += f". pip failed here ({last[-1] if last else 'no output'}); remove {failed} to retry"
    return why


needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason=_why_no_torch())


def run_python(args, cwd, timeout=600, env=None):
    proc = subprocess.run([sys.executable] + args, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert proc.returncode == 0, f"{args} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout, proc.stderr


def run_mlp(which, tmp_path, *extra):
    out, err = run_python([MLP, which, "--out", str(tmp_path)] + list(extra), cwd=str(tmp_path))
    return json.loads(out.strip().splitlines()[-1]), err


def calls(table):
    """{name: # of Calls} from a key_averages-style table."""
    lines = table.splitlines()
    seps = [i for i, line in enumerate(lines) if line.startswith("---")]
    header = re.split(r"\s{2,}", lines[seps[0] + 1].strip())
    col = header.index("# of Calls")
    rows = {}
    for line in lines[seps[1] + 1:seps[2]]:
        cells = re.split(r"\s{2,}", line.strip())
        assert len(cells) == len(header), line
        rows[cells[0]] = int(cells[col])
    return rows


@pytest.fixture(scope="module")
def torch_run(tmp_path_factory):
    if not HAVE_TORCH:
        pytest.skip(_why_no_torch())
    return run_mlp("torch", tmp_path_factory.mktemp("torch"))[0]


@pytest.fixture(scope="module")
def stepprof_run(tmp_path_factory):
    if not HAVE_TORCH:
        pytest.skip(_why_no_torch())
    return run_mlp("stepprof", tmp_path_factory.mktemp("stepprof"))[0]


@needs_torch
def test_torch_operators_and_calls_equal_torch_profilers(torch_run, stepprof_run):
    theirs, ours = calls(torch_run["torch_table"]), calls(stepprof_run["stepprof_table"])
    # What the loop is known to run, so that an empty pair cannot pass.
    for name in ("aten::addmm", "aten::mean", "autograd::engine::evaluate_function: AddmmBackward0",
                 "Optimizer.step#SGD.step", "my_loss", "ProfilerStep*",
                 # names of 52 code points and more are cut, as torch cuts them
                 "enumerate(DataLoader)#_SingleProcessDataLoaderIter._..."):
        assert name in theirs, name
    assert ours == theirs
    # aten::mean re-enters the dispatcher as aten::mean: one call, as torch counts it.
    assert ours["aten::mean"] == 3


@needs_torch
def test_torch_table_headers_equal_torch_profilers(torch_run, stepprof_run):
    def header(table):
        lines = table.splitlines()
        return lines[1]
    assert header(stepprof_run["stepprof_table"]) == header(torch_run["torch_table"])


@needs_torch
def test_torch_events_typed_for_both_table_families(stepprof_run):
    trace = load_trace(stepprof_run["trace"])
    by_name = {}
    for e in trace["traceEvents"]:
        if e.get("ph") == "X":
            by_name.setdefault(e["name"], (e.get("cat"), event_type(e)))
    assert by_name["aten::addmm"] == ("cpu_op", "Operator")
    assert by_name["AddmmBackward0"] == ("cpu_op", "Operator")
    assert by_name["autograd::engine::evaluate_function: AddmmBackward0"] == ("cpu_op", "Backward")
    assert by_name["Optimizer.step#SGD.step"] == ("user_annotation", "Optimization")
    assert by_name["enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"][1] == "Dataloader"
    # torch's callback is gone once the span is collected.
    assert stepprof_run["adapter_enabled_after"] is False


@needs_torch
def test_torch_profiler_and_stepprof_at_once_both_record(tmp_path, torch_run):
    got, _ = run_mlp("both", tmp_path)
    theirs, ours = calls(got["torch_table"]), calls(got["stepprof_table"])
    assert theirs == calls(torch_run["torch_table"])
    # stepprof does not take torch's own ProfilerStep#N ranges for operators.
    assert ours == theirs


@needs_torch
def test_torch_forked_dataloader_workers_record_nothing_and_break_nothing(tmp_path, stepprof_run):
    got, _ = run_mlp("stepprof", tmp_path, "--workers", "2")
    ours = calls(got["stepprof_table"])
    # The parent's operators are all there; the workers (forked) record nothing.
    assert ours["aten::addmm"] == calls(stepprof_run["stepprof_table"])["aten::addmm"]
    assert "enumerate(DataLoader)#_MultiProcessingDataLoaderIter..." in ours
    load_trace(got["trace"])


FORKED_WORKERS = r"""
import glob, json, os, sys, warnings, torch
import stepprof.profiler as sp
from stepprof import _torch_adapter

class Probe(torch.utils.data.Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        torch.ones(2).add_(1)  # an operator that only the workers run
        return torch.tensor([int(_torch_adapter.is_enabled()), os.getpid()])

loader = torch.utils.data.DataLoader(Probe(), batch_size=2, num_workers=2,
                                     multiprocessing_context="fork")
rows = []
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with sp.Profiler(scheduler=(0, 2), on_trace_ready=sp.export_chrome_tracing(sys.argv[1])) as p:
        for epoch in range(2):  # new workers each epoch: 4 forks in all
            rows += [b.tolist() for b in loader]
            p.step()
print(json.dumps({"rows": rows, "parent": os.getpid(), "trace": glob.glob(sys.argv[1] + "/*.json"),
                  "said": [str(w.message) for w in caught if "forked" in str(w.message)]}))
"""


@needs_torch
def test_torch_forked_workers_drop_the_callback_and_say_so_once(tmp_path):
    out, _ = run_python(["-c", FORKED_WORKERS, str(tmp_path / "trace")], cwd=str(tmp_path))
    got = json.loads(out.strip().splitlines()[-1])
    samples = [s for batch in got["rows"] for s in batch]
    assert len(samples) == 16
    # In every worker the callback was gone: its operators cost nothing there.
    assert {enabled for enabled, _ in samples} == {0}
    assert got["parent"] not in {pid for _, pid in samples}
    # One message for the profiler, not one per worker or per epoch.
    assert len(got["said"]) == 1 and "not profiled" in got["said"][0], got["said"]
    trace = load_trace(got["trace"][0])
    names = {e.get("name") for e in trace["traceEvents"]}
    assert any(n and n.startswith("enumerate(DataLoader)") for n in names)
    assert "aten::add_" not in names


ANOTHER_TORCH = r"""
import warnings, torch
import stepprof.profiler as sp
from stepprof import _torch_adapter
_torch_adapter.BUILT_FOR = "0.0.1"
x = torch.randn(8, 8)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    for _ in range(2):
        with sp.Profiler(scheduler=(0, 1)) as p:
            with sp.RecordEvent("by hand"):
                torch.mm(x, x)
            p.step()
names = {e.name for e in p.get_result().events(0)}
print("by hand" in names, "aten::mm" in names)
torchs = [str(w.message) for w in caught if "torch adapter" in str(w.message)]
print(len(torchs))
print(torchs)
"""


@needs_torch
def test_torch_adapter_for_another_torch_warns_once_and_keeps_hand_marked_ranges(tmp_path):
    out, _ = run_python(["-c", ANOTHER_TORCH], cwd=str(tmp_path))
    lines = out.strip().splitlines()
    assert lines[0] == "True False"
    assert lines[1] == "1"
    assert "built for torch 0.0.1" in lines[2] and "hand-marked ranges only" in lines[2]


NO_TORCH = r"""
import sys
import stepprof.profiler as sp
with sp.Profiler(scheduler=(0, 1)) as p:
    with sp.RecordEvent("by hand"):
        pass
    p.step()
print("torch" in sys.modules, "stepprof._torch_adapter" in sys.modules,
      [e.name for e in p.get_result().events(0)])
"""


def test_torch_never_imported_changes_nothing(tmp_path):
    out, _ = run_python(["-c", NO_TORCH], cwd=str(tmp_path))
    assert out.strip() == "False False ['ProfileStep#0', 'by hand']"


SHAPES = r"""
import json, sys, torch
import stepprof.profiler as sp
x, w = torch.randn(4, 8), torch.randn(8, 3)
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True) as tp:
    with sp.Profiler(scheduler=(0, 1), record_shapes=True,
                     on_trace_ready=sp.export_chrome_tracing(sys.argv[1])) as p:
        torch.nn.functional.linear(x, w.t(), None)
        torch.cat([x, x])
        x.sum(dim=0)
        x * 2
        torch.zeros(3, dtype=torch.long)
        p.step()
tp.export_chrome_trace(sys.argv[1] + "/torch.json")
print(p.trace_path)
"""


@needs_torch
def test_torch_record_shapes_gives_kinetos_input_dims_and_types(tmp_path):
    out, _ = run_python(["-c", SHAPES, str(tmp_path)], cwd=str(tmp_path))

    def ops(trace):
        return [(e["name"], e.get("args", {}).get("Input Dims"), e.get("args", {}).get("Input type"))
                for e in trace["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "cpu_op"]
    ours = ops(load_trace(out.strip().splitlines()[-1]))
    with open(tmp_path / "torch.json", encoding="utf-8") as f:  # torch's own: not stepprof's format
        theirs = ops(json.load(f))
    assert len(ours) == len(theirs) > 20
    for (name, dims, types), (t_name, t_dims, t_types) in zip(ours, theirs):
        assert (name, types) == (t_name, t_types)
        # A TensorList's shapes nest in Kineto's; stepprof writes [] for it.
        assert dims == [[] if t == "TensorList" else d for d, t in zip(t_dims, t_types)], name
    assert ("aten::mm", [[4, 8], [8, 3]], ["float", "float"]) in ours


MEMORY = r"""
import json, sys, torch
import stepprof.profiler as sp
torch.manual_seed(0)
model = torch.nn.Linear(256, 256)
def work():
    model(torch.randn(64, 256)).sum().backward()
def allocations(events):
    return sorted(e["args"]["Bytes"] for e in events if e.get("name") == "[memory]" and e["args"]["Bytes"] > 0)
work()  # the gradients exist from here on: every later pass allocates the same
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True) as tp:
    work()
tp.export_chrome_trace(sys.argv[1] + "/torch.json")
with open(sys.argv[1] + "/torch.json") as f:
    theirs = allocations(json.load(f)["traceEvents"])
with sp.Profiler(profile_memory=True, on_trace_ready=sp.export_chrome_tracing(sys.argv[1])) as p:
    work()
with open(p.trace_path) as f:
    ours = allocations(json.load(f)["traceEvents"])
print(json.dumps({"theirs": theirs, "ours": ours, "summary": "Memory Summary - Place(cpu)" in
                  p.get_result().summary_text(views=[sp.SummaryView.MemoryView])}))
"""


@needs_torch
def test_torch_profile_memory_records_torchs_allocations(tmp_path):
    out, _ = run_python(["-c", MEMORY, str(tmp_path)], cwd=str(tmp_path))
    got = json.loads(out.strip().splitlines()[-1])
    assert got["ours"] and got["ours"] == got["theirs"]
    assert 256 * 256 * 4 in got["ours"]  # the weight's gradient
    assert got["summary"]


FLOPS = r"""
import json, re, torch
import stepprof.torch_profiler as stp
x, w, b = torch.randn(16, 32), torch.randn(64, 32), torch.randn(64)
img, k = torch.randn(2, 3, 8, 8), torch.randn(4, 3, 3, 3)
def work():
    torch.nn.functional.linear(x, w, b)
    torch.mm(x, w.t())
    torch.nn.functional.conv2d(img, k, stride=2, padding=1)
    x * 2
    x + x
    torch.bmm(torch.randn(2, 3, 4), torch.randn(2, 4, 5))
tables = []
for prof in (torch.profiler, stp):
    with prof.profile(activities=[prof.ProfilerActivity.CPU], with_flops=True) as p:
        work()
    tables.append(p.key_averages().table(sort_by="count", row_limit=-1))
print(json.dumps(tables))
"""


@needs_torch
def test_torch_with_flops_counts_as_torch(tmp_path):
    out, _ = run_python(["-c", FLOPS], cwd=str(tmp_path))
    theirs, ours = json.loads(out.strip().splitlines()[-1])

    def flops(table):
        lines = table.splitlines()
        header = re.split(r"\s{2,}", lines[1].strip())
        col = header.index("Total FLOPs")
        return {re.split(r"\s{2,}", line.strip())[0]: re.split(r"\s{2,}", line.strip())[col]
                for line in lines[3:] if line and not line.startswith(("---", "Self"))}
    got = flops(ours)
    got.pop("ProfilerStep*")  # stepprof has steps without a schedule too (docs/python.md)
    assert got == flops(theirs)
    assert got["aten::addmm"] == "65536.000" and got["aten::conv2d"] == "6912.000"
    assert got["aten::bmm"] == "240.000" and got["aten::linear"] == "--"

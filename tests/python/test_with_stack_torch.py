"""with_stack and with_modules against torch.profiler on the same loop:
events().stack, export_stacks, key_averages(group_by_stack_n), the
nn.Module events and the torch-style table (python/_stepprof/pytrace.c,
python/stepprof/_torch_events.py)."""
import json
import os
import sys

import pytest

from stepprof import torch_profiler as tp

torch = pytest.importorskip("torch", reason="the torch comparisons need torch")
import torch.profiler  # noqa: E402


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(8, 8)
        self.l2 = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.l2(torch.relu(self.l1(x)))


def make_loop():
    torch.manual_seed(0)
    net = Net()
    x = torch.randn(4, 8)

    def train_step():
        net(x).sum().backward()

    def loop(prof):
        for _ in range(3):
            train_step()
            prof.step()
    return loop


def run(module, **kwargs):
    loop = make_loop()
    loop(type("P", (), {"step": lambda self: None})())  # warm up: lazy imports happen here
    with module.profile(with_stack=True, **kwargs) as prof:
        loop(prof)
    return prof


def verbose():
    """torch 2.15 fills events' stacks only with verbose=True."""
    from torch._C._profiler import _ExperimentalConfig
    return {"experimental_config": _ExperimentalConfig(verbose=True)}


def this_file():
    return os.path.basename(__file__)


def trace_of(prof, tmp_path, name="t.json"):
    path = str(tmp_path / name)
    prof.export_chrome_trace(path)
    with open(path, encoding="utf-8") as f:
        return json.load(f)["traceEvents"]


def python_events(events):
    return [e for e in events if e.get("cat") == "python_function"]


def user_frames(stack):
    return [f for f in stack if f.startswith(this_file())]


def test_op_stacks_agree_with_torch():
    theirs, ours = run(torch.profiler, **verbose()), run(tp)
    for op in ("aten::addmm", "aten::relu", "aten::linear"):
        t = [e.stack for e in theirs.events() if e.name == op]
        o = [e.stack for e in ours.events() if e.name == op]
        assert o and len(o) == len(t)
        assert [user_frames(s) for s in o] == [user_frames(s) for s in t]
        # frames outside the user's file too (torch's own, modules, built-ins)
        assert o[0][:6] == t[0][:6]
    grouped = ours.key_averages(group_by_stack_n=2)
    addmm = [g for g in grouped if g.key == "aten::addmm"]
    assert addmm and all(len(g.stack) == 2 for g in addmm)
    assert not any(g.key.startswith("nn.Module:") for g in ours.key_averages())
    assert any(g.key.startswith("nn.Module:")
               for g in ours.key_averages(include_python_functions=True))


def test_export_stacks_matches_torch_for_the_user_frames(tmp_path):
    theirs, ours = run(torch.profiler, **verbose()), run(tp)

    def folded(prof, name):
        path = str(tmp_path / name)
        prof.export_stacks(path, "self_cpu_time_total")
        out = set()
        with open(path, encoding="utf-8") as f:
            for line in f:
                frames, value = line.rstrip("\n").rsplit(" ", 1)
                assert int(value) > 0 and " " not in frames
                out.add(frames)
        return out

    mine = this_file().replace(" ", "_")
    t = {s for s in folded(theirs, "t.txt") if ";" + mine in s and "Linear" in s}
    o = {s for s in folded(ours, "o.txt") if ";" + mine in s and "Linear" in s}
    assert t and t <= {s for s in folded(ours, "o.txt")} | o
    assert o & t


def test_modules_in_trace_and_with_modules_alone(tmp_path):
    ours = run(tp)
    names = [e["name"] for e in python_events(trace_of(ours, tmp_path))]
    assert {"nn.Module: Net_0", "nn.Module: Linear_0", "nn.Module: Linear_1"} <= set(names)
    modules = [e for e in python_events(trace_of(ours, tmp_path))
               if e["name"].startswith("nn.Module: Linear_")]
    assert {e["args"]["Python module id"] for e in modules} == {0, 1}
    ops = [e for e in trace_of(ours, tmp_path) if e.get("cat") == "cpu_op" and
           e["name"] == "aten::addmm"]
    assert ops and "nn.Module: Linear_0;" in ops[0]["args"]["Call stack"]

    loop = make_loop()
    with tp.profile(with_modules=True) as prof:
        loop(prof)
    py = python_events(trace_of(prof, tmp_path, "m.json"))
    assert py and all(e["name"].startswith("nn.Module: ") for e in py)
    assert sum(e["name"] == "nn.Module: Net_0" for e in py) == 3
    assert sys.getprofile() is None


def test_record_shapes_with_stack_writes_each_key_once(tmp_path):
    ours = run(tp, record_shapes=True)
    path = str(tmp_path / "shapes.json")
    ours.export_chrome_trace(path)

    def no_duplicates(pairs):
        keys = [k for k, _ in pairs]
        assert len(keys) == len(set(keys)), keys
        return dict(pairs)

    with open(path, encoding="utf-8") as f:
        events = json.load(f, object_pairs_hook=no_duplicates)["traceEvents"]
    addmm = [e for e in events if e.get("name") == "aten::addmm"]
    assert addmm and all("Input Dims" in e["args"] and "Call stack" in e["args"] for e in addmm)


def nearest_non_python(e):
    out = []
    for c in e.cpu_children:
        out.extend(nearest_non_python(c) if c.is_python_function else [c])
    return out


def test_table_leaves_python_calls_out_and_keeps_self_times():
    ours = run(tp)
    table = ours.key_averages().table(row_limit=-1)
    assert "aten::addmm" in table and "nn.Module" not in table and "): " not in table
    # Python calls are transparent to other events' self time: a step's self
    # time excludes its ops, not the Python frames between them
    steps = [e for e in ours.events() if e.name.startswith("ProfilerStep#")]
    assert steps
    assert any(c.name.startswith("aten::") for c in nearest_non_python(steps[0]))
    for step in steps:
        below = nearest_non_python(step)
        want = max(0.0, step.cpu_time_total - sum(c.cpu_time_total for c in below))
        assert step.self_cpu_time_total == pytest.approx(want, abs=1e-6)
    py = [e for e in ours.events() if e.is_python_function and e.cpu_children]
    for e in py[:50]:  # a Python call's own self time excludes its direct children
        want = max(0.0, e.cpu_time_total - sum(c.cpu_time_total for c in e.cpu_children))
        assert e.self_cpu_time_total == pytest.approx(want, abs=1e-6)

"""Results as Python objects: the event tree and the summary tables as
data, from the C result's accessors."""
import gc
import gzip
import json

import stepprof.profiler as profiler
from stepprof.profiler import SummaryView, TracerEventType
from conftest import trace_files


def _run(**kwargs):
    with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./o"), **kwargs) as prof:
        for i in range(3):
            with profiler.RecordEvent("DataLoader", TracerEventType.Dataloader):
                pass
            with profiler.RecordEvent("forward", TracerEventType.Forward):
                with profiler.RecordEvent("matmul", TracerEventType.Operator):
                    sum(range(100))
            with profiler.RecordEvent("backward", TracerEventType.Backward):
                pass
            prof.step()
    return prof


def test_event_tree_nests_ranges_under_steps():
    result = _run().get_result()
    roots = result.tree(0)
    assert [r.name for r in roots] == [f"ProfileStep#{i}" for i in range(4)]
    first = roots[0]
    assert [c.name for c in first.children_node] == ["DataLoader", "forward", "backward"]
    assert [c.type for c in first.children_node] == [
        TracerEventType.Dataloader, TracerEventType.Forward, TracerEventType.Backward]
    forward = first.children_node[1]
    assert [c.name for c in forward.children] == ["matmul"] and forward.children[0].depth == 2
    for node in first.walk():
        assert first.start_ns <= node.start_ns <= node.end_ns <= first.end_ns
    data = result.get_data()
    assert list(data) == [t.tid for t in result.threads]
    assert [n.name for n in next(iter(data.values())).children_node] == [r.name for r in roots]


def test_flat_events_carry_parent_indexes():
    result = _run().get_result()
    events = result.events(0)
    for i, e in enumerate(events):
        if e.parent >= 0:
            assert e.parent < i and events[e.parent].depth == e.depth - 1


def test_summary_tables_as_data():
    result = _run().get_result()
    tables = result.summary_tables()
    assert SummaryView.OverView in tables
    model = result.summary_table(SummaryView.ModelView)
    assert model.title == "Model Summary"
    assert model.headers[0] == "Name" and model.headers[1] == "Calls"
    names = model.column("Name")
    assert names[0] == "ProfileStep" and "Forward" in names and "Dataloader" in names
    rec = {r["Name"].strip(): r for r in model.records()}
    assert rec["Forward"]["Calls"] == "3"
    overview = result.summary_table(SummaryView.OverView, time_unit="us")
    assert any(c[0] == "Time unit: us" for k, c in overview.lines if k == profiler.LineKind.TEXT)
    op = result.summary_table(SummaryView.OperatorView, thread_sep=True)
    assert op.column("Name") == ["matmul"] and op.records()[0]["thread"]


def test_summary_text_matches_printed_summary(capsys):
    prof = _run()
    prof.summary(views=[SummaryView.OverView, SummaryView.ModelView])
    printed = capsys.readouterr().out
    assert printed == prof.get_result().summary_text(views=[SummaryView.OverView, SummaryView.ModelView])
    assert "Overview Summary" in printed and "Model Summary" in printed
    assert "Device Summary" not in printed


def test_torch_table():
    text = _run().get_result().table_torch("cpu_time_total", 10)
    assert "ProfilerStep*" in text and "# of Calls" in text


def test_op_records_and_input_shapes_in_the_torch_table():
    """ProfilerResult.ops gives back what the span was handed, attached to
    its range; table_torch(group_by_input_shape=True) groups by it."""
    import threading
    import time
    tid = threading.get_native_id()
    with profiler.Profiler(on_trace_ready=None) as prof:
        for shapes in ((2, 3), (2, 3), (4, 5)):
            with profiler.RecordEvent("matmul", TracerEventType.Operator):
                now = time.time_ns()
                time.sleep(0.001)
            assert prof._add_op_info([(tid, now, "matmul", [("X", shapes, "float32"),
                                                            ("alpha", (), "Scalar")],
                                       "a.py(1)", 12)])
    result = prof.get_result()
    index = result.thread_index(tid)
    ops = result.ops(index)
    assert [tuple(i) for i in ops[0].inputs] == [("X", (2, 3), "float32"), ("alpha", (), "Scalar")]
    assert ops[0].inputs[0].dims == (2, 3) and ops[2].inputs[0].dims == (4, 5)
    assert [(op.op_type, op.callstack, op.flops) for op in ops] == [("matmul", "a.py(1)", 12)] * 3
    events = result.events(index)
    assert [events[op.event].name for op in ops] == ["matmul"] * 3
    text = result.table_torch("count", -1, group_by_input_shape=True)
    assert "# of Calls      Input Shapes   Total FLOPs" in text.splitlines()[1]  # torch's order
    assert any(line.split()[0] == "matmul" and "  2      [[2, 3], []]  " in line
               for line in text.splitlines())
    assert any(line.split()[0] == "matmul" and "  1      [[4, 5], []]  " in line
               for line in text.splitlines())
    assert "Input Shapes" not in result.table_torch("count", -1)


def test_memory_events_of_a_loaded_trace():
    import os
    path = os.path.join(os.path.dirname(__file__), "..", "data", "paddle_mlp.paddle_trace.json")
    result = profiler.load_profiler_result(path)
    mems = [m for i in range(len(result.threads)) for m in result.memory_events(i)]
    assert mems and {m.type for m in mems} <= {"Allocate", "Free", "ReservedAllocate",
                                                "ReservedFree"}
    assert all((m.bytes < 0) == (m.type == "Free") for m in mems if m.type in ("Allocate", "Free"))
    assert all(m.place == "Place(cpu)" for m in mems)
    assert [m.ts_ns for m in result.memory_events(0)] == sorted(m.ts_ns
                                                                for m in result.memory_events(0))


def test_result_outlives_profiler_and_exports(tmp_path):
    prof = _run()
    result = prof.get_result()
    del prof
    gc.collect()
    assert result.counters["host_dropped"] == 0
    start, end = result.span
    assert 0 < start < end
    result.export("again.json.gz", "json.gz")
    with gzip.open("again.json.gz") as f:
        trace = json.load(f)
    assert any(e.get("name") == "matmul" for e in trace["traceEvents"])


def _ranges(result):
    """Every thread's events as (name, type, start_ns, end_ns), by tid."""
    out = {}
    for i, t in enumerate(result.threads):
        evs = [(e.name, int(e.type), e.start_ns, e.end_ns) for e in result.events(i)]
        out[t.tid] = evs
    return out


def test_profiler_export_formats():
    prof = _run()
    prof.export("plain.json")
    prof.export("auto.json.gz")  # gzip from the suffix
    prof.export("tree.pb", "pb")
    with open("plain.json") as f:
        plain = json.load(f)
    with gzip.open("auto.json.gz") as f:
        zipped = json.load(f)
    assert plain.pop("traceName") == "plain.json" and zipped.pop("traceName") == "auto.json.gz"
    assert plain == zipped
    live = _ranges(prof.get_result())
    steps = [e for evs in live.values() for e in evs if e[1] == int(TracerEventType.ProfileStep)]
    assert [e[0] for e in steps] == [f"ProfileStep#{i}" for i in range(4)]
    assert sum(1 for evs in live.values() for e in evs if e[0] == "matmul") == 3
    # The JSON holds one complete event per range, with the same names and
    # the same step ranges (us with three decimals: exact ns).
    xs = [e for e in plain["traceEvents"]
          if e.get("ph") == "X" and e.get("cat") in ("cpu_op", "user_annotation")]
    assert len(xs) == sum(len(evs) for evs in live.values())
    assert sum(1 for e in xs if e["name"] == "matmul") == 3
    base = plain["baseTimeNanoseconds"]
    # torch's name for a step is ProfilerStep#N.
    json_steps = sorted((e["name"].replace("ProfilerStep#", "ProfileStep#"), base + round(e["ts"] * 1000),
                         base + round(e["ts"] * 1000) + round(e["dur"] * 1000))
                        for e in xs if e["name"].startswith("ProfilerStep#"))
    assert json_steps == sorted((e[0], e[2], e[3]) for e in steps)
    # Each file loads back to the same events: names, types and times.
    for path in ("plain.json", "auto.json.gz", "tree.pb"):
        assert _ranges(profiler.load_profiler_result(path)) == live, path


def test_tensorboard_handler_and_schedule():
    with profiler.Profiler(scheduler=profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
                           on_trace_ready=profiler.tensorboard_trace_handler("./tb", "worker0",
                                                                             use_gzip=True)) as prof:
        for _ in range(6):
            prof.step()
    files = trace_files("tb")
    assert len(files) == 1 and files[0].endswith(".pt.trace.json.gz")
    assert "worker0." in files[0]
    assert prof.trace_path.endswith(".pt.trace.json.gz")


def test_scheduler_objects_are_callable():
    sched = profiler.make_scheduler(closed=1, ready=1, record=2, repeat=1)
    assert [sched(i) for i in range(5)] == [
        profiler.ProfilerState.CLOSED, profiler.ProfilerState.READY, profiler.ProfilerState.RECORD,
        profiler.ProfilerState.RECORD_AND_RETURN, profiler.ProfilerState.CLOSED]
    torch = profiler.schedule(wait=0, warmup=0, active=1, skip_first=2)
    assert torch(1) == profiler.ProfilerState.CLOSED
    assert torch(2) == profiler.ProfilerState.RECORD_AND_RETURN


def test_names_past_the_intern_table_and_odd_names_are_recorded():
    # Past the intern table's 4096 names, names are copied per event; names
    # with NUL bytes or non-ASCII text are copied too.
    names = [f"step_name_{i}" for i in range(5000)] + ["naïve ✓", "nul\0byte"]
    with profiler.Profiler(on_trace_ready=lambda p: None) as prof:
        for name in names:
            with profiler.RecordEvent(name):
                pass
        prof.step()
    got = [e.name for e in prof.get_result().events(0) if e.type == TracerEventType.PythonUserDefined]
    # A NUL inside a name is kept as U+FFFD with the bytes after it, and
    # counted as names_cut (issue 17; it used to end the name silently).
    assert got == names[:-1] + ["nul\ufffdbyte"]
    assert prof.get_result().counters["names_cut"] == 1



def test_step_num_samples_reaches_every_saved_format():
    """profiler.step(num_samples=32) is kept on each ProfilerStep#N of the
    trace (args.num_samples) and of the .pb (SP_EVENT_FLAG_SAMPLES, the count
    in value, as events() gives them); the step closed by stop() has none."""
    from conftest import load_trace
    samples_flag = 1 << 6
    with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./o")) as prof:
        for _ in range(3):
            with profiler.RecordEvent("forward", TracerEventType.Forward):
                sum(range(100))
            prof.step(num_samples=32)
    prof.export("./run.pb", "pb")
    (path,) = trace_files("./o")
    steps = {e["name"]: e.get("args", {}) for e in load_trace(path)["traceEvents"]
             if e.get("name", "").startswith("ProfilerStep#")}
    assert [steps[f"ProfilerStep#{i}"].get("num_samples") for i in range(4)] == [32, 32, 32, None]
    for saved in (path, "./run.pb"):
        loaded = profiler.load_profiler_result(saved)
        got = [(e.name, e.value if e.flags & samples_flag else None)
               for e in loaded.events(0) if e.type == TracerEventType.ProfileStep]
        assert got == [("ProfileStep#0", 32), ("ProfileStep#1", 32), ("ProfileStep#2", 32),
                       ("ProfileStep#3", None)]


_PADDLE_READS = """
import glob
import stepprof.profiler as profiler
with profiler.Profiler(on_trace_ready=profiler.export_protobuf("./pb")) as prof:
    for _ in range(2):
        prof.step(num_samples=32)
import paddle.profiler as pp
result = pp.load_profiler_result(glob.glob("./pb/*.pb")[0])  # get_data()'s nodes live in it
print([n.name for n in next(iter(result.get_data().values())).children_node])
"""


def test_paddle_reads_a_pb_with_step_num_samples():
    """The samples flag and count ride in stepprof's own protobuf fields,
    which paddle's reader skips: paddle still loads the file, steps and all.
    In its own process, as every test that imports paddle."""
    import importlib.util
    import subprocess
    import sys
    import pytest
    if importlib.util.find_spec("paddle") is None:
        pytest.skip("paddle is not installed in this Python")
    run = subprocess.run([sys.executable, "-c", _PADDLE_READS], capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip().splitlines()[-1] == \
        "['ProfileStep#0', 'ProfileStep#1', 'ProfileStep#2']"

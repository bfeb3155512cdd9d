"""with_stack: the Python tracer (python/_stepprof/pytrace.c) records Python
calls as python_function events, torch's way, without torch: names, nesting,
threads, unwinding, a profile function the user set, references given back.
The comparisons with torch.profiler are in test_with_stack_torch.py, so these
run without torch.

Under ASan: build _core with CFLAGS="-fsanitize=address" (setup.py build_ext
into a scratch directory), put it beside a copy of python/stepprof, and run
this file with LD_PRELOAD=libasan.so: no error, and no leak report names
pytrace.c (the interpreter's own allocations at exit are reported)."""
import asyncio
import gc
import json
import os
import sys
import threading
import weakref

import pytest

from stepprof import profiler as sp
from stepprof import torch_profiler as tp


def trace_of(prof, tmp_path, name="t.json"):
    path = str(tmp_path / name)
    prof.export_chrome_trace(path)
    with open(path, encoding="utf-8") as f:
        return json.load(f)["traceEvents"]


def python_events(events, tid=None):
    return [e for e in events if e.get("cat") == "python_function" and
            (tid is None or e["tid"] == tid)]


def inner(n):
    return sum(range(n))


def outer():
    for _ in range(3):
        inner(5)


def this_file():
    return os.path.basename(__file__)


def test_records_python_calls_without_torch_named_as_torch(tmp_path):
    with tp.profile(with_stack=True) as prof:
        with tp.record_function("marked"):
            outer()
    assert sys.getprofile() is None
    events = trace_of(prof, tmp_path)
    py = python_events(events)
    names = [e["name"] for e in py]
    f = this_file()
    assert names.count(f"{f}({outer.__code__.co_firstlineno}): outer") == 1
    assert names.count(f"{f}({inner.__code__.co_firstlineno}): inner") == 3
    assert names.count("<built-in function sum>") == 3
    # nesting through Kineto's ids: sum inside inner inside outer
    by_id = {e["args"]["Python id"]: e for e in py}
    sums = [e for e in py if e["name"] == "<built-in function sum>"]
    for s in sums:
        parent = by_id[s["args"]["Python parent id"]]
        assert parent["name"].endswith(": inner")
        assert by_id[parent["args"]["Python parent id"]]["name"].endswith(": outer")
        assert parent["ts"] <= s["ts"] and s["ts"] + s["dur"] <= parent["ts"] + parent["dur"]
    # the frames running at start (this test) begin with the span
    assert any(n.endswith(": test_records_python_calls_without_torch_named_as_torch")
               for n in names)
    # the profiler's own frames are left out
    assert not any("stepprof" in n or "RecordEvent" in n for n in names)
    assert all("External id" not in e["args"] for e in py)
    marked = [e for e in events if e["name"] == "marked"]
    assert len(marked) == 1
    counters = prof.get_result().counters
    assert counters["misuse"] == 0 and counters["unmatched_ends"] == 0
    assert counters["overlap"] == 0  # the RecordEvent's own methods are not recorded


def test_without_with_stack_nothing_is_traced(tmp_path):
    with tp.profile() as prof:
        outer()
    assert python_events(trace_of(prof, tmp_path)) == []
    assert all(not e.is_python_function and not e.stack for e in prof.events())


def test_paddle_dialect_profiler_takes_with_stack(tmp_path):
    prof = sp.Profiler(with_stack=True, on_trace_ready=lambda p: None)
    prof.start()
    outer()
    prof.stop()
    assert sys.getprofile() is None
    names = [e.name for e in tp._function_events(prof.get_result()) if e.is_python_function]
    assert sum(n.endswith(": inner") for n in names) == 3


def test_users_profile_function_is_kept_with_a_warning():
    calls = []

    def mine(frame, event, arg):
        calls.append(event)

    sys.setprofile(mine)
    try:
        with pytest.warns(sp.StepprofWarning, match="already had a Python profile function"):
            with tp.profile(with_stack=True) as prof:
                outer()
        assert sys.getprofile() is mine
    finally:
        sys.setprofile(None)
    assert "call" in calls
    assert not any(e.is_python_function for e in prof.events())


def gen():
    yield 1
    raise ValueError("boom")


def raises():
    raise KeyError("x")


async def coro():
    await asyncio.sleep(0)
    return inner(3)


def test_hook_taken_off_mid_span_leaves_no_stale_calls():
    def unhook():
        sys.setprofile(None)

    with tp.profile(with_stack=True) as prof:
        inner(1)
        unhook()
        inner(2)
    names = [e.name for e in prof.events() if e.is_python_function]
    assert sum(n.endswith(": inner") for n in names) == 1
    # unhook returned after the hook was gone: it must not be closed at stop
    assert not any(n.endswith(": unhook") for n in names)


def test_generators_exceptions_and_coroutines_stay_balanced(tmp_path):
    with tp.profile(with_stack=True) as prof:
        try:
            list(gen())
        except ValueError:
            pass
        for _ in range(2):
            try:
                raises()
            except KeyError:
                pass
        assert asyncio.run(coro()) == 3
        inner(2)
    assert sys.getprofile() is None
    events = prof.events()
    py = [e for e in events if e.is_python_function]
    assert sum(e.name.endswith(": raises") for e in py) == 2
    assert sum(e.name.endswith(": gen") for e in py) >= 2  # each resume is a call, as torch's
    # the last call nests under this test, not under a frame left open
    last = [e for e in py if e.name.endswith(": inner")][-1]
    parent = last.cpu_parent
    while not parent.is_python_function:  # the step range lies between
        parent = parent.cpu_parent
    assert parent.name.endswith(": test_generators_exceptions_and_coroutines_stay_balanced")
    counters = prof.get_result().counters
    assert counters["overlap"] == 0 and counters["misuse"] == 0


def test_names_survive_the_name_table_growing(tmp_path):
    fns = []
    for i in range(1500):  # distinct code objects: the table grows several times
        scope = {}
        exec(f"def generated_{i}():\n    return {i}\n", scope)
        fns.append(scope[f"generated_{i}"])

    def around_the_growth():
        return sum(f() for f in fns)

    with tp.profile(with_stack=True) as prof:
        around_the_growth()
    names = [e["name"] for e in python_events(trace_of(prof, tmp_path))]
    assert sum(n.endswith(": around_the_growth") for n in names) == 1
    assert sum(": generated_" in n for n in names) == 1500
    assert any(n.endswith(": test_names_survive_the_name_table_growing") for n in names)


def test_other_threads_are_traced_and_unhooked(tmp_path):
    go, done = threading.Event(), threading.Event()
    profiles = []

    def worker():
        go.wait(10)
        inner(7)
        done.set()
        go.clear()
        go.wait(10)  # the span has ended by now
        profiles.append(sys.getprofile())

    t = threading.Thread(target=worker)
    t.start()
    with tp.profile(with_stack=True) as prof:
        go.set()
        assert done.wait(10)
    go.set()
    t.join(10)
    assert profiles == [None]
    py = python_events(trace_of(prof, tmp_path))
    worker_tids = {e["tid"] for e in py if e["name"].endswith(": inner")}
    assert len(worker_tids) == 1 and worker_tids != {threading.get_native_id()}


def test_names_are_released_after_the_span():
    class Thing:
        def method(self):
            return 1

    obj = Thing()
    code_owner = weakref.ref(obj)
    code, builtin = inner.__code__, len
    refs = sys.getrefcount(code), sys.getrefcount(builtin)
    with tp.profile(with_stack=True):
        obj.method()
        inner(2)
        len(())
    # the tracer's table held references to the code and the built-in while
    # the span recorded, and gave every one back at stop
    assert (sys.getrefcount(code), sys.getrefcount(builtin)) == refs
    del obj
    gc.collect()
    assert code_owner() is None
    for _ in range(50):  # start and stop leak nothing the tracer holds
        with tp.profile(with_stack=True):
            inner(1)
    assert sys.getprofile() is None

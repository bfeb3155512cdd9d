"""The hand-over of paddle's events through the protobuf paddle writes
(_paddle_capture.hand_over_pb: _ProfilerResult.save into a memory file, read
by the C core) gives the span exactly the events the walk of paddle's tree
gives: on a real paddle span both go into one stepprof span, the walk's on
thread ids moved by an offset, and each thread's (type, name, start, end)
multiset must be equal, memory events too. paddle's glog line at each save
must not reach stderr. Against a stand-in whose save fails, the capture falls
back to the walk with one StepprofWarning and the same events."""
import collections
import json
import os
import threading
import time
import types
import warnings

import pytest

import stepprof.profiler as profiler
from conftest import load_trace
from stepprof import _paddle_capture as pc
from test_paddle_capture import (  # noqa: F401 (fake_paddle: a fixture)
    _FakeTracer, _one_span, fake_paddle, needs_paddle)

#: Added to the walk's thread ids, so that its events land on threads of
#: their own in the same span (and so on the same time line) as the pb's.
OFFSET = 1 << 30  # above any Linux tid (pid_max <= 2**22), a valid trace tid


def _traced(fn):
    """paddle's host tracer run around fn(); its _ProfilerResult."""
    from paddle.base import core
    options = core.ProfilerOptions()
    options.trace_switch = 1
    tracer = core._Profiler.create(options, [])
    if tracer is None:
        pytest.skip("paddle's tracer is held by another profiler in this process")
    tracer.prepare()
    tracer.start()
    try:
        fn()
    finally:
        result = tracer.stop()
        del tracer
    return result


def _work():
    import paddle
    from paddle.profiler import RecordEvent, utils
    x = paddle.ones([8])
    for _ in range(50):
        x = x * 1.0001 + 0.5
    # paddle's RecordEvent records only while a profiler uses paddle's flag
    before, utils._is_profiler_used = utils._is_profiler_used, True
    try:
        with RecordEvent("long name " + "x" * 5000):
            x = x + 1
        with RecordEvent("naïve ünïcode ✓"):
            x = x + 1
    finally:
        utils._is_profiler_used = before
    done = []
    t = threading.Thread(target=lambda: done.append(paddle.ones([4]) * 2))
    t.start()
    t.join()


def _by_thread(result):
    out = {}
    for info in result.threads:
        out[info.tid] = collections.Counter(
            (int(e.type), e.name, e.start_ns, e.end_ns) for e in result.events(info.tid)
            if e.type != profiler.TracerEventType.ProfileStep)
    return out


@needs_paddle
def test_paddle_pb_hand_over_gives_the_walks_events(capfd):
    from paddle.base import core
    types_ = pc._type_map(core)
    prof = profiler.Profiler(on_trace_ready=lambda p: None)
    prof._paddle = None  # only the events handed over below
    prof.start()
    paddle_result = _traced(_work)
    walk = [(tid + OFFSET, t, n, s, e) for tid, t, n, s, e in pc.events_of(paddle_result, types_)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert pc.hand_over_pb(paddle_result, prof._add_paddle_pb, types_)
    prof._add_events(walk)
    prof.stop()
    threads = _by_thread(prof.get_result())
    walked = {tid - OFFSET: ev for tid, ev in threads.items() if tid >= OFFSET}
    # the main thread also holds the span's own ProfileStep, left out by _by_thread
    pb = {tid: ev for tid, ev in threads.items() if tid < OFFSET and ev}
    assert len(walked) >= 2  # the main thread and the helper thread
    assert pb == walked
    names = {n for ev in walked.values() for _, n, _, _ in ev}
    assert any(n.startswith("long name xxx") for n in names)
    assert "naïve ünïcode ✓" in names
    assert sum(c[0] == int(profiler.TracerEventType.Operator) for ev in walked.values()
               for c in ev.elements()) >= 100
    err = capfd.readouterr().err
    assert "writing profiling data" not in err


@needs_paddle
def test_paddle_pb_hand_over_memory_events_equal_the_walks(tmp_path):
    import paddle
    from paddle.base import core
    types_, mem_types = pc._type_map(core), pc._mem_type_map(core)
    prof = profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing(str(tmp_path)))
    prof._paddle = None
    prof.start()
    was_on = pc._memory_recorder(core, True)
    try:
        paddle_result = _traced(lambda: [paddle.ones([64, 64]) * 2 for _ in range(5)])
    finally:
        if not was_on:
            core.disable_memory_recorder()
    walked = []
    events = [(tid + OFFSET, t, n, s, e) for tid, t, n, s, e in
              pc.events_of(paddle_result, types_, memory=(mem_types, walked.extend))]
    assert walked, "paddle's memory recorder gave no events"
    assert pc.hand_over_pb(paddle_result, prof._add_paddle_pb, types_, mem_types)
    prof._add_events(events)
    prof._add_memory_events([(m[0] + OFFSET,) + m[1:] for m in walked])
    prof.stop()
    (path,) = [os.path.join(tmp_path, f) for f in os.listdir(tmp_path)]
    mems = collections.defaultdict(collections.Counter)
    for e in load_trace(path)["traceEvents"]:
        if e.get("name") in ("[memory]", "[reserved memory]"):
            key = (e["name"], e["ts"], json.dumps(e.get("args"), sort_keys=True))
            mems[int(e["tid"])][key] += 1
    walk_tids = [tid for tid in mems if tid >= OFFSET]
    assert walk_tids
    for tid in walk_tids:
        assert mems[tid - OFFSET] == mems[tid]


# ---- the fallback, against a stand-in paddle ----

def test_paddle_pb_hand_over_falls_back_to_the_walk(fake_paddle, monkeypatch):
    """A save that fails: one StepprofWarning, and the walk's events."""
    expected = {e.name for e in _one_span().events(threading.get_native_id())}
    assert "op" in expected
    stop = _FakeTracer.stop

    def stop_with_save(self):
        result = stop(self)

        def save(path, fmt):
            raise RuntimeError("cannot write " + path)
        result.save = save
        return result

    monkeypatch.setattr(_FakeTracer, "stop", stop_with_save)
    monkeypatch.setattr(pc, "_pb_broken", None)
    with pytest.warns(profiler.StepprofWarning, match="walks paddle's event tree"):
        r = _one_span()
    assert {e.name for e in r.events(threading.get_native_id())} == expected
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once per process
        r = _one_span()
    assert {e.name for e in r.events(threading.get_native_id())} == expected


def test_paddle_pb_hand_over_bad_protobuf_falls_back(fake_paddle, monkeypatch):
    """A save that writes no valid protobuf: nothing from it is added."""
    # a set: the stand-in's ranges may straddle the span's step boundary
    expected = {(int(e.type), e.name) for e in _one_span().events(threading.get_native_id())}
    stop = _FakeTracer.stop

    def stop_with_save(self):
        result = stop(self)

        def save(path, fmt):
            with open(path, "wb") as f:
                f.write(b"\x1a\xff\xff\xff\xff\x0f not a protobuf")
        result.save = save
        return result

    monkeypatch.setattr(_FakeTracer, "stop", stop_with_save)
    monkeypatch.setattr(pc, "_pb_broken", None)
    with pytest.warns(profiler.StepprofWarning, match="walks paddle's event tree"):
        r = _one_span()
    got = {(int(e.type), e.name) for e in r.events(threading.get_native_id())}
    assert got == expected


def test_paddle_pb_save_quietly_keeps_other_stderr(capfd, tmp_path):
    """Only paddle's "writing profiling data to" line is kept from stderr."""
    def save(path, fmt):
        os.write(2, b"I1125 20:37:27.001703 19035 serialization_logger.cc:37] writing "
                    b"profiling data to " + path.encode() + b"\n")
        os.write(2, b"something else\n")
        with open(path, "wb") as f:
            f.write(fmt.encode())
    pc._save_quietly(types.SimpleNamespace(save=save), str(tmp_path / "out"))
    assert (tmp_path / "out").read_bytes() == b"pb"
    err = capfd.readouterr().err
    assert "writing profiling data" not in err
    assert "something else\n" in err


def test_paddle_pb_save_quietly_failing_save_keeps_its_messages(capfd, tmp_path):
    def save(path, fmt):
        os.write(2, b"paddle says why\n")
        raise RuntimeError("save failed")
    with pytest.raises(RuntimeError, match="save failed"):
        pc._save_quietly(types.SimpleNamespace(save=save), str(tmp_path / "out"))
    assert "paddle says why\n" in capfd.readouterr().err
    os.write(2, b"stderr is back\n")
    assert "stderr is back" in capfd.readouterr().err


@needs_paddle
def test_paddle_pb_hand_over_cut_file_adds_nothing():
    """paddle's real protobuf cut short: ValueError, and no event added."""
    from paddle.base import core
    types_ = pc._type_map(core)
    paddle_result = _traced(_work)
    fd = os.memfd_create("whole")
    cut = os.memfd_create("cut")
    try:
        pc._save_quietly(paddle_result, f"/proc/self/fd/{fd}")
        data = os.pread(fd, os.fstat(fd).st_size, 0)
        assert len(data) > 1000
        os.write(cut, data[:len(data) * 2 // 3])
        prof = profiler.Profiler(on_trace_ready=lambda p: None)
        prof._paddle = None
        prof.start()
        with pytest.raises(ValueError, match="protobuf"):
            prof._add_paddle_pb(cut, pc._byte_map(types_), None)
        prof.stop()
    finally:
        os.close(fd)
        os.close(cut)
    r = prof.get_result()
    assert [e.name for t in r.threads for e in r.events(t.tid)
            if e.type != profiler.TracerEventType.ProfileStep] == []

"""The .pftrace export decoded with Perfetto's own trace definitions (the
`perfetto` package's perfetto_trace_pb2, with `protobuf`; python/test.sh
installs both): the events equal the JSON export's of the same span (names,
times to the ns, nesting, threads), and a GPU trace has its kernel rows on
stream tracks, flows from launches to kernels and memory counter tracks. No
trace processor binary is involved: the decoding below follows Perfetto's
documented rules (interning per sequence, incremental clocks, SLICE_END
closing the innermost open slice of its track)."""
import json
import os
import subprocess
import threading
from decimal import Decimal

import pytest

pb = pytest.importorskip(
    "perfetto.protos.perfetto.trace.perfetto_trace_pb2",
    reason="the perfetto package (PyPI) is not installed: python/test.sh installs it")

import stepprof.profiler as profiler  # noqa: E402

from conftest import work  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
CLI = os.environ.get("STEPPROF_CLI", os.path.join(ROOT, "build", "stepprof"))
MAKE_GPU_TRACE = os.path.join(ROOT, "build", "tests", "compat", "make_gpu_trace")
HOST_CATS = {"cpu_op", "user_annotation", "python_function"}


def decode(path):
    """The trace's slices, instants and counters, as Perfetto reads them:
    (tracks, slices, instants, counters, flows_out, flows_in)."""
    trace = pb.Trace()
    with open(path, "rb") as f:
        trace.ParseFromString(f.read())
    tracks, seqs = {}, {}
    slices, instants, counters = [], [], []
    open_slices = {}
    flows_out, flows_in = set(), set()
    for packet in trace.packet:
        seq = seqs.setdefault(packet.trusted_packet_sequence_id,
                              {"names": {}, "cats": {}, "clock": None, "last": 0, "track": None})
        if packet.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            seq.update(names={}, cats={}, clock=None, last=0, track=None)
        if packet.HasField("clock_snapshot"):
            for clock in packet.clock_snapshot.clocks:
                if clock.is_incremental:
                    seq["clock"], seq["last"] = clock.clock_id, clock.timestamp
        if packet.HasField("trace_packet_defaults"):
            d = packet.trace_packet_defaults
            assert d.timestamp_clock_id == seq["clock"]
            seq["track"] = d.track_event_defaults.track_uuid
        if packet.HasField("interned_data"):
            for n in packet.interned_data.event_names:
                seq["names"][n.iid] = n.name
            for c in packet.interned_data.event_categories:
                seq["cats"][c.iid] = c.name
        if packet.HasField("track_descriptor"):
            d = packet.track_descriptor
            tracks[d.uuid] = d
        if not packet.HasField("track_event"):
            continue
        if seq["clock"] is not None:
            seq["last"] += packet.timestamp
            ts = seq["last"]
        else:
            ts = packet.timestamp
        ev = packet.track_event
        track = ev.track_uuid if ev.HasField("track_uuid") else seq["track"]
        name = seq["names"][ev.name_iid] if ev.HasField("name_iid") else ev.name
        cats = [seq["cats"][i] for i in ev.category_iids] + list(ev.categories)
        flows_out.update(ev.flow_ids)
        flows_in.update(ev.terminating_flow_ids)
        if ev.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            stack = open_slices.setdefault(track, [])
            stack.append([track, name, cats, ts, None, len(stack)])
        elif ev.type == pb.TrackEvent.TYPE_SLICE_END:
            s = open_slices[track].pop()
            s[4] = ts
            slices.append(tuple(s))
        elif ev.type == pb.TrackEvent.TYPE_INSTANT:
            instants.append((track, name, cats, ts, ev))
        elif ev.type == pb.TrackEvent.TYPE_COUNTER:
            counters.append((track, ts, ev.double_counter_value))
    assert all(not s for s in open_slices.values())
    return tracks, slices, instants, counters, flows_out, flows_in


def thread_of(tracks, uuid):
    """The tid of a track's thread (itself or an ancestor), else None."""
    while uuid in tracks:
        d = tracks[uuid]
        if d.HasField("thread"):
            return d.thread.tid
        uuid = d.parent_uuid
    return None


def ns(text):
    return int(Decimal(text) * 1000)


def json_events(path):
    """The JSON's X events: (tid, name, cat, start_ns, end_ns) (times after
    the base time, as written) and its base time."""
    with open(path) as f:
        raw = f.read()
    doc = json.loads(raw, parse_float=str)
    base = int(doc["baseTimeNanoseconds"])
    out = []
    for e in doc["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") == "Trace":
            continue
        start = ns(e["ts"])
        out.append((e["tid"], e["name"], e["cat"], base + start, base + start + ns(e["dur"])))
    return doc, out


def depths(events):
    """Nesting depth of each (tid, name, start, end) by containment."""
    result = {}
    by_tid = {}
    for e in sorted(events, key=lambda e: (e[0], e[2], -e[3])):
        stack = by_tid.setdefault(e[0], [])
        while stack and stack[-1] <= e[2] and not (stack[-1] == e[2] == e[3]):
            stack.pop()
        while stack and stack[-1] < e[3]:
            stack.pop()
        result[e] = len(stack)
        stack.append(e[3])
    return result


def record_span():
    def worker():
        for _ in range(3):
            with profiler.RecordEvent("load \"batch\"\n"):
                work(50)

    prof = profiler.Profiler(scheduler=(1, 4), on_trace_ready=profiler.export_chrome_tracing("./out"))
    prof.start()
    for _ in range(5):
        t = threading.Thread(target=worker)
        t.start()
        with profiler.RecordEvent("DataPrepare"):
            work()
        with profiler.RecordEvent("forward", profiler.TracerEventType.Forward):
            with profiler.RecordEvent("matmul", profiler.TracerEventType.Operator):
                work()
            with profiler.RecordEvent("matmul", profiler.TracerEventType.Operator):
                work()
        t.join()
        prof.step()
    prof.stop()
    return prof


def test_pftrace_events_equal_the_json_export():
    prof = record_span()
    prof.export("span.json")
    prof.export("span.pftrace")
    doc, jevents = json_events("span.json")
    tracks, slices, _, _, _, _ = decode("span.pftrace")
    host = [(thread_of(tracks, s[0]), s[1], s[3], s[4]) for s in slices]
    want = [(tid, name, start, end) for tid, name, cat, start, end in jevents if cat in HOST_CATS]
    assert len(want) > 20
    assert sorted(host) == sorted(want)
    # Nesting: each slice's depth on its track is its depth by containment.
    by_containment = depths(want)
    for s in slices:
        assert s[5] == by_containment[(thread_of(tracks, s[0]), s[1], s[3], s[4])], s
    # Threads: one track per thread with its name, as the JSON names them.
    names = {d.thread.tid: d.thread.thread_name for d in tracks.values() if d.HasField("thread")}
    info = doc["ExtraInfo"]
    assert names == {int(k): v for k, v in info.items() if k.isdigit()}
    assert len(names) >= 2  # the main thread and the workers of the recorded steps
    # Categories are the event types; step names as the JSON spells them.
    cats = {s[1]: s[2] for s in slices}
    assert cats["forward"] == ["Forward"] and cats["matmul"] == ["Operator"]
    assert any(n.startswith("ProfilerStep#") for _, n, _, _ in host)
    # And it loads back to the same tables.
    loaded = profiler.load_profiler_result("span.pftrace")
    live = prof.get_result()
    assert loaded.summary_text(time_unit="us") == live.summary_text(time_unit="us")


def test_pftrace_gpu_rows_flows_and_counters():
    if not (os.path.exists(CLI) and os.path.exists(MAKE_GPU_TRACE)):
        pytest.skip(f"needs the build's {CLI} and {MAKE_GPU_TRACE} (cmake --build build)")
    subprocess.run([MAKE_GPU_TRACE, "gpu.json"], check=True)
    subprocess.run([CLI, "convert", "gpu.json", "-o", "gpu.pftrace"], check=True)
    doc, jevents = json_events("gpu.json")
    tracks, slices, instants, _, flows_out, flows_in = decode("gpu.pftrace")
    # Kernel, copy and memset rows on stream tracks under a "GPU <n>" track.
    gpu = [s for s in slices if thread_of(tracks, s[0]) is None]
    for s in gpu:
        stream = tracks[s[0]]
        assert stream.name.startswith("stream "), stream
        assert tracks[stream.parent_uuid].name.startswith("GPU ")
    want = sorted((name, start, end) for _, name, cat, start, end in jevents
                  if cat in ("kernel", "gpu_memcpy", "gpu_memset"))
    assert want and sorted((s[1], s[3], s[4]) for s in gpu) == want
    # Launches: runtime calls on the thread, each flow ending at a GPU row.
    runtime = [(s[1], s[3], s[4]) for s in slices if s[2] == ["CudaRuntime"]]
    assert sorted(runtime) == sorted((n, a, b) for _, n, c, a, b in jevents if c == "cuda_runtime")
    assert flows_out and flows_out == flows_in
    # Memory: counter tracks in bytes, fed by the [memory] instants, whose
    # totals are the JSON's.
    counter_tracks = {u for u, d in tracks.items() if d.HasField("counter")}
    assert counter_tracks and all(tracks[u].counter.unit == pb.CounterDescriptor.UNIT_SIZE_BYTES
                                  for u in counter_tracks)
    mem = [i for i in instants if i[1] == "[memory]"]
    jmem = [e for e in doc["traceEvents"] if e.get("name") == "[memory]"]
    assert mem and len(mem) == len(jmem)
    for (_, _, _, _, ev), j in zip(sorted(mem, key=lambda m: m[3]), jmem):
        assert set(ev.extra_counter_track_uuids) <= counter_tracks
        assert ev.extra_counter_values[0] == j["args"]["Total Allocated"]
    # Back to JSON, the summary is the same.
    subprocess.run([CLI, "convert", "gpu.pftrace", "-o", "back.json"], check=True)
    a = subprocess.run([CLI, "summary", "gpu.json"], check=True, capture_output=True, text=True)
    b = subprocess.run([CLI, "summary", "back.json"], check=True, capture_output=True, text=True)
    assert a.stdout == b.stdout

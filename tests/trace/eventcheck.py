"""eventcheck.py: the per-event half of tracecheck.py. Checks the
traceEvents array of a stepprof trace against trace-format.md §5-7: required
keys, pid/tid typing per track kind, slice nesting per (pid, tid) in integer
ns as Perfetto computes it, ProfilerStep names and order, External ids, flow
pairs and thread/process metadata. Every message names the event index.
Standard library only, Python 3.9+.
"""
import json
import re

INT32_MAX = 2**31 - 1
MAX_GPU_PID = 64
# Tuples, not sets: membership of an unhashable value (a list where a string
# belongs) must give False, not TypeError.
HOST_CATS = ("cpu_op", "user_annotation", "cuda_runtime", "cuda_driver",
             "cpu_instant_event")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
RANGE_CATS = ("cpu_op", "user_annotation")
PROCESS_META = ("process_name", "process_labels", "process_sort_index")
STEP_RE = re.compile(r"ProfilerStep#[0-9]+")


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def label(i, ev):
    cat = f" {ev['cat']}" if isinstance(ev.get("cat"), str) else ""
    return f"event {i} ({ev.get('ph')}{cat} {json.dumps(ev.get('name'))[:80]})"


def _is_span_marker(ev):
    return ((ev.get("ph") == "X" and ev.get("cat") == "Trace")
            or (ev.get("ph") == "i" and ev.get("s") == "g"
                and ev.get("name") == "Record Window End"))


def _id_range(ev):
    """(kind, lowest pid, highest pid, lowest tid) allowed for this event."""
    cat, ph, pid = ev.get("cat"), ev.get("ph"), ev.get("pid")
    if cat in GPU_CATS:
        return "GPU", 0, MAX_GPU_PID - 1, 0
    if ph == "M" and is_int(pid) and 0 <= pid < MAX_GPU_PID:
        return "GPU metadata", 0, MAX_GPU_PID - 1, 0
    if cat in HOST_CATS or ph in ("M", "C"):
        low_tid = 0 if ph == "M" and ev.get("name") in PROCESS_META else 1
        return "host", 1, INT32_MAX, low_tid
    return "other", 0, INT32_MAX, 0


def _check_ids(i, ev, errors):
    if _is_span_marker(ev):
        return
    kind, low_pid, high_pid, low_tid = _id_range(ev)
    for key, low, high in (("pid", low_pid, high_pid), ("tid", low_tid, INT32_MAX)):
        v = ev.get(key)
        if key in ev and not (is_int(v) and low <= v <= high):
            errors.append(f"{label(i, ev)}: {key} must be an integer in "
                          f"{low}..{high} ({kind} event), got {v!r}")
    args = ev.get("args")
    if kind == "GPU" and (not isinstance(args, dict) or args.get("device") != ev.get("pid")):
        device = args.get("device") if isinstance(args, dict) else None
        errors.append(f"{label(i, ev)}: args.device must equal pid "
                      f"{ev.get('pid')!r}, got {device!r}")


def _check_event(i, ev, errors):
    where = label(i, ev)
    required = ["ph", "name", "pid", "tid", "ts"]
    if ev.get("ph") == "X" or (ev.get("ph") == "i" and ev.get("s", "t") == "t"):
        required.append("cat")
    if ev.get("ph") == "X":
        required.append("dur")
    for key in required:
        if key not in ev:
            errors.append(f'{where}: missing "{key}"')
    for key in ("ph", "name", "cat"):
        if key in ev and not isinstance(ev[key], str):
            errors.append(f"{where}: {key} must be a string")
    for key in ("ts", "dur"):
        if key in ev and not (is_num(ev[key]) and ev[key] >= 0):
            errors.append(f"{where}: {key} must be a number >= 0, got {ev[key]!r}")
    if ev.get("bp") == "e" and ev.get("ph") != "f":
        errors.append(f'{where}: only flow ends (ph "f") may carry "bp":"e"')
    _check_ids(i, ev, errors)


def events_of(events):
    return [(i, ev) for i, ev in enumerate(events) if isinstance(ev, dict)]


def _interval(ev):
    """Integer-ns [start, end) as Perfetto computes it, or None."""
    ts, dur = ev.get("ts"), ev.get("dur")
    if not (is_num(ts) and is_num(dur)):
        return None
    start = round(ts * 1000)
    return start, start + round(dur * 1000)


def _id_of(v):
    """v when it can name a track (int or string), else None."""
    return v if isinstance(v, (int, str)) and not isinstance(v, bool) else None


def track_of(ev):
    pid, tid = _id_of(ev.get("pid")), _id_of(ev.get("tid"))
    return (pid, tid) if pid is not None and tid is not None else None


def _check_nesting(events, errors):
    tracks = {}
    for i, ev in events:
        span, track = _interval(ev), track_of(ev)
        if ev.get("ph") == "X" and span and track is not None:
            tracks.setdefault(track, []).append((span[0], -span[1], i))
    for (pid, tid), slices in tracks.items():
        stack = []
        for start, neg_end, i in sorted(slices):
            end = -neg_end
            while stack and stack[-1][1] <= start:
                stack.pop()
            if stack and end > stack[-1][1]:
                j, top_end = stack[-1]
                errors.append(f"events {j} and {i} partially overlap on track pid "
                              f"{pid!r} tid {tid!r}: event {i} starts at {start} ns, "
                              f"inside event {j} which ends at {top_end} ns, and "
                              f"ends later at {end} ns")
                continue
            stack.append((i, end))


def _check_steps(events, errors):
    """Host ProfilerStep ranges: one thread, never overlapping. The
    gpu_user_annotation spans named after a step (trace-format.md §8) lie on
    stream tracks and are not steps."""
    steps, tracks = [], set()
    for i, ev in events:
        name = ev.get("name")
        if not (isinstance(name, str) and name.startswith("ProfilerStep")):
            continue
        if ev.get("cat") == "gpu_user_annotation":
            continue
        if not STEP_RE.fullmatch(name):
            errors.append(f"{label(i, ev)}: step name must be ProfilerStep#<digits> "
                          "with nothing after the number")
        args = ev.get("args")
        if isinstance(args, dict) and "num_samples" in args:
            n = args["num_samples"]
            if not (isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 2 ** 53):
                errors.append(f"{label(i, ev)}: args.num_samples must be an integer in "
                              f"0..2^53, got {n!r}")
        span = _interval(ev)
        if ev.get("ph") == "X" and span:
            steps.append((span[0], span[1], i))
            tracks.add(track_of(ev))
    if len(tracks) > 1:
        errors.append(f"ProfilerStep ranges lie on {len(tracks)} threads, expected one")
    last_end, last_i = None, None
    for start, end, i in sorted(steps):
        if last_end is not None and start < last_end:
            errors.append(f"steps overlap: event {i} starts at {start} ns before "
                          f"event {last_i} ends at {last_end} ns")
        if last_end is None or end > last_end:
            last_end, last_i = end, i


def _check_external_ids(events, errors):
    """Host ranges carry unique positive External ids; every one of them
    when the file links records by id (it holds CUDA calls or device
    records), else only where written (trace-format.md §6)."""
    linked = any(ev.get("cat") in GPU_CATS + ("cuda_runtime", "cuda_driver") for _, ev in events)
    seen = {}
    for i, ev in events:
        if ev.get("ph") != "X" or ev.get("cat") not in RANGE_CATS:
            continue
        args = ev.get("args")
        if "args" in ev and not isinstance(args, dict):
            errors.append(f"{label(i, ev)}: args must be an object, got {args!r}")
            continue
        ext = args.get("External id") if isinstance(args, dict) else None
        if ext is None and not linked:
            continue
        if not (is_int(ext) and ext > 0):
            errors.append(f'{label(i, ev)}: host range needs a positive integer '
                          f'"External id", got {ext!r}')
        elif ext in seen:
            errors.append(f"{label(i, ev)}: External id {ext} already used by "
                          f"event {seen[ext]}")
        else:
            seen[ext] = i


def _check_flows(events, errors):
    starts, ends = {}, {}
    for i, ev in events:
        ph = ev.get("ph")
        if ph not in ("s", "f"):
            continue
        for key in ("cat", "id") if ph == "s" else ("id",):
            if key not in ev:
                errors.append(f'{label(i, ev)}: flow event missing "{key}"')
        if ph == "f" and ev.get("bp") != "e":
            errors.append(f'{label(i, ev)}: flow end needs "bp":"e"')
        fid = ev.get("id")
        if isinstance(fid, (int, str)):
            (starts if ph == "s" else ends).setdefault(fid, []).append(i)
    for table, what in ((starts, "starts"), (ends, "ends")):
        for fid, where in table.items():
            if len(where) > 1:
                errors.append(f"flow id {fid!r} has {len(where)} {what} (events "
                              f"{', '.join(map(str, where))}); Perfetto: flow_duplicate_id")
    for fid, where in ends.items():
        if fid not in starts:
            errors.append(f"flow id {fid!r}: end (event {where[0]}) has no start")
    for fid, where in starts.items():
        if fid not in ends:
            errors.append(f"flow id {fid!r}: start (event {where[0]}) has no end")


def _check_metadata(events, errors):
    named_pids = {_id_of(ev.get("pid")) for _, ev in events
                  if ev.get("ph") == "M" and ev.get("name") == "process_name"}
    named_threads = {track_of(ev) for _, ev in events
                     if ev.get("ph") == "M" and ev.get("name") == "thread_name"}
    host_pids = {_id_of(ev.get("pid")) for _, ev in events if ev.get("cat") in HOST_CATS}
    reported = set()
    for i, ev in events:
        pid, track = _id_of(ev.get("pid")), track_of(ev)
        if is_int(pid) and pid not in named_pids and pid not in reported:
            reported.add(pid)
            errors.append(f"pid {pid} (first: event {i}) has no process_name metadata event")
        if (ev.get("ph") == "X" and pid is not None and pid in host_pids and track
                and track not in named_threads and track not in reported):
            reported.add(track)
            errors.append(f"thread pid {pid!r} tid {ev.get('tid')!r} has X events "
                          f"(first: event {i}) but no thread_name metadata event")


def check_events(event_list, errors):
    for i, ev in enumerate(event_list):
        if isinstance(ev, dict):
            _check_event(i, ev, errors)
        else:
            errors.append(f"event {i} is not an object")
    events = events_of(event_list)
    for check in (_check_nesting, _check_steps, _check_external_ids,
                  _check_flows, _check_metadata):
        check(events, errors)

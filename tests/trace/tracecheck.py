#!/usr/bin/env python3
"""tracecheck.py: checks a stepprof Chrome-trace JSON file against
shared/reference/trace-format.md (Kineto's dialect). Tests import it and CI
runs it as a command on the traces stepprof writes.

load_trace() reads the bytes (gzip by magic), rejects invalid UTF-8 and
non-finite numbers; check_trace() returns one message per problem, naming the
event index, and never raises on a parsed object. Some checks read the raw
text because consumers do: HTA finds the rank with a regex, Perfetto sniffs
the leading '{"' and converts ts/dur with llround(v * 1000).
Standard library only, Python 3.9+.
"""
import argparse
import bisect
import gzip
import json
import math
import re
import sys
from collections import Counter

import eventcheck
from eventcheck import check_events, events_of, is_int, is_num, label, track_of

FIRST_KEYS = ["schemaVersion", "deviceProperties", "distributedInfo"]
LAST_KEYS = ["displayTimeUnit", "baseTimeNanoseconds", "traceEvents", "traceName"]
COUNTER_KEYS = [
    "host_dropped", "cupti_dropped", "discarded_records", "zero_timestamp",
    "out_of_window", "unattributed", "overlap", "straddling_runtime",
    "duplicate_correlation", "names_cut", "invalid_utf8", "misuse"]
HTA_RANK_RE = re.compile(r'"rank":\s+(\d+)')
TIME_KEY_RE = re.compile(r'"(ts|dur)"[ \t\r\n]*:[ \t\r\n]*')
TIME_VALUE_RE = re.compile(r'-?[0-9]+\.[0-9]{3}(?![0-9.eE])')
_LITERAL_RE = re.compile(r"[^,}\]\s]{0,30}")
_WS_RE = re.compile(r"[ \t\r\n]*")
_DECODER = json.JSONDecoder()


KERNEL_ARGS = ("queued", "device", "context", "stream", "correlation",
               "registers per thread", "shared memory", "blocks per SM",
               "warps per SM", "grid", "block", "est. achieved occupancy %")
COPY_ARGS = ("device", "context", "stream", "correlation", "bytes",
             "memory bandwidth (GB/s)")
RUNTIME_CATS = ("cuda_runtime", "cuda_driver")
DEVICE_PROPERTY_KEYS = [
    "id", "name", "totalGlobalMem", "computeMajor", "computeMinor",
    "maxThreadsPerBlock", "maxThreadsPerMultiprocessor", "regsPerBlock",
    "warpSize", "sharedMemPerBlock", "numSms", "regsPerMultiprocessor",
    "sharedMemPerBlockOptin", "sharedMemPerMultiprocessor"]


class TraceError(ValueError):
    """The file cannot be read as one JSON value that stepprof may write."""


# ---------------------------------------------------------------- loading

def _reject_constant(name):
    raise TraceError(f"{name} is not valid JSON (floats must be finite)")


def _finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise TraceError(f"number {text} is not a finite double")
    return value


def parse_trace_text(raw):
    """Parses raw text; a leading BOM is skipped here so that check_trace can
    report it along with everything else."""
    text = raw[1:] if raw.startswith("\ufeff") else raw
    try:
        return json.loads(text, parse_constant=_reject_constant,
                          parse_float=_finite_float)
    except TraceError:
        raise
    except ValueError as e:
        raise TraceError(f"invalid JSON: {e}") from None


def load_trace(path):
    """Returns (raw_text, obj) for a .json or gzipped file; raises TraceError
    for a corrupt gzip stream, invalid UTF-8, invalid JSON or NaN/Infinity."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as e:
            raise TraceError(f"corrupt gzip stream: {e}") from None
    try:
        raw = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TraceError(f"invalid UTF-8 at byte {e.start}") from None
    return raw, parse_trace_text(raw)


# ------------------------------------------------------------ raw layout

def _skip_ws(text, pos):
    return _WS_RE.match(text, pos).end()


def _members(text, pos):
    """Yields (key, separator text, value offset) for each member of the JSON
    object at text[pos]; a value is decoded (skipped) only when the caller
    asks for the next member, so stopping at traceEvents costs little."""
    pos = _skip_ws(text, pos + 1)
    while text[pos] != "}":
        key, pos = _DECODER.raw_decode(text, pos)
        start = _skip_ws(text, _skip_ws(text, pos) + 1)
        yield key, text[pos:start], start
        _, pos = _DECODER.raw_decode(text, start)
        pos = _skip_ws(text, pos)
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)


def _top_member_start(raw, wanted):
    """Offset of the value of top-level key `wanted` in raw, or None."""
    pos = _skip_ws(raw, 1 if raw.startswith("\ufeff") else 0)
    if not raw.startswith("{", pos):
        return None
    return next((start for key, _, start in _members(raw, pos) if key == wanted), None)


def _element_starts(text, pos):
    """(offsets of the elements, end offset) of the JSON array at text[pos]."""
    starts = []
    pos = _skip_ws(text, pos + 1)
    while text[pos] != "]":
        starts.append(pos)
        _, pos = _DECODER.raw_decode(text, pos)
        pos = _skip_ws(text, pos)
        if text[pos] == ",":
            pos = _skip_ws(text, pos + 1)
    return starts, pos + 1


def _check_start(raw, errors):
    if raw.startswith("\ufeff"):
        errors.append("text begins with a UTF-8 BOM: Perfetto needs a leading '{\"'")
    elif not raw.lstrip(" \t\r\n").startswith('{"'):
        errors.append("text does not begin with '{\"' (whitespace allowed before)")


def _check_distributed_text(raw, errors):
    start = _top_member_start(raw, "distributedInfo")
    if start is None or raw[start] != "{":
        return
    for key, sep, _ in _members(raw, start):
        if not re.fullmatch(r":\s+", sep):
            errors.append(f'distributedInfo: "{key}" must be followed by a colon '
                          f'and a space, found {sep!r}')
    end = _DECODER.raw_decode(raw, start)[1]
    m = HTA_RANK_RE.search(raw)
    if m is None:
        errors.append('no match for HTA\'s regex "rank":\\s+(\\d+): '
                      'HTA falls back to rank 0')
    elif not start < m.start() < end:
        errors.append('the first "rank": match is not inside distributedInfo '
                      f"(offset {m.start()}): HTA would read rank {m.group(1)}")


def _event_locator(raw):
    """Returns a function mapping a text offset to a traceEvents index."""
    start = _top_member_start(raw, "traceEvents")
    if start is None or raw[start] != "[":
        return lambda offset: -1
    starts, end = _element_starts(raw, start)
    return lambda offset: bisect.bisect_right(starts, offset) - 1 if offset < end else -1


def _check_time_text(raw, event_list, errors):
    locate = None
    for m in TIME_KEY_RE.finditer(raw):
        if TIME_VALUE_RE.match(raw, m.end()):
            continue
        locate = locate or _event_locator(raw)
        literal = _LITERAL_RE.match(raw, m.end()).group(0)
        index = locate(m.start())
        where = f"offset {m.start()}"
        if 0 <= index < len(event_list) and isinstance(event_list[index], dict):
            where = label(index, event_list[index])
        errors.append(f'{where}: "{m.group(1)}" written as {literal}, needs exactly '
                      "3 decimals (<integer us>.<3-digit ns>)")


# ------------------------------------------------------------- top level

def _check_key_order(obj, errors):
    keys = list(obj)
    missing = [k for k in FIRST_KEYS + LAST_KEYS if k not in obj]
    if missing:
        errors.append("missing top-level key(s): " + ", ".join(missing))
    elif keys[:3] != FIRST_KEYS or keys[-4:] != LAST_KEYS:
        errors.append("top-level keys out of order: expected " + ", ".join(FIRST_KEYS)
                      + ", other keys, " + ", ".join(LAST_KEYS) + "; got " + ", ".join(keys))


def _check_distributed(info, errors):
    if not isinstance(info, dict):
        errors.append("distributedInfo must be an object")
        return
    for key in ("rank", "world_size"):
        if key not in info:
            errors.append(f'distributedInfo lacks "{key}"')
    rank, size = info.get("rank"), info.get("world_size")
    # §2 item 3: the real backend of a distributed run; none in a single process.
    if is_int(size) and size > 1 and not (isinstance(info.get("backend"), str) and info["backend"]):
        errors.append('distributedInfo lacks "backend" in a distributed run')
    if size == 1 and "backend" in info:
        errors.append(f'distributedInfo has a backend ({info["backend"]!r}) in a single process')
    if "rank" in info and not (is_int(rank) and rank >= 0):
        errors.append(f"distributedInfo.rank must be a non-negative integer, got {rank!r}")
    if "world_size" in info and not (is_int(size) and size > 0):
        errors.append(f"distributedInfo.world_size must be a positive integer, got {size!r}")


def _check_device_keys(i, dev, errors):
    """The keys of §2 in their order (stepprof writes them all; other writers,
    like the §10.1 example, may leave some out); the plugin needs name,
    totalGlobalMem and the compute capability."""
    known = [k for k in dev if k in DEVICE_PROPERTY_KEYS]
    if known != sorted(known, key=DEVICE_PROPERTY_KEYS.index):
        errors.append(f"deviceProperties[{i}] keys out of order: expected "
                      + ", ".join(DEVICE_PROPERTY_KEYS) + "; got " + ", ".join(dev))
    missing = [k for k in DEVICE_PROPERTY_KEYS[:5] if k not in dev]
    if missing:
        errors.append(f"deviceProperties[{i}] lacks " + ", ".join(missing))


def _check_top_types(obj, errors):
    checks = [
        ("schemaVersion", lambda v: is_int(v) and v == 1, "the integer 1"),
        ("deviceProperties", lambda v: isinstance(v, list), "an array"),
        ("displayTimeUnit", lambda v: v == "ms", '"ms"'),
        ("baseTimeNanoseconds", lambda v: is_int(v) and v >= 0, "a non-negative integer"),
        ("traceEvents", lambda v: isinstance(v, list), "an array"),
        ("traceName", lambda v: isinstance(v, str), "a string")]
    for key, ok, what in checks:
        if key in obj and not ok(obj[key]):
            errors.append(f"{key} must be {what}, got {obj[key]!r}"[:200])
    for flag in ("record_shapes", "profile_memory", "with_stack", "with_flops"):
        if flag in obj and not (is_int(obj[flag]) and obj[flag] == 1):
            errors.append(f"{flag} must be the integer 1 as Kineto writes it, got {obj[flag]!r}")
    if "distributedInfo" in obj:
        _check_distributed(obj["distributedInfo"], errors)
    for i, dev in enumerate(obj.get("deviceProperties") or []):
        if not isinstance(dev, dict) or dev.get("id", i) != i:
            errors.append(f"deviceProperties[{i}] must be an object with id {i} "
                          "(the plugin indexes it by position)")
        else:
            _check_device_keys(i, dev, errors)


def _check_counters(obj, errors):
    if "stepprof_counters" not in obj:
        return
    counters = obj["stepprof_counters"]
    if not isinstance(counters, dict):
        errors.append("stepprof_counters must be an object")
        return
    keys = list(counters)[:len(COUNTER_KEYS)]
    for n, want in enumerate(COUNTER_KEYS):
        got = keys[n] if n < len(keys) else None
        if got != want:
            errors.append(f'stepprof_counters: key #{n + 1} must be "{want}", got '
                          f"{got!r}; expected order: " + ", ".join(COUNTER_KEYS))
            break
    for key, value in counters.items():
        if not (is_int(value) and value >= 0):
            errors.append(f'stepprof_counters["{key}"] must be a non-negative '
                          f"integer, got {value!r}")


# ------------------------------------------------------------------ GPU


def _int_list3(v):
    return isinstance(v, list) and len(v) == 3 and all(is_int(x) and x >= 0 for x in v)


def _check_gpu_args(i, ev, errors):
    cat, args = ev.get("cat"), ev.get("args")
    if not isinstance(args, dict):
        errors.append(f"{label(i, ev)}: needs args")
        return
    required = {"kernel": KERNEL_ARGS, "gpu_memcpy": COPY_ARGS, "gpu_memset": COPY_ARGS,
                "cuda_runtime": ("cbid", "correlation"),
                "cuda_driver": ("cbid", "correlation")}[cat]
    missing = [k for k in required if k not in args]
    if missing:
        errors.append(f"{label(i, ev)}: args lack " + ", ".join(f'"{k}"' for k in missing))
    for key in required:
        v = args.get(key)
        if key not in args:
            continue
        if key in ("grid", "block"):
            ok, what = _int_list3(v), "a list of 3 non-negative integers"
        elif key in ("blocks per SM", "warps per SM", "memory bandwidth (GB/s)"):
            ok, what = is_num(v) and v >= 0, "a number >= 0"
        elif key == "est. achieved occupancy %":
            ok, what = is_int(v) and 0 <= v <= 100, "an integer in 0..100"
        else:
            ok, what = is_int(v) and v >= 0, "a non-negative integer"
        if not ok:
            errors.append(f'{label(i, ev)}: args["{key}"] must be {what}, got {v!r}')
    ext = args.get("External id")
    if "External id" in args and not (is_int(ext) and ext > 0):
        errors.append(f'{label(i, ev)}: "External id" must be a positive integer, got {ext!r}')
    for key in ("stream",):
        if key in args and args[key] != ev.get("tid"):
            errors.append(f"{label(i, ev)}: args.stream must equal tid "
                          f"{ev.get('tid')!r}, got {args[key]!r}")


def _check_flow_placement(event_list, i, ev, errors):
    """A flow event comes right after the slice it belongs to: same track, same
    start, and that slice's correlation is the flow id."""
    prev = event_list[i - 1] if i > 0 else None
    args = prev.get("args") if isinstance(prev, dict) else None
    if not (isinstance(prev, dict) and prev.get("ph") == "X"
            and track_of(prev) == track_of(ev) and prev.get("ts") == ev.get("ts")
            and isinstance(args, dict) and args.get("correlation") == ev.get("id")):
        errors.append(f"{label(i, ev)}: flow event must follow its slice (same pid, tid, "
                      f"ts, and args.correlation == id {ev.get('id')!r})")
    if ev.get("ph") == "s" and prev is not None and prev.get("cat") not in RUNTIME_CATS:
        errors.append(f"{label(i, ev)}: ac2g flow must start on a runtime/driver call")
    if ev.get("ph") == "f" and prev is not None and prev.get("cat") not in eventcheck.GPU_CATS:
        errors.append(f"{label(i, ev)}: ac2g flow must end on a kernel, memcpy or memset")


def _check_gpu(event_list, errors):
    """trace-format.md §5-8 for GPU data: typed ids, the args of §6, flows
    placed after their slices, and one External id per correlation."""
    externals = {}
    for i, ev in events_of(event_list):
        cat = ev.get("cat")
        if ev.get("ph") in ("s", "f") and cat == "ac2g":
            _check_flow_placement(event_list, i, ev, errors)
            continue
        if ev.get("ph") != "X":
            continue
        if cat == "gpu_user_annotation":
            for key in ("pid", "tid"):
                if not is_int(ev.get(key)):
                    errors.append(f"{label(i, ev)}: {key} must be an integer")
            ext = (ev.get("args") or {}).get("External id") if isinstance(ev.get("args"), dict) else None
            if not (is_int(ext) and ext > 0):
                errors.append(f'{label(i, ev)}: needs a positive integer "External id"')
            continue
        if cat not in eventcheck.GPU_CATS and cat not in RUNTIME_CATS:
            continue
        _check_gpu_args(i, ev, errors)
        args = ev.get("args")
        if not isinstance(args, dict) or not is_int(args.get("correlation")):
            continue
        corr, ext = args["correlation"], args.get("External id")
        if corr in externals and externals[corr][0] != ext and ext is not None \
                and externals[corr][0] is not None:
            errors.append(f"{label(i, ev)}: External id {ext!r} differs from {externals[corr][0]!r} "
                          f"of event {externals[corr][1]} with correlation {corr}")
        elif corr not in externals or externals[corr][0] is None:
            externals[corr] = (ext, i)


def check_trace(raw_text, obj, path=None):
    """Returns a list of error messages, empty when the trace is valid; each
    message starts with "path: " when a path is given."""
    errors = []
    _check_start(raw_text, errors)
    if not isinstance(obj, dict):
        errors.append("top-level JSON value must be an object")
    else:
        _check_key_order(obj, errors)
        _check_top_types(obj, errors)
        _check_counters(obj, errors)
        _check_distributed_text(raw_text, errors)
        event_list = obj.get("traceEvents")
        event_list = event_list if isinstance(event_list, list) else []
        _check_time_text(raw_text, event_list, errors)
        check_events(event_list, errors)
        _check_gpu(event_list, errors)
    return [f"{path}: {e}" for e in errors] if path else errors


def summarize(obj):
    """Counts for tests: events, per ph, per cat, per (pid, tid), the number
    of threads (integer tracks with non-metadata events) and the names."""
    events = [ev for _, ev in events_of(obj.get("traceEvents") or [])]
    tracks = Counter(t for t in map(track_of, events) if t is not None)
    threads = {track_of(ev) for ev in events if ev.get("ph") != "M"
               and is_int(ev.get("pid")) and is_int(ev.get("tid"))}
    text = lambda ev, key: ev.get(key) if isinstance(ev.get(key), str) else None
    return {"events": len(events),
            "ph": dict(Counter(text(ev, "ph") for ev in events)),
            "cat": dict(Counter(text(ev, "cat") for ev in events if "cat" in ev)),
            "tracks": dict(tracks),
            "threads": len(threads),
            "names": [ev.get("name") for ev in events]}


# ------------------------------------------------------------------- CLI

def _counter_arg(text):
    key, sep, value = text.partition("=")
    if not sep or not key or not value.isdigit():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE with an integer VALUE, got {text!r}")
    return key, int(value)


def _expectations(obj, args):
    errors = []
    summary = summarize(obj) if isinstance(obj, dict) else {"events": 0, "names": []}
    if summary["events"] < args.min_events:
        errors.append(f"{summary['events']} events, expected at least {args.min_events}")
    names = {n for n in summary["names"] if isinstance(n, str)}
    errors += [f"no event named {n!r}" for n in args.expect_name if n not in names]
    counters = obj.get("stepprof_counters") if isinstance(obj, dict) else None
    counters = counters if isinstance(counters, dict) else {}
    for key, value in args.expect_counter:
        if counters.get(key) != value:
            errors.append(f"stepprof_counters[{key!r}] is {counters.get(key)!r}, expected {value}")
    return errors


def _check_file(path, args):
    try:
        raw, obj = load_trace(path)
    except (OSError, TraceError) as e:
        print(f"FAIL {path}: {e}")
        return False
    errors = check_trace(raw, obj) + _expectations(obj, args)
    if errors:
        print(f"FAIL {path}: {len(errors)} error(s)")
        for e in errors:
            print(f"  {path}: {e}")
        return False
    s = summarize(obj)
    print(f"ok {path}: {s['events']} events on {s['threads']} threads")
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description="Check stepprof Chrome-trace JSON "
                                     "files against trace-format.md.")
    parser.add_argument("files", nargs="+", metavar="FILE")
    parser.add_argument("--min-events", type=int, default=0, metavar="N")
    parser.add_argument("--expect-name", action="append", default=[], metavar="NAME")
    parser.add_argument("--expect-counter", action="append", default=[],
                        type=_counter_arg, metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    results = [_check_file(path, args) for path in args.files]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())

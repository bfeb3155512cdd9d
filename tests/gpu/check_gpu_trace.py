#!/usr/bin/env python3
"""check_gpu_trace.py: holds a stepprof GPU trace against what the program
that made it says it did (examples/gpu_train prints its own count of kernels,
copies and memsets in the recorded steps, and their kernel time measured with
cudaEvents). Checks, per trace-format.md §6-7:

  - the number of "kernel", "gpu_memcpy" and "gpu_memset" events equals the
    program's counts;
  - every correlation id of those device records (with dur > 0) has exactly
    one ac2g flow end "f" (with "bp": "e"), on the earliest such record of the
    id (same pid, tid and ts), and exactly one flow start "s" with that id,
    lying on a "cuda_runtime" event whose args.correlation is the id (same
    pid, tid and ts); no flow start or end lacks its partner;
  - the kernels' durations add up to the program's kernel time within a
    tolerance (5% by default).

Usage:
  check_gpu_trace.py TRACE --kernels K --memcpys M --memsets S --kernel-time-us T
  check_gpu_trace.py TRACE --program-output FILE   (reads the "gpu_train: ..." line)

Prints one line per check and a last machine-readable line
"check_gpu_trace: ok|FAIL kernels=... memcpys=... memsets=... kernel_time_us=... flows=...";
exits 0 if every check passed, 1 otherwise, 2 on bad usage or an unreadable
trace. Tests import check() and expected_from_output(). Standard library
only, Python 3.9+.
"""
import argparse
import gzip
import json
import re
import sys
from collections import defaultdict

DEVICE_CATS = {"kernel": "kernels", "gpu_memcpy": "memcpys", "gpu_memset": "memsets"}
SUMMARY_RE = re.compile(
    r"^gpu_train: recorded_steps=(\d+) kernels=(\d+) memcpys=(\d+) memsets=(\d+) "
    r"kernel_time_us=([0-9.]+) .*?trace=(.*)$", re.M)


def load(path):
    """The trace's top-level object; gzip is told by its magic bytes."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data.decode("utf-8"))


def expected_from_output(text):
    """The counts in the last "gpu_train: recorded_steps=..." line of a
    program's output, as a dict, or None if there is no such line."""
    found = SUMMARY_RE.findall(text)
    if not found:
        return None
    steps, k, m, s, t, trace = found[-1]
    return {"recorded_steps": int(steps), "kernels": int(k), "memcpys": int(m),
            "memsets": int(s), "kernel_time_us": float(t), "trace": trace.strip()}


def ns(v):
    """ts/dur in us, as integer ns the way Perfetto reads them."""
    return round(v * 1000) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def where(ev):
    return (ev.get("pid"), ev.get("tid"), ns(ev.get("ts")))


def describe(ev):
    return (f"{ev.get('ph')} {ev.get('cat')} {json.dumps(ev.get('name'))[:60]} "
            f"pid={ev.get('pid')} tid={ev.get('tid')} ts={ev.get('ts')}")


def check(trace, expected, tolerance=0.05, out=sys.stdout):
    """Runs every check on a parsed trace; expected holds kernels, memcpys,
    memsets and kernel_time_us. Returns (errors, figures): the list of failed
    checks' messages, and what the trace holds."""
    errors = []
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        return ["the trace has no traceEvents array"], {}
    events = [e for e in events if isinstance(e, dict)]

    device = [e for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_CATS]
    runtime = defaultdict(list)  # correlation -> cuda_runtime events
    starts, ends = defaultdict(list), defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") == "cuda_runtime":
            corr = (e.get("args") or {}).get("correlation")
            runtime[corr].append(e)
        elif e.get("cat") == "ac2g" and e.get("ph") == "s":
            starts[e.get("id")].append(e)
        elif e.get("cat") == "ac2g" and e.get("ph") == "f":
            ends[e.get("id")].append(e)

    def report(ok, text):
        print(("ok    " if ok else "FAIL  ") + text, file=out)
        if not ok:
            errors.append(text)

    # Counts.
    figures = {key: 0 for key in DEVICE_CATS.values()}
    for e in device:
        figures[DEVICE_CATS[e["cat"]]] += 1
    for cat, key in DEVICE_CATS.items():
        report(figures[key] == expected[key],
               f'{figures[key]} "{cat}" events, the program counted {expected[key]}')

    # Flows: group device records by correlation; the earliest with dur > 0
    # carries the flow end.
    by_corr = defaultdict(list)
    no_corr = 0
    for e in device:
        corr = (e.get("args") or {}).get("correlation")
        if corr is None:
            no_corr += 1
        else:
            by_corr[corr].append(e)
    report(no_corr == 0, f"{no_corr} device events without args.correlation")
    problems = []
    zero_only = 0
    for corr, recs in by_corr.items():
        timed = [e for e in recs if (ns(e.get("dur")) or 0) > 0]
        if not timed:
            zero_only += 1  # no flow is written for these (trace-format.md §7)
            continue
        first = min(timed, key=lambda e: ns(e.get("ts")) or 0)
        f, s = ends.get(corr, []), starts.get(corr, [])
        if len(f) != 1:
            problems.append(f"correlation {corr}: {len(f)} flow ends, want 1 ({describe(first)})")
        elif where(f[0]) != where(first):
            problems.append(f"correlation {corr}: flow end at {where(f[0])}, "
                            f"the earliest device record at {where(first)}")
        elif f[0].get("bp") != "e":
            problems.append(f"correlation {corr}: flow end without \"bp\": \"e\"")
        if len(s) != 1:
            problems.append(f"correlation {corr}: {len(s)} flow starts, want 1")
            continue
        if "bp" in s[0]:
            problems.append(f"correlation {corr}: flow start carries \"bp\"")
        launches = runtime.get(corr, [])
        if len(launches) != 1:
            problems.append(f"correlation {corr}: {len(launches)} cuda_runtime events, want 1")
        elif where(launches[0]) != where(s[0]):
            problems.append(f"correlation {corr}: flow start at {where(s[0])}, "
                            f"its cuda_runtime event {describe(launches[0])}")
    for corr in ends:
        if corr not in starts:
            problems.append(f"flow end {corr} has no flow start")
    for corr in starts:
        if corr not in ends:
            problems.append(f"flow start {corr} has no flow end")
    for text in problems[:20]:
        print("      " + text, file=out)
    if len(problems) > 20:
        print(f"      ... and {len(problems) - 20} more", file=out)
    linked = len(by_corr) - zero_only
    report(not problems, f"{linked} launches linked by ac2g flows to cuda_runtime events "
                         f"({len(problems)} problems, {zero_only} zero-length records without flows)")
    figures["flows"] = sum(len(v) for v in ends.values())

    # Kernel time.
    total_us = sum((ns(e.get("dur")) or 0) for e in device if e["cat"] == "kernel") / 1000.0
    figures["kernel_time_us"] = total_us
    want = expected["kernel_time_us"]
    off = abs(total_us - want) / want if want > 0 else (0.0 if total_us == 0 else float("inf"))
    report(off <= tolerance, f"kernel time {total_us:.3f} us in the trace, {want:.3f} us by "
                             f"cudaEvents ({100 * off:.2f}% apart, limit {100 * tolerance:g}%)")
    return errors, figures


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace", nargs="?", help="the trace (JSON or JSON.gz); default: the "
                    "trace= path of --program-output")
    ap.add_argument("--program-output", help="a file holding gpu_train's output")
    ap.add_argument("--kernels", type=int)
    ap.add_argument("--memcpys", type=int)
    ap.add_argument("--memsets", type=int)
    ap.add_argument("--kernel-time-us", type=float)
    ap.add_argument("--tolerance", type=float, default=0.05,
                    help="allowed relative difference of kernel time (default 0.05)")
    a = ap.parse_args(argv)

    expected = {}
    if a.program_output:
        with open(a.program_output, encoding="utf-8", errors="replace") as f:
            expected = expected_from_output(f.read())
        if expected is None:
            ap.error(f"{a.program_output} holds no 'gpu_train: recorded_steps=...' line")
    for key in ("kernels", "memcpys", "memsets", "kernel_time_us"):
        if getattr(a, key) is not None:
            expected[key] = getattr(a, key)
        elif key not in expected:
            ap.error(f"--{key.replace('_', '-')} (or --program-output) is required")
    path = a.trace or expected.get("trace")
    if not path:
        ap.error("no trace given")
    try:
        trace = load(path)
    except (OSError, ValueError, EOFError) as e:
        print(f"check_gpu_trace: cannot read {path}: {e}")
        return 2
    errors, fig = check(trace, expected, a.tolerance)
    print(f"check_gpu_trace: {'FAIL' if errors else 'ok'} kernels={fig.get('kernels', 0)} "
          f"memcpys={fig.get('memcpys', 0)} memsets={fig.get('memsets', 0)} "
          f"kernel_time_us={fig.get('kernel_time_us', 0.0):.3f} flows={fig.get('flows', 0)}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""check_live_trace.py: runs live_gpu (tests/gpu/fake/live_gpu.c) for one
scenario over the fake libcuda and libcupti, then holds its output and the
JSON trace it exported against what it says it launched (ctest gpu_live_gpu
and gpu_live_gpu_<scenario>; CMake sets LD_LIBRARY_PATH and the FAKE_*
variables).

Scenarios and what they check:
  live, cupti_dropped, realtime_clock: every kernel, copy and memset launched
    is in the trace exactly once, named as launched, with one ac2g flow from
    its cuda_runtime call (check_gpu_trace.py); the call lies in the range
    that made it and the device work inside that range (one time line); a
    kernel launched in an Operator carries that Operator's External id; each
    kernel lies in the gpu_user_annotation of its range; deviceProperties
    are the fake driver's; the summary's Overview and Kernel tables hold the
    GPU time; the noisy cudaGetDevice was disabled in CUPTI and is absent;
    no counter is non-zero but cupti_dropped, which is 7 in cupti_dropped.
    realtime_clock runs without stepprof's timestamp callback.
  clock_skew: the same without the callback and with CUPTI's clock ahead of
    the host's by more than the steps took (live_gpu prints the skew): the
    calls and kernels are held against their ranges that much earlier, but
    External ids and gpu_user_annotations must follow the ranges that made
    the calls (their external correlation ids, not their times), and
    clock_mismatch counts every call.

No check depends on how fast the machine ran: the range that made a call is
found by its name and step (live_gpu prints both), never by time; where
CUPTI's clock is not stepprof's (realtime_clock, clock_skew), times are held
against ranges with a slack that bounds how far two clocks read in order may
disagree (SLACK_NS plus 10% of the span, above chrony's fastest slew), and
clock_mismatch and straddling_runtime must be what the trace's own times
give under attribute.c's rule.
  refuse_multiple, refuse_privileges, old_version, no_device: one warning
    line with the reason, the CPU still recorded, no GPU event.
  pool_full: records kept plus discarded_records equal the records emitted,
    whether or not the flush thread refilled the pool in time (CUPTI API 26:
    the discard buffer).
  pool_full_null: the same with CUPTI API 27, which is handed no buffer and
    drops and counts the records itself: kept plus cupti_dropped.

Usage: check_live_trace.py LIVE_GPU SCENARIO OUT_DIR
Prints one line per check; exits 0 if all passed, 1 otherwise.
Standard library only.
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import check_gpu_trace  # noqa: E402

GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "cuda_driver", "ac2g",
            "gpu_user_annotation"}
DEVICE_CAT = {"kernel": "kernel", "memcpy": "gpu_memcpy", "memset": "gpu_memset"}
RUNTIME_NAME = {"kernel": "cudaLaunchKernel", "memcpy": "cudaMemcpyAsync",
                "memset": "cudaMemsetAsync"}
STEPS = 3
OFF = "Profiling GPU is not supported in current context: "
REFUSALS = {
    "refuse_multiple": "another CUPTI client (nsys, torch.profiler, ...) holds the subscriber",
    "refuse_privileges": "CUPTI lacks the privileges to profile",
    "old_version": "CUPTI API version 17 is older than 18",
    "no_device": "no CUDA device is visible (cuInit: CUDA_ERROR_NO_DEVICE",
}
DEVICE_PROPS = {"id": 0, "name": "stepprof fake GPU", "totalGlobalMem": 80 << 30,
                "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
                "sharedMemPerBlock": 48 << 10, "numSms": 132, "regsPerMultiprocessor": 65536,
                "sharedMemPerBlockOptin": 227 << 10, "sharedMemPerMultiprocessor": 228 << 10}
# How far apart two times read in order may land. JSON times are exact ns
# (us with 3 decimals); with stepprof's timestamp callback host and GPU times
# come from one clock, else CUPTI's CLOCK_REALTIME is set against host ticks
# mapped to CLOCK_REALTIME (by MONOTONIC_RAW's rate), which may disagree by
# the width of a sync bracket plus the slew of CLOCK_REALTIME over the span:
# main() adds 10% of the span, above chrony's fastest slew (8.3%).
SLACK_NS = {"realtime_clock": 20000, "clock_skew": 20000}
skew_ns = 0  # how far ahead CUPTI's clock ran: live_gpu's skew_ns figure
slack_ns = 2


class Checks:
    def __init__(self):
        self.failed = []

    def __call__(self, ok, text):
        print(("ok    " if ok else "FAIL  ") + text, flush=True)
        if not ok:
            self.failed.append(text)
        return ok


def ns(v):
    return round(v * 1000)


def span(e):
    return ns(e["ts"]), ns(e["ts"]) + ns(e.get("dur", 0))


def inside(inner, outer, slack=None):
    (a, b), (c, d) = span(inner), span(outer)
    slack = slack_ns if slack is None else slack
    return c - slack <= a and b <= d + slack


def on_host(e):
    """A CUPTI record's event moved onto the host's clock (by the skew)."""
    return dict(e, ts=e["ts"] - skew_ns / 1000.0)


def by_step(hosts, cat):
    """Host ranges of one category by name, each list in start order: the
    i-th "Forward" is step i's (one thread, one clock: order is exact)."""
    out = {}
    for h in sorted((h for h in hosts if h["cat"] == cat), key=lambda h: ns(h["ts"])):
        out.setdefault(h["name"], []).append(h)
    return out


def expected_clock_counters(named, rt):
    """attribute.c's rule for a call whose external id names range `named`:
    clock_mismatch when the range does not hold the call's start (on the
    trace's time line, whatever clock stamped it), else straddling_runtime
    when the call ends after the range. Returns (mismatch, straddling)."""
    (a, b), (c, d) = span(rt), span(named)
    if not (c <= a < d):
        return 1, 0
    return 0, int(b > d)


def parse_output(text):
    """The figures of the last "live_gpu:" line, the launches, the warnings
    and the summary's text."""
    figures = {}
    for line in text.splitlines():
        if line.startswith("live_gpu: scenario="):
            figures = dict(kv.split("=", 1) for kv in line[len("live_gpu: "):].split(" "))
    for k, v in figures.items():
        if k not in ("scenario", "trace"):
            figures[k] = int(v)
    launches = [dict(kv.split("=", 1) for kv in line.split(" ")[1:])
                for line in text.splitlines() if line.startswith("launch ")]
    for x in launches:
        x["corr"] = int(x["corr"])
    warnings = [line[len("warning: "):] for line in text.splitlines() if line.startswith("warning: ")]
    m = re.search(r"^== summary\n(.*)^== end of summary$", text, re.S | re.M)
    return figures, launches, warnings, m.group(1) if m else ""


def reloaded_summary(text):
    """The summary of the exported trace loaded back, or None."""
    m = re.search(r"^== reloaded summary\n(.*)^== end of reloaded summary$", text, re.S | re.M)
    return m.group(1) if m else None


def table_rows(summary, title):
    """The rows of one summary table: lists of cells split on 2+ spaces."""
    m = re.search(r"-+" + re.escape(title) + r"-+\n(.*?)\n\n", summary, re.S)
    if not m:
        return None
    rows = []
    for line in m.group(1).splitlines():
        if not line.strip() or set(line.strip()) <= {"-", " "}:
            continue
        rows.append([c for c in re.split(r"\s{2,}", line.strip())])
    return rows


def check_host(check, events, workload):
    """The CPU is recorded whatever the GPU did."""
    names = [e.get("name") for e in events if e.get("ph") == "X" and e.get("cat") in
             ("user_annotation", "cpu_op")]
    check("ProfilerStep#0" in names, "the host step ProfilerStep#0 is in the trace")
    if workload == "train":
        for name in ("Forward", "Backward", "Optimization", "matmul"):
            check(names.count(name) == STEPS, f'{names.count(name)} host ranges "{name}", want {STEPS}')


def check_summary(check, summary, fig, launches):
    overview = table_rows(summary, "Overview Summary") or []
    kernel_row = [r for r in overview if r[0] == "Kernel"]
    check(len(kernel_row) == 1 and int(kernel_row[0][1]) == fig["kernels"] and
          float(kernel_row[0][2]) > 0,
          f"Overview Summary: Kernel GPU row {kernel_row} has {fig['kernels']} calls and time > 0")
    kernels = table_rows(summary, "Kernel Summary")
    check(kernels is not None, "the summary prints a Kernel Summary")
    rows = {r[0]: r for r in kernels or []}
    for name in sorted({x["name"] for x in launches if x["kind"] == "kernel"}):
        want = sum(1 for x in launches if x["name"] == name)
        row = rows.get(name)
        check(row is not None and int(row[1]) == want and float(row[2].split(" / ")[0]) > 0,
              f"Kernel Summary: {name} has {want} calls and GPU time > 0 ({row})")
    ops = table_rows(summary, "Operator Summary") or []
    op = [r for r in ops if r[0] == "matmul"]
    check(len(op) == 1 and float(op[0][3].split(" / ")[0]) > 0,
          f"Operator Summary: matmul carries its kernel's GPU time ({op})")
    devices = table_rows(summary, "Device Summary") or []
    check(any(r[0] == "GPU0" for r in devices), "Device Summary has a GPU0 row")


def check_live(check, trace, fig, launches, summary, scenario):
    events = [e for e in trace["traceEvents"] if isinstance(e, dict)]
    check(len(launches) == fig["kernels"] + fig["memcpys"] + fig["memsets"],
          f"{len(launches)} launches printed")
    # Counts and flows, as for a real GPU; kernel time is checked per kernel below.
    expected = {"kernels": fig["kernels"], "memcpys": fig["memcpys"], "memsets": fig["memsets"],
                "kernel_time_us": fig["kernels"] * fig["spin_ns"] / 1000.0}
    errors, _ = check_gpu_trace.check(trace, expected, tolerance=float("inf"))
    check(not errors, f"check_gpu_trace: counts and ac2g flows ({len(errors)} failed)")

    device, runtime = {}, {}
    for e in events:
        corr = (e.get("args") or {}).get("correlation")
        if e.get("ph") == "X" and e.get("cat") in DEVICE_CAT.values():
            device.setdefault(corr, []).append(e)
        elif e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
            runtime.setdefault(corr, []).append(e)
    by_corr = {x["corr"]: x for x in launches}
    check(set(device) == set(by_corr),
          f"device records' correlations are exactly those launched "
          f"(extra {sorted(set(device) - set(by_corr))}, missing {sorted(set(by_corr) - set(device))})")
    check(set(runtime) == set(by_corr),
          f"API calls' correlations are exactly the launches' (extra "
          f"{sorted(set(runtime) - set(by_corr))}: no noisy call, no recorder sync call)")
    check(not [e for e in events if e.get("name", "").startswith("cudaGetDevice")],
          "no cudaGetDevice event (noisy)")
    check(fig["suppressed"] == fig["noisy"] and fig["disabled_cbids"] > 0,
          f"CUPTI was told to drop the noisy cbid: {fig['suppressed']} records suppressed, "
          f"{fig['noisy']} noisy calls, {fig['disabled_cbids']} cbids disabled")

    hosts = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("user_annotation", "cpu_op")]
    users, ops = by_step(hosts, "user_annotation"), by_step(hosts, "cpu_op")
    annotations = [e for e in events if e.get("cat") == "gpu_user_annotation"]
    bad = []
    mismatch = straddling = 0
    for x in launches:
        where = f"{x['kind']} {x['name']} corr={x['corr']} step={x['step']}"
        devs, rts = device.get(x["corr"], []), runtime.get(x["corr"], [])
        if len(devs) != 1 or len(rts) != 1:
            bad.append(f"{where}: {len(devs)} device records, {len(rts)} API calls, want 1 and 1")
            continue
        d, rt = devs[0], rts[0]
        name_ok = (d["name"] == x["name"] if x["kind"] == "kernel" else
                   d["name"].startswith(f"Memcpy {x['name']} ") if x["kind"] == "memcpy" else
                   d["name"] == "Memset (Device)")
        if d.get("cat") != DEVICE_CAT[x["kind"]] or not name_ok:
            bad.append(f"{where}: recorded as {d.get('cat')} {d['name']!r}")
        if rt["name"] != RUNTIME_NAME[x["kind"]] or rt.get("cat") != "cuda_runtime":
            bad.append(f"{where}: launched by {rt.get('cat')} {rt['name']!r}")
        if x["kind"] == "kernel" and ns(d["dur"]) < 0.9 * fig["spin_ns"]:
            bad.append(f"{where}: lasts {d['dur']} us, it spun {fig['spin_ns']} ns")
        if span(d)[0] + 2 < span(rt)[0]:  # both on CUPTI's clock
            bad.append(f"{where}: runs at {d['ts']}, before its launch at {rt['ts']}")
        # The range that made the call: by name and step, never by time.
        step = int(x["step"])
        mine = users.get(x["range"], [])
        user = mine[step] if step < len(mine) else None
        if user is None:
            bad.append(f"{where}: no host range {x['range']!r} of step {step}")
            continue
        if (rt["pid"], rt["tid"]) != (user["pid"], user["tid"]):
            bad.append(f"{where}: called on thread {rt['tid']}, its {x['range']} is on {user['tid']}")
        # One time line: the call and its work lie in the range (host clock).
        for what, e in (("called", rt), ("runs", d)):
            if not inside(on_host(e), user):
                bad.append(f"{where}: {what} at [{e['ts']}, +{e['dur']}] (skew {skew_ns} ns) outside "
                           f"its {x['range']} [{user['ts']}, +{user['dur']}]: host and GPU times disagree")
        ext = (d.get("args") or {}).get("External id")
        op = None
        if x["op"] != "-":
            mine_ops = ops.get(x["op"], [])
            op = mine_ops[step] if step < len(mine_ops) else None
            if op is None:
                bad.append(f"{where}: no op {x['op']!r} of step {step}")
            elif ext != op["args"]["External id"] or rt["args"].get("External id") != ext:
                bad.append(f"{where}: External id {ext} (call: {rt['args'].get('External id')}), "
                           f"its {x['op']} has {op['args']['External id']}")
        elif ext is not None or rt["args"].get("External id") is not None:
            bad.append(f"{where}: External id {ext}, but it was launched outside any Operator")
        m, st = expected_clock_counters(op or user, rt)
        mismatch, straddling = mismatch + m, straddling + st
        if x["kind"] == "kernel":
            ann = [a for a in annotations if a["args"].get("External id") ==
                   user["args"]["External id"] and a["name"] == x["range"] and inside(d, a, 2) and
                   (a["pid"], a["tid"]) == (d["pid"], d["tid"])]
            if len(ann) != 1:
                bad.append(f"{where}: {len(ann)} gpu_user_annotation {x['range']!r} around it, want 1")
    for text in bad[:20]:
        print("      " + text)
    check(not bad, f"{len(launches)} launches attributed to their ranges and ops ({len(bad)} problems)")

    props = trace.get("deviceProperties")
    check(props == [DEVICE_PROPS], f"deviceProperties are the fake driver's: {props}")
    counters = trace.get("stepprof_counters", {})
    want_dropped = 7 if scenario == "cupti_dropped" else 0
    check(counters.get("cupti_dropped") == want_dropped and fig["cupti_dropped"] == want_dropped,
          f"cupti_dropped is {counters.get('cupti_dropped')} in the trace, {fig['cupti_dropped']} "
          f"in the result, want {want_dropped}")
    calls = fig["kernels"] + fig["memcpys"] + fig["memsets"]
    # One clock: every call lies in its range. A skew longer than the steps:
    # every call lands after its range. CLOCK_REALTIME alone: what the times
    # in the trace give.
    if scenario == "clock_skew":
        check(mismatch == calls and straddling == 0,
              f"the trace puts all {calls} calls outside their ranges: {mismatch} outside, "
              f"{straddling} straddling")
    elif scenario != "realtime_clock":
        check(mismatch == 0 and straddling == 0,
              f"the trace puts every call inside its range: {mismatch} outside, {straddling} straddling")
    for name, want in (("clock_mismatch", mismatch), ("straddling_runtime", straddling)):
        check(counters.get(name) == want and fig[name] == want,
              f"{name} is {counters.get(name)} in the trace, {fig[name]} in the result, want {want}")
    others = {k: v for k, v in counters.items()
              if k not in ("cupti_dropped", "clock_mismatch", "straddling_runtime") and v}
    check(not others, f"every other counter is 0: {others or 'yes'}")
    if want_dropped:
        counters_line = [line for line in summary.splitlines() if line.startswith("Counters:")]
        check(len(counters_line) == 1 and
              re.search(rf"\bcupti_dropped={want_dropped}\b", counters_line[0]) is not None,
              f"the summary's counters line reports it: {counters_line}")
    check(fig["fake_dropped"] == 0, f"the fake CUPTI dropped {fig['fake_dropped']} records")
    check(fig["emitted_kernels"] == fig["kernels"] and fig["emitted_memcpys"] == fig["memcpys"] and
          fig["emitted_memsets"] == fig["memsets"],
          "the fake CUPTI emitted one record per launch")
    check(fig["synchronize"] >= 1, f"the devices were synchronised before the take "
                                   f"({fig['synchronize']} cuCtxSynchronize)")
    want_clock = 0 if scenario in ("realtime_clock", "clock_skew") else 1
    check(fig["client_clock"] == want_clock,
          f"stepprof's timestamp callback is {'' if want_clock else 'not '}in use")
    check_summary(check, summary, fig, launches)


def check_refusal(check, trace, fig, warnings, summary, scenario):
    events = [e for e in trace["traceEvents"] if isinstance(e, dict)]
    gpu = [e for e in warnings if OFF in e]
    check(len(gpu) == 1 and fig["gpu_warnings"] == 1, f"one GPU warning line, got {len(gpu)}: {gpu}")
    check(bool(gpu) and REFUSALS[scenario] in gpu[0] and gpu[0].endswith("; recording the CPU only"),
          f"the warning says why: {REFUSALS[scenario]!r}")
    on_gpu = [e for e in events if e.get("cat") in GPU_CATS or e.get("pid") == 0]
    check(not on_gpu, f"no GPU events in the trace ({len(on_gpu)})")
    check(trace.get("deviceProperties") == [], "no deviceProperties")
    emitted = sum(fig[k] for k in fig if k.startswith("emitted_"))
    check(emitted == 0, f"the fake CUPTI emitted {emitted} records")
    check("Kernel Summary" not in summary, "the summary has no Kernel Summary")


def check_pool_full(check, trace, fig, summary, scenario):
    events = [e for e in trace["traceEvents"] if isinstance(e, dict)]
    counters = trace.get("stepprof_counters", {})
    kept_k = sum(1 for e in events if e.get("cat") == "kernel")
    kept_r = sum(1 for e in events if e.get("cat") == "cuda_runtime")
    discarded = counters.get("discarded_records", -1)
    emitted = fig["emitted_kernels"] + fig["emitted_runtime"]
    print(f"      launched {fig['kernels']} kernels; kept {kept_k} kernels and {kept_r} calls, "
          f"discarded {discarded} records; {fig['buffers_requested']} buffers requested")
    cupti_dropped = counters.get("cupti_dropped", -1)
    if scenario == "pool_full_null":  # CUPTI 12.9+: handed no buffer, CUPTI drops and counts
        check(fig["emitted_kernels"] + fig["emitted_runtime"] + fig["fake_dropped"] == 2 * fig["kernels"],
              "the fake CUPTI emitted or dropped a call and a kernel per launch")
        check(discarded == 0, f"no discard buffer was handed out: {discarded} discarded")
        check(cupti_dropped == fig["fake_dropped"] == fig["cupti_dropped"],
              f"CUPTI's {fig['fake_dropped']} dropped records are cupti_dropped ({cupti_dropped})")
    else:
        check(fig["emitted_kernels"] == fig["kernels"] and fig["emitted_runtime"] == fig["kernels"] and
              fig["fake_dropped"] == 0, "the fake CUPTI emitted a call and a kernel per launch, none dropped")
        check(cupti_dropped == 0, f"cupti_dropped is 0: {cupti_dropped}")
    lost = discarded + max(cupti_dropped, 0)
    check(discarded == fig["discarded_records"], "the trace's discarded_records is the result's")
    if fig["emitted_external"] == 0:
        check(kept_k + kept_r + lost == 2 * fig["kernels"],
              f"kept + discarded + dropped records == launched x 2: {kept_k} + {kept_r} + {lost} "
              f"== {2 * fig['kernels']}")
    else:  # external correlation records are walked (and discarded) too, but never kept
        check(kept_k + kept_r + discarded >= emitted and
              kept_k + kept_r + discarded <= emitted + fig["emitted_external"],
              f"kept + discarded records lie in [{emitted}, {emitted + fig['emitted_external']}]")
    check(kept_k <= fig["kernels"] and kept_k > 0, f"{kept_k} of {fig['kernels']} kernels kept")
    counters_line = [line for line in summary.splitlines() if line.startswith("Counters:")]
    for name, value in (("discarded_records", discarded), ("cupti_dropped", cupti_dropped)):
        if value:
            check(len(counters_line) == 1 and
                  re.search(rf"\b{name}={value}\b", counters_line[0]) is not None,
                  f"the summary's counters line reports {name}: {counters_line}")
    others = {k: v for k, v in counters.items()
              if k not in ("discarded_records", "cupti_dropped", "unattributed") and v}
    check(not others, f"no other counter is non-zero: {others or 'yes'}")


def main(argv):
    if len(argv) != 4:
        print("usage: check_live_trace.py LIVE_GPU SCENARIO OUT_DIR", file=sys.stderr)
        return 2
    exe, scenario, out_dir = argv[1:]
    global slack_ns, skew_ns
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    p = subprocess.run([exe, scenario, out_dir], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, errors="replace", timeout=280, cwd=out_dir)
    with open(os.path.join(out_dir, "live_gpu.out"), "w", encoding="utf-8") as f:
        f.write(p.stdout)
    lines = p.stdout.splitlines()
    print("\n".join(lines if len(lines) < 80 else lines[:10] + ["..."] + lines[-40:]))
    check = Checks()
    if not check(p.returncode == 0, f"live_gpu {scenario} exited with {p.returncode}"):
        return 1
    fig, launches, warnings, summary = parse_output(p.stdout)
    if not check(fig.get("scenario") == scenario, "live_gpu printed its figures"):
        return 1
    skew_ns = fig["skew_ns"]
    check((skew_ns > 0) == (scenario == "clock_skew"), f"CUPTI's clock ran {skew_ns} ns ahead")
    try:
        trace = check_gpu_trace.load(fig["trace"])
    except (OSError, ValueError) as e:
        check(False, f"the trace {fig['trace']} is valid JSON: {e}")
        return 1
    check(isinstance(trace.get("traceEvents"), list), "the trace has traceEvents")
    events = [e for e in trace["traceEvents"] if isinstance(e, dict)]
    if scenario in SLACK_NS:
        host = [span(e) for e in events if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
        extent = max(b for a, b in host) - min(a for a, b in host) if host else 0
        slack_ns = SLACK_NS[scenario] + extent // 10
        print(f"      clock slack {slack_ns} ns over a span of {extent} ns")
    check_host(check, events, "flood" if scenario.startswith("pool_full") else "train")
    # The JSON carries what every table prints, GPU records included. With
    # CUPTI's clock skewed, a call lies outside the range that made it and
    # only its external correlation (kept live, not in the JSON, which names
    # a cpu_op at most) puts it there: the reloaded calls go to the
    # ranges their times lie in, so only the tables of GPU records alone
    # must agree.
    reloaded = reloaded_summary(p.stdout)
    if scenario == "clock_skew":
        for title in ("Overview Summary", "Kernel Summary"):
            live_rows = table_rows(summary, title)
            check(live_rows is not None and table_rows(reloaded or "", title) == live_rows,
                  f"the exported trace loaded back prints the live {title}")
    else:
        check(reloaded == summary,
              "the exported trace loaded back prints the live summary, line for line")
    if scenario in REFUSALS:
        check_refusal(check, trace, fig, warnings, summary, scenario)
    else:
        check(fig["gpu_warnings"] == 0 and not warnings, f"no warning: {warnings}")
        if scenario.startswith("pool_full"):
            check_pool_full(check, trace, fig, summary, scenario)
        else:
            check_live(check, trace, fig, launches, summary, scenario)
    if scenario == "live":
        m = re.search(r"^live_gpu_handover: subscribe=(-?\d+) trace=(.*)$", p.stdout, re.M)
        check(m is not None and m.group(1) == "0",
              "after stop, another CUPTI client subscribes (stepprof gave the slot back)")
        later = check_gpu_trace.load(m.group(2)) if m else {"traceEvents": []}
        kernels = [e for e in later["traceEvents"] if isinstance(e, dict) and
                   e.get("cat") == "kernel" and e.get("name") == "fake_after_handover"]
        check(len(kernels) == 1, "a later span takes CUPTI back and records its kernel")
    print(f"check_live_trace: {scenario}: {'FAIL' if check.failed else 'ok'} "
          f"({len(check.failed)} failed)")
    return 1 if check.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

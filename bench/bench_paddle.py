#!/usr/bin/env python3
"""bench_paddle.py: stepprof.profiler against paddle.profiler on paddle code
(issue 19's performance targets), in one process, interleaved:

1. step time of the MLP of tests/python/paddle_mlp.py (3-layer MLP, SGD,
   paddle.io.DataLoader) with no profiler, under stepprof (paddle's tracer
   captured) and under paddle.profiler: medians of interleaved rounds, as
   ratios to no profiler;
2. the step time of an op-heavy loop (many small tensors, every step
   recorded), the same three ways: the cost of recording a framework
   operator, stepprof's against paddle.profiler's;
3. on that loop, stop() (with the default-style chrome-trace handler) plus
   summary(), stepprof against paddle;
4. the cost of handing paddle's events to the span, per event: paddle's
   tracer stop, then the protobuf hand-over stepprof takes, and the walk of
   paddle's tree with _add_events, on the same events.

`make bench` runs it (bench/report.py reads its `metric` lines). By hand,
with paddle and the package installed (make test-python does both):

    build/python-venv/bin/python bench/bench_paddle.py [rounds]"""
import contextlib
import io
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings

try:
    import paddle
except ImportError:
    print("bench_paddle: skipped: paddle is not installed (pip install paddlepaddle)")
    sys.exit(0)
import paddle.profiler as pp

import stepprof.profiler as sp

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "python"))
import paddle_mlp  # noqa: E402

paddle.set_device("cpu")
warnings.simplefilter("ignore")
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 7


def mlp_step_s(mod):
    """Median step time of 20 MLP steps, every one recorded by mod (None: no
    profiler)."""
    loader = paddle.io.DataLoader(paddle_mlp.Data(), batch_size=paddle_mlp.BATCH, drop_last=True)
    model = paddle_mlp.MLP()
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    prof = None
    if mod is not None:
        prof = mod.Profiler(targets=[mod.ProfilerTarget.CPU], on_trace_ready=lambda p: None)
        prof.start()
    times = []
    for _ in range(3):
        for x, y in loader:
            t0 = time.perf_counter()
            loss = paddle.nn.functional.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            opt.clear_grad()
            if prof is not None:
                prof.step()
            times.append(time.perf_counter() - t0)
    if prof is not None:
        with contextlib.redirect_stdout(io.StringIO()):
            prof.stop()
        if mod is sp:
            must_have_captured(prof)
    return statistics.median(times)


def must_have_captured(prof):
    """Warnings are silenced here, so a stepprof run that did not capture
    paddle's operators (paddle's tracer held by a profiler of an earlier
    round) would give figures for the wrong thing: stop instead."""
    r = prof.get_result()
    ops = sum(1 for t in range(len(r.threads)) for e in r.events(t)
              if e.type == sp.TracerEventType.Operator)
    if ops == 0:
        sys.exit("bench_paddle: the stepprof run captured no paddle operator; figures not valid")


def op_heavy_step_s(mod, steps=12, ops=200):
    """Median step time of `steps` steps of `ops` small multiply-adds each
    (2 framework operators per multiply-add), every step recorded by mod
    (None: no profiler). The span is discarded unconverted where the
    profiler allows it: only the recording is timed here."""
    prof = None
    if mod is not None:
        prof = mod.Profiler(targets=[mod.ProfilerTarget.CPU], on_trace_ready=lambda p: None)
        prof.start()
    x = paddle.ones([8])
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        y = x
        for _ in range(ops):
            y = y * 1.0001 + 0.5
        times.append(time.perf_counter() - t0)
        if prof is not None:
            prof.step()
    if prof is not None:
        with contextlib.redirect_stdout(io.StringIO()):
            prof.stop()
        if mod is sp:
            must_have_captured(prof)
    return statistics.median(times)


def op_heavy_stop_s(mod, steps=10, ops=200):
    """stop() with a chrome-trace handler, and summary(), after `steps` steps
    of `ops` small multiply-adds each."""
    out = tempfile.mkdtemp(prefix="bench_paddle_")
    prof = mod.Profiler(targets=[mod.ProfilerTarget.CPU],
                        on_trace_ready=mod.export_chrome_tracing(out))
    x = paddle.ones([8])
    prof.start()
    for _ in range(steps):
        y = x
        for _ in range(ops):
            y = y * 1.0001 + 0.5
        prof.step()
    with contextlib.redirect_stdout(io.StringIO()):
        t0 = time.perf_counter()
        prof.stop()
        t1 = time.perf_counter()
        prof.summary()
        t2 = time.perf_counter()
    if mod is sp:
        must_have_captured(prof)
    shutil.rmtree(out, ignore_errors=True)
    del prof
    return t1 - t0, t2 - t1


def hand_over_us_per_event(ops=2000, rounds=3):
    """The hand-over of paddle's events to a span, per event, both ways on
    the same tracer result in the same span, in alternating order: paddle's
    tracer stop; the protobuf way stepprof takes (paddle's save into a memory
    file, read in C: _paddle_capture.hand_over_pb); the walk of paddle's tree
    with _add_events (stepprof's way with record_shapes or with_flops, and
    its fallback). Medians of `rounds`."""
    from paddle.base import core

    from stepprof import _paddle_capture
    types = _paddle_capture._type_map(core)
    stop_us, pb_us, walk_us = [], [], []
    for k in range(rounds):
        prof = sp.Profiler(on_trace_ready=lambda p: None)
        prof._paddle = None  # this span gets the events of the tracer below only
        prof.start()
        options = core.ProfilerOptions()
        options.trace_switch = 1
        tracer = core._Profiler.create(options, [])
        tracer.prepare()
        tracer.start()
        y = paddle.ones([8])
        for _ in range(ops):
            y = y * 1.0001 + 0.5
        t0 = time.perf_counter()
        result = tracer.stop()
        t1 = time.perf_counter()
        del tracer
        n = len(_paddle_capture.events_of(result, types))
        took = {}
        for way in (("pb", "walk") if k % 2 == 0 else ("walk", "pb")):
            t2 = time.perf_counter()
            if way == "pb":
                if not _paddle_capture.hand_over_pb(result, prof._add_paddle_pb, types):
                    sys.exit("bench_paddle: the protobuf hand-over failed; figures not valid")
            else:
                prof._add_events(_paddle_capture.events_of(result, types))
            took[way] = time.perf_counter() - t2
        prof.stop()
        stop_us.append(1e6 * (t1 - t0) / n)
        pb_us.append(1e6 * took["pb"] / n)
        walk_us.append(1e6 * took["walk"] / n)
    return n, statistics.median(stop_us), statistics.median(pb_us), statistics.median(walk_us)


def metric(name, value, unit, samples=None):
    """A line bench/report.py reads: the median, and the spread of the
    rounds when there are several."""
    spread = f" (min {min(samples):.4g} max {max(samples):.4g})" if samples else ""
    print(f"metric {name} {value:.4g} {unit}{spread}", flush=True)


def interleaved(fn, rounds):
    """fn(None), fn(sp), fn(pp) in turn, `rounds` times: per-round ratios to
    the round's own fn(None), so that load which comes and goes between
    rounds cancels."""
    out = {"none": [], "stepprof": [], "paddle": []}
    for _ in range(rounds):
        for k, m in (("none", None), ("stepprof", sp), ("paddle", pp)):
            out[k].append(fn(m))
    return out


def main():
    mlp = interleaved(mlp_step_s, ROUNDS)
    print(f"MLP step (median step of {ROUNDS} interleaved rounds, 27 steps each):")
    base = statistics.median(mlp["none"])
    for k, v in mlp.items():
        print(f"  {k:9s} {1e3 * statistics.median(v):7.3f} ms  {statistics.median(v) / base:6.3f}x")
    sp_r = [a / b for a, b in zip(mlp["stepprof"], mlp["none"])]
    pd_r = [a / b for a, b in zip(mlp["paddle"], mlp["none"])]
    metric("paddle_mlp_step_ratio", statistics.median(sp_r), "x", sp_r)
    metric("paddle_mlp_step_ratio_paddle", statistics.median(pd_r), "x", pd_r)
    metric("paddle_mlp_none_spread", base / min(mlp["none"]), "x")

    ops = interleaved(op_heavy_step_s, ROUNDS)
    print("op-heavy loop (12 steps x 400 operators, every step recorded), median step:")
    for k, v in ops.items():
        print(f"  {k:9s} {1e3 * statistics.median(v):7.3f} ms")
    per_op = {k: 1e9 * (statistics.median(ops[k]) - statistics.median(ops["none"])) / 400
              for k in ("stepprof", "paddle")}
    metric("paddle_op_record_ns", per_op["stepprof"], "ns")
    metric("paddle_op_record_ns_paddle", per_op["paddle"], "ns")
    over = [a / b for a, b in zip(ops["stepprof"], ops["paddle"])]
    metric("paddle_op_step_over_paddle", statistics.median(over), "x", over)

    stops = {"stepprof": [], "paddle": []}
    for _ in range(max(1, ROUNDS // 2)):
        stops["paddle"].append(op_heavy_stop_s(pp))
        stops["stepprof"].append(op_heavy_stop_s(sp))
    print("op-heavy loop (10 steps x 400 ops): stop (chrome trace) and summary():")
    med = {k: (statistics.median(a for a, _ in v), statistics.median(b for _, b in v))
           for k, v in stops.items()}
    for k, (a, b) in med.items():
        print(f"  {k:9s} stop {1e3 * a:8.1f} ms  summary {1e3 * b:8.1f} ms  total {1e3 * (a + b):8.1f} ms")
    speed = [sum(p) / sum(s) for p, s in zip(stops["paddle"], stops["stepprof"])]
    metric("paddle_stop_speedup", statistics.median(speed), "x", speed)
    n, stop_us, pb_us, walk_us = hand_over_us_per_event()
    print(f"hand-over of {n} events: paddle's tracer stop {stop_us:.2f} us/event, "
          f"protobuf hand-over {pb_us:.2f} us/event, walk and _add_events {walk_us:.2f} "
          f"us/event")
    metric("paddle_tracer_stop_us_per_event", stop_us, "us")
    metric("paddle_hand_over_us_per_event", pb_us, "us")
    metric("paddle_hand_over_walk_us_per_event", walk_us, "us")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""bench_torch.py: what recording torch's operators costs, stepprof.profiler
(torch's RecordFunction callback, python/_stepprof_torch/adapter.cpp)
against torch.profiler (CPU activity), in one process:

1. per event in the loop, on an op-heavy loop (a small tensor multiplied
   and added by Python scalars: 10 RecordFunction events per iteration,
   counted from a stepprof result, not assumed): no profiler; a registered
   callback that does nothing (torch's own machinery, the floor no callback
   can go under); stepprof; torch.profiler; torch.profiler with
   record_shapes;
2. per event, the whole cost: 1.'s capture in the loop plus start, stop
   and the written trace of a 20000-event span (stepprof: its
   export_chrome_tracing handler, stop() waiting for the file; torch:
   stop() and export_chrome_trace());
3. a training step of an MLP (3 linear layers, SGD, a torch DataLoader),
   every step recorded, under each profiler and under the floor, as ratios
   to the unprofiled step; and the same for tests/python/torch_mlp.py's
   smaller MLP, whose step is mostly torch's dispatcher.

The machine is shared and its speed drifts by tens of percent within a
minute, so nothing is compared across more than one round: a round runs
every mode once, in an order that rotates from round to round, each mode
in its own short window (profiler started, a few untimed warm-up
iterations, the fastest of a few short timed chunks or steps, profiler
stopped untimed), and the round's figures are differences or ratios to
that round's unprofiled window. In 1., no profiler, the floor and stepprof
go further: they alternate chunk by chunk inside one stepprof span (the
span's callback taken off and put back), a third of a millisecond apart. The
published figure is the median over the rounds, with the rounds' min and
max. torch runs on one intra-op thread, which keeps the second vCPU out
of the figures.

`make bench` runs it (bench/report.py reads its `metric` lines). By hand,
with torch and the package installed (make test-python does both):

    build/python-venv/bin/python bench/bench_torch.py [rounds]"""
import gc
import os
import shutil
import statistics
import sys
import tempfile
import time
import warnings

os.environ.setdefault("KINETO_LOG_LEVEL", "6")  # no Kineto start/stop lines on stderr
try:
    import torch
except ImportError:
    print("bench_torch: skipped: torch is not installed (pip install torch)")
    sys.exit(0)
from torch.profiler import ProfilerActivity

import stepprof.profiler as sp
from stepprof import _torch_capture

warnings.simplefilter("ignore")
torch.set_num_threads(1)
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 80
now = time.perf_counter_ns
# Section 1's windows: the fastest of 5 chunks of this many iterations (a
# third of a millisecond each here), so that one chunk free of other
# processes is likely even on a busy machine.
ITERATIONS = 40
EVENTS_PER_ITERATION = None  # counted by events_per_iteration() before anything is timed

# --- the op-heavy loop -------------------------------------------------------

X = torch.ones(8)


def op_loop(iterations):
    y = X
    for _ in range(iterations):
        y = y * 1.0001 + 0.5
    return y


def stepprof_profiler(on_trace_ready=None):
    return sp.Profiler(targets=[sp.ProfilerTarget.CPU], perf_summary=False,
                       on_trace_ready=on_trace_ready or (lambda p: None))


def torch_profiler(shapes=False):
    return torch.profiler.profile(activities=[ProfilerActivity.CPU], record_shapes=shapes)


def torch_events(prof):
    return [e for e in prof.events() if not e.name.startswith("ProfilerStep#")]


def stepprof_events(prof):
    r = prof.get_result()
    return [e for t in range(len(r.threads)) for e in r.events(t)
            if e.type != sp.TracerEventType.ProfileStep]


def events_per_iteration(iterations=200):
    """Events one iteration of op_loop gives, from a stepprof result of
    `iterations` iterations. torch.profiler counts the same iterations too:
    both see the same RecordFunction ranges, so a difference is printed."""
    prof = stepprof_profiler()
    prof.start()
    op_loop(iterations)
    prof.stop()
    n = len(stepprof_events(prof))
    with torch_profiler() as tp:
        op_loop(iterations)
    n_torch = len(torch_events(tp))
    if n == 0 or n % iterations:
        sys.exit(f"bench_torch: stepprof recorded {n} events for {iterations} iterations; "
                 f"figures not valid (was torch's operator capture on?)")
    if n_torch != n:
        print(f"bench_torch: note: torch.profiler counted {n_torch} events, stepprof {n}")
    return n // iterations


def chunk_ns(iterations):
    t0 = now()
    op_loop(iterations)
    return now() - t0


def best_chunk_ns(iterations, chunks=5, warm=10):
    """The fastest of `chunks` timed runs of op_loop(iterations), after
    `warm` untimed iterations: a window's figure, in ns. The fastest, since
    load on a shared machine only ever adds time."""
    op_loop(warm)
    return min(chunk_ns(iterations) for _ in range(chunks))


def torch_window(mode, fn):
    """fn() under torch.profiler (mode "torch", or "torch_shapes" with
    record_shapes), started before and stopped after, untimed; the garbage
    collector is held off inside, so that no collection lands in one mode's
    timing."""
    gc.disable()
    try:
        with torch_profiler(shapes=(mode == "torch_shapes")):
            return fn()
    finally:
        gc.enable()


def rotated(modes, r):
    k = r % len(modes)
    return modes[k:] + modes[:k]


def paired(timed, chunks=5, first=0, shapes=False):
    """none, floor and stepprof (and with shapes, stepprof with
    record_shapes), chunk by chunk inside one stepprof span, so that they
    are timed within a few milliseconds of each other: the span's callback
    is taken off for a "none" chunk and the empty one put on for a "floor"
    chunk (what a span registers is exactly that callback, so a "stepprof"
    chunk is a recorded one; a "stepprof_shapes" chunk registers the
    callback that takes the inputs, and its logged shapes are dropped at
    the chunk's end, as a span's are handed over). timed(mode, prof) times
    one chunk. Returns each mode's fastest chunk, in ns, and the stepprof
    events per recorded chunk."""
    adapter = _torch_capture._adapter
    modes = ["none", "floor", "stepprof"] + (["stepprof_shapes"] if shapes else [])
    best = {m: None for m in modes}
    gc.disable()
    prof = stepprof_profiler()
    prof.start()  # registers the span's callback
    try:
        adapter.disable()
        for c in range(chunks):
            for m in rotated(modes, first + c):
                if m == "floor":
                    adapter._floor_on()
                elif m == "stepprof":
                    adapter.enable()
                elif m == "stepprof_shapes":
                    adapter.enable(True)
                try:
                    op_loop(2)  # the first ops after a change refresh torch's cached callbacks
                    t = timed(m, prof)
                finally:
                    if m == "floor":
                        adapter._floor_off()
                    elif m == "stepprof":
                        adapter.disable()
                    elif m == "stepprof_shapes":
                        adapter.disable(True)
                best[m] = t if best[m] is None else min(best[m], t)
        adapter.enable()  # as the span left it: its end takes it off
    finally:
        prof.stop()
        gc.enable()
    # Less the refreshing op_loop(2) before each recorded chunk.
    recorded = chunks * (len(modes) - 2)
    n = len(stepprof_events(prof)) - recorded * 2 * EVENTS_PER_ITERATION
    if n <= 0:
        sys.exit("bench_torch: the stepprof chunks captured no torch event; figures not valid")
    return best, n / recorded


def in_loop(rounds, per_iteration, iterations=ITERATIONS):
    """Section 1: per round, none, floor and stepprof paired chunk by chunk
    (paired()), and torch.profiler with and without record_shapes in
    their own windows (it cannot be paused) in turn with them; returns the
    unprofiled ns per event and per-mode lists of ns per event above it,
    each the fastest chunk of its round."""
    modes = ["paired", "torch", "torch_shapes"]
    events = iterations * per_iteration
    cost = {m: [] for m in ("floor", "stepprof", "stepprof_shapes", "torch", "torch_shapes")}
    base = []
    for r in range(rounds):
        got = {}
        for m in rotated(modes, r):
            if m == "paired":
                got.update(paired(lambda mode, prof: chunk_ns(iterations), first=r, shapes=True)[0])
            else:
                got[m] = torch_window(m, lambda: best_chunk_ns(iterations))
        base.append(got["none"] / events)
        for m in cost:
            cost[m].append((got[m] - got["none"]) / events)
    return base, cost


# --- capture + stop + written trace ------------------------------------------


def start_stop_ns(mode, iterations, out):
    """ns of the profiler's start plus its stop with the trace written
    (stepprof: stop() waits for its handler's file; torch: stop() then
    export_chrome_trace()), around op_loop(iterations), untimed itself."""
    gc.disable()
    try:
        if mode == "stepprof":
            prof = stepprof_profiler(sp.export_chrome_tracing(out))
            t0 = now()
            prof.start()
            t1 = now()
            op_loop(iterations)
            t2 = now()
            prof.stop()
            t3 = now()
            path = prof.trace_path
        else:
            prof = torch_profiler()
            t0 = now()
            prof.start()
            t1 = now()
            op_loop(iterations)
            t2 = now()
            prof.stop()
            path = os.path.join(out, "torch_trace.json")
            prof.export_chrome_trace(path)
            t3 = now()
    finally:
        gc.enable()
    if not path or not os.path.getsize(path):
        sys.exit(f"bench_torch: {mode} wrote no trace; figures not valid")
    os.unlink(path)
    return (t1 - t0) + (t3 - t2)


def start_stop(rounds, per_iteration, iterations=2000):
    """Section 2: per round, stepprof and torch in turn; returns per-mode
    lists of start + stop + trace ns per event."""
    out = tempfile.mkdtemp(prefix="bench_torch_")
    events = iterations * per_iteration
    got = {"stepprof": [], "torch": []}
    try:
        for r in range(rounds):
            for m in rotated(list(got), r):
                got[m].append(start_stop_ns(m, iterations, out) / events)
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return got


# --- the MLP training step ---------------------------------------------------

# (features, hidden, classes, batch): tests/python/torch_mlp.py's model and
# batch, whose step is mostly torch's dispatcher; and one layer deeper and
# wider, whose step does a training step's arithmetic.
SMALL = (32, 64, 10, 16)
MLP = (256, 512, 10, 64)


def mlp_shape(size):
    features, hidden, classes, _ = size
    return "-".join(map(str, (features, hidden) + (() if size == SMALL else (hidden,)) + (classes,)))


class Mlp:
    """tests/python/torch_mlp.py's loop: an MLP, SGD, a torch DataLoader, a
    record_function around the loss."""

    def __init__(self, size):
        features, hidden, classes, batch = size
        torch.manual_seed(0)
        layers = [torch.nn.Linear(features, hidden), torch.nn.ReLU()]
        if size != SMALL:
            layers += [torch.nn.Linear(hidden, hidden), torch.nn.ReLU()]
        self.model = torch.nn.Sequential(*layers, torch.nn.Linear(hidden, classes))
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        data = torch.utils.data.TensorDataset(torch.randn(64 * batch, features),
                                              torch.randint(0, classes, (64 * batch,)))
        self.loader = torch.utils.data.DataLoader(data, batch_size=batch, shuffle=True)
        self.it = iter(self.loader)

    def batch(self):
        try:
            return next(self.it)
        except StopIteration:
            self.it = iter(self.loader)
            return next(self.it)

    def step(self):
        x, y = self.batch()
        with torch.profiler.record_function("loss"):
            loss = torch.nn.functional.cross_entropy(self.model(x), y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()

    def step_ns(self, stepper=None):
        """One step, ending with stepper.step() (a profiler's step, timed
        with it)."""
        t0 = now()
        self.step()
        if stepper is not None:
            stepper.step()
        return now() - t0

    def best_step_ns(self, steps, stepper=None, warm=1):
        """The fastest of `steps` timed steps after `warm` untimed ones."""
        for _ in range(warm):
            self.step_ns(stepper)
        return min(self.step_ns(stepper) for _ in range(steps))


def mlp_torch_window(mlp, steps):
    gc.disable()
    try:
        with torch.profiler.profile(activities=[ProfilerActivity.CPU]) as tp:
            return mlp.best_step_ns(steps, tp)
    finally:
        gc.enable()


def mlp_rounds(size, rounds, steps=3):
    """Section 3: per round, none, floor and stepprof paired step by step
    (paired(), every stepprof step recorded and ended by the profiler's
    step()), and torch.profiler in its own window, in turn; each mode's
    fastest step. Returns the unprofiled steps, per-mode lists of ratios to
    them, and the events per step that stepprof recorded (ProfileSteps
    aside)."""
    mlp = Mlp(size)
    mlp.step()
    base, ratio, per_step = [], {m: [] for m in ("floor", "stepprof", "torch")}, []
    for r in range(rounds):
        got = {}
        for m in rotated(["paired", "torch"], r):
            if m == "paired":
                best, n = paired(lambda mode, prof: mlp.step_ns(prof if mode == "stepprof" else None),
                                 chunks=steps, first=r)
                got.update(best)
                per_step.append(n)
            else:
                got[m] = mlp_torch_window(mlp, steps)
        base.append(got["none"])
        for m in ratio:
            ratio[m].append(got[m] / got["none"])
    return base, ratio, med(per_step)


# --- output ------------------------------------------------------------------


def metric(name, value, unit, samples=None):
    """A line bench/report.py reads: the median, and the spread of the
    rounds when there are several."""
    spread = f" (min {min(samples):.4g} max {max(samples):.4g})" if samples else ""
    print(f"metric {name} {value:.4g} {unit}{spread}", flush=True)


def med(v):
    return statistics.median(v)


def main():
    adapter = _torch_capture.adapter()
    if adapter is None:
        sys.exit("bench_torch: stepprof's torch adapter is not usable here (see the warning "
                 "above); reinstall stepprof after torch")
    global EVENTS_PER_ITERATION
    per_it = EVENTS_PER_ITERATION = events_per_iteration()
    print(f"bench_torch: torch {torch.__version__}, 1 intra-op thread; op-heavy loop: "
          f"{per_it} events per iteration (counted by stepprof and torch.profiler)")
    in_loop(2, per_it)  # warm-up: torch.profiler's first start initialises Kineto
    base, cost = in_loop(ROUNDS, per_it)
    print(f"1. in the loop ({ROUNDS} rounds x 6 modes, each the fastest of 5 chunks of "
          f"{ITERATIONS * per_it} events): ns per event above no profiler, median (min, max):")
    print(f"   {'no profiler':30s} {med(base):7.0f} ns per event (absolute)")
    for m, label in (("floor", "empty callback (floor)"), ("stepprof", "stepprof"),
                     ("stepprof_shapes", "stepprof record_shapes"), ("torch", "torch.profiler"),
                     ("torch_shapes", "torch.profiler record_shapes")):
        print(f"   {label:30s} {med(cost[m]):+7.0f} ({min(cost[m]):+.0f}, {max(cost[m]):+.0f})")
    over_floor = [s - f for s, f in zip(cost["stepprof"], cost["floor"])]
    over_torch = [s / t for s, t in zip(cost["stepprof"], cost["torch"]) if t > 0]
    floor_torch = [f / t for f, t in zip(cost["floor"], cost["torch"]) if t > 0]
    shapes_torch = [s / t for s, t in zip(cost["stepprof_shapes"], cost["torch_shapes"]) if t > 0]
    print(f"   stepprof - floor, per round:   {med(over_floor):+7.1f} ns per event")
    metric("torch_capture_over_floor_ns", med(over_floor), "ns", over_floor)
    metric("torch_capture_over_torch", med(over_torch), "x", over_torch)
    metric("torch_floor_over_torch", med(floor_torch), "x", floor_torch)
    metric("torch_shapes_over_torch_shapes", med(shapes_torch), "x", shapes_torch)
    metric("torch_event_none_ns", med(base), "ns", base)
    for m in ("floor", "stepprof", "stepprof_shapes", "torch", "torch_shapes"):
        metric(f"torch_event_{m}_ns", med(cost[m]), "ns", cost[m])
    metric("torch_loop_none_spread", med(base) / min(base), "x")

    # The whole cost per event: section 1's capture in the loop (the same
    # run's medians: the in-loop part is a difference of timings, which a
    # 20000-event window would measure far less well), plus start, stop and
    # the written trace of a 20000-event span, which need no subtraction.
    rounds2 = max(3, ROUNDS // 8)
    stop2 = start_stop(rounds2, per_it)
    whole2 = {m: [med(cost[m]) + v for v in stop2[m]] for m in stop2}
    ratio2 = [a / b for a, b in zip(whole2["stepprof"], whole2["torch"])]
    print(f"2. capture + stop + written trace ({rounds2} rounds of 2000 iterations = "
          f"{2000 * per_it} events): ns per event, median (min, max):")
    for m in ("stepprof", "torch"):
        print(f"   {m:15s} {med(whole2[m]):6.0f} = {med(cost[m]):.0f} in the loop + "
              f"{med(stop2[m]):.0f} ({min(stop2[m]):.0f}, {max(stop2[m]):.0f}) start, stop and file")
    metric("torch_whole_over_torch", med(ratio2), "x", ratio2)
    metric("torch_whole_stepprof_ns", med(whole2["stepprof"]), "ns", whole2["stepprof"])
    metric("torch_whole_torch_ns", med(whole2["torch"]), "ns", whole2["torch"])
    metric("torch_stop_write_stepprof_ns", med(stop2["stepprof"]), "ns", stop2["stepprof"])
    metric("torch_stop_write_torch_ns", med(stop2["torch"]), "ns", stop2["torch"])

    for size, prefix in ((MLP, "torch_mlp"), (SMALL, "torch_mlp_small")):
        base3, ratio3, per_step = mlp_rounds(size, ROUNDS)
        print(f"3. MLP training step ({mlp_shape(size)}, batch {size[3]}, "
              f"{per_step:.0f} events per step; {ROUNDS} rounds x 4 modes, fastest of 3 steps "
              f"each): unprofiled {med(base3) / 1e3:.0f} us; ratio to it, median (min, max):")
        for m, label in (("floor", "empty callback (floor)"), ("stepprof", "stepprof"),
                         ("torch", "torch.profiler")):
            print(f"   {label:25s} {med(ratio3[m]):.3f}x "
                  f"({min(ratio3[m]):.3f}, {max(ratio3[m]):.3f})")
        metric(f"{prefix}_step_ratio", med(ratio3["stepprof"]), "x", ratio3["stepprof"])
        metric(f"{prefix}_step_ratio_torch", med(ratio3["torch"]), "x", ratio3["torch"])
        metric(f"{prefix}_step_ratio_floor", med(ratio3["floor"]), "x", ratio3["floor"])
        metric(f"{prefix}_events_per_step", per_step, "events")
        metric(f"{prefix}_step_none_us", med(base3) / 1e3, "us", [b / 1e3 for b in base3])
        metric(f"{prefix}_none_spread", med(base3) / min(base3), "x")


if __name__ == "__main__":
    main()

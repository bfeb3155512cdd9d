#!/usr/bin/env python3
"""bench_python_tracer.py: what with_stack's Python tracer costs per call.

A loop of small Python functions (each iteration: 3 Python calls and 1
built-in call) runs unprofiled, under stepprof.torch_profiler.profile(
with_stack=True), under profile(with_modules=True) (the hook on every call,
no module called, so nothing recorded: the floor of with_modules alone),
and, when torch can be imported, under
torch.profiler.profile(with_stack=True), all in one run and interleaved, so
the ratios compare like with like. Reports per configuration the median time
per iteration, the cost per traced call above the unprofiled loop, and the
ratios. Needs the package installed:

    make test-python
    build/python-venv/bin/python bench/bench_python_tracer.py
"""
import statistics
import time

import stepprof.torch_profiler as tp

TRIALS = 7
LOOPS = 20000
CALLS_PER_ITER = 4  # leaf, middle, top (Python) and len (built-in)


def leaf(x):
    return x + 1


def middle(x):
    return leaf(x) + len((x,))


def top(x):
    return middle(x)


def workload(n):
    x = 0
    for _ in range(n):
        x = top(x) & 0xFFFF
    return x


def timed(make_context):
    """ns per iteration of the workload, one sample per trial."""
    out = []
    for _ in range(TRIALS):
        with make_context():
            t0 = time.perf_counter_ns()
            workload(LOOPS)
            t1 = time.perf_counter_ns()
        out.append((t1 - t0) / LOOPS)
    return out


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def main():
    configs = [("unprofiled", _Nothing),
               ("stepprof", lambda: tp.profile(activities=[tp.ProfilerActivity.CPU],
                                               with_stack=True)),
               # with_modules alone: the hook runs on every call, records none here
               ("stepprof_modules_only", lambda: tp.profile(
                   activities=[tp.ProfilerActivity.CPU], with_modules=True))]
    try:
        import torch.profiler as torch_profiler
        configs.append(("torch", lambda: torch_profiler.profile(
            activities=[torch_profiler.ProfilerActivity.CPU], with_stack=True)))
    except ImportError:
        print("torch not importable: torch.profiler(with_stack=True) not measured")
    workload(LOOPS)  # warm up
    samples = {name: [] for name, _ in configs}
    for _ in range(3):  # interleaved rounds
        for name, make in configs:
            samples[name] += timed(make)
    med = {name: statistics.median(s) for name, s in samples.items()}
    base = med["unprofiled"]
    for name, value in med.items():
        per_call = (value - base) / CALLS_PER_ITER
        print(f"metric python_tracer_{name}_ns_per_iter {value:.1f} "
              f"(per traced call above unprofiled: {per_call:.1f} ns; "
              f"{value / base:.2f}x unprofiled)")
    if "torch" in med:
        print(f"metric python_tracer_stepprof_vs_torch "
              f"{(med['stepprof'] - base) / (med['torch'] - base):.2f} "
              f"(stepprof's added cost per call / torch's)")


if __name__ == "__main__":
    main()

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


def modules_vs_hooks():
    """with_modules: the tracer's module-only mode against torch's global
    module forward hooks (the other way to see every module call), on a
    forward of 25 small modules, no_grad, one intra-op thread. Both with
    stepprof's op capture off, so only the module machinery differs."""
    try:
        import torch
    except ImportError:
        return
    from stepprof import _python_tracer
    torch.set_num_threads(1)
    net = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(16, 16), torch.nn.ReLU())
                                for _ in range(8)])
    x = torch.randn(2, 16)

    def forward_us(n=300):
        t0 = time.perf_counter_ns()
        with torch.no_grad():
            for _ in range(n):
                net(x)
        return (time.perf_counter_ns() - t0) / n / 1000

    class Tracer:
        def __enter__(self):
            self.t = _python_tracer.PythonTracer(with_modules=True)
            self.t.begin()

        def __exit__(self, *exc):
            self.t.end()

    class Hooks:
        def __enter__(self):
            m = torch.nn.modules.module
            self.h = [m.register_module_forward_pre_hook(lambda mod, a: None),
                      m.register_module_forward_hook(lambda mod, a, o: None)]

        def __exit__(self, *exc):
            for h in self.h:
                h.remove()

    configs = {"none": _Nothing, "tracer": Tracer, "hooks": Hooks}
    forward_us()
    out = {k: [] for k in configs}
    for _ in range(7):
        for k, make in configs.items():
            with make():
                out[k].append(forward_us())
    base = statistics.median(out["none"])
    for k in ("tracer", "hooks"):
        print(f"metric modules_{k}_forward_ratio {statistics.median(out[k]) / base:.2f} "
              f"(forward of 25 modules over the bare forward, {base:.0f} us)")


if __name__ == "__main__":
    main()
    modules_vs_hooks()

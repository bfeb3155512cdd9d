#!/usr/bin/env python3
"""bench_gpu_torch.py: the launch-bound loop of bench_gpu.cu in PyTorch, for
comparison: what torch.profiler (CPU and CUDA activities, Kineto over CUPTI)
costs per launch, against the same loop unprofiled.

Each trial runs LAUNCHES tiny in-place ops (`x.add_(1.0)` on a one-element
CUDA tensor: one kernel each; torch has no bare empty kernel) and waits for
the device; the figure is the wall time per op, median (min, max) over
TRIALS trials. A traced trial is the active step of a torch.profiler
schedule(wait=0, warmup=1, active=1) cycle, as bench_gpu.cu records one step
after one READY step; processing the trace happens between trials, outside
the timing, and nothing is written. Output, for bench/report.py:

    metric torch_launch_untraced <ns> ns min <v> max <v>
    metric torch_launch_traced <ns> ns min <v> max <v>
    metric torch_trace_overhead <traced / untraced> x

A torch op costs more than a bare launch (dispatcher, allocator checks), so
compare the overhead ratio with bench_gpu's gpu_trace_overhead rather than
the absolute figures. Without torch or a CUDA device it prints "skip: ..."
and exits 0.

    python3 bench/bench_gpu_torch.py
"""
import statistics
import sys
import time

TRIALS = 20
LAUNCHES = 10000
WARMUP = 1000


def main():
    try:
        import torch
    except ImportError:
        print("skip: torch is not installed")
        return 0
    if not torch.cuda.is_available():
        print("skip: torch finds no CUDA device")
        return 0
    from torch.profiler import ProfilerActivity, profile, schedule

    dev = torch.device("cuda", 0)
    x = torch.zeros(1, device=dev)

    def loop(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter_ns()
        for _ in range(n):
            x.add_(1.0)
        torch.cuda.synchronize()
        return (time.perf_counter_ns() - t0) / n

    print(f"bench_gpu_torch: torch {torch.__version__}, {torch.cuda.get_device_name(0)}; "
          f"{TRIALS} trials x {LAUNCHES} x.add_(1.0)")
    loop(WARMUP)
    untraced = [loop(LAUNCHES) for _ in range(TRIALS)]

    traced = []
    kernels = {"last": None}

    def ready(prof):
        kernels["last"] = count_kernels(prof, torch)

    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
                 schedule=schedule(wait=0, warmup=1, active=1, repeat=TRIALS),
                 on_trace_ready=ready) as prof:
        for _ in range(TRIALS):
            loop(WARMUP)  # warmup step
            prof.step()
            traced.append(loop(LAUNCHES))  # active step
            prof.step()

    def stats(v):
        return statistics.median(v), min(v), max(v)

    u, t = stats(untraced), stats(traced)
    print(f"{'loop':<26} {'median':>10} {'min':>10} {'max':>10}   (ns per op)")
    print(f"{'untraced':<26} {u[0]:10.1f} {u[1]:10.1f} {u[2]:10.1f}")
    print(f"{'torch.profiler CPU+CUDA':<26} {t[0]:10.1f} {t[1]:10.1f} {t[2]:10.1f}")
    if kernels["last"] is not None:
        print(f"kernels in the last traced step: {kernels['last']} (launched {LAUNCHES})")
    print(f"metric torch_launch_untraced {u[0]:.1f} ns min {u[1]:.1f} max {u[2]:.1f}")
    print(f"metric torch_launch_traced {t[0]:.1f} ns min {t[1]:.1f} max {t[2]:.1f}")
    print(f"metric torch_trace_overhead {t[0] / u[0]:.3f} x")
    return 0


def count_kernels(prof, torch):
    """Kernels in the profiler's current results, or None if this torch
    version does not expose them the way tried here."""
    try:
        cuda = torch.autograd.DeviceType.CUDA
        return sum(1 for e in prof.events() if e.device_type == cuda)
    except Exception:  # noqa: BLE001 - informational only
        return None


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""bench_python.py: what a Python range costs while recording.

Measures `with RecordEvent(name):` (construction, begin and end, an empty
body) in a loop while a profiler records, and reports the median, min and max
of the per-use cost over repeated trials. When torch can be imported, measures
`with torch.profiler.record_function(name):` under torch.profiler.profile the
same way and reports it beside. Needs the package installed:

    make test-python                      # builds build/python-venv once
    build/python-venv/bin/python bench/bench_python.py
"""
import statistics
import sys
import time

import stepprof.profiler as profiler

TRIALS = 15
LOOPS = 20000


def per_use_ns(fn, loops=LOOPS, trials=TRIALS):
    """Runs fn(loops) `trials` times, returns each trial's ns per use, less the
    cost of the empty loop itself."""
    def empty(n):
        for _ in range(n):
            pass

    out = []
    for _ in range(trials):
        t0 = time.perf_counter_ns()
        empty(loops)
        t1 = time.perf_counter_ns()
        fn(loops)
        t2 = time.perf_counter_ns()
        out.append(((t2 - t1) - (t1 - t0)) / loops)
    return out


def report(metric, samples):
    print(f"metric {metric} {statistics.median(samples):.1f} ns "
          f"(median of {len(samples)} trials; min {min(samples):.1f}, max {max(samples):.1f})")


def stepprof_loop(n):
    RecordEvent = profiler.RecordEvent
    for _ in range(n):
        with RecordEvent("bench_range"):
            pass


def bench_stepprof():
    # One span of TRIALS * LOOPS ranges (about 10 MB of records); no step()
    # calls, so stop() prints no Perf Summary between the metric lines.
    prof = profiler.Profiler(on_trace_ready=lambda p: None)
    prof.start()
    samples = per_use_ns(stepprof_loop)
    prof.stop()
    report("python_record_event_ns", samples)
    closed = per_use_ns(stepprof_loop)
    report("python_record_event_not_recording_ns", closed)


def bench_torch():
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile, record_function
    except Exception as e:  # noqa: BLE001 - any import failure means "no torch here"
        print(f"torch not importable ({type(e).__name__}: {e}); torch_record_function_ns skipped")
        return

    def loop(n):
        for _ in range(n):
            with record_function("bench_range"):
                pass

    samples = []
    with profile(activities=[ProfilerActivity.CPU]):
        for _ in range(TRIALS):
            samples += per_use_ns(loop, loops=LOOPS // 10, trials=1)
    report("torch_record_function_ns", samples)
    del torch


def main():
    print(f"python {sys.version.split()[0]}, stepprof {profiler._core.CORE_VERSION}")
    bench_stepprof()
    bench_torch()


if __name__ == "__main__":
    main()

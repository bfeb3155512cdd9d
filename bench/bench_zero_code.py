#!/usr/bin/env python3
"""bench_zero_code.py: the training step under `stepprof run` (the profiler
injected through sitecustomize, steps found by torch's optimizer hook)
against the same step under the explicit API (a stepprof.profiler.Profiler
the loop creates, ended by its own step()), and unprofiled.

Injection is per process, so each mode is a child process running this file
with a mode argument: the loop (an MLP, SGD, batches made in the loop) runs
STEPS steps and prints the median time of the steps recorded in both
profiled modes ([FIRST, LAST)). A round runs the three modes once, in an
order that rotates from round to round; the figures are ratios within a
round and their medians over the rounds (the machine is shared: absolute
times drift by tens of percent within a minute).

`make bench` runs it (bench/report.py reads its `metric` lines). By hand,
with torch and the package installed (make test-python does both):

    build/python-venv/bin/python bench/bench_zero_code.py [rounds]"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

STEPS, FIRST, LAST = 70, 10, 60


def loop(mode, out):
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(),
                                torch.nn.Linear(512, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x, y = torch.randn(64, 256), torch.randint(0, 10, (64,))
    prof = None
    if mode == "explicit":
        import stepprof.profiler as sp
        prof = sp.Profiler(scheduler=(FIRST, LAST), perf_summary=False,
                           on_trace_ready=sp.export_chrome_tracing(out))
        prof.start()
    times = []
    for _ in range(STEPS):
        t0 = time.perf_counter_ns()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if prof is not None:
            prof.step()
        times.append(time.perf_counter_ns() - t0)
    if prof is not None:
        prof.stop()
    print(statistics.median(times[FIRST:LAST]) / 1e3)


def child(cmd, env):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit(f"bench_zero_code: {' '.join(cmd)} failed:\n{p.stdout[-2000:]}{p.stderr[-2000:]}")
    return float(p.stdout.strip().splitlines()[-1])


def metric(name, values, unit):
    print(f"metric {name} {statistics.median(values):.4g} {unit} "
          f"(min {min(values):.4g} max {max(values):.4g})", flush=True)


def main():
    try:
        import torch  # noqa: F401  (only whether it imports)
        import stepprof.profiler  # noqa: F401
    except ImportError as e:
        print(f"bench_zero_code: skipped: {e} (make test-python installs torch and stepprof)")
        return
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    me = os.path.abspath(__file__)
    build = os.environ.get("SP_BUILD", os.path.join(os.path.dirname(os.path.dirname(me)), "build"))
    env = dict(os.environ)
    env.setdefault("STEPPROF_CLI", shutil.which("stepprof") or os.path.join(build, "stepprof"))
    if not os.path.exists(env["STEPPROF_CLI"]):
        print("bench_zero_code: skipped: the stepprof tool is not built (make build)")
        return
    with tempfile.TemporaryDirectory(prefix="bench_zero_code_") as out:
        modes = {
            "none": [sys.executable, me, "--loop", "none", out],
            "explicit": [sys.executable, me, "--loop", "explicit", out],
            "injected": [env["STEPPROF_CLI"], "run", "--steps", f"{FIRST}:{LAST}", "--out", out,
                         "--", sys.executable, me, "--loop", "none", out],
        }
        got = {m: [] for m in modes}
        names = list(modes)
        for r in range(rounds):
            for m in names[r % 3:] + names[:r % 3]:
                got[m].append(child(modes[m], env))
        traces = [f for f in os.listdir(out) if f.endswith(".json")]
        if len(traces) != 2 * rounds:
            sys.exit(f"bench_zero_code: {len(traces)} traces for {2 * rounds} profiled runs; "
                     f"figures not valid")
    print(f"bench_zero_code: {rounds} rounds x 3 modes (child processes), an MLP step "
          f"(256-512-10, batch 64), median of steps [{FIRST}, {LAST}) of {STEPS}")
    metric("zero_code_step_none_us", got["none"], "us")
    metric("zero_code_explicit_over_none", [e / n for e, n in zip(got["explicit"], got["none"])],
           "x")
    metric("zero_code_injected_over_none", [i / n for i, n in zip(got["injected"], got["none"])],
           "x")
    metric("zero_code_injected_over_explicit",
           [i / e for i, e in zip(got["injected"], got["explicit"])], "x")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--loop":
        loop(sys.argv[2], sys.argv[3])
    else:
        main()

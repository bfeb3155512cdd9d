#!/usr/bin/env python3
"""gpu_torch_equivalent.py: examples/gpu_train written in PyTorch and
profiled with torch.profiler, so that a person can set what torch.profiler
reports beside what stepprof reports for the same loop.

The loop matches gpu_train: the same model (X[1024,1024] -> ReLU(X W1)
[1024,2048] -> Y = . W2 [1024,512], MSE against a fixed linear function of
X), the same phases marked with record_function (DataLoader: a pinned batch
copied to the device; forward; backward written out by hand, no autograd;
loss.item(); sgd: two in-place updates and zeroing the gradients), 20 steps
with steps [10, 15) recorded (schedule(wait=9, warmup=1, active=5)). The
kernels are cuBLAS's and ATen's, not gpu_train's hand-written ones, so the
kernel count per step and the kernel time differ; what should agree is how
each profiler counts: one kernel event per launch, one memcpy per copy.

It exports the Chrome trace, counts its "kernel", "gpu_memcpy" and
"gpu_memset" events and sums the kernel durations, checks the kernel total
against key_averages(), prints the key_averages table, and ends with one
machine-readable line in gpu_train's form:

    torch_equivalent: recorded_steps=5 kernels=K memcpys=M memsets=S kernel_time_us=T trace=<path>

Without torch or a CUDA device it prints "skip: ..." and exits 0.

    python3 bench/gpu_torch_equivalent.py [--out DIR]
"""
import argparse
import json
import os
import sys

BATCH, DIM, HIDDEN, OUT = 1024, 1024, 2048, 512
STEPS, RECORD_FIRST, RECORD_STEPS = 20, 10, 5
PREPARED_BATCHES = 4
LEARNING_RATE = 0.02


def trace_totals(path):
    """Counts of device events and the kernel time (us) in a Chrome trace."""
    with open(path, encoding="utf-8") as f:
        events = json.load(f).get("traceEvents", [])
    counts = {"kernel": 0, "gpu_memcpy": 0, "gpu_memset": 0}
    kernel_us = 0.0
    for e in events:
        cat = e.get("cat")
        if e.get("ph") == "X" and cat in counts:
            counts[cat] += 1
            if cat == "kernel":
                kernel_us += float(e.get("dur", 0))
    return counts, kernel_us


def main(argv=None):
    ap = argparse.ArgumentParser(description="gpu_train's loop in PyTorch under torch.profiler")
    ap.add_argument("--out", default="./torch_profiler_log", help="trace directory")
    a = ap.parse_args(argv)
    try:
        import torch
    except ImportError:
        print("skip: torch is not installed")
        return 0
    if not torch.cuda.is_available():
        print("skip: torch finds no CUDA device")
        return 0
    from torch.profiler import ProfilerActivity, profile, record_function, schedule

    dev = torch.device("cuda", 0)
    gen = torch.Generator().manual_seed(0x5eed)
    # Host batches, pinned: X uniform in [-1, 1), T = 0.5 X[:, 0::2] - 0.25 X[:, 1::2].
    batches = []
    for _ in range(PREPARED_BATCHES):
        x = torch.rand(BATCH, DIM, generator=gen) * 2 - 1
        t = 0.5 * x[:, 0:2 * OUT:2] - 0.25 * x[:, 1:2 * OUT:2]
        batches.append(torch.cat([x.reshape(-1), t.reshape(-1)]).pin_memory())
    w1 = ((torch.rand(DIM, HIDDEN, generator=gen) * 2 - 1) / DIM ** 0.5).to(dev)
    w2 = ((torch.rand(HIDDEN, OUT, generator=gen) * 2 - 1) / HIDDEN ** 0.5).to(dev)
    grads = torch.zeros(DIM * HIDDEN + HIDDEN * OUT, device=dev)  # dW1, dW2: one zeroing
    dw1 = grads[:DIM * HIDDEN].view(DIM, HIDDEN)
    dw2 = grads[DIM * HIDDEN:].view(HIDDEN, OUT)
    batch = torch.empty(BATCH * DIM + BATCH * OUT, device=dev)
    torch.cuda.synchronize()

    os.makedirs(a.out, exist_ok=True)
    trace_path = os.path.abspath(os.path.join(a.out, "gpu_torch_equivalent.pt.trace.json"))
    recorded = {"steps": 0}

    def ready(prof):
        prof.export_chrome_trace(trace_path)

    def step(i):
        with record_function("DataLoader"):
            batch.copy_(batches[i % PREPARED_BATCHES])  # pinned HtoD, synchronous
        x = batch[:BATCH * DIM].view(BATCH, DIM)
        t = batch[BATCH * DIM:].view(BATCH, OUT)
        with record_function("forward"):
            hpre = x @ w1
            hact = torch.relu(hpre)
            y = hact @ w2
            d = y - t
            loss = torch.sum(d * d) * (0.5 / BATCH)
        with record_function("backward"):
            dy = d * (1.0 / BATCH)
            dw2.addmm_(hact.t(), dy)
            dh = dy @ w2.t()
            dh = torch.ops.aten.threshold_backward(dh, hpre, 0)
            dw1.addmm_(x.t(), dh)
        with record_function("loss.item"):
            value = loss.item()
        with record_function("sgd"):
            w1.add_(dw1, alpha=-LEARNING_RATE)
            w2.add_(dw2, alpha=-LEARNING_RATE)
            grads.zero_()
        return value

    sched = schedule(wait=RECORD_FIRST - 1, warmup=1, active=RECORD_STEPS, repeat=1)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA], schedule=sched,
                 on_trace_ready=ready) as prof:
        for i in range(STEPS):
            value = step(i)
            torch.cuda.synchronize()
            if RECORD_FIRST <= i < RECORD_FIRST + RECORD_STEPS:
                recorded["steps"] += 1
            if i % 5 == 0 or i == STEPS - 1:
                print(f"step {i:4d}  loss {value:.5f}")
            prof.step()

    averages = prof.key_averages()
    # torch 2.4 renamed the cuda_* columns device_*.
    device_col = ("self_device_time_total" if averages and hasattr(averages[0], "self_device_time_total")
                  else "self_cuda_time_total")
    print(averages.table(sort_by=device_col, row_limit=25))
    counts, kernel_us = trace_totals(trace_path)
    # key_averages' device time of kernels, as a cross-check of the trace.
    try:
        cuda = torch.autograd.DeviceType.CUDA
        avg_us = sum(getattr(e, device_col) for e in averages if e.device_type == cuda)
        print(f"key_averages: kernel device time {avg_us:.3f} us (trace: {kernel_us:.3f} us)")
    except Exception as e:  # noqa: BLE001 - informational only
        print(f"key_averages: no per-kernel device time in this torch version ({e})")
    per = max(recorded["steps"], 1)
    print(f"per recorded step: {counts['kernel'] / per:.1f} kernels, "
          f"{counts['gpu_memcpy'] / per:.1f} memcpys, {counts['gpu_memset'] / per:.1f} memsets "
          f"(gpu_train: 10, 2, 1)")
    print(f"torch_equivalent: recorded_steps={recorded['steps']} kernels={counts['kernel']} "
          f"memcpys={counts['gpu_memcpy']} memsets={counts['gpu_memset']} "
          f"kernel_time_us={kernel_us:.3f} trace={trace_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

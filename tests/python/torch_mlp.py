"""A small torch training loop (an MLP, SGD, a torch DataLoader) profiled by
torch.profiler or by stepprof.profiler, for tests/python/test_torch_capture.py.
Both record steps 2 to 1 + ACTIVE (torch: schedule(wait=1, warmup=1,
active=ACTIVE); stepprof: (2, 2 + ACTIVE)), ACTIVE 3 unless --active, and print one JSON line: the key_averages-style table of
the recorded steps sorted by count, and the stepprof trace's path.

    python torch_mlp.py torch|stepprof|both [--workers N] [--out DIR] [--tb DIR] [--steps N] [--width W] [--active N]

both: stepprof's profiler inside torch's, each printing its own table (stepprof steps
first, so that the longer stop, torch's, falls outside stepprof's steps).
--tb DIR: each profiler writes its trace with its tensorboard_trace_handler
into DIR/torch or DIR/stepprof (the viewer comparison, tests/compat)."""
import argparse
import json
import os
import sys

import torch

import stepprof.profiler as sp

parser = argparse.ArgumentParser()
parser.add_argument("which", choices=["torch", "stepprof", "both"])
parser.add_argument("--workers", type=int, default=0)
parser.add_argument("--out", default=".")
parser.add_argument("--tb", default=None)
parser.add_argument("--steps", type=int, default=6)
parser.add_argument("--active", type=int, default=3, help="steps recorded, from step 2")
# Wider layers and batches make steps long against the profilers' own start
# and stop, which fall inside the other profiler's steps when both run.
parser.add_argument("--width", type=int, default=1, help="layer width and batch size factor")
args = parser.parse_args()

torch.manual_seed(0)
w = args.width
model = torch.nn.Sequential(torch.nn.Linear(32 * w, 64 * w), torch.nn.ReLU(), torch.nn.Linear(64 * w, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.utils.data.TensorDataset(torch.randn(512 * w, 32 * w), torch.randint(0, 10, (512 * w,)))
loader = torch.utils.data.DataLoader(data, batch_size=16 * w, num_workers=args.workers)


def train(steppers, steps=6):
    it = iter(loader)
    for _ in range(steps):
        x, y = next(it)
        with torch.profiler.record_function("my_loss"):
            loss = torch.nn.functional.cross_entropy(model(x), y).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        for s in steppers:
            s.step()


out = {}


def torch_ready(prof):
    out["torch_table"] = prof.key_averages().table(sort_by="count", row_limit=1000)
    if args.tb:
        torch.profiler.tensorboard_trace_handler(os.path.join(args.tb, "torch"))(prof)


def torch_profile():
    return torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                  schedule=torch.profiler.schedule(wait=1, warmup=1, active=args.active),
                                  on_trace_ready=torch_ready)


def stepprof_profile():
    handler = (sp.tensorboard_trace_handler(os.path.join(args.tb, "stepprof")) if args.tb
               else sp.export_chrome_tracing(args.out))
    return sp.Profiler(scheduler=(2, 2 + args.active), on_trace_ready=handler)


if args.which == "torch":
    with torch_profile() as tp:
        train([tp], args.steps)
elif args.which == "stepprof":
    with stepprof_profile() as p:
        train([p], args.steps)
else:
    with torch_profile() as tp, stepprof_profile() as p:
        train([p, tp], args.steps)  # stepprof first: its stop is the shorter
if args.which != "torch":
    out["stepprof_table"] = p.get_result().table_torch(sort_by="count", row_limit=1000)
    out["trace"] = p.trace_path
    from stepprof import _torch_capture
    out["adapter_enabled_after"] = bool(_torch_capture._adapter and _torch_capture._adapter.is_enabled())
print(json.dumps(out))

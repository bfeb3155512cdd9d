"""A small torch training loop (an MLP, SGD, a torch DataLoader) profiled by
torch.profiler or by stepprof.profiler, for tests/python/test_torch_capture.py.
Both record steps 2 to 4 (torch: schedule(wait=1, warmup=1, active=3);
stepprof: (2, 5)) and print one JSON line: the key_averages-style table of
the recorded steps sorted by count, and the stepprof trace's path.

    python torch_mlp.py torch|stepprof|both [--workers N] [--out DIR]

both: stepprof's profiler inside torch's, each printing its own table."""
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
args = parser.parse_args()

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.utils.data.TensorDataset(torch.randn(512, 32), torch.randint(0, 10, (512,)))
loader = torch.utils.data.DataLoader(data, batch_size=16, num_workers=args.workers)


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


def torch_profile():
    return torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU],
                                  schedule=torch.profiler.schedule(wait=1, warmup=1, active=3),
                                  on_trace_ready=torch_ready)


def stepprof_profile():
    return sp.Profiler(scheduler=(2, 5), on_trace_ready=sp.export_chrome_tracing(args.out))


if args.which == "torch":
    with torch_profile() as tp:
        train([tp])
elif args.which == "stepprof":
    with stepprof_profile() as p:
        train([p])
else:
    with torch_profile() as tp, stepprof_profile() as p:
        train([tp, p])
if args.which != "torch":
    out["stepprof_table"] = p.get_result().table_torch(sort_by="count", row_limit=1000)
    out["trace"] = p.trace_path
    from stepprof import _torch_capture
    out["adapter_enabled_after"] = bool(_torch_capture._adapter and _torch_capture._adapter.is_enabled())
print(json.dumps(out))

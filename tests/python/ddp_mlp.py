"""A 4-rank data-parallel training loop for tests/python/test_torch_distributed.py:
each rank (a process torchrun started) trains a small MLP under
DistributedDataParallel over gloo, records steps [2, 5) with
stepprof.profiler, and writes its span to OUT/rank<R>.json, .json.gz and .pb.

    python -m torch.distributed.run --standalone --nproc_per_node 4 ddp_mlp.py OUT"""
import os
import sys

import torch
import torch.distributed as dist

import stepprof.profiler as sp

out = sys.argv[1]
dist.init_process_group("gloo")
rank = dist.get_rank()
torch.manual_seed(rank)
model = torch.nn.parallel.DistributedDataParallel(
    torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4)))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
with sp.Profiler(scheduler=(2, 5), on_trace_ready=None) as p:
    for _ in range(6):
        x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        p.step()
for suffix, fmt in (("json", "json"), ("json.gz", "json.gz"), ("pb", "pb")):
    p.export(os.path.join(out, f"rank{rank}.{suffix}"), format=fmt)
# Every rank done before any tears gloo down: one run in about 30 ended with
# std::terminate in one rank after its work, and an early teardown is the suspect.
dist.barrier()
dist.destroy_process_group()

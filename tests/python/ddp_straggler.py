"""A 4-rank data-parallel loop with a straggler, for
tests/python/test_rank_straggler.py: each rank (a process torchrun started)
trains a small MLP under DistributedDataParallel over gloo and records steps
[1, 10) with stepprof.profiler; rank 2 sleeps 30 ms in its data loading on
every third step (3, 6, 9), so the other ranks wait for it in the all-reduce
that follows. Each rank writes OUT/rank<R>.json.

    python -m torch.distributed.run --standalone --nproc_per_node 4 ddp_straggler.py OUT"""
import os
import sys
import time

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
with sp.Profiler(scheduler=(1, 10), on_trace_ready=None) as p:
    for step in range(11):
        with sp.RecordEvent("load_batch", sp.TracerEventType.Dataloader):
            if rank == 2 and step % 3 == 0 and step > 0:
                time.sleep(0.03)
            x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))
        loss = torch.nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        p.step()
p.export(os.path.join(out, f"rank{rank}.json"), format="json")
# Every rank done before any tears gloo down: one run in about 30 ended with
# std::terminate in one rank after its work, and an early teardown is the suspect.
dist.barrier()
dist.destroy_process_group()

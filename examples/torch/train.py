"""train.py: a torch training loop (a 3-layer MLP, SGD, a torch DataLoader)
profiled the torch.profiler way. Only the import line differs between
torch.profiler and stepprof: `python train.py` runs stepprof,
`python train.py --torch` runs torch.profiler, for comparing the two.
Steps 2 to 4 are recorded; the trace goes to ./log/ for TensorBoard, the
operator table to stdout, both when the last of them ends."""
import sys

import torch

if "--torch" in sys.argv[1:]:
    import torch.profiler as profiler
else:
    import stepprof.torch_profiler as profiler  # instead of: import torch.profiler as profiler

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 128),
                            torch.nn.ReLU(), torch.nn.Linear(128, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
data = torch.utils.data.TensorDataset(torch.randn(480, 64), torch.randn(480, 1))
loader = torch.utils.data.DataLoader(data, batch_size=16)



def trace_ready(prof):
    profiler.tensorboard_trace_handler("./log")(prof)
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=8))


with profiler.profile(activities=[profiler.ProfilerActivity.CPU],
                      schedule=profiler.schedule(wait=1, warmup=1, active=3),
                      on_trace_ready=trace_ready, record_shapes=True, profile_memory=True) as prof:
    for step, (x, y) in enumerate(loader):
        with profiler.record_function("forward"):
            loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        prof.step()
        if step == 4:
            break

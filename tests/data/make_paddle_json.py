"""Makes tests/data/paddle_mlp.paddle_trace.json and paddle_mlp.paddle_summary.txt
with paddle.profiler itself (see README.md): two recorded steps of a small MLP
with a paddle.io.DataLoader, a RecordEvent and profile_memory, so that the
file holds every kind of host event paddle's CPU build writes (ProfileStep,
Dataloader, Forward, Backward, Optimization, PythonUserDefined, Operator,
OperatorInner, DygraphKernelLaunch, UserDefined) and its [memory] events.
The trace is kept as paddle wrote it, byte for byte; the run is made small
instead of the file being cut, so that nothing in it is stepprof's doing.

usage: python make_paddle_json.py OUT_DIR"""
import os
import sys

import numpy as np
import paddle
import paddle.profiler as profiler

MAX_EVENTS = 600  # a fixture, not a benchmark: a few hundred events


class Data(paddle.io.Dataset):
    def __init__(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((16, 8)).astype("float32")
        self.y = rng.standard_normal((16, 1)).astype("float32")

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    trace = os.path.join(out, "paddle_mlp.paddle_trace.json")
    paddle.seed(0)
    paddle.set_device("cpu")
    loader = paddle.io.DataLoader(Data(), batch_size=4, shuffle=False, num_workers=0, drop_last=True)
    model = paddle.nn.Sequential(paddle.nn.Linear(8, 16), paddle.nn.ReLU(), paddle.nn.Linear(16, 1))
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=(1, 3), profile_memory=True,
                             on_trace_ready=lambda p: None)
    prof.start()
    for x, y in loader:
        with profiler.RecordEvent("scale_input"):
            x = x * 2.0
        loss = paddle.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        prof.step()
    prof.stop()
    prof.export(trace, "json")
    # paddle's own tables for the same run, the reference the C test holds
    # stepprof's summary of the trace against.
    with open(os.path.join(out, "paddle_mlp.paddle_summary.txt"), "w") as f:
        stdout = sys.stdout
        sys.stdout = f
        try:
            prof.summary(time_unit="us")
        finally:
            sys.stdout = stdout
    with open(trace) as f:
        count = f.read().count('"ph":')
    if count > MAX_EVENTS:
        sys.exit(f"{trace}: {count} events, more than a fixture should hold")
    print(f"{trace}: {count} events, paddle {paddle.__version__}")


if __name__ == "__main__":
    main()

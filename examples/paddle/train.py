"""train.py: a paddle training loop (a 3-layer MLP, SGD, paddle.io.DataLoader)
profiled the paddle.profiler way. Only the import line differs between
paddle.profiler and stepprof: `python train.py` runs stepprof,
`python train.py --paddle` runs paddle.profiler, for comparing the two.
Steps 10 to 14 are recorded; the trace goes to ./profiler_log/, the tables
and the Perf Summary to stdout."""
import sys

import numpy as np
import paddle

if "--paddle" in sys.argv[1:]:
    import paddle.profiler as profiler
else:
    import stepprof.profiler as profiler  # instead of: import paddle.profiler as profiler

STEPS, BATCH = 30, 16


class RandomData(paddle.io.Dataset):
    def __init__(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((STEPS * BATCH, 64)).astype("float32")
        self.y = rng.standard_normal((STEPS * BATCH, 1)).astype("float32")

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


class MLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.l1 = paddle.nn.Linear(64, 128)
        self.l2 = paddle.nn.Linear(128, 128)
        self.l3 = paddle.nn.Linear(128, 1)

    def forward(self, x):
        return self.l3(paddle.nn.functional.relu(self.l2(paddle.nn.functional.relu(self.l1(x)))))


def main():
    paddle.seed(0)
    paddle.set_device("cpu")
    loader = paddle.io.DataLoader(RandomData(), batch_size=BATCH, drop_last=True)
    model = MLP()
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=(10, 15),
                             on_trace_ready=profiler.export_chrome_tracing("./profiler_log"),
                             profile_memory=True)
    prof.start()
    for x, y in loader:
        loss = paddle.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        prof.step(num_samples=BATCH)
    prof.stop()  # prints the Perf Summary: reader_cost, batch_cost, ips
    prof.summary(op_detail=False, views=[profiler.SummaryView.OverView,
                                         profiler.SummaryView.ModelView,
                                         profiler.SummaryView.OperatorView,
                                         profiler.SummaryView.MemoryView])


if __name__ == "__main__":
    main()

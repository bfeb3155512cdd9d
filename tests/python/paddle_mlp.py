"""A small paddle training loop (3-layer MLP, SGD, paddle.io.DataLoader) run
under paddle.profiler or stepprof.profiler, the one named by argv[1]
("paddle" or "stepprof"); prints the profiler's summary tables (all views, with
op_detail, as summary() does by default) to stdout, and with a path as argv[2] exports the span's
Chrome-trace JSON there; with --op-info anywhere after it, both profilers get
record_shapes=True and with_flops=True. test_paddle_capture.py runs it once per profiler
in a subprocess (each gets a fresh paddle and a fresh tracer) and compares
the tables."""
import sys

import numpy as np
import paddle

OP_INFO = "--op-info" in sys.argv
ARGS = [a for a in sys.argv if a != "--op-info"]

if len(ARGS) > 1 and ARGS[1] == "paddle":  # bench_paddle.py imports it with no arguments
    import paddle.profiler as profiler
else:
    import stepprof.profiler as profiler

STEPS, BATCH = 9, 8
RECORD = (2, 7)  # steps 2..6: five recorded steps


class Data(paddle.io.Dataset):
    def __init__(self):
        rng = np.random.default_rng(0)
        self.x = rng.standard_normal((STEPS * BATCH, 16)).astype("float32")
        self.y = rng.standard_normal((STEPS * BATCH, 1)).astype("float32")

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


class MLP(paddle.nn.Layer):
    def __init__(self):
        super().__init__()
        self.l1 = paddle.nn.Linear(16, 32)
        self.l2 = paddle.nn.Linear(32, 32)
        self.l3 = paddle.nn.Linear(32, 1)

    def forward(self, x):
        return self.l3(paddle.nn.functional.relu(self.l2(paddle.nn.functional.relu(self.l1(x)))))


def main():
    paddle.seed(0)
    paddle.set_device("cpu")
    loader = paddle.io.DataLoader(Data(), batch_size=BATCH, shuffle=False, num_workers=0,
                                  drop_last=True)
    model = MLP()
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=RECORD,
                             on_trace_ready=lambda p: None, record_shapes=OP_INFO,
                             with_flops=OP_INFO)
    prof.start()
    for x, y in loader:
        loss = paddle.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        prof.step()
    prof.stop()
    if len(ARGS) > 2:
        prof.export(ARGS[2], "json")
    print("=== summary ===")
    prof.summary(time_unit="us")  # fine enough that no row rounds to 0


if __name__ == "__main__":
    main()

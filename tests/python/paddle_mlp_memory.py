"""paddle_mlp.py's training loop with profile_memory=True, under the
profiler named by argv[1] ("paddle" or "stepprof"): prints the Memory
Summary (and the Memory Manipulation Summary, when there is one) and exports
the span's Chrome-trace JSON to argv[2]. test_paddle_memory.py runs it once
per profiler, each in its own process, and compares the tables."""
import sys

import paddle

import paddle_mlp as mlp  # its profiler module is the one argv[1] names

profiler = mlp.profiler


def main():
    paddle.seed(0)
    paddle.set_device("cpu")
    loader = paddle.io.DataLoader(mlp.Data(), batch_size=mlp.BATCH, shuffle=False, num_workers=0,
                                  drop_last=True)
    model = mlp.MLP()
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=mlp.RECORD,
                             on_trace_ready=lambda p: None, profile_memory=True)
    prof.start()
    for x, y in loader:
        loss = paddle.nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        prof.step()
    prof.stop()
    prof.export(sys.argv[2], "json")
    print("=== summary ===")
    prof.summary(time_unit="us", views=[profiler.SummaryView.MemoryView,
                                        profiler.SummaryView.MemoryManipulationView])


if __name__ == "__main__":
    main()

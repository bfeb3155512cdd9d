# Makes tests/data/paddle_cpu_tiny.paddle_trace.pb with paddle.profiler on the CPU (see README.md).
import numpy as np
import paddle
import paddle.profiler as profiler

paddle.seed(0)
linear = paddle.nn.Linear(8, 4)
opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=linear.parameters())
with profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=(1, 3), record_shapes=True,
                       on_trace_ready=profiler.export_protobuf("./out", "tiny")) as prof:
    for step in range(4):
        with profiler.RecordEvent("DataPrepare"):
            x = paddle.to_tensor(np.ones((2, 8), dtype="float32"))
        loss = linear(x).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        prof.step()

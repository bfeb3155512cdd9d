"""quickstart.py: the README's Python example, complete. A paddle-style
training loop marks its data preparation and forward pass; steps [2, 10) are
recorded into ./profiler_demo, and paddle's summary tables are printed at the
end. loader, prepare and model stand in for a real data loader and model."""
import stepprof.profiler as profiler           # instead of: import paddle.profiler as profiler

loader = [[float(i + j) for j in range(256)] for i in range(12)]   # 12 batches


def prepare(batch):
    return [v / 255.0 for v in batch]


def model(x):
    return sum(v * v for v in x) / len(x)


with profiler.Profiler(targets=[profiler.ProfilerTarget.CPU],
                       scheduler=(2, 10),      # record steps [2, 10)
                       on_trace_ready=profiler.export_chrome_tracing('./profiler_demo')) as prof:
    for batch in loader:
        with profiler.RecordEvent("DataPrepare"):          # PythonUserDefined by default
            x = prepare(batch)
        with profiler.RecordEvent("forward", profiler.TracerEventType.Forward):
            loss = model(x)
        prof.step()
prof.summary()                                  # paddle's tables, to sys.stdout
print("trace:", prof.trace_path)

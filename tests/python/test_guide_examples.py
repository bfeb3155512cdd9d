"""The code examples of the paddle.profiler guide (seeds/003) and API
reference (seeds/001), unchanged except for the import line and the model
code (pure Python here). Each checks the files and tables the guide says it
produces."""
import os

import stepprof.profiler as profiler
from stepprof.profiler import ProfilerTarget
from conftest import (GPU_WARNING, cuda_driver_present, event_names, load_trace, step_names, steps,
                      trace_files, work)


def test_guide_1_context_manager_tuple_scheduler(capsys, recwarn):
    with profiler.Profiler(
             targets=[ProfilerTarget.CPU, ProfilerTarget.GPU],
             scheduler=(2, 10),
             on_trace_ready=profiler.export_chrome_tracing('./profiler_demo')) as prof:
        for i in range(30):
            work()
            prof.step()
    prof.summary()
    files = trace_files("profiler_demo")
    assert len(files) == 1
    assert files[0].endswith(".paddle_trace.json")
    assert step_names(load_trace(files[0])) == steps(2, 10)
    out = capsys.readouterr()
    assert "Overview Summary" in out.out and "Device Summary" in out.out
    assert "ProfileStep" in out.out
    # A StepprofWarning through Python's warnings (issue 17).
    assert any(GPU_WARNING in str(w.message) for w in recwarn) or cuda_driver_present()


def test_guide_1_make_scheduler_repeat_writes_three_files():
    with profiler.Profiler(
             targets=[ProfilerTarget.CPU, ProfilerTarget.GPU],
             scheduler=profiler.make_scheduler(closed=1, ready=1, record=4, repeat=3),
             on_trace_ready=profiler.export_chrome_tracing('./profiler_demo')) as prof:
        for i in range(30):
            work()
            prof.step()
    files = trace_files("profiler_demo")
    assert len(files) == 3
    recorded = sorted((step_names(load_trace(f)) for f in files), key=lambda s: int(s[0][13:]))
    assert recorded == [steps(2, 6), steps(8, 12), steps(14, 18)]


def test_guide_1_default_profiler_records_every_step(capsys):
    with profiler.Profiler() as prof:
        for i in range(20):
            work()
            prof.step()
    prof.summary()
    files = trace_files("profiler_log")
    assert len(files) == 1
    # Every step recorded; stop() closes the step opened by the last step().
    assert step_names(load_trace(files[0])) == steps(0, 21)
    assert "Overview Summary" in capsys.readouterr().out


def test_guide_2_start_step_stop(capsys):
    prof = profiler.Profiler(
               targets=[ProfilerTarget.CPU, ProfilerTarget.GPU],
               scheduler=(2, 10),
               on_trace_ready=profiler.export_chrome_tracing('./profiler_demo'))
    prof.start()
    for i in range(30):
        work()
        prof.step()
    prof.stop()
    prof.summary()
    files = trace_files("profiler_demo")
    assert len(files) == 1
    assert step_names(load_trace(files[0])) == steps(2, 10)
    assert "Overview Summary" in capsys.readouterr().out
    assert prof.current_state == profiler.ProfilerState.CLOSED


def test_guide_3_custom_scheduler():
    def my_scheduler(step):
        return profiler.ProfilerState.RECORD

    prof = profiler.Profiler(
        targets=[ProfilerTarget.CPU, ProfilerTarget.GPU],
        scheduler=my_scheduler,
        on_trace_ready=profiler.export_chrome_tracing('./profiler_demo'))
    prof.start()
    for i in range(30):
        work()
        prof.step()
    prof.stop()
    prof.summary()
    files = trace_files("profiler_demo")
    assert len(files) == 1  # RECORD forever: one span, returned at stop()
    assert step_names(load_trace(files[0])) == steps(0, 31)


def test_guide_4_custom_on_trace_ready(capsys):
    calls = []

    def my_on_trace_ready(prof):
        callback = profiler.export_chrome_tracing('./profiler_demo')
        callback(prof)
        prof.summary()
        calls.append(prof.step_num)

    prof = profiler.Profiler(
        targets=[ProfilerTarget.CPU, ProfilerTarget.GPU],
        scheduler=(2, 10),
        on_trace_ready=my_on_trace_ready)
    prof.start()
    for i in range(30):
        work()
        prof.step()
    prof.stop()
    assert calls == [10]  # in the step() that follows the last recorded step
    files = trace_files("profiler_demo")
    assert len(files) == 1
    assert step_names(load_trace(files[0])) == steps(2, 10)
    assert os.path.samefile(prof.trace_path, files[0])
    assert capsys.readouterr().out.count("Overview Summary") == 1


def test_guide_4_multi_span_callback_sees_each_span(capsys):
    seen = []

    def my_on_trace_ready(prof):
        callback = profiler.export_chrome_tracing('./profiler_demo')
        callback(prof)
        prof.summary()
        seen.append([n.name for n in prof.get_result().tree(0) if n.type == profiler.TracerEventType.ProfileStep])

    with profiler.Profiler(scheduler=profiler.make_scheduler(closed=1, ready=1, record=4, repeat=3),
                           on_trace_ready=my_on_trace_ready) as prof:
        for i in range(30):
            work()
            prof.step()
    assert seen == [[f"ProfileStep#{i}" for i in range(a, a + 4)] for a in (2, 8, 14)]
    assert len(trace_files("profiler_demo")) == 3
    assert capsys.readouterr().out.count("Overview Summary") == 3


def test_guide_5_record_event(capsys):
    def my_on_trace_ready(prof):
        callback = profiler.export_chrome_tracing('./profiler_demo')
        callback(prof)
        prof.summary()

    prof = profiler.Profiler(
        targets=[ProfilerTarget.CPU, ProfilerTarget.GPU],
        scheduler=(2, 10),
        on_trace_ready=my_on_trace_ready)
    prof.start()
    for i in range(30):
        with profiler.RecordEvent("DataPrepare"):
            data = work()
        prof.step()
    prof.stop()
    prof.summary()
    out = capsys.readouterr().out
    assert "UserDefined Summary" in out and "DataPrepare" in out
    trace = load_trace(trace_files("profiler_demo")[0])
    prepared = [e for e in trace["traceEvents"] if e.get("name") == "DataPrepare"]
    assert len(prepared) == 8
    assert all(e["args"]["Event Type"] == "PythonUserDefined" for e in prepared)
    udf = prof.get_result().summary_table(profiler.SummaryView.UDFView)
    assert udf.column("Name") == ["DataPrepare"]
    assert udf.records()[0]["Calls"] == "8"


def test_guide_6_timer_only_step_info(capsys):
    class RandomDataset:
        def __init__(self, num_samples):
            self.num_samples = num_samples

        def __getitem__(self, idx):
            return [float(idx % 7)] * 100, idx % 10

        def __len__(self):
            return self.num_samples

    def loader(dataset, batch_size):
        for b in range(0, len(dataset), batch_size):
            with profiler.RecordEvent("DataLoader", profiler.TracerEventType.Dataloader):
                batch = [dataset[i] for i in range(b, b + batch_size)]
            yield [x for x, _ in batch], [y for _, y in batch]

    dataset = RandomDataset(20 * 4)
    BATCH_SIZE = 4
    p = profiler.Profiler(timer_only=True)
    p.start()
    infos = []
    for i, (image, label) in enumerate(loader(dataset, BATCH_SIZE)):
        work()
        p.step(num_samples=BATCH_SIZE)
        if i % 10 == 0:
            step_info = p.step_info(unit='images')
            print("Iter {}: {}".format(i, step_info))
            infos.append(step_info)
    p.stop()
    out = capsys.readouterr().out
    assert "Iter 0: " in out and "Iter 10: " in out
    for info in infos:
        assert info.startswith(" reader_cost: ") and " batch_cost: " in info
        assert info.endswith(" images/s")
    assert "Perf Summary" in out and "reader_cost" in out and "batch_cost" in out
    assert "IPS Unit: images/s" in out
    assert not os.path.exists("profiler_log")  # timer_only writes no trace


def test_reference_make_scheduler_closed1_ready2_record3(capsys):
    with profiler.Profiler(targets=[ProfilerTarget.CPU, ProfilerTarget.GPU],
                           scheduler=profiler.make_scheduler(closed=1, ready=2, record=3, repeat=1),
                           on_trace_ready=profiler.export_chrome_tracing('./profiler_demo')) as prof:
        for i in range(10):
            work()
            prof.step()
    prof.summary()
    files = trace_files("profiler_demo")
    assert len(files) == 1
    assert step_names(load_trace(files[0])) == steps(3, 6)


def test_reference_record_event_begin_end():
    with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing('./profiler_demo')) as prof:
        with profiler.RecordEvent("record_add"):
            work()
        record_event = profiler.RecordEvent("record_add")
        record_event.begin()
        work()
        record_event.end()
        prof.step()
    names = event_names(load_trace(trace_files("profiler_demo")[0]))
    assert names.count("record_add") == 2

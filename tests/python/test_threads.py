"""Python events are recorded on the calling thread, under its OS thread id
(threading.get_native_id()), from any number of Python threads."""
import threading

import stepprof.profiler as profiler
from conftest import load_trace, trace_files


def test_record_event_from_several_threads():
    n_threads, per_thread = 4, 50
    tids = {}
    barrier = threading.Barrier(n_threads + 1)

    def worker(k):
        tids[k] = threading.get_native_id()
        barrier.wait()
        for i in range(per_thread):
            with profiler.RecordEvent(f"worker{k}"):
                with profiler.RecordEvent("inner", profiler.TracerEventType.Operator):
                    sum(range(50))
        barrier.wait()

    with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./o")) as prof:
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(n_threads)]
        for t in threads:
            t.start()
        barrier.wait()  # all threads recording
        barrier.wait()  # all done
        for t in threads:
            t.join()
        prof.step()
    result = prof.get_result()
    by_tid = {t.tid: i for i, t in enumerate(result.threads)}
    assert threading.get_native_id() in by_tid
    for k, tid in tids.items():
        roots = result.tree(by_tid[tid])
        assert [r.name for r in roots] == [f"worker{k}"] * per_thread
        assert all(r.type == profiler.TracerEventType.PythonUserDefined for r in roots)
        assert all([c.name for c in r.children] == ["inner"] for r in roots)
        assert all(r.thread_id == tid for r in roots)
    assert result.counters["unmatched_ends"] == 0 and result.counters["unclosed_ranges"] == 0
    trace = load_trace(trace_files("o")[0])
    for k, tid in tids.items():
        mine = [e for e in trace["traceEvents"] if e.get("name") == f"worker{k}"]
        assert len(mine) == per_thread and {e["tid"] for e in mine} == {tid}


def test_end_on_another_thread_is_refused():
    with profiler.Profiler(on_trace_ready=lambda p: None) as prof:
        rec = profiler.RecordEvent("crossing")
        rec.begin()
        errors = []

        def other():
            try:
                rec.end()
            except RuntimeError as e:
                errors.append(str(e))

        t = threading.Thread(target=other)
        t.start()
        t.join()
        rec.end()
        prof.step()
    assert errors and "thread that called begin" in errors[0]
    assert prof.get_result().counters["unmatched_ends"] == 0


def test_profiler_used_from_another_thread_while_busy_is_refused():
    started, release = threading.Event(), threading.Event()
    errors = []

    def slow_handler(prof):
        started.set()
        release.wait(10)

    prof = profiler.Profiler(on_trace_ready=slow_handler)
    prof.start()

    def stopper():
        prof.stop()

    t = threading.Thread(target=stopper)
    t.start()
    started.wait(10)
    try:
        prof.step()
    except RuntimeError as e:
        errors.append(str(e))
    release.set()
    t.join()
    assert errors and "another thread" in errors[0]


def test_decorator_records_each_call_on_its_thread():
    @profiler.RecordEvent("decorated", profiler.TracerEventType.Forward)
    def forward(x):
        return x * 2

    @profiler.record_function("torch_style")
    def helper():
        return 1

    assert forward.__name__ == "forward"
    with profiler.Profiler(on_trace_ready=lambda p: None) as prof:
        threads = [threading.Thread(target=lambda: [forward(i) for i in range(10)]) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert forward(3) == 6 and helper() == 1
        with profiler.record_function("block"):
            pass
        prof.step()
    result = prof.get_result()
    names = [e.name for i in range(len(result.threads)) for e in result.events(i)]
    assert names.count("decorated") == 21
    assert names.count("torch_style") == 1 and names.count("block") == 1
    types = {e.type for i in range(len(result.threads)) for e in result.events(i) if e.name == "decorated"}
    assert types == {profiler.TracerEventType.Forward}

"""Python callables as scheduler and on_trace_ready: called from C with the
GIL, exceptions re-raised by the call that ran them, re-entrant calls
handled."""
import gc
import weakref

import pytest

import stepprof.profiler as profiler
from conftest import trace_files


class Boom(Exception):
    pass


def test_scheduler_exception_is_raised_by_step():
    def sched(step):
        if step == 3:
            raise Boom("step 3")
        return profiler.ProfilerState.RECORD

    prof = profiler.Profiler(scheduler=sched, on_trace_ready=profiler.export_chrome_tracing("./o"))
    prof.start()
    prof.step()
    prof.step()
    with pytest.raises(Boom, match="step 3"):
        prof.step()
    prof.step()  # the profiler goes on
    prof.stop()


def test_scheduler_exception_at_start():
    def sched(step):
        raise Boom("at start")

    prof = profiler.Profiler(scheduler=sched, on_trace_ready=profiler.export_chrome_tracing("./o"))
    with pytest.raises(Boom):
        prof.start()
    prof.stop()


def test_scheduler_bad_return_value_raises_value_error():
    prof = profiler.Profiler(scheduler=lambda step: "RECORD",
                             on_trace_ready=profiler.export_chrome_tracing("./o"))
    with pytest.raises(ValueError, match="ProfilerState"):
        prof.start()
    prof.stop()


def test_scheduler_may_return_plain_ints():
    prof = profiler.Profiler(scheduler=lambda step: 2 if step < 3 else 3,
                             on_trace_ready=profiler.export_chrome_tracing("./o"))
    with prof:
        for _ in range(5):
            prof.step()
    assert len(trace_files("o")) >= 1


def test_on_trace_ready_exception_is_raised_by_step():
    def handler(prof):
        raise Boom("handler")

    prof = profiler.Profiler(scheduler=(1, 3), on_trace_ready=handler)
    prof.start()
    prof.step()
    prof.step()
    with pytest.raises(Boom, match="handler"):
        prof.step()  # step 3 follows the last recorded step
    assert prof.get_result() is not None  # the span was collected
    prof.stop()


def test_on_trace_ready_exception_is_raised_by_stop():
    def handler(prof):
        raise Boom("at stop")

    prof = profiler.Profiler(on_trace_ready=handler)
    prof.start()
    prof.step()
    with pytest.raises(Boom, match="at stop"):
        prof.stop()


def test_context_manager_propagates_handler_exception():
    def handler(prof):
        raise KeyError("k")

    with pytest.raises(KeyError):
        with profiler.Profiler(on_trace_ready=handler) as prof:
            prof.step()


def test_step_inside_on_trace_ready_is_refused():
    def handler(prof):
        prof.step()

    prof = profiler.Profiler(on_trace_ready=handler)
    prof.start()
    with pytest.raises(RuntimeError, match="cannot be called from on_trace_ready"):
        prof.stop()


def test_stop_inside_on_trace_ready_is_deferred(capsys):
    # The guide's case study: my_on_trace_ready exports, stops (printing the
    # benchmark) and prints the summary; the loop keeps calling step().
    def my_on_trace_ready(prof):
        callback = profiler.export_chrome_tracing('./profiler_demo')
        callback(prof)
        prof.stop()
        prof.summary(sorted_by=profiler.SortedKeys.GPUTotal)

    p = profiler.Profiler(scheduler=[3, 14], on_trace_ready=my_on_trace_ready)
    p.start()
    for batch_id in range(20):
        p.step()
    p.stop()
    out = capsys.readouterr().out
    assert "Perf Summary" in out and "Overview Summary" in out
    assert len(trace_files("profiler_demo")) == 1
    assert p.current_state == profiler.ProfilerState.CLOSED


def test_reading_calls_work_inside_on_trace_ready():
    seen = {}

    def handler(prof):
        seen["state"] = prof.current_state
        seen["result"] = prof.get_result()
        seen["info"] = prof.step_info()
        prof.export("inside.json")

    with profiler.Profiler(scheduler=(0, 2), on_trace_ready=handler) as prof:
        for _ in range(4):
            prof.step()
    assert seen["result"] is not None
    assert len(seen["result"].threads) == 1
    assert trace_files(".") == ["./inside.json"]


def test_handler_and_scheduler_are_released_with_cycles():
    class Holder:
        pass

    holder = Holder()

    def handler(prof):
        holder.prof = prof

    prof = profiler.Profiler(scheduler=lambda s: profiler.ProfilerState.RECORD, on_trace_ready=handler)
    prof.handler_ref = handler  # a cycle through the C object
    prof.start()
    prof.step()
    prof.stop()
    ref = weakref.ref(prof)
    del prof, holder.prof
    gc.collect()
    assert ref() is None


def test_dropping_a_running_profiler_is_safe():
    prof = profiler.Profiler(on_trace_ready=lambda p: None)
    prof.start()
    with profiler.RecordEvent("open"):
        prof.step()
    del prof
    gc.collect()
    assert not profiler.is_recording()
    # A new profiler can take the tracers.
    with profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./o")) as prof:
        prof.step()
    assert len(trace_files("o")) == 1

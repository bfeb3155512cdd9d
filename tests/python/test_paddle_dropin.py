"""Issue 17, the paddle drop-in: scripts that mix `import paddle.profiler`
and stepprof work. paddle's own enums (plain Enums, and a pybind11
TracerEventType, none of them ints) are accepted wherever stepprof's are,
matched by class name, a module under paddle, and member name, without
importing paddle. paddle may be absent, so stand-ins named and placed like
paddle's are used; with paddle importable, its real enums are tested too.
Also paddle's load_profiler_result(filename=), Profiler attributes,
export(format='txt'), the utils / timer / profiler_statistic /
statistic_helper submodules, and AssertionError where paddle asserts."""
import enum
import glob
import importlib
import os

import pytest

import stepprof.profiler as profiler
from conftest import load_trace, step_names, steps


def _paddle_enum(name, module, members):
    return enum.Enum(name, members, module=module, qualname=name)


class _PybindMember:
    """A pybind11 enum member as paddle's TracerEventType has: .name and
    .value, not an int."""

    def __init__(self, name, value):
        self.name, self.value = name, value


def _stand_ins():
    prof_mod = "paddle.profiler.profiler"
    PTarget = _paddle_enum("ProfilerTarget", prof_mod,
                           [("CPU", 0), ("GPU", 1), ("XPU", 2), ("CUSTOM_DEVICE", 3), ("MLU", 9)])
    PState = _paddle_enum("ProfilerState", prof_mod,
                          [("CLOSED", 0), ("READY", 1), ("RECORD", 2), ("RECORD_AND_RETURN", 3)])
    PKeys = _paddle_enum("SortedKeys", "paddle.profiler.profiler_statistic",
                         [(k.name, k.value) for k in profiler.SortedKeys])
    PView = _paddle_enum("SummaryView", prof_mod, [(v.name, v.value) for v in profiler.SummaryView])
    TracerEventType = type("TracerEventType", (_PybindMember,), {"__module__": "paddle.base.libpaddle"})
    PTracer = type("Namespace", (), {t.name: TracerEventType(t.name, t.value)
                                     for t in profiler.TracerEventType})
    return PTarget, PState, PKeys, PView, PTracer


def _real_paddle():
    try:
        paddle_profiler = importlib.import_module("paddle.profiler")
    except Exception:  # noqa: BLE001 - absent or broken: skip with a message
        pytest.skip("paddle is not importable here: tested with stand-in enums only")
    return (paddle_profiler.ProfilerTarget, paddle_profiler.ProfilerState,
            paddle_profiler.SortedKeys, paddle_profiler.SummaryView,
            paddle_profiler.TracerEventType)


def _check_enums(PTarget, PState, PKeys, PView, PTracer):
    def scheduler(step):  # returns paddle's ProfilerState
        if step < 2:
            return PState.CLOSED
        if step < 4:
            return PState.RECORD
        return PState.RECORD_AND_RETURN if step == 4 else PState.CLOSED

    prof = profiler.Profiler(targets=[PTarget.CPU], scheduler=scheduler,
                             on_trace_ready=profiler.export_chrome_tracing("./pd"))
    assert prof.targets == {profiler.ProfilerTarget.CPU}
    prof.start()
    for _ in range(8):
        with profiler.RecordEvent("fwd", PTracer.Forward):
            pass
        prof.step()
    prof.stop()
    files = glob.glob("./pd/*.json")
    assert len(files) == 1 and step_names(load_trace(files[0])) == steps(2, 5)
    result = prof.get_result()
    assert {e.type for e in result.events(0) if e.name == "fwd"} == {profiler.TracerEventType.Forward}
    table = result.summary_table(PView.OverView, sorted_by=PKeys.CPUAvg)
    assert table is not None and table.view == profiler.SummaryView.OverView
    assert set(result.summary_tables(views=[PView.OverView, PView.UDFView])) <= {
        profiler.SummaryView.OverView, profiler.SummaryView.UDFView}
    text = result.summary_text(sorted_by=PKeys.CPUMax, views=PView.OverView)
    assert "Overview Summary" in text and "Operator Summary" not in text
    prof.summary(sorted_by=PKeys.CPUTotal, views=[PView.OverView])


def test_paddle_enums_are_accepted_stand_ins(capsys):
    _check_enums(*_stand_ins())
    assert "Overview Summary" in capsys.readouterr().out


def test_paddle_enums_are_accepted_real_paddle():
    _check_enums(*_real_paddle())


def test_foreign_enums_are_named_in_the_error():
    PTarget = _stand_ins()[0]
    with pytest.raises(ValueError, match="paddle's ProfilerTarget.MLU has no stepprof counterpart"):
        profiler.Profiler(targets=[PTarget.MLU])
    Other = _paddle_enum("ProfilerTarget", "mylib.targets", [("CPU", 0)])
    with pytest.raises(TypeError, match="not mylib.targets.ProfilerTarget"):
        profiler.Profiler(targets=[Other.CPU])
    with pytest.raises(TypeError):
        profiler.RecordEvent("x", _PybindMember("Forward", 9))  # not under paddle


def test_load_profiler_result_takes_paddles_filename(capsys):
    prof = profiler.Profiler(on_trace_ready=profiler.export_protobuf("./pb"))
    prof.start()
    prof.step()
    prof.stop()
    path = glob.glob("./pb/*.pb")[0]
    for result in (profiler.load_profiler_result(filename=path),
                   profiler.load_profiler_result(file_name=path),
                   profiler.load_profiler_result(path)):
        assert [t.tid for t in result.threads] == [t.tid for t in prof.get_result().threads]
    with pytest.raises(TypeError):
        profiler.load_profiler_result(filename=path, file_name=path)
    with pytest.raises(TypeError):
        profiler.load_profiler_result()


def test_profiler_has_paddles_attributes():
    handler = profiler.export_chrome_tracing("./attrs")
    sched = profiler.make_scheduler(closed=1, ready=1, record=2, repeat=1)
    prof = profiler.Profiler(targets=[profiler.ProfilerTarget.CPU], scheduler=sched,
                             on_trace_ready=handler, timer_only=False, record_shapes=True,
                             profile_memory=True, with_flops=True, emit_nvtx=False,
                             custom_device_types=["npu"])
    assert prof.targets == {profiler.ProfilerTarget.CPU}
    assert prof.scheduler is sched and prof.on_trace_ready is handler
    assert prof.step_num == 0
    assert prof.previous_state == profiler.ProfilerState.CLOSED
    assert prof.current_state == profiler.ProfilerState.CLOSED
    assert prof.record_event is None and prof.profiler_result is None
    assert (prof.timer_only, prof.record_shapes, prof.profile_memory, prof.with_flops) == (
        False, True, True, True)
    assert prof.emit_nvtx is False and prof.custom_device_types == ["npu"]
    assert prof.profiler is not None
    prof.start()
    prof.step()
    prof.step()
    assert prof.previous_state == profiler.ProfilerState.READY
    assert prof.current_state == profiler.ProfilerState.RECORD
    prof.stop()
    default = profiler.Profiler(scheduler=(2, 4))
    assert default.scheduler(2) == profiler.ProfilerState.RECORD
    assert default.on_trace_ready.dir_name == "./profiler_log/"
    assert profiler.Profiler().scheduler(7) == profiler.ProfilerState.RECORD


def test_export_txt_writes_nothing_as_paddle(tmp_path):
    prof = profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./t"))
    prof.start()
    prof.step()
    prof.stop()
    with pytest.warns(profiler.StepprofWarning, match="nothing written"):
        prof.export(path=str(tmp_path / "out.txt"), format="txt")
    with pytest.warns(profiler.StepprofWarning):
        prof.get_result().export(str(tmp_path / "r.txt"), "txt")
    assert not (tmp_path / "out.txt").exists() and not (tmp_path / "r.txt").exists()
    with pytest.raises(ValueError):
        prof.export(path=str(tmp_path / "x"), format="xml")


def test_paddle_submodules_import():
    import stepprof.profiler.utils as utils
    from stepprof.profiler.utils import RecordEvent, in_profiler_mode, wrap_optimizers
    from stepprof.profiler.timer import benchmark
    from stepprof.profiler import profiler_statistic, statistic_helper
    assert utils is profiler.utils and RecordEvent is profiler.RecordEvent
    assert profiler_statistic.SortedKeys is profiler.SortedKeys
    assert wrap_optimizers() is None
    assert in_profiler_mode() is False
    prof = profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./s"))
    prof.start()
    assert in_profiler_mode() is True
    prof.stop()
    assert benchmark() is benchmark()
    assert statistic_helper.sum_ranges([(0, 2), (5, 9)]) == 6
    assert statistic_helper.merge_self_ranges([(5, 9), (0, 2), (1, 3), (9, 10)]) == [(0, 3), (5, 10)]
    assert statistic_helper.merge_ranges([(0, 2)], [(1, 4), (6, 7)]) == [(0, 4), (6, 7)]
    assert statistic_helper.intersection_ranges([(0, 5), (8, 12)], [(3, 9)]) == [(3, 5), (8, 9)]
    assert statistic_helper.subtract_ranges([(0, 10)], [(2, 3), (5, 12)]) == [(0, 2), (3, 5)]


def test_timer_benchmark_times_steps(capsys):
    from stepprof.profiler.timer import benchmark
    bench = benchmark()
    bench.begin()
    for _ in range(12):
        bench.before_reader()
        bench.after_reader()
        bench.step(4)
    info = bench.step_info("images")
    bench.end()
    assert "batch_cost" in info and "images/s" in info
    assert "Perf Summary" in capsys.readouterr().out  # paddle's end() prints it


@pytest.mark.parametrize("make", [
    lambda: profiler.make_scheduler(closed=-1, ready=1, record=2),
    lambda: profiler.make_scheduler(closed=1, ready=1, record=0),
    lambda: profiler.schedule(wait=1, warmup=1, active=0),
    lambda: profiler.Profiler(scheduler=(5, 5)),
    lambda: profiler.Profiler(scheduler=(1, 2, 3)),
    lambda: profiler.make_scheduler(closed=1, ready=1, record=2)(-1),
])
def test_assertion_error_where_paddle_asserts(make):
    with pytest.raises(AssertionError, match="Invalid profiler scheduler arguments"):
        make()
    with pytest.raises(ValueError):  # stepprof's earlier type still catches it
        make()

"""The protobuf format from Python: paddle's export_protobuf handler,
export(path, "pb") and load_profiler_result, whose result prints the same
tables as the live one; a .paddle_trace.pb written by paddle.profiler loads."""
import glob
import os

import stepprof.profiler as profiler

from conftest import work

HERE = os.path.dirname(os.path.abspath(__file__))
PADDLE_PB = os.path.join(HERE, "..", "data", "paddle_cpu_tiny.paddle_trace.pb")


def _run(on_trace_ready):
    prof = profiler.Profiler(scheduler=(1, 4), on_trace_ready=on_trace_ready)
    prof.start()
    for _ in range(5):
        with profiler.RecordEvent("DataPrepare"):
            work()
        with profiler.RecordEvent("forward", profiler.TracerEventType.Forward):
            with profiler.RecordEvent("matmul", profiler.TracerEventType.Operator):
                work()
        prof.step()
    prof.stop()
    return prof


def test_export_protobuf_handler_writes_paddle_named_files(tmp_path):
    _run(profiler.export_protobuf("./pb", "worker0"))
    files = glob.glob("./pb/worker0_time_*.paddle_trace.pb")
    assert len(files) == 1
    result = profiler.load_profiler_result(files[0])
    names = {e.name for e in result.events(0)}
    assert {"DataPrepare", "forward", "matmul"} <= names


def test_load_keeps_every_table():
    prof = _run(profiler.export_chrome_tracing("./out"))
    prof.export("span.pb", "pb")
    prof.export("span.json")
    live = prof.get_result()
    for path in ("span.pb", "span.json"):
        loaded = profiler.load_profiler_result(path)
        for unit in ("ms", "us"):
            for sep in (False, True):
                assert (loaded.summary_text(time_unit=unit, thread_sep=sep)
                        == live.summary_text(time_unit=unit, thread_sep=sep))
        assert loaded.table_torch() == live.table_torch()
        assert loaded.threads == live.threads
        assert loaded.counters == live.counters


def test_loaded_result_exports_again():
    prof = _run(profiler.export_chrome_tracing("./out"))
    prof.get_result().export("a.pb", "pb")
    loaded = profiler.load_profiler_result("a.pb")
    loaded.export("b.pb", "pb")
    with open("a.pb", "rb") as a, open("b.pb", "rb") as b:
        assert a.read() == b.read()


def test_paddle_file_loads_and_summarizes(capsys):
    result = profiler.load_profiler_result(PADDLE_PB)
    assert len(result.threads) == 1
    result.summary(views=[profiler.SummaryView.OverView, profiler.SummaryView.OperatorView])
    out = capsys.readouterr().out
    assert "Overview Summary" in out
    assert "Operator Summary" in out
    assert "ProfileStep" in out

"""The profiler's lifecycle from Python (issue 17): calls from inside
on_trace_ready, a script that never calls stop() (at exit, or by dropping
the profiler), a restart after stop(), and save_on_crash's directory."""
import gc
import glob
import os
import subprocess
import sys

import pytest

import stepprof.profiler as profiler
from conftest import event_names, load_trace, trace_files


def test_start_inside_on_trace_ready_is_refused():
    def handler(prof):
        prof.start()

    prof = profiler.Profiler(on_trace_ready=handler)
    prof.start()
    with pytest.raises(RuntimeError, match=r"Profiler.start\(\) cannot be called from on_trace_ready"):
        prof.stop()
    assert not profiler.is_recording()


def test_start_after_stop_restarts():
    spans = []

    def handler(prof):
        spans.append(sorted(e.name for e in prof.get_result().events(0)
                            if e.name.startswith("ProfileStep#")))

    prof = profiler.Profiler(on_trace_ready=handler)
    prof.start()
    prof.step()
    prof.stop()
    prof.start()          # a new span, the step number going on
    assert profiler.is_recording()
    with profiler.RecordEvent("second"):
        pass
    prof.step()
    prof.stop()
    assert spans == [["ProfileStep#0", "ProfileStep#1"], ["ProfileStep#1", "ProfileStep#2"]]
    assert prof.step_num == 2
    assert prof.misuse_count == 0


SCRIPT = """
import stepprof.profiler as profiler
prof = profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./traces"))
prof.start()
for i in range(3):
    with profiler.RecordEvent("work"):
        pass
    prof.step()
profiler.RecordEvent("never closed").begin()
# no prof.stop(): the script just ends
"""


def test_exit_without_stop_writes_the_trace(in_tmp_dir):
    run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    files = trace_files("traces")
    assert len(files) == 1
    assert glob.glob("traces/*tmp*") == []
    names = event_names(load_trace(files[0]))
    assert names.count("work") == 3
    assert "never closed" in names
    lines = run.stderr.splitlines()
    assert len(lines) == 1, run.stderr
    assert lines[0].startswith("stepprof: warning: at exit: the profiler was still recording "
                               "(stop() was never called); it was stopped and its trace written to ")
    assert lines[0].endswith(os.path.basename(files[0]))


def test_dropping_a_running_profiler_delivers_the_span(capsys):
    seen = []
    prof = profiler.Profiler(on_trace_ready=lambda p: seen.append(len(p.get_result().threads)))
    prof.start()
    with profiler.RecordEvent("open"):
        prof.step()
    del prof
    gc.collect()
    assert seen == [1]
    assert not profiler.is_recording()
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("stepprof: warning: Profiler deleted: the profiler was still recording")


def test_crash_path_directory_is_created_or_start_raises(in_tmp_dir):
    path = in_tmp_dir / "a" / "b" / "dump.spdump"
    with profiler.Profiler(on_trace_ready=lambda p: None, save_on_crash=True,
                           crash_path=str(path)) as prof:
        prof.step()
    assert (in_tmp_dir / "a" / "b").is_dir()
    (in_tmp_dir / "plain").write_text("")
    prof = profiler.Profiler(on_trace_ready=lambda p: None, save_on_crash=True,
                             crash_path=str(in_tmp_dir / "plain" / "x" / "dump.spdump"))
    with pytest.raises(OSError, match="save_on_crash: cannot create or write the directory"):
        prof.start()
    assert not profiler.is_recording()

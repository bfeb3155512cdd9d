"""Issue 17: output the user did not ask for. paddle prints the Perf Summary
at stop (its benchmark().end()), so the paddle dialect keeps it; torch never
prints it, so a profiler configured with torch's spellings does not.
Warnings go through Python's warnings module (StepprofWarning), so
filterwarnings silences them, and nothing is written to the C stdout when
sys.stdout is None. Scripts run in a subprocess, so the terminal output is
checked as a user sees it."""
import os
import subprocess
import sys
import textwrap

import pytest

import stepprof.profiler as profiler


def _run(tmp_path, body):
    script = tmp_path / "script.py"
    script.write_text(textwrap.dedent('''
        import sys, warnings
        import stepprof.profiler as profiler

        def loop(prof, n=30):
            prof.start()
            for _ in range(n):
                with profiler.RecordEvent("work"):
                    sum(range(100))
                prof.step()
            prof.stop()
    ''') + textwrap.dedent(body))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHONWARN")}
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return proc


def _loop(prof, n=30):
    prof.start()
    for _ in range(n):
        prof.step()
    prof.stop()


def test_paddle_dialect_prints_the_perf_summary_at_stop(capsys):
    _loop(profiler.Profiler(scheduler=(2, 5), on_trace_ready=profiler.export_chrome_tracing("t")))
    assert "Perf Summary" in capsys.readouterr().out


@pytest.mark.parametrize("kwargs", [
    dict(scheduler=profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
         on_trace_ready=profiler.export_chrome_tracing("t")),
    dict(on_trace_ready=profiler.tensorboard_trace_handler("t")),
    dict(scheduler=(2, 5), on_trace_ready=profiler.export_chrome_tracing("t"), perf_summary=False),
])
def test_torch_dialect_or_perf_summary_false_prints_nothing(capsys, kwargs):
    _loop(profiler.Profiler(**kwargs))
    out = capsys.readouterr()
    assert out.out == "" and "Perf Summary" not in out.err


def test_perf_summary_true_prints_it_in_torch_dialect(capsys):
    _loop(profiler.Profiler(on_trace_ready=profiler.tensorboard_trace_handler("t"),
                            perf_summary=True))
    assert "Perf Summary" in capsys.readouterr().out


def test_torch_script_prints_nothing(tmp_path):
    """A torch-style script: no output at all (the integration report's
    "nothing else on the terminal")."""
    proc = _run(tmp_path, '''
        loop(profiler.Profiler(scheduler=profiler.schedule(wait=1, warmup=1, active=3, repeat=1),
                               on_trace_ready=profiler.tensorboard_trace_handler("./tb")))
    ''')
    assert proc.stdout == "" and proc.stderr == ""
    assert len(list((tmp_path / "tb").glob("*.pt.trace.json"))) == 1


def test_warnings_go_through_the_warnings_module(tmp_path):
    body = '''
        prof = profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./t"),
                                 perf_summary=False)
        prof.step()   # before start: a misuse, warned
        loop(prof, 3)
    '''
    proc = _run(tmp_path, body)
    assert "StepprofWarning: sp_profiler_step: called before sp_profiler_start" in proc.stderr
    assert "stepprof: warning:" not in proc.stderr
    quiet = _run(tmp_path, 'warnings.filterwarnings("ignore", category=profiler.StepprofWarning)\n'
                 + textwrap.dedent(body))
    assert quiet.stderr == "" and quiet.stdout == ""


def test_writer_thread_warnings_go_through_the_warnings_module(tmp_path):
    """The trace writer is not a Python thread: its warning (here: the
    directory cannot be created) is queued and given by the main thread."""
    body = '''
        open("blocker", "w").close()
        prof = profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("blocker/sub"),
                                 perf_summary=False)
        try:
            loop(prof, 3)
        except OSError as e:
            print("OSError", file=sys.stderr)
        sum(range(10))   # a few bytecodes: the pending warning runs here
    '''
    loud = _run(tmp_path, body)
    assert "OSError" in loud.stderr
    assert "StepprofWarning" in loud.stderr and "stepprof: warning:" not in loud.stderr
    quiet = _run(tmp_path, 'warnings.simplefilter("ignore")\n' + textwrap.dedent(body))
    assert quiet.stderr.strip() == "OSError"


def test_no_c_stdout_when_sys_stdout_is_none(tmp_path):
    """sys.stdout None (pythonw, daemons): the Perf Summary is dropped, as
    print() drops output; it went to the C stdout before."""
    proc = _run(tmp_path, '''
        sys.stdout = None
        loop(profiler.Profiler(scheduler=(2, 5), on_trace_ready=profiler.export_chrome_tracing("t")))
        prof = profiler.Profiler(scheduler=(2, 5), on_trace_ready=profiler.export_chrome_tracing("t"))
        loop(prof)
        prof.summary()
    ''')
    assert proc.stdout == ""

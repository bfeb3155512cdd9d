"""Bad arguments raise ValueError or TypeError with semantics.md's messages,
and misuse never crashes the interpreter."""
import errno

import pytest

import stepprof.profiler as profiler

INVALID = "Invalid profiler scheduler arguments"


@pytest.mark.parametrize("kwargs", [
    dict(closed=1, ready=1, record=0),
    dict(closed=-1, ready=1, record=2),
    dict(closed=1, ready=-1, record=2),
    dict(closed=1, ready=1, record=2, repeat=-1),
    dict(closed=1, ready=1, record=2, skip_first=-1),
])
def test_make_scheduler_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError, match=INVALID):
        profiler.make_scheduler(**kwargs)


def test_schedule_rejects_bad_arguments():
    with pytest.raises(ValueError, match=INVALID):
        profiler.schedule(wait=1, warmup=1, active=0)


@pytest.mark.parametrize("kwargs, why", [
    (dict(closed=1, ready=1, record=0), "record (0) must be greater than 0"),
    (dict(closed=-1, ready=1, record=2), "closed (-1) must be >= 0"),
    (dict(closed=1, ready=-1, record=2), "ready (-1) must be >= 0"),
    (dict(closed=1, ready=1, record=2, repeat=-1), "repeat (-1) must be >= 0 (0 repeats forever)"),
    (dict(closed=1, ready=1, record=2, skip_first=-1), "skip_first (-1) must be >= 0"),
])
def test_make_scheduler_says_which_argument_is_wrong(kwargs, why):
    with pytest.raises(ValueError) as info:
        profiler.make_scheduler(**kwargs)
    assert str(info.value) == f"{INVALID}: {why}"


def test_scheduler_errors_say_what_was_wrong():
    with pytest.raises(ValueError) as info:
        profiler.schedule(wait=1, warmup=1, active=0)
    assert str(info.value) == f"{INVALID}: active (0) must be greater than 0"
    with pytest.raises(ValueError) as info:
        profiler.make_scheduler(closed=1, ready=1, record=2)(-1)
    assert str(info.value) == f"{INVALID}: step (-1) must be >= 0"


@pytest.mark.parametrize("sched, why", [
    ((5, 5), "end (5) must be greater than start (5)"),
    ((9, 3), "end (3) must be greater than start (9)"),
    ((-3, 0), "end (0) must be greater than 0 (steps are numbered from 0)"),
    ((1, 2, 3), "a (start, end) pair expected, got 3 values"),
    ((1,), "a (start, end) pair expected, got 1 value"),
])
def test_tuple_scheduler_says_what_was_wrong(sched, why):
    with pytest.raises(ValueError) as info:
        profiler.Profiler(scheduler=sched)
    assert str(info.value) == f"{INVALID}: {why}"


def test_make_scheduler_rejects_non_integers():
    with pytest.raises(TypeError):
        profiler.make_scheduler(closed=1.5, ready=1, record=2)
    with pytest.raises(TypeError):
        profiler.make_scheduler(closed="1", ready=1, record=2)
    with pytest.raises(TypeError):
        profiler.make_scheduler(1, 1, 2)  # keyword-only, as paddle


@pytest.mark.parametrize("sched", [(5, 5), (9, 3), (1, 2, 3), (1,)])
def test_tuple_scheduler_rejects_bad_ranges(sched):
    with pytest.raises(ValueError, match=INVALID):
        profiler.Profiler(scheduler=sched)


def test_profiler_rejects_wrong_types():
    with pytest.raises(TypeError):
        profiler.Profiler(scheduler=42)
    with pytest.raises(TypeError):
        profiler.Profiler(on_trace_ready="./dir")
    with pytest.raises(TypeError):
        profiler.Profiler(targets=profiler.ProfilerTarget.CPU)
    with pytest.raises(TypeError):
        profiler.Profiler(targets=["CPU"])
    with pytest.raises(ValueError):
        profiler.Profiler(targets=[7])


def test_record_event_rejects_bad_arguments():
    with pytest.raises(TypeError):
        profiler.RecordEvent(123)
    with pytest.raises(TypeError):
        profiler.RecordEvent("x", "Forward")
    with pytest.raises(ValueError):
        profiler.RecordEvent("x", 99)
    with pytest.raises(TypeError):
        profiler.RecordEvent()
    with pytest.raises(TypeError):
        profiler.RecordEvent("x")(42)  # decorating a non-callable


def test_handlers_reject_bad_directories():
    with pytest.raises(ValueError):
        profiler.export_chrome_tracing("")
    with pytest.raises(TypeError):
        profiler.export_chrome_tracing(None)
    with pytest.raises(TypeError):
        profiler.tensorboard_trace_handler("./log", worker_name=3)


def _profiled(n=3, **kwargs):
    prof = profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./out"), **kwargs)
    prof.start()
    for _ in range(n):
        prof.step()
    prof.stop()
    return prof


def test_summary_rejects_bad_options():
    prof = _profiled()
    with pytest.raises(ValueError):
        prof.summary(time_unit="h")
    with pytest.raises(ValueError):
        prof.summary(sorted_by=42)
    with pytest.raises(TypeError):
        prof.summary(sorted_by="CPUTotal")
    with pytest.raises(ValueError):
        prof.summary(views=[12])
    with pytest.raises(TypeError):
        prof.summary(views="all")


def test_protobuf_bad_arguments():
    with pytest.raises(TypeError):
        profiler.export_protobuf(42)
    with pytest.raises(TypeError):
        profiler.load_profiler_result(None)
    with pytest.raises(OSError):
        profiler.load_profiler_result("missing.pb")
    with open("junk.pb", "wb") as f:
        f.write(b"\x1a\xff\xff\xff\xff\x0f")
    with pytest.raises(ValueError, match="junk.pb"):
        profiler.load_profiler_result("junk.pb")
    # A text file is no trace: the message says so and lists the formats.
    with open("notes.txt", "w") as f:
        f.write("hello world\n")
    with pytest.raises(ValueError) as info:
        profiler.load_profiler_result("notes.txt")
    assert str(info.value).startswith('notes.txt: unrecognised format (the file begins with "hello world", '
                                      'which is not how a trace begins): stepprof reads Chrome-trace JSON')
    prof = _profiled()
    with pytest.raises(ValueError):
        prof.export("x.json", "xml")


def test_export_protobuf_says_why_the_directory_cannot_be_made(tmp_path):
    plain = tmp_path / "plain"
    plain.write_text("")
    with pytest.raises(OSError) as info:
        profiler.export_protobuf(str(plain / "sub"))
    assert str(info.value) == (f"Can not create directory '{plain / 'sub'}' for saving profiling "
                               f"results: Not a directory")
    assert info.value.errno == errno.ENOTDIR
    with pytest.raises(OSError) as info:
        profiler.export_protobuf(str(plain / "a" / "b"))
    assert str(info.value) == (f"Can not create directory '{plain / 'a' / 'b'}' for saving profiling "
                               f"results: '{plain / 'a'}': Not a directory")


def test_export_without_result_raises():
    prof = profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./out"))
    with pytest.raises(RuntimeError, match="no profiling result"):
        prof.export("x.json")


def test_step_rejects_negative_samples():
    prof = profiler.Profiler(timer_only=True)
    prof.start()
    with pytest.raises(ValueError):
        prof.step(num_samples=-3)
    with pytest.raises(TypeError):
        prof.step(num_samples="4")
    prof.stop()


def test_misuse_is_counted_and_warned_once(recwarn, capsys):
    prof = profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./out"))
    prof.step()              # before start
    prof.stop()              # before start
    prof.start()
    prof.start()             # twice
    prof.stop()
    prof.stop()              # twice
    prof.step()              # after stop
    assert prof.misuse_count == 5
    # One StepprofWarning, through Python's warnings (issue 17), none on stderr.
    assert len([w for w in recwarn if w.category is profiler.StepprofWarning]) == 1
    assert capsys.readouterr().err == ""


def test_record_event_misuse_is_harmless():
    rec = profiler.RecordEvent("lonely")
    rec.end()                # never begun: nothing
    prof = _profiled(n=1)
    rec.begin()              # not recording: nothing opened
    rec.end()
    assert prof.get_result().counters["unmatched_ends"] == 0


def test_unconfigured_profiler_raises_instead_of_crashing():
    raw = profiler._core.Profiler()
    with pytest.raises(RuntimeError):
        raw.start()
    with pytest.raises(RuntimeError):
        raw.step()
    with pytest.raises(RuntimeError):
        raw.stop()
    prof = profiler.Profiler(timer_only=True)
    with pytest.raises(RuntimeError, match="already configured"):
        prof._configure()


def test_summary_before_any_result_warns():
    prof = profiler.Profiler(scheduler=(5, 8), on_trace_ready=profiler.export_chrome_tracing("./o"))
    with pytest.warns(profiler.StepprofWarning, match="no profiling result yet"):
        prof.summary()

"""Issue 17: RecordEvents that interleave (A.begin, B.begin, A.end, B.end)
were silently misattributed: A.end closed the innermost range, B's. Now each
end closes its own range; ranges begun inside it and still open are closed
with it (the trace still nests, each RecordEvent is recorded once), and the
case is counted (record_event_interleaved) and reported as a
StepprofWarning."""
import threading
import warnings

import pytest

import stepprof.profiler as profiler
from stepprof import _core


def _span(body):
    """Runs body inside one recorded step; returns the result."""
    prof = profiler.Profiler(on_trace_ready=profiler.export_chrome_tracing("./out"))
    prof.start()
    try:
        body()
    finally:
        prof.stop()
    return prof.get_result()


def _by_name(result, thread=0):
    events = result.events(thread)
    return events, {e.name: e for e in events}


def _parent_name(events, e):
    return events[e.parent].name if e.parent >= 0 else None


def test_interleaved_end_closes_its_own_range():
    before = _core.record_event_interleaved()
    a, b, c = (profiler.RecordEvent(n) for n in ("A", "B", "C"))

    def body():
        a.begin()
        b.begin()
        with pytest.warns(profiler.StepprofWarning, match="RecordEvent 'A' ended while 1"):
            a.end()
        c.begin()   # after A's end: must not land inside A
        c.end()
        b.end()     # already closed with A: nothing more

    result = _span(body)
    events, named = _by_name(result)
    names = [e.name for e in events]
    assert names.count("A") == 1 and names.count("B") == 1 and names.count("C") == 1
    assert _parent_name(events, named["B"]) == "A"
    assert _parent_name(events, named["A"]) == "ProfileStep#0"
    assert _parent_name(events, named["C"]) == "ProfileStep#0"   # was "A" before the fix
    assert named["B"].end_ns <= named["A"].end_ns <= named["C"].start_ns
    counters = result.counters
    assert counters["unmatched_ends"] == 0 and counters["overlap"] == 0
    assert _core.record_event_interleaved() == before + 1


def test_end_of_a_middle_range_closes_the_ones_inside_it():
    before = _core.record_event_interleaved()
    a, b, c = (profiler.RecordEvent(n) for n in ("A", "B", "C"))

    def body():
        a.begin()
        b.begin()
        c.begin()
        with pytest.warns(profiler.StepprofWarning, match=r"'B' ended while 1 .*innermost 'C'"):
            b.end()
        with profiler.RecordEvent("D"):   # inside A, beside B
            pass
        c.end()
        a.end()

    events, named = _by_name(_span(body))
    assert [e.name for e in events] == ["ProfileStep#0", "A", "B", "C", "D"]
    assert _parent_name(events, named["C"]) == "B"
    assert _parent_name(events, named["D"]) == "A"
    assert _core.record_event_interleaved() == before + 1


def test_nested_and_with_blocks_do_not_warn():
    before = _core.record_event_interleaved()

    def body():
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with profiler.RecordEvent("outer"):
                for _ in range(3):
                    with profiler.RecordEvent("inner"):
                        pass

    events, _ = _by_name(_span(body))
    assert [e.name for e in events] == ["ProfileStep#0", "outer", "inner", "inner", "inner"]
    assert _core.record_event_interleaved() == before


def test_threads_keep_their_own_stacks():
    """A on this thread and X on another interleave in time, not on a
    thread: no warning, both recorded whole."""
    before = _core.record_event_interleaved()
    x_begun, a_ended, done = threading.Event(), threading.Event(), threading.Event()

    def other():
        x = profiler.RecordEvent("X")
        x.begin()
        x_begun.set()
        a_ended.wait(10)
        x.end()
        done.set()

    def body():
        a = profiler.RecordEvent("A")
        a.begin()
        t = threading.Thread(target=other)
        t.start()
        x_begun.wait(10)
        a.end()
        a_ended.set()
        done.wait(10)
        t.join()

    result = _span(body)
    names = {n for i in range(len(result.threads)) for n in (e.name for e in result.events(i))}
    assert {"A", "X"} <= names
    assert _core.record_event_interleaved() == before


def test_warning_as_error_still_closes_the_ranges():
    a, b = profiler.RecordEvent("A"), profiler.RecordEvent("B")

    def body():
        a.begin()
        b.begin()
        with warnings.catch_warnings():
            warnings.simplefilter("error", profiler.StepprofWarning)
            with pytest.raises(profiler.StepprofWarning):
                a.end()
        b.end()
        with profiler.RecordEvent("after"):
            pass

    result = _span(body)
    events, named = _by_name(result)
    assert _parent_name(events, named["after"]) == "ProfileStep#0"
    assert result.counters["unmatched_ends"] == 0

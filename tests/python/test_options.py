"""stepprof's own Profiler options reach the library: buffer_cap_bytes
(events past the cap are dropped and counted), overwrite_oldest (the span
keeps its newest events instead of its first), and save_on_crash with
crash_path and stream_to_disk (a process that aborts while recording leaves
a dump that load_profiler_result reads)."""
import os
import subprocess
import sys

import pytest

import stepprof.profiler as profiler

CAP = 64 << 10  # the smallest cap the library takes
EVENTS = 20000  # far more than fit under it


def _record_numbered(**options):
    prof = profiler.Profiler(on_trace_ready=lambda p: None, **options)
    prof.start()
    for i in range(EVENTS):
        with profiler.RecordEvent(f"e{i}"):
            pass
    prof.stop()
    result = prof.get_result()
    names = [e.name for t in range(len(result.threads)) for e in result.events(t)
             if e.name.startswith("e")]
    return result, names


def test_buffer_cap_drops_and_counts_new_events():
    result, names = _record_numbered(buffer_cap_bytes=CAP)
    dropped = result.counters["host_dropped"]
    assert 0 < len(names) < EVENTS
    assert dropped > 0
    assert names[0] == "e0"  # the span keeps its beginning
    assert names == [f"e{i}" for i in range(len(names))]


def test_overwrite_oldest_keeps_the_newest_events():
    result, names = _record_numbered(buffer_cap_bytes=CAP, overwrite_oldest=True)
    assert result.counters["host_dropped"] > 0
    assert 0 < len(names) < EVENTS
    assert names[-1] == f"e{EVENTS - 1}"  # the span keeps its end
    first = int(names[0][1:])
    assert first > 0
    assert names == [f"e{i}" for i in range(first, EVENTS)]  # gapless


def test_default_cap_keeps_everything():
    result, names = _record_numbered()
    assert len(names) == EVENTS
    assert result.counters["host_dropped"] == 0


def test_negative_cap_is_refused():
    with pytest.raises(ValueError):
        profiler.Profiler(buffer_cap_bytes=-1)


CHILD = r"""
import os, sys
import stepprof.profiler as profiler
prof = profiler.Profiler(on_trace_ready=lambda p: None, save_on_crash=True,
                         crash_path=sys.argv[1], stream_to_disk=sys.argv[2] == "1")
prof.start()
for i in range(100):
    with profiler.RecordEvent("done"):
        pass
outer = profiler.RecordEvent("open_at_crash")
outer.begin()
sys.stdout.flush()
os.abort()
"""


@pytest.mark.parametrize("stream", [False, True])
def test_save_on_crash_leaves_a_loadable_dump(tmp_path, stream):
    path = tmp_path / "crash.spdump"
    proc = subprocess.run([sys.executable, "-c", CHILD, str(path), "1" if stream else "0"],
                          capture_output=True, text=True)
    assert proc.returncode != 0  # it did die
    assert path.exists(), proc.stderr
    result = profiler.load_profiler_result(str(path))
    events = [e for t in range(len(result.threads)) for e in result.events(t)]
    assert sum(e.name == "done" for e in events) == 100
    opened = [n for t in range(len(result.threads)) for root in result.tree(t)
              for n in root.walk() if n.name == "open_at_crash"]
    assert len(opened) == 1 and opened[0].unclosed
    assert not os.path.exists(str(path) + ".tmp")

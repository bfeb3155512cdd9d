"""ProfilerResult.tree(thread) and events(thread) take either an OS thread id
(threading.get_native_id(), ThreadInfo.tid) or an index into
result.threads; an OS thread id is looked up first. Anything else is a clear
IndexError naming the valid indices and ids."""
import threading

import pytest

import stepprof.profiler as profiler


def _two_thread_result():
    """A span with events on the main thread and on one worker thread."""
    worker_tid = []

    def worker():
        worker_tid.append(threading.get_native_id())
        with profiler.RecordEvent("on_worker"):
            pass

    with profiler.Profiler(on_trace_ready=lambda p: None) as prof:
        with profiler.RecordEvent("on_main"):
            t = threading.Thread(target=worker)
            t.start()
            t.join()
        prof.step()
    return prof.get_result(), threading.get_native_id(), worker_tid[0]


def _names(roots):
    return {n.name for root in roots for n in root.walk()}


def test_tree_accepts_os_thread_id_and_index():
    result, main_tid, worker_tid = _two_thread_result()
    tids = [t.tid for t in result.threads]
    assert sorted(tids) == sorted([main_tid, worker_tid])
    for i, tid in enumerate(tids):
        assert result.thread_index(tid) == i and result.thread_index(i) == i
        by_tid, by_index = result.tree(tid), result.tree(i)
        assert [(n.name, n.start_ns) for n in by_tid] == [(n.name, n.start_ns) for n in by_index]
        assert all(n.thread_id == tid for n in by_tid)
        assert result.events(tid) == result.events(i)
    assert "on_main" in _names(result.tree(main_tid))
    assert "on_worker" not in _names(result.tree(main_tid))
    assert _names(result.tree(worker_tid)) == {"on_worker"}


class _SmallTids:
    """A core result whose threads have ids 1 and 7, as a file written
    elsewhere may hold (a live result's OS ids are never this small)."""

    def threads(self):
        return [(1, "a", 1, 0), (7, "b", 1, 0)]

    def events(self, index):
        return [(f"event of thread {index}", 7, 0, 0, 10, -1, 0, 0.0)]

    def span(self):
        return (0, 10)


def test_os_thread_id_wins_over_index():
    # An int that is the tid of one of the result's threads means that
    # thread, even where it is also a valid index.
    r = profiler.ProfilerResult(_SmallTids())
    assert r.thread_index(1) == 0      # tid 1 is thread 0, not index 1
    assert r.thread_index(7) == 1      # tid 7
    assert r.thread_index(0) == 0      # no tid 0: index 0
    assert [n.name for n in r.tree(1)] == ["event of thread 0"]
    assert [e.name for e in r.events(7)] == ["event of thread 1"]


def test_get_data_keys_each_thread_by_its_own_id():
    data = profiler.ProfilerResult(_SmallTids()).get_data()
    assert [n.name for n in data[1].children_node] == ["event of thread 0"]
    assert [n.name for n in data[7].children_node] == ["event of thread 1"]
    assert all(n.thread_id == 7 for n in data[7].children_node)


def test_unknown_thread_is_a_clear_index_error():
    result, main_tid, worker_tid = _two_thread_result()
    with pytest.raises(IndexError) as e:
        result.tree(12345678)
    text = str(e.value)
    assert "12345678" in text and "0..1" in text
    assert str(main_tid) in text and str(worker_tid) in text
    with pytest.raises(IndexError, match="neither an OS thread id"):
        result.events(-1)
    with pytest.raises(TypeError, match="OS thread id or an index"):
        result.tree("main")
    with pytest.raises(TypeError):
        result.tree(True)

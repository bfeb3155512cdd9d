"""stepprof.profiler.timer: paddle.profiler.timer's benchmark(), the
throughput timer behind step_info() and the Perf Summary, on stepprof's C
timer (a timer_only Profiler of its own). Registered as the submodule
stepprof.profiler.timer. With paddle imported, paddle.io.DataLoader's loads
reach it through paddle's own benchmark hooks (_paddle_reader.py), as they
reach every running stepprof profiler."""
import threading

from . import _core

__all__ = ["benchmark", "Benchmark"]


class Benchmark:
    """paddle's timer.Benchmark: begin(), step(num_samples), step_info(unit),
    end() (which prints the Perf Summary, as paddle's does), and
    before_reader() / after_reader() around a data-loading call (timed as
    reader_cost)."""

    def __init__(self):
        self._prof = None
        self._reader_id = 0

    def begin(self):
        """Starts timing (a timer_only Profiler); ends a running one first."""
        from .profiler import Profiler  # the profiler imports this module
        if self._prof is not None:
            self.end()
        self._prof = Profiler(timer_only=True, perf_summary=True)
        self._prof.start()

    def step(self, num_samples=None):
        """Ends a step of num_samples samples (the batch size, for ips)."""
        if self._prof is not None:
            self._prof.step(num_samples)

    def step_info(self, unit=None):
        """reader_cost, batch_cost and ips since the last call, as text."""
        return "" if self._prof is None else self._prof.step_info(unit)

    def before_reader(self):
        """Call before fetching a batch: reader_cost starts. Like paddle's,
        it records no event."""
        _core._reader_load_begin(self._reader_id)

    def after_reader(self):
        """Call after fetching a batch: reader_cost ends."""
        _core._reader_load_end()

    def after_step(self):
        """paddle's hook at the end of a step; step() does the timing here."""

    def check_if_need_record(self, reader):
        """Names the loader of the next before_reader() (paddle's DataLoader
        passes its iterator): a loader over another dataset pauses timing
        until the first one loads again, as in paddle."""
        self._reader_id = id(getattr(reader, "_dataset", reader))

    def end(self):
        """Stops timing and prints the Perf Summary, as paddle's does."""
        if self._prof is not None:
            prof, self._prof = self._prof, None
            prof.stop()


_lock = threading.Lock()
_benchmark = None


def benchmark():
    """paddle's timer.benchmark(): the process's one Benchmark."""
    global _benchmark
    with _lock:
        if _benchmark is None:
            _benchmark = Benchmark()
        return _benchmark

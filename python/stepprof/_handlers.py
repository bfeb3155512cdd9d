"""The ready-made on_trace_ready handlers: paddle's export_chrome_tracing and
export_protobuf, torch's tensorboard_trace_handler.

Passed as on_trace_ready, a handler is replaced by the C core's own handler,
which writes each span on a background thread (step() does not stall;
stop() waits for the files). Called directly, as handler(prof) inside a
custom on_trace_ready (paddle's guide does this), it writes the profiler's
latest result at once under the same file name the core would choose."""
import os
import re
import socket
import time

from . import _core

__all__ = ["export_chrome_tracing", "export_protobuf", "tensorboard_trace_handler"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def _sanitized(name):
    # As the core: a worker name (from the environment, say) cannot climb out
    # of the directory.
    name = _UNSAFE.sub("_", name) or "_"
    return "_" + name[1:] if name in (".", "..") else name


class TraceHandler:
    """An on_trace_ready handler that writes Chrome-trace JSON files into a
    directory (dir_name is a DIRECTORY, created if missing, never a file
    prefix)."""

    __slots__ = ("kind", "dir_name", "worker_name", "use_gzip")

    def __init__(self, kind, dir_name, worker_name=None, use_gzip=False):
        if not isinstance(dir_name, (str, bytes, os.PathLike)):
            raise TypeError(f"dir_name must be a str or path, not {type(dir_name).__name__}")
        if worker_name is not None and not isinstance(worker_name, str):
            raise TypeError(f"worker_name must be a str or None, not {type(worker_name).__name__}")
        dir_name = os.fsdecode(os.fspath(dir_name))
        _core._check_handler(kind, dir_name, worker_name, bool(use_gzip))
        self.kind = kind
        self.dir_name = dir_name
        self.worker_name = worker_name
        self.use_gzip = bool(use_gzip)

    def __repr__(self):
        return (f"TraceHandler({self.kind!r}, {self.dir_name!r}, {self.worker_name!r}, "
                f"use_gzip={self.use_gzip})")

    def _spec(self):
        """What stepprof._core.Profiler takes to build the C handler."""
        return (self.kind, self.dir_name, self.worker_name, self.use_gzip)

    def _path(self):
        now_ns = time.time_ns()
        sep = "" if self.dir_name.endswith("/") else "/"
        host = socket.gethostname()
        if self.kind == "tensorboard":
            worker = _sanitized(self.worker_name if self.worker_name is not None
                                else f"{host}_{os.getpid()}")
            if re.search(r"\.\d+$", worker):
                worker += "_"  # the TensorBoard plugin would read the digits as a span number
            suffix = ".gz" if self.use_gzip else ""
            return f"{self.dir_name}{sep}{worker}.{now_ns:019d}.pt.trace.json{suffix}"
        worker = _sanitized(self.worker_name if self.worker_name is not None
                            else f"host_{host}pid_{os.getpid()}")
        stamp = time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(now_ns // 10**9))
        micros = (now_ns // 1000) % 10**6
        return f"{self.dir_name}{sep}{worker}_time_{stamp}_{micros:06d}.paddle_trace.json"

    def __call__(self, prof):
        """Writes prof's latest result now; returns the file's path (None
        when there is no result yet)."""
        if prof.get_result() is None:
            return None
        os.makedirs(self.dir_name, exist_ok=True)
        path = self._path()
        prof.export(path, "json.gz" if self.use_gzip else "json")
        prof._last_trace_path = path
        return path


class RunHandler(TraceHandler):
    """`stepprof run`'s handler (STEPPROF_OUT, STEPPROF_FORMAT, the
    .summary.txt beside each trace, the end line), which the C library made
    at load from the environment: the core takes it by its spec, for a
    program's own profiler that takes the injected one's place
    (_autorun.py)."""

    __slots__ = ()

    def __init__(self):  # nothing to check: the library checked the variables at load
        self.kind, self.dir_name = "env", os.environ.get("STEPPROF_OUT", "./profiler_log/")
        self.worker_name, self.use_gzip = None, os.environ.get("STEPPROF_FORMAT") == "json.gz"

    def _spec(self):
        return ("env",)


def export_chrome_tracing(dir_name, worker_name=None):
    """paddle's export_chrome_tracing: each span goes to
    <dir_name>/<worker>_time_<YYYY_MM_DD_HH_MM_SS_ffffff>.paddle_trace.json;
    worker_name defaults to host_<hostname>pid_<pid>."""
    return TraceHandler("chrome", dir_name, worker_name)


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False):
    """torch's tensorboard_trace_handler: each span goes to
    <dir_name>/<worker>.<ns>.pt.trace.json[.gz], the names the TensorBoard
    plugin reads; worker_name defaults to <hostname>_<pid>."""
    return TraceHandler("tensorboard", dir_name, worker_name, use_gzip)


class ProtobufHandler:
    """paddle's export_protobuf handler: each span goes to
    <dir_name>/<worker>_time_<YYYY_MM_DD_HH_MM_SS_ffffff>.paddle_trace.pb
    (paddle's NodeTreesProto, which load_profiler_result and `stepprof`
    read). It runs inside step()/stop() on the calling thread, like any
    Python on_trace_ready; the directory is created at once."""

    __slots__ = ("dir_name", "worker_name")

    def __init__(self, dir_name, worker_name=None):
        if not isinstance(dir_name, (str, bytes, os.PathLike)):
            raise TypeError(f"dir_name must be a str or path, not {type(dir_name).__name__}")
        if worker_name is not None and not isinstance(worker_name, str):
            raise TypeError(f"worker_name must be a str or None, not {type(worker_name).__name__}")
        self.dir_name = os.fsdecode(os.fspath(dir_name))
        if not self.dir_name:
            raise ValueError("dir_name must not be empty")
        self.worker_name = worker_name
        try:
            os.makedirs(self.dir_name, exist_ok=True)
        except OSError as e:
            # paddle's sentence, then why (as the core's sp__mkdirs says it);
            # the message stays the exception's text, with errno kept.
            where = f"'{e.filename}': " if e.filename and e.filename != self.dir_name else ""
            error = OSError(f"Can not create directory '{self.dir_name}' for saving profiling "
                            f"results: {where}{e.strerror or e}")
            error.errno = e.errno
            raise error from e

    def __repr__(self):
        return f"ProtobufHandler({self.dir_name!r}, {self.worker_name!r})"

    def _path(self):
        now_ns = time.time_ns()
        sep = "" if self.dir_name.endswith("/") else "/"
        worker = _sanitized(self.worker_name if self.worker_name is not None
                            else f"host_{socket.gethostname()}pid_{os.getpid()}")
        stamp = time.strftime("%Y_%m_%d_%H_%M_%S", time.localtime(now_ns // 10**9))
        micros = (now_ns // 1000) % 10**6
        return f"{self.dir_name}{sep}{worker}_time_{stamp}_{micros:06d}.paddle_trace.pb"

    def __call__(self, prof):
        """Writes prof's latest result now; returns the file's path (None
        when there is no result yet)."""
        if prof.get_result() is None:
            return None
        os.makedirs(self.dir_name, exist_ok=True)
        path = self._path()
        prof.export(path, "pb")
        prof._last_trace_path = path
        return path


def export_protobuf(dir_name, worker_name=None):
    """paddle's export_protobuf: each span goes to
    <dir_name>/<worker>_time_<YYYY_MM_DD_HH_MM_SS_ffffff>.paddle_trace.pb;
    worker_name defaults to host_<hostname>pid_<pid>."""
    return ProtobufHandler(dir_name, worker_name)

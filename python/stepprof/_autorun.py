"""stepprof._autorun: zero-code profiling of a Python program, started by the
sitecustomize that `stepprof run` puts on PYTHONPATH (python/inject/). Reads
the STEPPROF_* variables (docs/c-api.md, "Zero-code profiling"), starts one
stepprof.profiler.Profiler for the ranks asked, and ends a step at each:

- return of paddle.optimizer.Optimizer.step (paddle has no public post-step
  hook: the method of Optimizer and of each subclass that defines its own is
  wrapped, for the paddle versions _paddle_capture.SUPPORTED names only);
- call of torch's global optimizer post-step hook
  (torch.optim.optimizer.register_optimizer_step_post_hook);
- return of the function STEPPROF_STEP_FN names ("module:qualname").

The hooks are installed when those modules are imported, so a program that
never imports paddle or torch pays nothing for them. The profiler is stopped
at exit (stepprof.profiler's exit hook); the number of steps seen goes to the
file STEPPROF_PY_STATUS names, for `stepprof run`'s end line. Child
processes (DataLoader workers) are not profiled: a process started by
multiprocessing, or forked from the profiled one, counts no steps."""
import functools
import importlib
import importlib.abc
import importlib.util
import os
import sys

_RANK_VARS = ("RANK", "LOCAL_RANK", "PADDLE_TRAINER_ID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")

_state = {"prof": None, "steps": 0, "pid": None, "depth": 0}


def _rank():
    for v in _RANK_VARS:
        s = os.environ.get(v, "")
        if s.isdigit():
            return int(s)
    return 0


def rank_selected(ranks, rank):
    """Whether STEPPROF_RANKS ("all", "0", "0,3") names rank."""
    ranks = ranks or "0"
    if ranks == "all":
        return True
    return str(rank) in [r.strip() for r in ranks.split(",")]


def _is_worker():
    """A process started by multiprocessing (spawn/forkserver)."""
    argv = getattr(sys, "orig_argv", sys.argv)
    text = " ".join(argv)
    return "multiprocessing" in text and ("spawn_main" in text or "forkserver" in text or
                                          "--multiprocessing-fork" in text)


def step_seen():
    """Ends the current step of the injected profiler (in the process that
    started it only)."""
    prof = _state["prof"]
    if prof is None or os.getpid() != _state["pid"]:
        return
    _state["steps"] += 1
    prof.step()


def _counting(fn):
    """fn, ending a step at each outermost return (a subclass's step that
    calls super().step() ends one step, not two)."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        _state["depth"] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _state["depth"] -= 1
            if _state["depth"] == 0:
                step_seen()
    wrapper.__stepprof_wrapped__ = True
    return wrapper


def _hook_paddle(module):
    """paddle.optimizer imported: wrap Optimizer.step and its subclasses' own."""
    from . import _paddle_capture
    paddle = sys.modules.get("paddle")
    if paddle is None or _paddle_capture.unsupported_reason(paddle):
        return
    base = getattr(module, "Optimizer", None)
    if base is None:
        return
    seen, todo = set(), [base]
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        todo.extend(cls.__subclasses__())
        own = cls.__dict__.get("step")
        if callable(own) and not getattr(own, "__stepprof_wrapped__", False):
            cls.step = _counting(own)


def _hook_torch(module):
    """torch.optim.optimizer imported: torch's documented global hook."""
    register = getattr(module, "register_optimizer_step_post_hook", None)
    if register is not None:
        register(lambda optimizer, args, kwargs: step_seen())


def _hook_step_fn(module, qualname):
    owner, parts = module, qualname.split(".")
    for p in parts[:-1]:
        owner = getattr(owner, p)
    fn = getattr(owner, parts[-1])
    if not getattr(fn, "__stepprof_wrapped__", False):
        setattr(owner, parts[-1], _counting(fn))


class _Loader(importlib.abc.Loader):
    def __init__(self, inner, after):
        self.inner, self.after = inner, after

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        self.inner.exec_module(module)
        try:
            self.after(module)
        except Exception as e:  # never stop the program
            sys.stderr.write(f"stepprof: cannot hook the steps of {module.__name__}: {e}\n")


class _Finder(importlib.abc.MetaPathFinder):
    """Runs a hook right after a module is imported (the first time)."""

    def __init__(self, hooks):
        self.hooks = hooks  # module name -> hook(module)

    def find_spec(self, name, path, target=None):
        hook = self.hooks.pop(name, None)
        if hook is None:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            if self.hooks:
                sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _Loader(spec.loader, hook)
        return spec


def _after_import(hooks):
    pending = {}
    for name, hook in hooks.items():
        if name in sys.modules:
            hook(sys.modules[name])
        else:
            pending[name] = hook
    if pending:
        sys.meta_path.insert(0, _Finder(pending))


def program_profiler(scheduler, on_trace_ready):
    """Called as the program creates a stepprof.profiler.Profiler: the first
    one it makes takes the injected profiler's place, as in C (docs/c-api.md,
    "A program that makes its own profiler too"). The injected one is stopped
    (a span it was recording is written) and counts no more steps; the
    program's gets the run's steps and output directory. Returns the
    (scheduler, on_trace_ready) the program's profiler uses."""
    prof = _state["prof"]
    if prof is None or _state.get("creating") or os.getpid() != _state["pid"]:
        return scheduler, on_trace_ready
    _state["prof"] = None
    _state["adopted"] = True
    try:
        prof.stop()
    except Exception as e:  # its span is lost; the program's profiler goes on
        sys.stderr.write(f"stepprof: stopping the injected profiler failed: {e}\n")
    return _settings()


def _settings():
    from . import profiler
    first, end = (int(x) for x in os.environ["STEPPROF_STEPS"].split(":"))
    fmt = os.environ.get("STEPPROF_FORMAT", "json")
    out = os.environ.get("STEPPROF_OUT", "./profiler_log/")
    handler = (profiler.export_protobuf(out) if fmt == "pb" else
               profiler.export_chrome_tracing(out))
    return (first, end), handler


def _write_status():
    path = os.environ.get("STEPPROF_PY_STATUS")
    if not path or os.getpid() != _state["pid"] or _state.get("adopted"):
        return  # a program's own profiler counts its own steps
    try:
        with open(path, "a") as f:
            f.write(f"{os.getpid()} {_state['steps']}\n")
    except OSError:
        pass


def install():
    """Starts the injected profiler from the STEPPROF_* variables, when they
    ask for this process's rank. Returns the profiler, or None."""
    steps = os.environ.get("STEPPROF_STEPS")
    if not steps or _state["prof"] is not None or _is_worker():
        return None
    if not rank_selected(os.environ.get("STEPPROF_RANKS"), _rank()):
        return None
    from . import profiler
    scheduler, handler = _settings()
    _state["creating"] = True
    try:
        prof = profiler.Profiler(scheduler=scheduler, on_trace_ready=handler, perf_summary=False)
    finally:
        _state["creating"] = False
    _state.update(prof=prof, steps=0, pid=os.getpid())
    hooks = {"paddle.optimizer": _hook_paddle, "torch.optim.optimizer": _hook_torch}
    step_fn = os.environ.get("STEPPROF_STEP_FN")
    if step_fn:
        mod, _, qual = step_fn.partition(":")
        hooks[mod] = lambda m, q=qual: _hook_step_fn(m, q)
    _after_import(hooks)
    import atexit
    atexit.register(_write_status)  # the count is final: no step ends at exit
    prof.start()
    return prof

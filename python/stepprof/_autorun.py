"""stepprof._autorun: zero-code profiling of a Python program, started by the
sitecustomize that `stepprof run` puts on PYTHONPATH (python/inject/). Reads
the STEPPROF_* variables (docs/c-api.md, "Zero-code profiling"), starts one
stepprof.profiler.Profiler for the ranks asked, and ends a step at each:

- return of paddle.optimizer.Optimizer.step (paddle has no public post-step
  hook: the method of Optimizer and of each subclass that defines its own is
  wrapped, for the paddle versions _paddle_capture.SUPPORTED names only);
- return of torch's optimizer step, found by torch's global optimizer
  post-step hook (torch.optim.optimizer.register_optimizer_step_post_hook;
  _torch_step_hook says why the step ends at the return, not in the hook);
- return of the function STEPPROF_STEP_FN names ("module:qualname").

The hooks are installed when those modules are imported, so a program that
never imports paddle or torch pays nothing for them. The profiler is stopped
at exit (stepprof.profiler's exit hook); the number of steps seen goes to the
file STEPPROF_PY_STATUS names, for `stepprof run`'s end line. Child
processes (DataLoader workers) are not profiled: a process started by
multiprocessing, or forked from the profiled one, counts no steps. Nor is a
distributed launcher's own process (torchrun, python -m
torch.distributed.run, paddle's launcher): it trains nothing, and each rank
it starts decides for itself by STEPPROF_RANKS."""
import functools
import importlib
import importlib.abc
import importlib.util
import os
import sys

_RANK_VARS = ("RANK", "LOCAL_RANK", "PADDLE_TRAINER_ID", "OMPI_COMM_WORLD_RANK", "PMI_RANK")

# What a launcher's own process runs as (_main_name): the console scripts
# and the modules that start the ranks as child processes.
_LAUNCHERS = ("torchrun", "torch.distributed.run", "torch.distributed.launch", "fleetrun",
              "paddle.distributed.launch")

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


def _main_name():
    """What this Python runs: the module of `-m MOD`, the file name of a
    script ("torchrun" for torch's console script), or "" (-c, stdin). Read
    from the interpreter's own arguments, since sitecustomize runs before
    sys.argv names the module."""
    argv = getattr(sys, "orig_argv", None)
    if argv is None:  # Python 3.9
        try:
            with open("/proc/self/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0")[:-1]]
        except OSError:
            return ""
    args = iter(argv[1:])
    for a in args:
        if a in ("-X", "-W", "--check-hash-based-pycs"):
            next(args, None)  # the option's value
        elif a.startswith("-m"):
            return a[2:] or next(args, "")
        elif a.startswith("-c") or a == "-":
            return ""
        elif not a.startswith("-"):
            return os.path.basename(a)
    return ""


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


def _torch_step_hook(optimizer, args, kwargs):
    """torch's global optimizer post-step hook. torch calls it inside the
    "Optimizer.step#<class>.step" range of its step wrapper, so a step ended
    here would cut that range in two (docs/semantics.md 5.1, split_ranges),
    every step. The step ends instead as the function that called the hook
    (the wrapper) returns, once the range is closed: a profile function on
    this thread only (sys.setprofile) waits for that one return, then
    removes itself. Where the thread has a profile function already
    (cProfile), it is left alone and the step ends here. An optimizer step
    made inside another's (a subclass calling super().step(), an optimizer
    wrapping another) ends no step: the outer one does."""
    if _state["prof"] is None or os.getpid() != _state["pid"]:
        return
    caller = sys._getframe(1)
    outer = caller.f_back
    while outer is not None:
        if outer.f_code is caller.f_code:
            return
        outer = outer.f_back
    if sys.getprofile() is not None:
        step_seen()
        return

    def on_return(frame, event, arg):
        if frame is caller and event == "return":
            sys.setprofile(None)
            step_seen()

    sys.setprofile(on_return)


def _torch_imported(module):
    """torch imported while the injected profiler records a span (--steps
    0:N: that span began before the program imported anything): torch's
    operators are captured from now on, not from the next span only
    (_torch_capture.py)."""
    from .profiler import ProfilerState
    prof = _state["prof"]
    if prof is None or os.getpid() != _state["pid"]:
        return
    cap = getattr(prof, "_torch", None)
    if cap is not None and prof.current_state in (ProfilerState.RECORD,
                                                  ProfilerState.RECORD_AND_RETURN):
        cap.begin()


def _hook_torch(module):
    """torch.optim.optimizer imported: torch's documented global hook."""
    register = getattr(module, "register_optimizer_step_post_hook", None)
    if register is not None:
        register(_torch_step_hook)


def _core_module():
    from . import _core
    return _core


def _main_step_fn_found(qualname):
    """The first call of __main__'s step function has returned
    (python/_stepprof/main_watch.c): it ends a step, and the function is
    wrapped for the calls after it."""
    step_seen()
    _hook_step_fn(sys.modules["__main__"], qualname)


def _hook_step_fn(module, qualname):
    owner, parts = module, qualname.split(".")
    for p in parts[:-1]:
        owner = getattr(owner, p)
    fn = getattr(owner, parts[-1])
    if not getattr(fn, "__stepprof_wrapped__", False):
        setattr(owner, parts[-1], _counting(fn))


class _Loader(importlib.abc.Loader):
    """The module's own loader, then the hook. The module is given its own
    loader back before it runs, and anything else asked of this one goes to
    that loader, so that resources and source are found as without it."""

    def __init__(self, inner, after):
        self.inner, self.after = inner, after

    def __getattr__(self, name):
        if name == "inner":  # not set yet: never recurse
            raise AttributeError(name)
        return getattr(self.inner, name)

    def create_module(self, spec):
        return self.inner.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self.inner
        if getattr(module, "__spec__", None) is not None:
            module.__spec__.loader = self.inner
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


def program_profiler(scheduler, on_trace_ready, targets):
    """Called as the program creates a stepprof.profiler.Profiler: the first
    one it makes takes the injected profiler's place, as in C (docs/c-api.md,
    "A program that makes its own profiler too"). The injected one is stopped
    (a span it was recording is written) and counts no more steps; the
    program's gets the run's steps, targets and trace handler (the format,
    the summary tables beside the trace, the end line: the C library's,
    src/inject/env.c). Returns the (scheduler, on_trace_ready, targets) the
    program's profiler uses."""
    prof = _state["prof"]
    if prof is None or _state.get("creating") or os.getpid() != _state["pid"]:
        return scheduler, on_trace_ready, targets
    _state["prof"] = None
    _state["adopted"] = True
    try:
        prof.stop()
    except Exception as e:  # its span is lost; the program's profiler goes on
        sys.stderr.write(f"stepprof: stopping the injected profiler failed: {e}\n")
    from ._handlers import RunHandler
    return _steps(), RunHandler(), _targets()


def _targets():
    """STEPPROF_TARGETS as the Profiler takes them: with gpu, None (what can
    be traced, the GPU when there is one, with no warning when there is
    none, as the run's own profiler); cpu alone, the CPU."""
    from .profiler import ProfilerTarget
    names = [n.strip() for n in os.environ.get("STEPPROF_TARGETS", "cpu,gpu").split(",")]
    return None if "gpu" in names else [ProfilerTarget.CPU]


def _steps():
    """STEPPROF_STEPS as a (start, end) scheduler."""
    first, end = (int(x) for x in os.environ["STEPPROF_STEPS"].split(":"))
    return first, end


def _settings():
    from . import profiler
    fmt = os.environ.get("STEPPROF_FORMAT", "json")
    out = os.environ.get("STEPPROF_OUT", "./profiler_log/")
    handler = (profiler.export_protobuf(out) if fmt == "pb" else
               profiler.export_chrome_tracing(out))
    return _steps(), handler


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
    if not steps or _state["prof"] is not None:
        return None
    if _is_worker() or _main_name() in _LAUNCHERS:
        # The C library started the environment's profiler as stepprof
        # loaded (src/inject/env.c); this process is left alone, silently.
        from . import _core
        _core._env_discard()
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
    # A run prints its two lines and nothing else: that forked workers are
    # not profiled is `stepprof run`'s documented rule, not news each run.
    prof._fork_said = True
    _state.update(prof=prof, steps=0, pid=os.getpid())
    hooks = {"torch": _torch_imported}
    step_fn = os.environ.get("STEPPROF_STEP_FN")
    if step_fn:
        # The function named is the step: optimizer steps inside it (several,
        # with gradient accumulation) end none.
        mod, _, qual = step_fn.partition(":")
        if mod == "__main__":
            _core_module()._watch_main(qual, lambda q=qual: _main_step_fn_found(q))
        else:
            hooks[mod] = lambda m, q=qual: _hook_step_fn(m, q)
    else:
        hooks.update({"paddle.optimizer": _hook_paddle, "torch.optim.optimizer": _hook_torch})
    _after_import(hooks)
    import atexit
    atexit.register(_write_status)  # the count is final: no step ends at exit
    prof.start()
    return prof

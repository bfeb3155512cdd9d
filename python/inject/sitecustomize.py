"""sitecustomize.py that `stepprof run` puts first on PYTHONPATH (the
directory STEPPROF_PYTHON_INJECT_DIR names): a Python program run under it is
profiled with no code added (stepprof._autorun; docs/python.md, "Zero-code
profiling"). The program's own sitecustomize, if any, still runs: this one
takes its directory off sys.path, imports the next sitecustomize found, and
puts the directory back. Nothing here may stop the program: a failure is one
line on stderr."""
import sys


def _chain():
    here = __file__.rsplit("/", 1)[0] if "/" in __file__ else "."
    saved = list(sys.path)
    mine = sys.modules.pop("sitecustomize", None)
    try:
        sys.path[:] = [p for p in sys.path if (p or ".").rstrip("/") != here.rstrip("/")]
        import importlib
        try:
            importlib.import_module("sitecustomize")
        except ModuleNotFoundError as e:
            if e.name != "sitecustomize":
                raise
    finally:
        sys.path[:] = saved
        if mine is not None:
            sys.modules["sitecustomize"] = mine


def _start():
    try:
        import stepprof._autorun as autorun
    except ImportError as e:
        sys.stderr.write(f"stepprof: this Python ({sys.executable}) cannot import the stepprof "
                         f"package ({e}); its steps are not profiled. Install it there "
                         f"(pip install . in stepprof's source, or python/test.sh)\n")
        return
    autorun.install()


try:
    _chain()
finally:
    try:
        _start()
    except Exception as e:  # never stop the program
        sys.stderr.write(f"stepprof: zero-code profiling failed to start: {e}\n")

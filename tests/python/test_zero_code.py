"""test_zero_code.py: `stepprof run -- python ...` profiles a Python program
with no profiler code in it (python/inject/sitecustomize.py,
python/stepprof/_autorun.py). Needs the stepprof tool: STEPPROF_CLI, or
build/stepprof of this checkout (skipped without one); the paddle case skips
without paddle. No test depends on timing."""
import os
import subprocess
import sys

import pytest

from conftest import load_trace, step_names, steps, trace_files

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("STEPPROF_CLI", os.path.join(ROOT, "build", "stepprof"))

pytestmark = pytest.mark.skipif(not os.access(CLI, os.X_OK), reason=f"no stepprof tool at {CLI}")

LOOP = """\
import steps_lib
for i in range(int(steps_lib.N)):
    steps_lib.train_step(i)
"""

LIB = """\
N = 8
def train_step(i):
    return sum(k * i for k in range(100))
"""


def run(args, cwd, env=None):
    full = dict(os.environ)
    full.pop("PYTHONPATH", None)
    full.update(env or {})
    return subprocess.run([CLI, "run", *args], cwd=cwd, env=full, capture_output=True, text=True,
                          check=False, timeout=600)


def own_lines(stderr):
    return [line for line in stderr.splitlines() if line.startswith("stepprof: ")]


def write_loop(tmp_path):
    (tmp_path / "loop.py").write_text(LOOP)
    (tmp_path / "steps_lib.py").write_text(LIB)


def test_zero_code_step_fn_marks_steps(tmp_path):
    write_loop(tmp_path)
    r = run(["--steps", "2:5", "--step-fn", "steps_lib:train_step", "--", sys.executable,
             "loop.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = own_lines(r.stderr)
    assert len(lines) == 2, r.stderr
    assert lines[1].startswith("stepprof: wrote "), lines
    files = trace_files(tmp_path / "profiler_log")
    assert len(files) == 1
    assert step_names(load_trace(files[0])) == steps(2, 5)


def test_zero_code_no_step_says_how_to_mark_one(tmp_path):
    write_loop(tmp_path)
    r = run(["--steps", "2:5", "--", sys.executable, "loop.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = own_lines(r.stderr)
    assert len(lines) == 2, r.stderr
    assert "ended no step" in lines[1] and "--step-fn" in lines[1], lines
    assert trace_files(tmp_path / "profiler_log") == []


def test_zero_code_too_few_steps_says_so(tmp_path):
    write_loop(tmp_path)
    r = run(["--steps", "20:30", "--step-fn", "steps_lib:train_step", "--", sys.executable,
             "loop.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ended 8 steps and did not reach step 20" in own_lines(r.stderr)[-1], r.stderr


def test_zero_code_existing_sitecustomize_still_runs(tmp_path):
    write_loop(tmp_path)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import os\nopen(os.path.join(os.getcwd(), 'chained.txt'), 'w').write('yes')\n")
    r = run(["--steps", "0:2", "--step-fn", "steps_lib:train_step", "--", sys.executable,
             "loop.py"], tmp_path, {"PYTHONPATH": str(site)})
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "chained.txt").read_text() == "yes"
    files = trace_files(tmp_path / "profiler_log")
    assert len(files) == 1
    assert step_names(load_trace(files[0])) == steps(0, 2)


def test_zero_code_exit_status_passes_through(tmp_path):
    r = run(["--", sys.executable, "-c", "raise SystemExit(3)"], tmp_path)
    assert r.returncode == 3, r.stderr


def test_zero_code_torch_hook_with_a_stand_in(tmp_path):
    """torch is not installed here: a stand-in torch.optim.optimizer with
    torch's documented register_optimizer_step_post_hook(hook(opt, args,
    kwargs)) checks that the hook is registered and ends steps."""
    pkg = tmp_path / "fake" / "torch" / "optim"
    pkg.mkdir(parents=True)
    (tmp_path / "fake" / "torch" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .optimizer import Optimizer\n")
    (pkg / "optimizer.py").write_text(
        "_hooks = []\n"
        "def register_optimizer_step_post_hook(hook):\n"
        "    _hooks.append(hook)\n"
        "class Optimizer:\n"
        "    def step(self):\n"
        "        for h in _hooks:\n"
        "            h(self, (), {})\n")
    (tmp_path / "train.py").write_text(
        "import torch.optim\nopt = torch.optim.Optimizer()\nfor _ in range(6):\n    opt.step()\n")
    r = run(["--steps", "1:4", "--", sys.executable, "train.py"], tmp_path,
            {"PYTHONPATH": str(tmp_path / "fake")})
    assert r.returncode == 0, r.stderr
    files = trace_files(tmp_path / "profiler_log")
    assert len(files) == 1, r.stderr
    assert step_names(load_trace(files[0])) == steps(1, 4)


def test_zero_code_paddle_example(tmp_path):
    """The seed scenario: examples/zero_code/train_paddle.py (30 steps,
    DataLoader with workers, SGD, no profiler code) writes exactly one trace
    of steps 10 to 19 with paddle's operators inside, and the run prints two
    lines of its own."""
    pytest.importorskip("paddle")
    script = os.path.join(ROOT, "examples", "zero_code", "train_paddle.py")
    r = run(["--", sys.executable, script], tmp_path)
    assert r.returncode == 0, r.stderr
    lines = own_lines(r.stderr)
    assert len(lines) == 2, r.stderr
    assert lines[0].startswith("stepprof: profiling steps [10, 20)")
    assert lines[1].startswith("stepprof: wrote ")
    files = trace_files(tmp_path / "profiler_log")
    assert len(files) == 1
    trace = load_trace(files[0])
    assert step_names(trace) == steps(10, 20)
    ops = {e["name"] for e in trace["traceEvents"] if e.get("cat") == "cpu_op"}
    assert "matmul dygraph" in ops and "sgd_ dygraph" in ops, sorted(ops)[:20]


def test_zero_code_program_profiler_takes_over(tmp_path):
    """A program that makes its own stepprof profiler: it takes the injected
    one's place with the run's steps and output directory (one trace)."""
    (tmp_path / "own.py").write_text(
        "import stepprof.profiler as profiler\n"
        "prof = profiler.Profiler(scheduler=(0, 1), perf_summary=False,\n"
        "                         on_trace_ready=profiler.export_chrome_tracing('elsewhere'))\n"
        "prof.start()\n"
        "for _ in range(6):\n"
        "    prof.step()\n"
        "prof.stop()\n")
    r = run(["--steps", "2:4", "--out", "traces", "--", sys.executable, "own.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "elsewhere").exists()
    files = trace_files(tmp_path / "traces")
    assert len(files) == 1, r.stderr
    assert step_names(load_trace(files[0])) == steps(2, 4)
    assert own_lines(r.stderr)[-1].startswith("stepprof: wrote "), r.stderr


def test_zero_code_python_m_stepprof_run(tmp_path):
    """python -m stepprof run SCRIPT: stepprof run with this Python."""
    write_loop(tmp_path)
    full = dict(os.environ, STEPPROF_CLI=CLI)
    full.pop("PYTHONPATH", None)
    r = subprocess.run([sys.executable, "-m", "stepprof", "run", "--steps", "1:3", "--step-fn",
                        "steps_lib:train_step", "loop.py"], cwd=tmp_path, env=full,
                       capture_output=True, text=True, check=False, timeout=600)
    assert r.returncode == 0, r.stderr
    assert len(own_lines(r.stderr)) == 2, r.stderr
    files = trace_files(tmp_path / "profiler_log")
    assert len(files) == 1
    assert step_names(load_trace(files[0])) == steps(1, 3)


def test_zero_code_rank_left_out_is_not_profiled(tmp_path):
    """RANK=1 with the default --ranks 0: the program runs unprofiled."""
    write_loop(tmp_path)
    r = run(["--steps", "1:3", "--step-fn", "steps_lib:train_step", "--", sys.executable,
             "loop.py"], tmp_path, {"RANK": "1"})
    assert r.returncode == 0, r.stderr
    assert trace_files(tmp_path / "profiler_log") == []
    assert own_lines(r.stderr)[-1].startswith("stepprof: no trace written"), r.stderr
    r = run(["--ranks", "all", "--steps", "1:3", "--step-fn", "steps_lib:train_step", "--",
             sys.executable, "loop.py"], tmp_path, {"RANK": "1"})
    assert r.returncode == 0, r.stderr
    files = trace_files(tmp_path / "profiler_log")
    assert len(files) == 1 and "rank1" in os.path.basename(files[0]), files

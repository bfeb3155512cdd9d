"""test_zero_code.py: `stepprof run -- python ...` profiles a Python program
with no profiler code in it (python/inject/sitecustomize.py,
python/stepprof/_autorun.py). Needs the stepprof tool: STEPPROF_CLI, or
build/stepprof of this checkout (skipped without one); the paddle and torch
cases skip without them. No test depends on timing: the torchrun ranks meet
through torchrun's --standalone rendezvous (a free local port it picks), and
every run may take up to ten minutes on a busy machine."""
import os
import socket
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


STAND_IN_OPTIMIZER = """\
import stepprof.profiler as sp
_hooks = []
def register_optimizer_step_post_hook(hook):
    _hooks.append(hook)
def _profile_hook_step(fn):
    def wrapper(self):
        with sp.RecordEvent("Optimizer.step"):
            out = fn(self)
            for h in _hooks:
                h(self, (), {})
            return out
    return wrapper
class Optimizer:
    step = _profile_hook_step(lambda self: None)
"""


def test_zero_code_torch_hook_with_a_stand_in(tmp_path):
    """Without torch (and in a second): a stand-in torch.optim.optimizer
    with torch's documented register_optimizer_step_post_hook(hook(opt,
    args, kwargs)), called as torch calls it, inside a range its step
    wrapper opens. Each step ends as the outermost wrapper returns: both
    ranges of a subclass whose step calls super().step() lie whole inside
    one step, none is split, and the subclass's step ends one step, not
    two."""
    pkg = tmp_path / "fake" / "torch" / "optim"
    pkg.mkdir(parents=True)
    (tmp_path / "fake" / "torch" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .optimizer import Optimizer\n")
    (pkg / "optimizer.py").write_text(STAND_IN_OPTIMIZER)
    (tmp_path / "train.py").write_text(
        "import torch.optim.optimizer as o\n"
        "class SGD(o.Optimizer):\n"
        "    def step(self):\n"
        "        super().step()\n"
        "SGD.step = o._profile_hook_step(SGD.step)\n"
        "opt = SGD()\n"
        "for _ in range(6):\n"
        "    opt.step()\n")
    r = run(["--steps", "1:4", "--", sys.executable, "train.py"], tmp_path,
            {"PYTHONPATH": str(tmp_path / "fake")})
    assert r.returncode == 0, r.stderr
    files = trace_files(tmp_path / "profiler_log")
    assert len(files) == 1, r.stderr
    trace = load_trace(files[0])
    assert step_names(trace) == steps(1, 4)
    assert trace["stepprof_counters"]["split_ranges"] == 0
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    for step in (e for e in events if e["name"].startswith("ProfilerStep#")):
        inside = [e for e in events if e["name"] == "Optimizer.step" and
                  step["ts"] <= e["ts"] and e["ts"] + e["dur"] <= step["ts"] + step["dur"]]
        assert len(inside) == 2, (step["name"], events)


MAIN_STEP_FN = """\
import json
def train_step(i):
    return sum(k * i for k in range(100))
class Trainer:
    def step(self, i):
        return train_step(i)
t = Trainer()
for i in range(8):
    t.step(i)
"""


@pytest.mark.parametrize("name", ["train_step", "Trainer.step"])
def test_zero_code_step_fn_of_the_main_script(tmp_path, name):
    """--step-fn __main__:NAME, a function (or a class's method) of the
    script itself: its first call ends step 0, as every later one ends the
    next, so the steps recorded are the ones asked."""
    (tmp_path / "main.py").write_text(MAIN_STEP_FN)
    r = run(["--steps", "2:5", "--step-fn", f"__main__:{name}", "--", sys.executable, "main.py"],
            tmp_path)
    assert r.returncode == 0, r.stderr
    assert len(own_lines(r.stderr)) == 2, r.stderr
    files = trace_files(tmp_path / "profiler_log")
    assert len(files) == 1, r.stderr
    assert step_names(load_trace(files[0])) == steps(2, 5)


def test_zero_code_step_fn_of_the_main_script_never_called(tmp_path):
    """A name the script never calls: the program runs as without it, and
    the end line says that no step ended."""
    (tmp_path / "main.py").write_text(MAIN_STEP_FN)
    r = run(["--steps", "2:5", "--step-fn", "__main__:nothing", "--", sys.executable, "main.py"],
            tmp_path)
    assert r.returncode == 0, r.stderr
    assert "ended no step" in own_lines(r.stderr)[-1], r.stderr


def test_zero_code_step_fn_goes_before_the_optimizer(tmp_path):
    """--step-fn names the step: the two optimizer steps each call makes
    (gradient accumulation) end none."""
    pkg = tmp_path / "fake" / "torch" / "optim"
    pkg.mkdir(parents=True)
    (tmp_path / "fake" / "torch" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("from .optimizer import Optimizer\n")
    (pkg / "optimizer.py").write_text(STAND_IN_OPTIMIZER)
    (tmp_path / "train.py").write_text(
        "import torch.optim.optimizer as o\n"
        "opt = o.Optimizer()\n"
        "def train_step():\n"
        "    opt.step()\n"
        "    opt.step()\n"
        "for _ in range(6):\n"
        "    train_step()\n")
    r = run(["--steps", "1:3", "--step-fn", "__main__:train_step", "--", sys.executable,
             "train.py"], tmp_path, {"PYTHONPATH": str(tmp_path / "fake")})
    assert r.returncode == 0, r.stderr
    files = trace_files(tmp_path / "profiler_log")
    assert len(files) == 1, r.stderr
    trace = load_trace(files[0])
    assert step_names(trace) == steps(1, 3)
    assert sum(e["name"] == "Optimizer.step" for e in trace["traceEvents"]) == 4


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


def test_zero_code_torch_example(tmp_path):
    """The seed scenario in torch: examples/zero_code/train_torch.py (30
    steps, DataLoader with workers, SGD, no profiler code) writes exactly one
    trace of steps 10 to 19, each holding torch's operators and its
    optimizer step whole: the step ends as torch's step returns, not inside
    its "Optimizer.step#SGD.step" range, so no range is split or left open.
    The run prints two lines of its own."""
    pytest.importorskip("torch", reason="torch is not installed")
    script = os.path.join(ROOT, "examples", "zero_code", "train_torch.py")
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
    assert trace["stepprof_counters"]["split_ranges"] == 0
    assert trace["stepprof_counters"]["unclosed_ranges"] == 0
    events = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    for step in (e for e in events if e["name"].startswith("ProfilerStep#")):
        inside = {e["name"] for e in events if e["tid"] == step["tid"] and e is not step and
                  step["ts"] <= e["ts"] and e["ts"] + e["dur"] <= step["ts"] + step["dur"]}
        for name in ("aten::addmm", "aten::mse_loss", "Optimizer.step#SGD.step"):
            assert name in inside, (step["name"], name, sorted(inside)[:20])


DDP = """\
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
for _ in range(4):
    loss = model(torch.randn(4, 8)).sum()
    opt.zero_grad()
    loss.backward()
    opt.step()
# Every rank done before any tears gloo down: without it, about one run in 40
# ends with std::terminate in a rank after its work, under torch alone too.
dist.barrier()
dist.destroy_process_group()
"""


def torchrun(tmp_path, ranks, env=None):
    """stepprof run --steps 0:2 [--ranks RANKS] -- torchrun --standalone
    --nproc_per_node 2 ddp.py (torchrun as python -m torch.distributed.run,
    so that its ranks run this Python, which has this stepprof). Steps from
    0, so that a launcher profiled as a rank would write a trace of its own
    start-up. Returns the run and its traces, parsed, by file name."""
    pytest.importorskip("torch", reason="torch is not installed")
    (tmp_path / "ddp.py").write_text(DDP)
    args = ["--steps", "0:2"] + (["--ranks", ranks] if ranks else [])
    r = run([*args, "--", sys.executable, "-m", "torch.distributed.run", "--standalone",
             "--nproc_per_node", "2", "ddp.py"], tmp_path, env)
    assert r.returncode == 0, r.stderr
    assert len(own_lines(r.stderr)) == 2, r.stderr
    files = trace_files(tmp_path / "profiler_log")
    return r, {os.path.basename(f): load_trace(f) for f in files}


def test_zero_code_torchrun_profiles_rank_0_only_by_default(tmp_path):
    """torchrun's launcher (a process of its own) is no rank 0: of the three
    Pythons only rank 0 writes."""
    _, traces = torchrun(tmp_path, None)
    assert len(traces) == 1, list(traces)
    (name, trace), = traces.items()
    assert "_rank0_" in name
    assert step_names(trace) == steps(0, 2)
    info = trace["distributedInfo"]
    assert list(info)[:3] == ["backend", "rank", "world_size"], info
    assert {k: info[k] for k in ("backend", "rank", "world_size", "local_rank", "local_world_size",
                                 "hostname")} == {"backend": "gloo", "rank": 0, "world_size": 2,
                                                  "local_rank": 0, "local_world_size": 2,
                                                  "hostname": socket.gethostname()}
    assert info["job"], info  # torchrun's TORCHELASTIC_RUN_ID
    ops = {e["name"] for e in trace["traceEvents"] if e.get("ph") == "X"}
    assert "c10d::allreduce_" in ops, sorted(ops)[:20]  # torch came after the span began


def test_zero_code_torchrun_all_ranks_write_their_own_file(tmp_path):
    """--ranks all: each rank writes its own file, named with its rank, its
    distributedInfo naming torch.distributed's backend. STEPPROF_DIST_BACKEND
    says nccl, a guess the real backend goes before."""
    _, traces = torchrun(tmp_path, "all", {"STEPPROF_DIST_BACKEND": "nccl"})
    assert len(traces) == 2, list(traces)
    jobs = set()
    for rank in (0, 1):
        (trace,) = [t for n, t in traces.items() if f"_rank{rank}_" in n]
        info = trace["distributedInfo"]
        assert {k: info[k] for k in ("backend", "rank", "world_size", "local_rank",
                                     "local_world_size")} == {
            "backend": "gloo", "rank": rank, "world_size": 2, "local_rank": rank,
            "local_world_size": 2}
        jobs.add(info["job"])
        assert step_names(trace) == steps(0, 2)
        ops = {e["name"] for e in trace["traceEvents"] if e.get("ph") == "X"}
        assert "c10d::allreduce_" in ops, sorted(ops)[:20]
    assert len(jobs) == 1 and "" not in jobs, jobs  # one torchrun job, named


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
    assert len(own_lines(r.stderr)) == 2, r.stderr
    # The run's trace handler, as for the injected profiler: the summary
    # tables beside the trace.
    summary = files[0][:-len(".json")] + ".summary.txt"
    assert "Overview Summary" in open(summary).read()


def test_zero_code_program_profiler_takes_the_runs_format(tmp_path):
    """--format json.gz reaches the program's own profiler too."""
    (tmp_path / "own.py").write_text(
        "import stepprof.profiler as profiler\n"
        "prof = profiler.Profiler(scheduler=(0, 1), perf_summary=False)\n"
        "prof.start()\n"
        "for _ in range(6):\n"
        "    prof.step()\n"
        "prof.stop()\n")
    r = run(["--steps", "1:3", "--format", "json.gz", "--out", "traces", "--", sys.executable,
             "own.py"], tmp_path)
    assert r.returncode == 0, r.stderr
    files = trace_files(tmp_path / "traces")
    assert len(files) == 1 and files[0].endswith(".paddle_trace.json.gz"), (files, r.stderr)
    assert step_names(load_trace(files[0])) == steps(1, 3)
    assert os.path.exists(files[0][:-len(".json.gz")] + ".summary.txt")


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

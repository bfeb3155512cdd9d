"""The integration pattern of a typical training script (the integration
report of seeds/README.md): profiling on rank 0 only (RANK or LOCAL_RANK),
steps [10, 20) recorded, CPU and GPU targets requested (one warning line
where no GPU can be traced), the trace under {dump_path}/profiler_logs/, one
log line at start. Run as a real script in a subprocess, so the terminal
output is checked as a user would see it."""
import os
import subprocess
import sys
import textwrap

import pytest

from conftest import GPU_WARNING, cuda_driver_present, load_trace, step_names, steps, trace_files

SCRIPT = textwrap.dedent('''
    import logging
    import os
    import sys

    import stepprof.profiler as profiler

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
    log = logging.getLogger("train")


    def make_profiler(dump_path):
        rank = int(os.environ.get("RANK", os.environ.get("LOCAL_RANK", "0")))
        if rank != 0:
            return None
        log_dir = os.path.join(dump_path, "profiler_logs")
        prof = profiler.Profiler(
            targets=[profiler.ProfilerTarget.CPU, profiler.ProfilerTarget.GPU],
            scheduler=(10, 20),
            on_trace_ready=profiler.export_chrome_tracing(log_dir),
            timer_only=False)
        log.info("profiler: steps [10, 20) -> %s/", log_dir)
        return prof


    def train(dump_path, epochs=1, steps_per_epoch=30):
        prof = make_profiler(dump_path)
        w = [0.5] * 64
        for epoch in range(epochs):
            if prof:
                prof.start()
            for step in range(steps_per_epoch):
                with profiler.RecordEvent("forward", profiler.TracerEventType.Forward):
                    loss = sum(x * x for x in w)
                with profiler.RecordEvent("backward", profiler.TracerEventType.Backward):
                    w = [x - 0.01 * 2 * x for x in w]
                if prof:
                    prof.step()
            if prof:
                prof.stop()
        return loss


    train(sys.argv[1])
''')


def run_script(tmp_path, env_extra):
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK")}
    env.update(env_extra)
    return subprocess.run([sys.executable, str(script), str(tmp_path / "dump")], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("env", [{"RANK": "0"}, {"LOCAL_RANK": "0"}, {}])
def test_rank0_profiles_steps_10_to_20(tmp_path, env):
    proc = run_script(tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    err_lines = proc.stderr.splitlines()
    # Where no GPU can be traced, one warning: paddle's words, then the reason
    # (which names what is missing on this machine), as a StepprofWarning
    # from the script's line that made the profiler (Python prints that line
    # under it). Without a CUDA driver it must be there; with one, it depends
    # on the device.
    gpu_lines = [l for l in err_lines if "StepprofWarning: " + GPU_WARNING in l]
    assert len(gpu_lines) <= 1, err_lines
    if not cuda_driver_present():
        assert len(gpu_lines) == 1, err_lines
    assert all(l.endswith("; recording the CPU only") for l in gpu_lines)
    assert all("train.py:17: StepprofWarning" in l for l in gpu_lines), gpu_lines
    source = ["  prof = profiler.Profiler("] if gpu_lines else []
    assert [l for l in err_lines if l not in gpu_lines] == source + [
        f"INFO profiler: steps [10, 20) -> {tmp_path}/dump/profiler_logs/"]
    files = trace_files(tmp_path / "dump" / "profiler_logs")
    assert len(files) == 1 and files[0].endswith(".paddle_trace.json")
    trace = load_trace(files[0])
    assert step_names(trace) == steps(10, 20)
    names = [e["name"] for e in trace["traceEvents"] if e.get("ph") == "X"]
    assert names.count("forward") == 10 and names.count("backward") == 10


@pytest.mark.parametrize("env", [{"RANK": "1"}, {"LOCAL_RANK": "3"}])
def test_other_ranks_do_not_profile(tmp_path, env):
    proc = run_script(tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and proc.stdout == ""
    assert not (tmp_path / "dump").exists()

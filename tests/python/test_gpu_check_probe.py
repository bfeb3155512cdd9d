"""tools/gpu_check/torch_probe.py, the torch programs of `make gpu-check`, with their MLP
on the CPU (GPU_CHECK_PROBE_DEVICE=cpu): each mode runs to its "probe: {json}" line and
reports what its traces hold, so that a run on a lent GPU machine does not break on the
probe's own code. The verdicts need a GPU and are gpu_check.py's; here only the shape
and the CPU side are held: operators recorded, no kernel from a CPU model, and without
a driver stepprof's refusal line in each span's warnings. Skipped without torch."""
import json
import os

import pytest
from conftest import cuda_driver_present
from test_torch_capture import HAVE_TORCH, _why_no_torch, run_python

PROBE = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "gpu_check", "torch_probe.py")
REFUSAL = "Profiling GPU is not supported in current context"
pytestmark = pytest.mark.skipif(not HAVE_TORCH, reason=_why_no_torch())


def probe(mode, tmp_path):
    env = dict(os.environ, GPU_CHECK_PROBE_DEVICE="cpu")
    out, _ = run_python(["-B", PROBE, mode, str(tmp_path)], cwd=str(tmp_path), env=env)
    lines = [line for line in out.splitlines() if line.startswith("probe: ")]
    assert lines, out[-2000:]
    return json.loads(lines[-1][len("probe: "):])


def assert_cpu_span(facts):
    assert facts["cpu_ops"] > 0
    assert facts["kernels"] == 0 and facts["mangled"] == 0 and facts["no_external_id"] == 0


def test_probe_capture_reports_both_profilers(tmp_path):
    got = probe("capture", tmp_path)
    assert got["device"] == "cpu"
    assert_cpu_span(got["stepprof"])
    assert_cpu_span(got["torch"])
    assert got["stepprof"]["cpu_ops"] == got["torch"]["cpu_ops"]  # the same 3 steps
    if not cuda_driver_present():
        assert any(REFUSAL in w for w in got["warnings"])


def test_probe_under_torch_reports_stepprof_inside_torch_profiler(tmp_path):
    got = probe("under_torch", tmp_path)
    assert_cpu_span(got["stepprof"])
    assert got["torch"]["cpu_ops"] > got["stepprof"]["cpu_ops"]  # torch's span holds two more steps
    assert any(REFUSAL in w for w in got["warnings"])  # no driver, or torch.profiler holds CUPTI


def test_probe_fork_children_record_the_cpu_and_refuse_the_gpu(tmp_path):
    got = probe("fork", tmp_path)
    for key in ("no_profiler", "after_span"):
        child = got[key]
        assert "error" not in child, child
        assert child["exit"] == 0
        assert_cpu_span(child["trace"])
    # With a CPU model the parent loads CUDA only through stepprof's own span, so the
    # child forked before it may use a GPU where there is one.
    if not cuda_driver_present():
        assert any(REFUSAL in w for w in got["no_profiler"]["warnings"])
    assert any("forked from one that had loaded CUDA" in w for w in got["after_span"]["warnings"])

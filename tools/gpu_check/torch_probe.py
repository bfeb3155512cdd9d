#!/usr/bin/env python3
"""torch_probe.py: the torch programs of `make gpu-check` (tools/gpu_check/gpu_check.py),
each run in its own process by a Python that has torch (with CUDA) and stepprof installed.
A small MLP (three Linear layers, cross entropy, SGD) trains on the GPU; the probe ends
with one line "probe: {json}" holding what the traces show, which gpu_check.py judges.

  capture      STEPS steps under stepprof.torch_profiler with CPU and CUDA activities,
               then the same steps under torch.profiler in the same process (its CUPTI
               subscriber must be free again after stepprof's span)
  under_torch  a stepprof span started while torch.profiler records CUDA activity:
               stepprof must warn and record the CPU only; torch.profiler keeps its kernels
  fork         a child forked after CUDA was used starts a stepprof span with CUDA:
               first with no stepprof profiler made before the fork, then after a GPU span
               in the parent; each child must warn and record the CPU only

Usage: torch_probe.py MODE OUT_DIR. Exits 0 when it could run (the verdict is
gpu_check.py's), 77 without torch or a CUDA device, 1 on an error. With
GPU_CHECK_PROBE_DEVICE=cpu the MLP runs on the CPU: only for trying the probe's own
code on a machine without a GPU (tests/python/test_gpu_check_probe.py).
"""
import collections
import gzip
import json
import os
import sys
import time
import warnings

STEPS = 3
WARMUP = 3
DEVICE = os.environ.get("GPU_CHECK_PROBE_DEVICE", "cuda")
# The API calls stepprof turns off per callback id (src/gpu/cupti_records.c).
NOISY = {"cudaGetDevice", "cudaGetLastError", "cudaPeekAtLastError", "cudaStreamIsCapturing",
         "cuCtxGetCurrent", "cuDevicePrimaryCtxGetState", "cuKernelGetAttribute",
         "cuPointerGetAttribute", "cuPointerGetAttributes"}


def base_name(name):
    """An API call's name without CUPTI's version suffix (cudaGetDevice_v3020)."""
    head, sep, tail = name.rpartition("_v")
    return head if sep and tail.isdigit() else name


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data.decode("utf-8"))


def facts(path):
    """What a Chrome trace (stepprof's or torch.profiler's) holds of kernels,
    their operators and the API calls."""
    events = [e for e in load(path).get("traceEvents", []) if isinstance(e, dict)]
    # Operators by External id, which links kernels to them; stepprof writes
    # that id only in a span with CUDA records, so operators are counted apart.
    ops, n_ops = {}, 0
    for e in events:
        if e.get("ph") != "X" or e.get("cat") != "cpu_op":
            continue
        n_ops += 1
        ext = (e.get("args") or {}).get("External id")
        if ext:
            ops[ext] = e.get("name", "")
    kernels = [e for e in events if e.get("ph") == "X" and e.get("cat") == "kernel"]
    api = [e for e in events if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver")]
    no_ext, not_aten = 0, collections.Counter()
    for k in kernels:
        ext = (k.get("args") or {}).get("External id")
        if not ext or ext not in ops:
            no_ext += 1
        elif not ops[ext].startswith("aten::"):
            not_aten[ops[ext]] += 1
    names = [k.get("name", "") for k in kernels]
    return {
        "kernels": len(kernels),
        "kernel_us": round(sum(float(k.get("dur", 0)) for k in kernels), 3),
        "cpu_ops": n_ops,
        "mangled": sum(1 for n in names if n.startswith("_Z")),
        "at_native": sum(1 for n in names if "at::native" in n),
        "example_name": next((n for n in names if "at::native" in n), names[0] if names else ""),
        "no_external_id": no_ext,
        "not_aten": dict(not_aten.most_common(5)),
        "not_aten_total": sum(not_aten.values()),
        "api_calls": len(api),
        "noisy": dict(collections.Counter(base_name(e.get("name", "")) for e in api
                                          if base_name(e.get("name", "")) in NOISY)),
        "unnamed_api": sum(1 for e in api if "_cbid_" in e.get("name", "")),
    }


def cupti_maps():
    """The libcupti files mapped into this process."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as f:
            return sorted({line.split()[-1] for line in f if "libcupti" in line})
    except OSError:
        return []


class Mlp:
    def __init__(self, torch):
        nn = torch.nn
        torch.manual_seed(0)
        self.torch = torch
        self.model = nn.Sequential(nn.Linear(1024, 2048), nn.ReLU(), nn.Linear(2048, 1024), nn.ReLU(),
                                   nn.Linear(1024, 10)).to(DEVICE)
        self.opt = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.x = torch.randn(512, 1024, device=DEVICE)
        self.y = torch.randint(0, 10, (512,), device=DEVICE)

    def step(self):
        self.opt.zero_grad(set_to_none=True)
        loss = self.torch.nn.functional.cross_entropy(self.model(self.x), self.y)
        loss.backward()
        self.opt.step()
        if DEVICE == "cuda":
            self.torch.cuda.synchronize()


def activities(module):
    return [module.ProfilerActivity.CPU, module.ProfilerActivity.CUDA]


def stepprof_span(sp, mlp, steps, path):
    """steps steps in one stepprof span with CPU and CUDA; returns the
    warnings it gave and writes its trace to path."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with sp.profile(activities=activities(sp)) as prof:
            for _ in range(steps):
                mlp.step()
                prof.step()
        prof.export_chrome_trace(path)
    return [str(w.message) for w in caught]


def capture(torch, sp, out):
    mlp = Mlp(torch)
    for _ in range(WARMUP):
        mlp.step()
    result = {"warnings": stepprof_span(sp, mlp, STEPS, os.path.join(out, "stepprof_capture.json"))}
    result["cupti_maps"] = cupti_maps()
    with torch.profiler.profile(activities=activities(torch.profiler)) as prof:
        for _ in range(STEPS):
            mlp.step()
            prof.step()
    prof.export_chrome_trace(os.path.join(out, "torch_capture.json"))
    result["stepprof"] = facts(os.path.join(out, "stepprof_capture.json"))
    result["torch"] = facts(os.path.join(out, "torch_capture.json"))
    return result


def under_torch(torch, sp, out):
    mlp = Mlp(torch)
    for _ in range(WARMUP):
        mlp.step()
    with torch.profiler.profile(activities=activities(torch.profiler)) as tp:
        mlp.step()
        found = stepprof_span(sp, mlp, 1, os.path.join(out, "stepprof_under_torch.json"))
        mlp.step()
    tp.export_chrome_trace(os.path.join(out, "torch_under_torch.json"))
    return {"warnings": found, "stepprof": facts(os.path.join(out, "stepprof_under_torch.json")),
            "torch": facts(os.path.join(out, "torch_under_torch.json"))}


def forked_span(torch, sp, out, name, timeout_s=60):
    """Forks; the child records one CPU-only step in a span asking for CUDA
    and reports its warnings and trace; the parent waits at most timeout_s."""
    path = os.path.join(out, f"{name}.json")
    report = os.path.join(out, f"{name}.result.json")
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with sp.profile(activities=activities(sp)) as prof:
                    torch.ones(256).mul(2).sum()  # CPU work only: CUDA is unusable here
                    prof.step()
                prof.export_chrome_trace(path)
            with open(report, "w", encoding="utf-8") as f:
                json.dump({"warnings": [str(w.message) for w in caught], "trace": facts(path)}, f)
            code = 0
        except BaseException as e:  # noqa: BLE001 - reported, the child must not go on
            with open(report, "w", encoding="utf-8") as f:
                json.dump({"error": repr(e)}, f)
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout_s
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, 9)
            os.waitpid(pid, 0)
            return {"error": f"the child did not finish in {timeout_s} s (killed)"}
        time.sleep(0.05)
    try:
        with open(report, encoding="utf-8") as f:
            got = json.load(f)
    except (OSError, ValueError) as e:
        got = {"error": f"no result from the child: {e}"}
    got["exit"] = os.waitstatus_to_exitcode(status) if hasattr(os, "waitstatus_to_exitcode") else status
    return got


def fork(torch, sp, out):
    mlp = Mlp(torch)
    mlp.step()  # CUDA in use before any fork
    plain = forked_span(torch, sp, out, "fork_no_profiler")
    stepprof_span(sp, mlp, 1, os.path.join(out, "fork_parent_span.json"))
    after_span = forked_span(torch, sp, out, "fork_after_span")
    return {"no_profiler": plain, "after_span": after_span}


MODES = {"capture": capture, "under_torch": under_torch, "fork": fork}


def main(argv):
    if len(argv) != 3 or argv[1] not in MODES:
        print(f"usage: torch_probe.py {'|'.join(MODES)} OUT_DIR", file=sys.stderr)
        return 2
    try:
        import torch
    except ImportError:
        print("torch_probe: torch is not installed in this Python")
        return 77
    if DEVICE == "cuda" and not torch.cuda.is_available():
        print("torch_probe: torch finds no CUDA device")
        return 77
    import stepprof.torch_profiler as sp

    os.makedirs(argv[2], exist_ok=True)
    result = MODES[argv[1]](torch, sp, argv[2])
    result["torch_version"] = torch.__version__
    result["torch_cuda"] = torch.version.cuda
    result["device"] = torch.cuda.get_device_name(0) if DEVICE == "cuda" else DEVICE
    print("probe: " + json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

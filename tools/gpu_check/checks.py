"""checks.py: the checks of `make gpu-check` (gpu_check.py runs them in CHECKS' order).
Each takes the run's Context and returns a list of report.Result: what it measured (the
figure) and its verdict. A check that cannot run here (a program not built, torch or nsys
missing, one GPU where two are needed) returns SKIP with the reason; a program that
exits 77 on a machine that has a GPU is a failure, not a skip. Every command runs under
a timeout (Context.run). Standard library only.
"""
import io
import json
import os
import re
import shutil
import sys

from report import FAIL, PASS, SKIP, Result

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "gpu"))
import check_gpu_trace  # noqa: E402

PROBE = os.path.join(HERE, "torch_probe.py")
REFUSAL = "Profiling GPU is not supported in current context"


def skip(name, why):
    return [Result(name, SKIP, why=why)]


def judged(name, ok, figure, why=""):
    return Result(name, PASS if ok else FAIL, figure, "" if ok else why)


def short(text, n=90):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n - 3] + "..."


def metrics(text):
    """bench output's "metric NAME VALUE ..." lines as {NAME: VALUE}."""
    return {m.group(1): float(m.group(2))
            for m in re.finditer(r"^metric (\S+) ([-0-9.eE+]+)", text, re.M)}


def load_json_trace(out_dir):
    """The newest trace (.json or .json.gz) under out_dir, parsed, and its path."""
    found = []
    for d, _, files in os.walk(out_dir):
        found += [os.path.join(d, f) for f in files if f.endswith((".json", ".json.gz"))]
    if not found:
        return None, None
    path = max(found, key=os.path.getmtime)
    return check_gpu_trace.load(path), path


# ------------------------------------------------------------ CUPTI itself

CUPTI_SCRIPT = r"""
import ctypes, json, os
names = ["libcupti.so", "libcupti.so.13", "libcupti.so.12"]
home = os.environ.get("CUDA_HOME", "")
if home:
    names += [home + "/lib64/libcupti.so", home + "/extras/CUPTI/lib64/libcupti.so"]
names += ["/usr/local/cuda/lib64/libcupti.so", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so"]
lib = None
for n in names:
    try:
        lib = ctypes.CDLL(n); break
    except OSError:
        pass
info = {"path": None, "version": None, "per_cbid": False}
if lib is not None:
    with open("/proc/self/maps") as f:
        info["path"] = sorted({l.split()[-1] for l in f if "libcupti" in l})[0]
    v = ctypes.c_uint32(0)
    if lib.cuptiGetVersion(ctypes.byref(v)) == 0:
        info["version"] = v.value
    info["per_cbid"] = hasattr(lib, "cuptiActivityEnableRuntimeApi")
print(json.dumps(info))
"""


def cupti_library(ctx):
    """The libcupti a C program linked with stepprof loads here (the order of
    src/gpu/cupti_load.c, less the one already in the process), with its API
    version, as text; the details go to ctx.cupti."""
    rc, out = ctx.run("cupti_library", [ctx.python, "-c", CUPTI_SCRIPT], 60)
    try:
        ctx.cupti = json.loads(out.strip().splitlines()[-1])
    except (ValueError, IndexError):
        ctx.cupti = {"path": None, "version": None, "per_cbid": False}
    if not ctx.cupti.get("path"):
        return "not found by stepprof's search (libcupti.so, CUDA_HOME, /usr/local/cuda)"
    return f"`{ctx.cupti['path']}` (API version {ctx.cupti['version']})"


# ------------------------------------------------------------ the C programs

def gpu_train(ctx):
    name = ("gpu_train's trace (`make gpu-demo`): tracecheck, then kernels, copies and memsets "
            "against its own counts, launch flows, kernel time against its cudaEvents")
    mismatch_name = "`clock_mismatch == 0` in gpu_train's trace (API calls inside their ranges)"
    exe = ctx.path("examples", "gpu_train")
    if not os.path.exists(exe):
        why = f"{exe} is not built (no nvcc when the build was configured)"
        return skip(name, why) + skip(mismatch_name, why)
    out_dir = os.path.join(ctx.logs, "gpu_train")
    shutil.rmtree(out_dir, ignore_errors=True)
    rc, out = ctx.run("gpu_train", [exe, "--out", out_dir], 120)
    if rc != 0:
        why = "gpu_train found no usable CUDA device" if rc == 77 else f"gpu_train exited {rc}"
        return [Result(name, FAIL, short(out.strip().splitlines()[-1] if out.strip() else ""), why),
                Result(mismatch_name, FAIL, "-", "no trace")]
    expected = check_gpu_trace.expected_from_output(out)
    if not expected or not os.path.exists(expected["trace"]):
        return [Result(name, FAIL, "-", "gpu_train printed no trace path"),
                Result(mismatch_name, FAIL, "-", "no trace")]
    fmt_rc, fmt_out = ctx.run("gpu_train_tracecheck", [sys.executable, "-B", os.path.join(
        ROOT, "tests", "trace", "tracecheck.py"), expected["trace"], "--expect-name", "ProfilerStep#10"], 120)
    trace = check_gpu_trace.load(expected["trace"])
    lines = io.StringIO()
    errors, fig = check_gpu_trace.check(trace, expected, out=lines)
    ctx.say(lines.getvalue())
    want = expected["kernel_time_us"]
    off = 100 * abs(fig.get("kernel_time_us", 0) - want) / want if want else 0
    figure = (f"{fig.get('kernels')} kernels, {fig.get('memcpys')} memcpys, {fig.get('memsets')} memsets "
              f"(the program's: {expected['kernels']}, {expected['memcpys']}, {expected['memsets']}); "
              f"{fig.get('flows')} flows; kernel time {fig.get('kernel_time_us', 0):,.1f} us against "
              f"{want:,.1f} us by cudaEvents ({off:.2f}% apart, limit 5%); tracecheck exit {fmt_rc}")
    results = [judged(name, not errors and fmt_rc == 0, figure, "; ".join(errors[:3]) or "tracecheck failed")]
    counters = trace.get("stepprof_counters") or {}
    mismatch = counters.get("clock_mismatch")
    extra = ", ".join(f"{k} {counters[k]}" for k in ("out_of_window", "unattributed", "cupti_dropped")
                      if k in counters)
    results.append(judged(mismatch_name, mismatch == 0, f"clock_mismatch {mismatch}; {extra}",
                          "API calls fell outside the ranges that made them"))
    return results


def ctest_gpu(ctx):
    name = "`ctest -R gpu` in the build, against the real libcupti and driver"
    ctest = shutil.which("ctest")
    if not ctest:
        return skip(name, "ctest is not on PATH")
    if not os.path.exists(ctx.path("CTestTestfile.cmake")):
        return skip(name, f"{ctx.build} holds no CTestTestfile.cmake")
    rc, out = ctx.run("ctest_gpu", [ctest, "-R", "gpu", "-j", "8", "--output-on-failure", "--timeout", "150"],
                      240, cwd=ctx.build)
    m = re.search(r"(\d+)% tests passed, (\d+) tests? failed out of (\d+)", out)
    skipped = re.findall(r"^\s*\d+ - (\S+) \(Skipped\)", out, re.M)
    failed = re.findall(r"^\s*\d+ - (\S+) \((?:Failed|Timeout|SEGFAULT|Subprocess aborted|Not Run)", out, re.M)
    if not m:
        return [Result(name, FAIL, short(out.strip().splitlines()[-1] if out.strip() else "no output"),
                       "timed out" if rc is None else f"ctest exited {rc} without its totals")]
    total, nfailed = int(m.group(3)), int(m.group(2))
    figure = (f"{total} tests, {nfailed} failed{': ' + ', '.join(failed) if failed else ''}; "
              f"{len(skipped)} skipped{': ' + ', '.join(skipped) if skipped else ''}")
    ok = rc == 0 and nfailed == 0 and "gpu_example_trace" not in skipped
    return [judged(name, ok, figure, "a test failed" if nfailed else "gpu_example_trace skipped on a GPU host")]


def nvtx(ctx):
    name = ("NVTX injection with CUPTI: nvtx_cuda_prog under `stepprof run --targets cpu,gpu --steps 2:4`: "
            "kernels present, each launched inside its NVTX range")
    prog, cli = ctx.path("tests", "gpu_nvtx_cuda_prog"), ctx.path("stepprof")
    for need in (prog, cli, ctx.path("libstepprof_nvtx.so")):
        if not os.path.exists(need):
            return skip(name, f"{need} is not built (needs nvcc and NVTX's headers)")
    out_dir = os.path.join(ctx.logs, "nvtx")
    shutil.rmtree(out_dir, ignore_errors=True)
    rc, out = ctx.run("nvtx", [cli, "run", "--steps", "2:4", "--targets", "cpu,gpu", "--out", out_dir,
                               "--", prog], 90)
    trace, path = load_json_trace(out_dir) if os.path.isdir(out_dir) else (None, None)
    if rc != 0 or trace is None:
        return [Result(name, FAIL, short(out.strip().splitlines()[-1] if out.strip() else "-"),
                       f"exit {rc}, {'no trace' if trace is None else 'a trace'}")]
    ev = [e for e in trace.get("traceEvents", []) if isinstance(e, dict) and e.get("ph") == "X"]
    kernels = [e for e in ev if e.get("cat") == "kernel"]
    runtime = {(e.get("args") or {}).get("correlation"): e for e in ev if e.get("cat") == "cuda_runtime"}
    ranges = [e for e in ev if e.get("cat") == "user_annotation" and e.get("name") in ("forward", "backward")]
    inside = 0
    for k in kernels:
        call = runtime.get((k.get("args") or {}).get("correlation"))
        if call and any(r.get("tid") == call.get("tid") and r["ts"] <= call["ts"] and
                        call["ts"] + call.get("dur", 0) <= r["ts"] + r.get("dur", 0) for r in ranges):
            inside += 1
    noisy = sorted({e.get("name") for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver") and
                    e.get("name", "").split("_v")[0] in ("cudaGetLastError", "cudaGetDevice")})
    annotations = sum(1 for e in ev if e.get("cat") == "gpu_user_annotation")
    steps = sorted(e.get("name") for e in ev if str(e.get("name", "")).startswith("ProfilerStep#"))
    figure = (f"{len(kernels)} kernels (2 steps x 2 expected), {inside} launched inside a forward/backward "
              f"range; {len(ranges)} NVTX ranges, {annotations} gpu_user_annotation records; steps "
              f"{', '.join(steps)}; cudaGetLastError/cudaGetDevice in the trace: {', '.join(noisy) or 'none'}")
    ok = len(kernels) == 4 and inside == 4 and not noisy
    return [judged(name, ok, figure, "kernels missing, outside their ranges, or noisy calls kept")]


def nsys(ctx):
    name = "refusal under nsys: gpu_train under `nsys profile -t cuda` warns and records the CPU only"
    tool = shutil.which("nsys")
    if not tool:
        return skip(name, "nsys is not on PATH")
    exe = ctx.path("examples", "gpu_train")
    if not os.path.exists(exe):
        return skip(name, f"{exe} is not built")
    out_dir = os.path.join(ctx.logs, "nsys")
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    rc, out = ctx.run("nsys", [tool, "profile", "-t", "cuda", "--force-overwrite", "true", "-o",
                               os.path.join(out_dir, "gpu_train"), exe, "--out", out_dir], 180)
    refusal = next((line for line in out.splitlines() if REFUSAL in line), "")
    if not refusal and rc != 0:
        return skip(name, f"nsys itself failed (exit {rc}): {short(out.strip().splitlines()[-1] if out else '')}")
    return [judged(name, "another CUPTI client" in refusal, short(refusal or "no refusal line", 160),
                   "stepprof did not refuse the GPU under nsys")]


# ------------------------------------------------------------ torch

def probe(ctx, mode, timeout_s):
    """Runs torch_probe.py MODE; returns (result dict or None, why)."""
    rc, out = ctx.run(f"torch_{mode}", [ctx.python, "-B", PROBE, mode, os.path.join(ctx.logs, f"torch_{mode}")],
                      timeout_s, env={"PYTHONUNBUFFERED": "1"})
    if rc == 77:
        return None, short(out.strip().splitlines()[-1] if out.strip() else "torch or CUDA missing")
    found = re.findall(r"^probe: (\{.*\})$", out, re.M)
    if rc != 0 or not found:
        tail = out.strip().splitlines()[-1] if out.strip() else "no output"
        return {"error": f"{'timed out' if rc is None else f'exit {rc}'}: {short(tail, 150)}"}, ""
    return json.loads(found[-1]), ""


def warned(warnings, text):
    return next((w for w in warnings if text in w), "")


def torch_capture(ctx):
    names = {
        "count": "torch MLP on the GPU, 3 steps under stepprof (CPU+GPU targets) against torch.profiler "
                 "on the same steps: kernel count and kernel time (within 10%)",
        "ops": "every torch kernel has an `External id` and is charged to an `aten::` operator",
        "names": "torch's kernel names demangled (`at::native`, no `_Z`)",
        "after": "torch.profiler with CUDA activity after a stepprof GPU span in the same process "
                 "records kernels (CUPTI's subscriber given back)",
        "noisy": "per-callback-id disabling: the noisy API calls (cudaGetLastError, cudaGetDevice, ...) "
                 "absent from the torch trace, every API call named",
    }
    got, why = probe(ctx, "capture", 180)
    if got is None:
        return [Result(n, SKIP, why=f"{why} ({ctx.python})") for n in names.values()]
    if "error" in got:
        return [Result(n, FAIL, "-", got["error"]) for n in names.values()]
    s, t = got["stepprof"], got["torch"]
    refused = warned(got["warnings"], REFUSAL)
    off = abs(s["kernel_us"] - t["kernel_us"]) / t["kernel_us"] if t["kernel_us"] else 1.0
    results = [judged(
        names["count"], s["kernels"] == t["kernels"] > 0 and off <= 0.10 and not refused,
        f"stepprof {s['kernels']} kernels, {s['kernel_us']:,.1f} us; torch.profiler {t['kernels']} kernels, "
        f"{t['kernel_us']:,.1f} us ({100 * off:.1f}% apart); {s['cpu_ops']} operators; libcupti in the "
        f"process: {', '.join(got.get('cupti_maps') or ['none'])}",
        short(refused, 200) or "counts differ or kernel time more than 10% apart")]
    results.append(judged(
        names["ops"], s["no_external_id"] == 0 and s["not_aten_total"] <= t["not_aten_total"],
        f"{s['kernels']} kernels: {s['no_external_id']} without an operator's External id, charged to other "
        f"operators: {s['not_aten'] or 'none'} (torch.profiler: {t['not_aten'] or 'none'})",
        "kernels without their operator"))
    results.append(judged(
        names["names"], s["mangled"] == 0 and s["at_native"] > 0,
        f"{s['mangled']} of {s['kernels']} names mangled, {s['at_native']} with at::native, e.g. "
        f"`{short(s['example_name'], 70)}`", "mangled names, or no at::native kernel"))
    results.append(judged(names["after"], t["kernels"] > 0, f"torch.profiler recorded {t['kernels']} kernels",
                          "torch.profiler recorded no kernel after stepprof's span"))
    switch = "has" if getattr(ctx, "cupti", {}).get("per_cbid") else "lacks"
    results.append(judged(
        names["noisy"], not s["noisy"] and s["unnamed_api"] == 0,
        f"stepprof: {sum(s['noisy'].values())} noisy of {s['api_calls']} API calls, {s['unnamed_api']} "
        f"unnamed; torch.profiler's trace of the same steps: {t['noisy'] or 'none'}; libcupti {switch} "
        "cuptiActivityEnableRuntimeApi (the trace cannot tell CUPTI's switch from stepprof's own filter)",
        "noisy calls in the trace or unnamed calls"))
    return results


def under_torch(ctx):
    name = ("refusal under an active torch.profiler (CUDA): a stepprof span started inside it warns and "
            "records the CPU only; torch.profiler keeps its kernels")
    got, why = probe(ctx, "under_torch", 150)
    if got is None:
        return skip(name, f"{why} ({ctx.python})")
    if "error" in got:
        return [Result(name, FAIL, "-", got["error"])]
    refusal = warned(got["warnings"], REFUSAL)
    s, t = got["stepprof"], got["torch"]
    ok = "another CUPTI client" in refusal and s["kernels"] == 0 and s["cpu_ops"] > 0 and t["kernels"] > 0
    return [judged(name, ok, f"warning: \"{short(refusal or 'none', 120)}\"; stepprof {s['cpu_ops']} operators, "
                             f"{s['kernels']} kernels; torch.profiler {t['kernels']} kernels",
                   "no refusal, kernels recorded, or torch.profiler disturbed")]


def fork(ctx):
    name = ("refusal after fork: a child forked after CUDA use starts a span with CUDA: it warns and "
            "records the CPU only (after a GPU span in the parent, and with no profiler before the fork)")
    got, why = probe(ctx, "fork", 150)
    if got is None:
        return skip(name, f"{why} ({ctx.python})")
    if "error" in got:
        return [Result(name, FAIL, "-", got["error"])]
    parts, ok = [], True
    for key, label, want in (("after_span", "after a GPU span", "forked from one that had loaded CUDA"),
                             ("no_profiler", "no profiler before the fork", REFUSAL)):
        child = got.get(key) or {}
        if "error" in child:
            parts.append(f"{label}: {short(child['error'], 100)}")
            ok = False
            continue
        line = warned(child.get("warnings", []), want)
        tr = child.get("trace", {})
        ok = ok and bool(line) and tr.get("kernels") == 0 and tr.get("cpu_ops", 0) > 0 and child.get("exit") == 0
        parts.append(f"{label}: \"{short(line or 'no warning', 110)}\", {tr.get('cpu_ops')} operators, "
                     f"{tr.get('kernels')} kernels")
    return [judged(name, ok, "; ".join(parts), "a child did not refuse, recorded kernels, or failed")]


# ------------------------------------------------------------ other frameworks, two GPUs, CUPTI 27

def paddle(ctx):
    name = "paddle on the GPU: kernels charged to paddle's operators"
    rc, out = ctx.run("paddle_probe", [ctx.python, "-c", "import paddle; print('paddle', paddle.__version__, "
                                       "paddle.device.is_compiled_with_cuda())"], 120)
    m = re.search(r"^paddle (\S+) (True|False)$", out, re.M)
    if rc != 0 or not m:
        return skip(name, f"paddle is not installed in {ctx.python} (paddlepaddle-gpu is needed)")
    if m.group(2) != "True":
        return skip(name, f"paddle {m.group(1)} is a CPU build (paddlepaddle-gpu is needed)")
    return skip(name, f"paddle {m.group(1)} with CUDA found, but no GPU check of paddle's operators is written yet")


def nccl(ctx):
    name = "NCCL collectives on two GPUs typed as communication"
    if ctx.gpu_count < 2:
        return skip(name, f"needs two GPUs; this machine has {ctx.gpu_count}")
    return skip(name, f"{ctx.gpu_count} GPUs found, but the two-GPU NCCL check is not written yet")


def cupti_null_buffer(ctx):
    name = "CUPTI API 27's NULL buffer (the buffer pool empty)"
    version = getattr(ctx, "cupti", {}).get("version")
    return skip(name, f"libcupti's API version here: {version}; a real run cannot empty stepprof's buffer pool "
                      "on demand; the fake CUPTI covers it (gpu_live_gpu_pool_full_null in the ctest row)")


# ------------------------------------------------------------ overhead

def run_bench_gpu(ctx, name, mode, key):
    """bench_gpu MODE's metrics and None, or None and the check's result
    when it is not built or gives no `key`."""
    exe = ctx.path("bench", "bench_gpu")
    if not os.path.exists(exe):
        return None, skip(name, f"{exe} is not built (no nvcc)")
    rc, out = ctx.run(f"bench_gpu_{mode}", [exe, mode], 120)
    m = metrics(out)
    if rc != 0 or key not in m:
        return None, [Result(name, FAIL, short(out.strip().splitlines()[-1] if out.strip() else "-"),
                             "timed out" if rc is None else f"bench_gpu exited {rc}")]
    return m, None


def bench_launch(ctx):
    name = ("launch-bound overhead (`make bench`'s GPU rows): bench_gpu, 10,000 empty kernels in Operator "
            "ranges, against bench_gpu_torch.py's torch.profiler; target: at most torch.profiler's ratio")
    m, failed = run_bench_gpu(ctx, name, "launch", "gpu_trace_overhead")
    if failed:
        return failed
    figure = (f"stepprof CPU+GPU {m['gpu_launch_traced']:,.0f} against untraced {m['gpu_launch_untraced']:,.0f} "
              f"ns per launch: {m['gpu_trace_overhead']:.2f}x (CPU target only "
              f"{m['gpu_launch_traced_cpu'] / m['gpu_launch_untraced']:.2f}x)")
    rc, out = ctx.run("bench_gpu_torch", [ctx.python, "-B", os.path.join(ROOT, "bench", "bench_gpu_torch.py")], 120)
    t = metrics(out)
    if "torch_trace_overhead" not in t:
        return [Result(name, SKIP, figure, why=f"no torch.profiler figure to compare: "
                                              f"{short(out.strip().splitlines()[-1] if out.strip() else rc)}")]
    figure += (f"; torch.profiler {t['torch_launch_traced']:,.0f} against {t['torch_launch_untraced']:,.0f} "
               f"ns per add_: {t['torch_trace_overhead']:.2f}x")
    return [judged(name, m["gpu_trace_overhead"] <= t["torch_trace_overhead"], figure,
                   "over torch.profiler's ratio")]


def bench_compute(ctx):
    name = "compute-bound overhead: bench_gpu compute, kernels of about 0.5 ms in Operator ranges; target 1.01x"
    m, failed = run_bench_gpu(ctx, name, "compute", "gpu_compute_overhead")
    if failed:
        return failed
    figure = (f"{m['gpu_compute_traced'] / 1000:,.1f} us per kernel traced (CPU+GPU) against "
              f"{m['gpu_compute_untraced'] / 1000:,.1f} untraced: {m['gpu_compute_overhead']:.3f}x "
              f"(CPU target only {m['gpu_compute_traced_cpu'] / m['gpu_compute_untraced']:.3f}x)")
    return [judged(name, m["gpu_compute_overhead"] <= 1.01, figure, "over 1.01x")]


def python_tests(ctx):
    """The suite takes about 4 minutes on one core; with pytest-xdist it runs
    on 4 workers, each test file on one worker (the files' tests share
    fixtures and order), and gets whatever time the run has left."""
    name = "the Python tests (tests/python) on a GPU host"
    cmd = [ctx.python, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", os.path.join(ROOT, "tests", "python")]
    xdist_rc, _ = ctx.run("python_tests_xdist", [ctx.python, "-c", "import xdist"], 60)
    if xdist_rc == 0:
        cmd += ["-n", "4", "--dist", "loadfile"]
    rc, out = ctx.run("python_tests", cmd, max(30.0, ctx.left_s() - 15), env={"PYTHONDONTWRITEBYTECODE": "1"})
    if rc is not None and "No module named pytest" in out:
        return skip(name, f"pytest is not installed in {ctx.python}")
    tail = re.findall(r"^=*\s*(.*(?:passed|failed|error).* in [0-9.]+s.*?)\s*=*$", out, re.M)
    figure = tail[-1] if tail else short(out.strip().splitlines()[-1] if out.strip() else "no output")
    if xdist_rc == 0:
        figure += " (pytest-xdist: 4 workers, a file per worker)"
    return [judged(name, rc == 0, figure, "timed out (the run's budget)" if rc is None else f"pytest exit {rc}")]


# (name for --only, function), in the order they run: the cheap and the
# important first, the Python suite last (it takes what time is left).
CHECKS = [
    ("gpu_train", gpu_train),
    ("ctest", ctest_gpu),
    ("torch_capture", torch_capture),
    ("under_torch", under_torch),
    ("fork", fork),
    ("nvtx", nvtx),
    ("nsys", nsys),
    ("paddle", paddle),
    ("nccl", nccl),
    ("cupti_null_buffer", cupti_null_buffer),
    ("bench_launch", bench_launch),
    ("bench_compute", bench_compute),
    ("python_tests", python_tests),
]

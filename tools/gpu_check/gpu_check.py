#!/usr/bin/env python3
"""gpu_check.py: what `make gpu-check` runs. On a machine with an NVIDIA GPU it runs
every check of stepprof's GPU path that can run there (tools/gpu_check/checks.py), each
bounded by a timeout and all by one time budget, and writes a dated section on top of
docs/gpu-verification.md: the machine (GPU, driver, CUDA, torch, the libcupti loaded)
and a table check | figure | verdict, where a check that could not run says why.

Without a GPU (nvidia-smi lists none, or CUDA_VISIBLE_DEVICES is empty or -1) it prints
one line saying so and exits 0, leaving the doc as it is: CI and the development machine
run it that way.

Usage: gpu_check.py [--build DIR] [--python PY] [--doc FILE] [--logs DIR]
                    [--budget-s N] [--only NAME,...] [--probe]
  --build   the CMake build tree holding gpu_train, bench_gpu, the CLI, the tests (build)
  --python  a Python with torch (CUDA) and stepprof installed (default: this one)
  --logs    where each check's output and traces go (build/gpu-check)
  --budget-s  the whole run's time budget; a check that would not fit is skipped (420)
  --probe   only look for a GPU: exit 0 with one, else print the line and exit 3
Exits 0 when no check failed (or there is no GPU), 1 otherwise. Standard library only.
"""
import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import checks  # noqa: E402
import report  # noqa: E402


def visible_gpus():
    """(names, why): the GPUs this process may use, by nvidia-smi, and when
    there are none, why (for the one line printed then)."""
    cvd = os.environ.get("CUDA_VISIBLE_DEVICES")
    if cvd is not None and cvd.strip() in ("", "-1", "none", "NoDevFiles"):
        return [], f"CUDA_VISIBLE_DEVICES={cvd!r} hides every GPU"
    smi = shutil.which("nvidia-smi")
    if not smi:
        return [], "nvidia-smi is not on PATH"
    try:
        p = subprocess.run([smi, "--query-gpu=name,driver_version", "--format=csv,noheader"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        return [], f"nvidia-smi failed: {e}"
    rows = [line.strip() for line in p.stdout.splitlines() if line.strip()]
    if p.returncode != 0 or not rows:
        first = rows[0] if rows else f"exit {p.returncode}"
        return [], f"nvidia-smi lists no GPU ({first})"
    return rows, ""


class Context:
    """What every check gets: the paths, the Python, the time budget, and
    run(), which runs a command with a timeout and keeps its output."""

    def __init__(self, args):
        self.root = ROOT
        self.build = os.path.abspath(args.build)
        self.python = args.python
        self.logs = os.path.abspath(args.logs)
        self.deadline = time.monotonic() + args.budget_s
        self.gpu_count = 0
        self.cupti = {}  # checks.cupti_library's findings
        self.log_file = None

    def left_s(self):
        return self.deadline - time.monotonic()

    def path(self, *parts):
        return os.path.join(self.build, *parts)

    def run(self, name, cmd, timeout_s, env=None, cwd=None):
        """Runs cmd (a list) for at most timeout_s (less if the budget is
        shorter); returns (exit code or None when it timed out, output).
        The output goes to LOGS/NAME.log and to the run's log."""
        timeout_s = max(1.0, min(timeout_s, self.left_s()))
        full_env = dict(os.environ, **(env or {}))
        t0 = time.monotonic()
        try:
            p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               errors="replace", timeout=timeout_s, env=full_env, cwd=cwd or self.root)
            rc, out = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            out = e.stdout if isinstance(e.stdout, str) else (e.stdout or b"").decode("utf-8", "replace")
            rc, out = None, out + f"\n[gpu-check: killed after {timeout_s:.0f} s]\n"
        except OSError as e:
            rc, out = 127, f"[gpu-check: cannot run {cmd[0]}: {e}]\n"
        took = time.monotonic() - t0
        with open(os.path.join(self.logs, name + ".log"), "w", encoding="utf-8") as f:
            f.write(out)
        self.say(f"---- {name}: {' '.join(cmd)} (exit {rc}, {took:.1f} s)\n{out.rstrip()}\n")
        return rc, out

    def say(self, text):
        print(text, flush=True)
        if self.log_file:
            self.log_file.write(text + "\n")
            self.log_file.flush()


def machine_facts(ctx, gpu_rows):
    """The section's machine line: GPU, driver, CUDA, torch, CUPTI, commit."""
    name, _, driver = gpu_rows[0].partition(",")
    facts = {"gpu": name.strip() + (f" (x{len(gpu_rows)})" if len(gpu_rows) > 1 else ""),
             "driver": driver.strip()}
    cuda = []
    try:
        smi = subprocess.run(["nvidia-smi"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, timeout=60).stdout
        m = re.search(r"CUDA Version:\s*([0-9.]+)", smi)
        if m:
            cuda.append(f"{m.group(1)} (driver)")
    except (OSError, subprocess.SubprocessError):
        pass
    nvcc = shutil.which("nvcc") or ("/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc")
                                    else None)
    if nvcc:
        try:
            out = subprocess.run([nvcc, "--version"], stdout=subprocess.PIPE, text=True, timeout=60).stdout
            m = re.search(r"release ([0-9.]+), (V[0-9.]+)", out)
            if m:
                cuda.append(f"nvcc {m.group(2)[1:]}")
        except (OSError, subprocess.SubprocessError):
            pass
    facts["cuda"] = ", ".join(cuda) or None
    probe = ("import json\ntry:\n import torch; print(json.dumps([torch.__version__, torch.version.cuda]))\n"
             "except Exception as e: print(json.dumps(['not importable: ' + type(e).__name__, None]))")
    try:
        out = subprocess.run([ctx.python, "-c", probe], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, timeout=120).stdout.strip().splitlines()
        version, tcuda = json.loads(out[-1])
        facts["torch"] = version + (f" (CUDA {tcuda})" if tcuda else "")
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        facts["torch"] = f"not found in {ctx.python}"
    facts["cupti"] = checks.cupti_library(ctx)
    facts["commit"] = commit_text()
    return facts


def commit_text():
    """The commit the checked tree came from: git's answer, or the carried
    manifest's (the device's copy of the tree has no .git)."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=12"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=30)
        if out.returncode == 0 and out.stdout.strip():
            return "at commit " + out.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    manifest = os.path.join(ROOT, ".devcarry", "commit")
    if os.path.exists(manifest):
        with open(manifest, encoding="utf-8") as f:
            return "built at commit " + f.read().strip()
    return "at an unknown commit"


CUT_SHORT = ("This run is incomplete: it was stopped before the checks after the last row "
             "(the file is rewritten after each check, and this line goes when the run ends).")


def write_doc(path, doc, date, machine, results, note=""):
    """Writes doc (the file as it was before the run) with the run's section on top."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(report.insert(doc, report.section(date, machine, results, note)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--doc", default=os.path.join(ROOT, "docs", "gpu-verification.md"))
    ap.add_argument("--logs", default=None)
    ap.add_argument("--budget-s", type=float, default=420.0)
    ap.add_argument("--only", default="", help="comma-separated check names (default: all)")
    ap.add_argument("--probe", action="store_true",
                    help="only say whether there is a GPU: exit 0 if so, else print the line and exit 3")
    args = ap.parse_args(argv)

    rows, why = visible_gpus()
    if not rows:
        print(f"gpu-check: no GPU on this machine ({why}); nothing was run and "
              f"{os.path.relpath(args.doc, ROOT)} is unchanged")
        return 3 if args.probe else 0
    if args.probe:
        return 0
    args.logs = args.logs or os.path.join(args.build, "gpu-check")
    os.makedirs(args.logs, exist_ok=True)
    ctx = Context(args)
    ctx.gpu_count = len(rows)
    t0 = time.monotonic()
    results = []
    with open(os.path.join(ctx.logs, "gpu-check.log"), "w", encoding="utf-8") as ctx.log_file:
        ctx.say(f"gpu-check: {len(rows)} GPU(s): {'; '.join(rows)}; build {ctx.build}; python {ctx.python}")
        machine = machine_facts(ctx, rows)
        ctx.say(f"gpu-check: machine {machine}")
        date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")
        wanted = {n for n in args.only.split(",") if n}
        with open(args.doc, encoding="utf-8") as f:
            doc = f.read()
        for name, fn in checks.CHECKS:
            if wanted and name not in wanted:
                continue
            if ctx.left_s() < 10:
                got = [report.Result(name, report.SKIP, why="the run's time budget was spent")]
            else:
                try:
                    got = fn(ctx)
                except Exception as e:  # noqa: BLE001 - a broken check is a failed check
                    got = [report.Result(name, report.FAIL, f"the check itself failed: {e!r}")]
            for r in got:
                ctx.say(f"gpu-check: {r.verdict:7s} {r.name}: {r.figure} {r.why}")
            results += got
            # Kept current, so that a run killed from outside leaves what it found.
            machine["seconds"] = f"{time.monotonic() - t0:.0f}"
            write_doc(args.doc, doc, date, machine, results, CUT_SHORT)
        machine["seconds"] = f"{time.monotonic() - t0:.0f}"
        write_doc(args.doc, doc, date, machine, results)
        failed = sum(1 for r in results if r.verdict == report.FAIL)
        ctx.say(f"gpu-check: {len(results)} checks, {failed} failed; "
                f"{os.path.relpath(args.doc, ROOT)} has the new section; logs in {ctx.logs}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

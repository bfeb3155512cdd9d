#!/usr/bin/env python3
"""test_gpu_check.py: `make gpu-check` (tools/gpu_check) without a GPU (ctest
tools_device_check). The report writer on synthetic results: the exact markdown of a
section (pass, fail with its reason, skipped with its reason, a pipe in a figure), a
new section placed on top of the earlier ones, which stay byte for byte. Without a GPU,
`make gpu-check` and gpu_check.py print one line, exit 0 and leave the doc as it was.
With a stand-in nvidia-smi, a run of the checks that need nothing else writes a dated
section of skipped rows on top of a copy of the doc, and a run stopped midway leaves the
rows it had with a line saying so. The carry preparation lists the
files the tests of `ctest -R gpu` need, and, where the GPU programs are built, makes a
folder holding them under its size limit. The checks' verdicts on canned program output
(a stand-in for Context.run): a passing and a failing torch capture, the refusals, the
overhead targets, ctest's and pytest's totals. Nothing is timed. Standard library only.
Usage: test_gpu_check.py [BUILD_DIR]
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.dont_write_bytecode = True
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOL = os.path.join(ROOT, "tools", "gpu_check")
sys.path.insert(0, TOOL)
import carry  # noqa: E402
import checks  # noqa: E402
import report  # noqa: E402
from report import FAIL, PASS, SKIP, Result  # noqa: E402

BUILD = os.path.abspath(sys.argv.pop(1)) if len(sys.argv) > 1 else os.path.join(ROOT, "build")
DOC = os.path.join(ROOT, "docs", "gpu-verification.md")

MACHINE = {"gpu": "NVIDIA H100 80GB HBM3", "driver": "580.159.04", "cuda": "13.0 (driver), nvcc 13.0.88",
           "torch": "2.11.0+cu130 (CUDA 13.0)", "cupti": "`/usr/local/cuda/lib64/libcupti.so` (API version 130001)",
           "commit": "at commit 0123456789ab", "seconds": "301"}
RESULTS = [Result("gpu_train's trace", PASS, "50 kernels, 10 memcpys"),
           Result("compute-bound overhead", FAIL, "1.020x | CPU only 1.001x", "over 1.01x"),
           Result("refusal under nsys", SKIP, why="nsys is not on PATH")]
SECTION = """## 2026-11-27: `make gpu-check` on NVIDIA H100 80GB HBM3

Machine: NVIDIA H100 80GB HBM3, driver 580.159.04, CUDA 13.0 (driver), nvcc 13.0.88, torch 2.11.0+cu130 \
(CUDA 13.0), CUPTI `/usr/local/cuda/lib64/libcupti.so` (API version 130001). stepprof at commit 0123456789ab.

3 checks in 301 s: 1 passed, 1 failed, 1 skipped.

| check | figure | verdict |
|---|---|---|
| gpu_train's trace | 50 kernels, 10 memcpys | pass |
| compute-bound overhead | 1.020x \\| CPU only 1.001x | **fail**: over 1.01x |
| refusal under nsys | - | skipped: nsys is not on PATH |
"""
HEAD = "# GPU verification\n\nHow to run: make gpu-check.\n\n"
EARLIER = "## 2026-11-26: first run on a real GPU\n\n| check | result | verdict |\n|---|---|---|\n| a | b | pass |\n"


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


class ReportTest(unittest.TestCase):
    def test_report_section_is_exact(self):
        self.assertEqual(SECTION, report.section("2026-11-27", MACHINE, RESULTS))

    def test_report_note_and_unknowns(self):
        text = report.section("2026-11-27", {"gpu": "G"}, [], note="cut\nshort")
        self.assertIn("Machine: G, driver unknown, CUDA unknown, torch unknown, CUPTI unknown.", text)
        self.assertIn("0 checks in unknown s: 0 passed, 0 failed, 0 skipped.\n\ncut short\n\n| check", text)

    def test_report_insert_keeps_head_and_earlier_sections(self):
        doc = report.insert(HEAD + EARLIER, SECTION)
        self.assertEqual(HEAD + SECTION + "\n" + EARLIER, doc)
        later = report.section("2026-11-28", MACHINE, RESULTS[:1])
        again = report.insert(doc, later)
        self.assertTrue(again.startswith(HEAD + later + "\n" + SECTION))
        self.assertTrue(again.endswith(EARLIER))

    def test_report_insert_without_dated_sections_appends(self):
        self.assertEqual(HEAD + SECTION, report.insert(HEAD, SECTION))
        self.assertEqual("# T\n\n" + SECTION, report.insert("# T", SECTION))

    def test_report_skip_needs_a_reason(self):
        with self.assertRaises(ValueError):
            Result("x", SKIP)
        with self.assertRaises(ValueError):
            Result("x", "maybe")

    def test_report_the_real_doc_has_a_head_and_dated_sections(self):
        with open(DOC, encoding="utf-8") as f:
            doc = f.read()
        self.assertTrue(doc.startswith("# GPU verification\n"))
        self.assertIsNotNone(report.DATED.search(doc))


class NoGpuTest(unittest.TestCase):
    def env(self):
        return dict(os.environ, CUDA_VISIBLE_DEVICES="")

    def test_make_gpu_check_without_gpu_changes_nothing(self):
        if not shutil.which("make"):
            self.skipTest("make is not installed")
        before = digest(DOC)
        p = subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT, "gpu-check"], env=self.env(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
        self.assertEqual(0, p.returncode, p.stdout)
        lines = p.stdout.strip().splitlines()
        self.assertEqual(1, len(lines), p.stdout)
        self.assertTrue(lines[0].startswith("gpu-check: no GPU on this machine"), lines[0])
        self.assertIn("docs/gpu-verification.md is unchanged", lines[0])
        self.assertEqual(before, digest(DOC))

    def test_gpu_check_without_gpu_exits_0_and_probe_exits_3(self):
        with tempfile.TemporaryDirectory() as tmp:
            doc = os.path.join(tmp, "doc.md")
            shutil.copy(DOC, doc)
            before = digest(doc)
            for args, code in (([], 0), (["--probe"], 3)):
                p = subprocess.run([sys.executable, "-B", os.path.join(TOOL, "gpu_check.py"), "--doc", doc] + args,
                                   env=self.env(), stdout=subprocess.PIPE, text=True, timeout=120)
                self.assertEqual(code, p.returncode, p.stdout)
                self.assertIn("no GPU on this machine (CUDA_VISIBLE_DEVICES='' hides every GPU)", p.stdout)
            self.assertEqual(before, digest(doc))
            self.assertEqual(["doc.md"], os.listdir(tmp))


class FakeGpuTest(unittest.TestCase):
    def test_gpu_check_with_a_gpu_writes_a_section_on_top(self):
        """A stand-in nvidia-smi lists one GPU; the checks run are those that
        need no program (each skips, saying why), into a copy of the doc."""
        with tempfile.TemporaryDirectory() as tmp:
            bindir = os.path.join(tmp, "bin")
            os.makedirs(bindir)
            smi = os.path.join(bindir, "nvidia-smi")
            with open(smi, "w", encoding="utf-8") as f:
                f.write('#!/bin/sh\ncase "$1" in --query-gpu=*) echo "Test GPU, 1.2.3";;\n'
                        '*) echo "| Driver Version: 1.2.3   CUDA Version: 13.0 |";; esac\n')
            os.chmod(smi, 0o755)
            doc = os.path.join(tmp, "doc.md")
            shutil.copy(DOC, doc)
            with open(doc, encoding="utf-8") as f:
                before = f.read()
            env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
            env.pop("CUDA_VISIBLE_DEVICES", None)
            p = subprocess.run([sys.executable, "-B", os.path.join(TOOL, "gpu_check.py"), "--doc", doc,
                                "--build", os.path.join(tmp, "no-build"), "--logs", os.path.join(tmp, "logs"),
                                "--only", "nccl,cupti_null_buffer,paddle"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
            self.assertEqual(0, p.returncode, p.stdout)
            with open(doc, encoding="utf-8") as f:
                after = f.read()
            m = report.DATED.search(after)
            head = before[:report.DATED.search(before).start()]
            self.assertEqual(head, after[:m.start()])
            self.assertTrue(after.endswith(before[len(head):]))
            new = after[m.start():len(after) - len(before) + len(head)]
            self.assertRegex(new, r"^## \d{4}-\d{2}-\d{2}: `make gpu-check` on Test GPU\n")
            self.assertIn("Machine: Test GPU, driver 1.2.3, CUDA 13.0 (driver)", new)
            self.assertIn("3 checks in ", new)
            self.assertIn("0 passed, 0 failed, 3 skipped.", new)
            self.assertIn("| NCCL collectives on two GPUs typed as communication | - | skipped: needs two GPUs; "
                          "this machine has 1 |", new)
            self.assertIn("| CUPTI API 27's NULL buffer", new)
            self.assertIn("| paddle on the GPU: kernels charged to paddle's operators | - | skipped: paddle ", new)


def facts(**over):
    f = {"kernels": 45, "kernel_us": 400.0, "cpu_ops": 300, "mangled": 0, "at_native": 30,
         "example_name": "void at::native::vectorized_elementwise_kernel<4>(...)", "no_external_id": 0,
         "not_aten": {}, "not_aten_total": 0, "api_calls": 90, "noisy": {}, "unnamed_api": 0}
    f.update(over)
    return f


class FakeCtx:
    """Context as the checks see it, with each command's output given."""

    def __init__(self, outputs, build="/nonexistent-build"):
        self.outputs, self.build, self.python, self.logs = outputs, build, "python3", "/nonexistent-logs"
        self.cupti = {"path": "/x/libcupti.so", "version": 130001, "per_cbid": True}
        self.gpu_count = 1
        self.ran = []

    def run(self, name, cmd, timeout_s, env=None, cwd=None):
        self.ran.append(name)
        return self.outputs[name]

    def path(self, *parts):
        return os.path.join(self.build, *parts)

    def left_s(self):
        return 300.0

    def say(self, text):
        pass


def probe_out(result):
    return 0, "torch noise\nprobe: " + json.dumps(result) + "\n"


class ChecksTest(unittest.TestCase):
    def test_checks_torch_capture_passes_when_both_profilers_agree(self):
        ctx = FakeCtx({"torch_capture": probe_out({"stepprof": facts(), "torch": facts(kernel_us=420.0,
                                                   noisy={"cudaGetLastError": 40}), "warnings": []})})
        got = checks.torch_capture(ctx)
        self.assertEqual([PASS] * 5, [r.verdict for r in got], got)
        self.assertIn("stepprof 45 kernels, 400.0 us; torch.profiler 45 kernels, 420.0 us (4.8% apart)", got[0].figure)
        self.assertIn("{'cudaGetLastError': 40}", got[4].figure)

    def test_checks_torch_capture_fails_each_broken_part(self):
        bad = facts(kernels=44, mangled=3, at_native=0, no_external_id=2, noisy={"cudaGetDevice": 5})
        ctx = FakeCtx({"torch_capture": probe_out({"stepprof": bad, "torch": facts(kernels=0), "warnings": []})})
        got = checks.torch_capture(ctx)
        self.assertEqual([FAIL] * 5, [r.verdict for r in got], got)

    def test_checks_torch_probe_without_cuda_skips_and_a_crash_fails(self):
        got = checks.torch_capture(FakeCtx({"torch_capture": (77, "torch_probe: torch finds no CUDA device\n")}))
        self.assertEqual([SKIP] * 5, [r.verdict for r in got])
        self.assertIn("torch finds no CUDA device", got[0].why)
        got = checks.under_torch(FakeCtx({"torch_under_torch": (None, "Traceback\n[gpu-check: killed after 150 s]\n")}))
        self.assertEqual(FAIL, got[0].verdict)
        self.assertTrue(got[0].why.startswith("timed out"), got[0].why)

    def test_checks_refusals(self):
        line = "Profiling GPU is not supported in current context: another CUPTI client (nsys, ...) holds it"
        ok = {"warnings": [line], "stepprof": facts(kernels=0), "torch": facts()}
        self.assertEqual(PASS, checks.under_torch(FakeCtx({"torch_under_torch": probe_out(ok)}))[0].verdict)
        recorded = dict(ok, warnings=[])
        self.assertEqual(FAIL, checks.under_torch(FakeCtx({"torch_under_torch": probe_out(recorded)}))[0].verdict)
        child = {"exit": 0, "trace": facts(kernels=0, cpu_ops=12)}
        forked = {"after_span": dict(child, warnings=["Profiling GPU is not supported in current context: this "
                                                      "process was forked from one that had loaded CUDA"]),
                  "no_profiler": dict(child, warnings=["Profiling GPU is not supported in current context: x"])}
        self.assertEqual(PASS, checks.fork(FakeCtx({"torch_fork": probe_out(forked)}))[0].verdict)
        forked["no_profiler"] = {"error": "the child did not finish in 60 s (killed)"}
        got = checks.fork(FakeCtx({"torch_fork": probe_out(forked)}))[0]
        self.assertEqual(FAIL, got.verdict)
        self.assertIn("no profiler before the fork: the child did not finish", got.figure)

    def test_checks_overhead_targets(self):
        with tempfile.TemporaryDirectory() as build:
            os.makedirs(os.path.join(build, "bench"))
            open(os.path.join(build, "bench", "bench_gpu"), "w").close()
            launch = ("metric gpu_launch_untraced 3559.0 ns min 1 max 2\nmetric gpu_launch_traced 7168.0 ns\n"
                      "metric gpu_launch_traced_cpu 3651.0 ns\nmetric gpu_trace_overhead 2.014 x\n")
            torch_out = ("metric torch_launch_untraced 7353.0 ns\nmetric torch_launch_traced 12219.0 ns\n"
                         "metric torch_trace_overhead 1.662 x\n")
            got = checks.bench_launch(FakeCtx({"bench_gpu_launch": (0, launch), "bench_gpu_torch": (0, torch_out)},
                                              build))[0]
            self.assertEqual(FAIL, got.verdict)
            self.assertIn("2.01x (CPU target only 1.03x); torch.profiler 12,219 against 7,353 ns per add_: 1.66x",
                          got.figure)
            got = checks.bench_launch(FakeCtx({"bench_gpu_launch": (0, launch),
                                               "bench_gpu_torch": (0, "skip: torch finds no CUDA device\n")}, build))[0]
            self.assertEqual(SKIP, got.verdict)
            compute = ("metric gpu_compute_untraced 500000.0 ns\nmetric gpu_compute_traced 504000.0 ns\n"
                       "metric gpu_compute_traced_cpu 500100.0 ns\nmetric gpu_compute_overhead {} x\n")
            for ratio, verdict in (("1.008", PASS), ("1.020", FAIL)):
                got = checks.bench_compute(FakeCtx({"bench_gpu_compute": (0, compute.format(ratio))}, build))[0]
                self.assertEqual(verdict, got.verdict, got)
            self.assertIn("504.0 us per kernel traced (CPU+GPU) against 500.0 untraced: 1.020x", got.figure)

    def test_checks_missing_programs_skip(self):
        ctx = FakeCtx({})
        for fn in (checks.gpu_train, checks.nvtx, checks.bench_launch, checks.bench_compute):
            for r in fn(ctx):
                self.assertEqual(SKIP, r.verdict, r)
                self.assertIn("not built", r.why)
        self.assertEqual([], ctx.ran)

    def test_checks_ctest_and_pytest_totals(self):
        with tempfile.TemporaryDirectory() as build:
            open(os.path.join(build, "CTestTestfile.cmake"), "w").close()
            out = ("95% tests passed, 1 tests failed out of 20\n\nThe following tests did not run:\n"
                   "\t 48 - gpu_test_names (Skipped)\n\nThe following tests FAILED:\n"
                   "\t 87 - gpu_example_trace (Failed)\n")
            if shutil.which("ctest"):
                got = checks.ctest_gpu(FakeCtx({"ctest_gpu": (8, out)}, build))[0]
                self.assertEqual(FAIL, got.verdict)
                self.assertEqual("20 tests, 1 failed: gpu_example_trace; 1 skipped: gpu_test_names", got.figure)
        no_xdist = (1, "ModuleNotFoundError: No module named 'xdist'\n")
        got = checks.python_tests(FakeCtx({"python_tests": (0, "....\n250 passed, 12 skipped in 95.31s\n"),
                                           "python_tests_xdist": no_xdist}))[0]
        self.assertEqual((PASS, "250 passed, 12 skipped in 95.31s"), (got.verdict, got.figure))
        got = checks.python_tests(FakeCtx({"python_tests": (None, "...\n[gpu-check: killed after 150 s]\n"),
                                           "python_tests_xdist": (0, "")}))[0]
        self.assertEqual(FAIL, got.verdict)
        self.assertIn("pytest-xdist", got.figure)


class StoppedRunTest(unittest.TestCase):
    def test_gpu_check_killed_mid_run_leaves_what_it_found(self):
        """The doc is rewritten after each check, with a line saying the run is
        incomplete; a run that ends drops the line."""
        import gpu_check
        saved = gpu_check.visible_gpus, gpu_check.machine_facts, checks.CHECKS

        def stopped(ctx):
            raise SystemExit("killed")

        try:
            gpu_check.visible_gpus = lambda: (["Test GPU, 1.0"], "")
            gpu_check.machine_facts = lambda ctx, rows: {"gpu": "Test GPU"}
            with tempfile.TemporaryDirectory() as tmp:
                doc = os.path.join(tmp, "doc.md")
                with open(doc, "w", encoding="utf-8") as f:
                    f.write(HEAD + EARLIER)
                argv = ["--doc", doc, "--logs", os.path.join(tmp, "logs"), "--build", tmp]
                checks.CHECKS = [("first", lambda ctx: [Result("first check", PASS, "1 kernel")]),
                                 ("second", stopped)]
                with self.assertRaises(SystemExit):
                    gpu_check.main(argv)
                with open(doc, encoding="utf-8") as f:
                    text = f.read()
                self.assertIn("| first check | 1 kernel | pass |", text)
                self.assertIn(gpu_check.CUT_SHORT, text)
                self.assertTrue(text.startswith(HEAD) and text.endswith(EARLIER))
                checks.CHECKS = checks.CHECKS[:1]
                with open(doc, "w", encoding="utf-8") as f:
                    f.write(HEAD + EARLIER)
                self.assertEqual(0, gpu_check.main(argv))
                with open(doc, encoding="utf-8") as f:
                    text = f.read()
                self.assertNotIn(gpu_check.CUT_SHORT, text)
                self.assertEqual(1, text.count("| first check | 1 kernel | pass |"))
        finally:
            gpu_check.visible_gpus, gpu_check.machine_facts, checks.CHECKS = saved


class CarryTest(unittest.TestCase):
    def test_carry_lists_test_files_and_programs(self):
        with tempfile.TemporaryDirectory() as build:
            os.makedirs(os.path.join(build, "tests", "fake", "out"))
            for f in ("tests/prog", "tests/fake/libcuda.so.1"):
                open(os.path.join(build, f), "w").close()
            tests = [{"command": [os.path.join(build, "tests", "prog"), "x"]},
                     {"command": ["/usr/bin/python3", "/src/check.py", os.path.join(build, "tests", "prog"),
                                  os.path.join(build, "tests", "fake", "out")],
                      "properties": [{"name": "ENVIRONMENT",
                                      "value": ["LD_LIBRARY_PATH=" + os.path.join(build, "tests", "fake"),
                                                "CUDA_HOME=/nonexistent"]}]}]
            inside, outside = carry.test_paths(tests, build)
            self.assertEqual({"tests/prog", "tests/fake"}, inside)  # the output folder is not carried
            self.assertEqual({"/usr/bin/python3"}, outside)

    def test_carry_prepares_the_folder_under_its_limit(self):
        missing = [n for n in carry.NEEDED if not os.path.exists(os.path.join(BUILD, n))]
        if missing or not os.path.exists(os.path.join(BUILD, "CMakeCache.txt")) or not shutil.which("ctest"):
            self.skipTest(f"the GPU programs are not built in {BUILD} (no nvcc?): {missing}")
        with tempfile.TemporaryDirectory() as tmp:
            dest = os.path.join(tmp, "carry")
            self.assertEqual([], carry.prepare(BUILD, dest, 40))
            for f in ("build/examples/gpu_train", "build/bench/bench_gpu", "build/tests/gpu_nvtx_cuda_prog",
                      "build/stepprof", "build/libstepprof_nvtx.so", "build/python-inject/sitecustomize.py",
                      "build/CTestTestfile.cmake", "build/tests/CTestTestfile.cmake",
                      "build/tests/gpu_test_cupti_load", "build/tests/gpu_live_gpu",
                      "build/tests/fake_cuda_lib/libcupti.so", "gen/nodetree.pb-c.c", "gen/nodetree.pb-c.h",
                      "lib/libprotobuf-c.so.1", "include/protobuf-c/protobuf-c.h", "origin", "programs", "commit"):
                self.assertTrue(os.path.exists(os.path.join(dest, f)), f)
            with open(os.path.join(dest, "origin"), encoding="utf-8") as f:
                self.assertEqual(os.path.realpath(BUILD), os.path.realpath(f.read().split("\n")[1]))
            self.assertLess(carry.size_bytes(dest), 40 << 20)
            self.assertEqual([f"{dest} holds"], [p[:len(dest) + 6] for p in carry.prepare(BUILD, dest, 0.001)])


if __name__ == "__main__":
    unittest.main(verbosity=1)

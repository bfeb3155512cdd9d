#!/usr/bin/env python3
"""carry.py: what `make gpu-carry` runs. Prepares, on the machine that built stepprof,
the folder a GPU machine needs to run `make gpu-check` without building anything there:

  DEST/build/     the parts of the build tree the checks run: gpu_train, bench_gpu,
                  nvtx_cuda_prog, the CLI, libstepprof and its NVTX library, python-inject,
                  every CTestTestfile.cmake, and what each test `ctest -R gpu` lists runs
                  (its programs, the fake CUDA libraries its environment names)
  DEST/gen/       the protobuf code protoc-c generated (the Python build needs it; a GPU
                  machine may have no protoc-c)
  DEST/lib/       libprotobuf-c.so.1 (a GPU machine may not have it)
  DEST/include/   protobuf-c/protobuf-c.h (for the Python build)
  DEST/origin     the source root the build was configured in (its paths are baked into
                  CTestTestfile.cmake and the test programs; tools/gpu_check/on_device.sh
                  links that path to the tree it runs in)
  DEST/programs   the programs outside the build that the tests run (the Python of the
                  build); on_device.sh links a missing one to the GPU machine's python3
  DEST/commit     `git describe` of the tree, for the report

It fails (exit 1) if something the checks need is not built, or if DEST is larger than
--max-mib (40: the device copy of the tree must stay under 64 MiB with the sources).
Usage: carry.py [--build DIR] [--dest DIR] [--max-mib N]. Standard library only.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# Relative to the build tree: what the checks run besides the tests' own files.
NEEDED = ["examples/gpu_train", "bench/bench_gpu", "tests/gpu_nvtx_cuda_prog", "stepprof",
          "libstepprof_nvtx.so", "python-inject"]


def cache_value(build, key):
    with open(os.path.join(build, "CMakeCache.txt"), encoding="utf-8", errors="replace") as f:
        m = re.search(rf"^{re.escape(key)}:[A-Z]+=(.*)$", f.read(), re.M)
    return m.group(1).strip() if m else ""


def gpu_tests(build):
    """ctest's own description of the tests `ctest -R gpu` runs."""
    out = subprocess.run(["ctest", "--show-only=json-v1", "-R", "gpu"], cwd=build, check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return json.loads(out).get("tests", [])


def test_paths(tests, build):
    """(paths under build to carry, programs outside it) that the tests use."""
    inside, outside = set(), set()
    for t in tests:
        cmd = t.get("command") or []
        if cmd and not cmd[0].startswith(build + os.sep):
            outside.add(cmd[0])
        # Files named on the command line (a folder there is the test's
        # output), and folders or files in its environment (the fake libs).
        values = [(v, os.path.isfile) for v in cmd]
        for p in t.get("properties", []):
            if p.get("name") == "ENVIRONMENT":
                values += [(v.partition("=")[2], os.path.exists) for v in p.get("value", [])]
        for v, wanted in values:
            for part in v.split(":"):
                if part.startswith(build + os.sep) and wanted(part):
                    inside.add(os.path.relpath(part, build))
    return inside, outside


def copy_into(src, dst):
    """Copies a file (links as links) or a folder."""
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    if os.path.isdir(src) and not os.path.islink(src):
        shutil.copytree(src, dst, symlinks=True, dirs_exist_ok=True)
    else:
        shutil.copy2(src, dst, follow_symlinks=False)


def size_bytes(path):
    total = 0
    for d, _, files in os.walk(path):
        total += sum(os.lstat(os.path.join(d, f)).st_size for f in files)
    return total


def prepare(build, dest, max_mib):
    build, dest = os.path.abspath(build), os.path.abspath(dest)
    missing = [n for n in NEEDED if not os.path.exists(os.path.join(build, n))]
    if missing:
        return [f"not built in {build}: {', '.join(missing)} (configure where nvcc and CUPTI's "
                f"headers are found, then build)"]
    shutil.rmtree(dest, ignore_errors=True)
    os.makedirs(dest)
    inside, outside = test_paths(gpu_tests(build), build)
    rel = set(NEEDED) | inside
    rel |= {os.path.relpath(p, build) for p in glob.glob(os.path.join(build, "**", "CTestTestfile.cmake"),
                                                        recursive=True)}
    rel |= {os.path.relpath(p, build) for p in glob.glob(os.path.join(build, "libstepprof.so*"))}
    for r in sorted(rel):
        copy_into(os.path.join(build, r), os.path.join(dest, "build", r))

    gen = os.path.join(build, "gen")
    for f in ("nodetree.pb-c.c", "nodetree.pb-c.h"):
        copy_into(os.path.join(gen, f), os.path.join(dest, "gen", f))
    lib = cache_value(build, "STEPPROF_PROTOBUF_C_LIBRARY")
    inc = cache_value(build, "STEPPROF_PROTOBUF_C_INCLUDE_DIR")
    lib1 = os.path.join(os.path.dirname(lib), "libprotobuf-c.so.1")
    header = os.path.join(inc, "protobuf-c", "protobuf-c.h")
    if not os.path.exists(lib1) or not os.path.exists(header):
        return [f"libprotobuf-c.so.1 or protobuf-c.h not found beside {lib!r} and {inc!r}"]
    os.makedirs(os.path.join(dest, "lib"))
    shutil.copy2(os.path.realpath(lib1), os.path.join(dest, "lib", "libprotobuf-c.so.1"))
    copy_into(header, os.path.join(dest, "include", "protobuf-c", "protobuf-c.h"))

    with open(os.path.join(dest, "origin"), "w", encoding="utf-8") as f:
        f.write(cache_value(build, "CMAKE_HOME_DIRECTORY") + "\n" + build + "\n")
    with open(os.path.join(dest, "programs"), "w", encoding="utf-8") as f:
        f.write("".join(p + "\n" for p in sorted(outside)))
    git = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=12"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    with open(os.path.join(dest, "commit"), "w", encoding="utf-8") as f:
        f.write((git.stdout.strip() or "unknown") + "\n")
    mib = size_bytes(dest) / (1 << 20)
    if mib > max_mib:
        return [f"{dest} holds {mib:.1f} MiB, over the {max_mib} MiB allowed"]
    return []


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--dest", default=os.path.join(ROOT, ".devcarry"))
    ap.add_argument("--max-mib", type=float, default=40.0)
    a = ap.parse_args(argv)
    if not os.path.exists(os.path.join(a.build, "CMakeCache.txt")):
        print(f"gpu-carry: {a.build} is not a configured build tree; run make build first")
        return 1
    problems = prepare(a.build, a.dest, a.max_mib)
    for p in problems:
        print(f"gpu-carry: {p}")
    if problems:
        return 1
    print(f"gpu-carry: {os.path.relpath(a.dest, ROOT)} ready, {size_bytes(a.dest) / (1 << 20):.1f} MiB; "
          "run on the GPU machine: sh tools/gpu_check/on_device.sh (carry: "
          f"{os.path.relpath(a.dest, ROOT)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

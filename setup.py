"""Builds stepprof._core, the CPython extension over the stepprof C core.

The extension compiles the core's sources (src/**/*.c, found at build time,
so new core files need no change here) together with python/_stepprof/*.c,
with the flags and definitions of CMakeLists.txt. Objects go to
build/python/, beside CMake's build tree rather than in it. The protobuf
message code is generated from src/export/nodetree.proto by protoc-c into
build/python/gen (Debian: protobuf-c-compiler, libprotobuf-c-dev), as the
CMake build does; it is never committed.
"""
import glob
import json
import os
import shutil
import subprocess
import sys

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def rel(pattern):
    return sorted(os.path.relpath(p, HERE) for p in glob.glob(os.path.join(HERE, pattern), recursive=True))


GEN_DIR = os.path.join("build", "python", "gen")


def generate_protobuf():
    """Runs protoc-c on nodetree.proto when the generated code is missing or older."""
    proto = os.path.join(HERE, "src", "export", "nodetree.proto")
    out_c = os.path.join(HERE, GEN_DIR, "nodetree.pb-c.c")
    if os.path.exists(out_c) and os.path.getmtime(out_c) >= os.path.getmtime(proto):
        return
    protoc = shutil.which("protoc-c")
    if not protoc:
        raise SystemExit("stepprof: protoc-c not found; run: apt-get install -y protobuf-c-compiler "
                         "libprotobuf-c-dev")
    os.makedirs(os.path.join(HERE, GEN_DIR), exist_ok=True)
    subprocess.check_call([protoc, "--c_out=" + os.path.join(HERE, GEN_DIR),
                           "--proto_path=" + os.path.join(HERE, "src", "export"), proto])


def find_cupti():
    """The folders holding cupti.h and cuda.h, or None: as CMakeLists.txt, the
    CUPTI recorder compiles only where CUPTI's headers exist (src/gpu), and
    nothing links against CUDA (libcupti and libcuda are dlopen'ed)."""
    homes = [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]
    cupti = [os.path.join(h, d) for h in homes if h for d in ("include", "extras/CUPTI/include")]
    cuda = [os.path.join(h, "include") for h in homes if h]
    cupti_dir = next((d for d in cupti if os.path.exists(os.path.join(d, "cupti.h"))), None)
    cuda_dir = next((d for d in cuda if os.path.exists(os.path.join(d, "cuda.h"))), None)
    if not cupti_dir or not cuda_dir:
        return None
    return sorted({cupti_dir, cuda_dir})


generate_protobuf()
cupti_dirs = find_cupti()
# src/inject/nvtx is the NVTX injection library, a library of its own (CMakeLists.txt).
core_sources = [p for p in rel("src/**/*.c") if not p.startswith(os.path.join("src", "inject", "nvtx"))]
core_sources += [os.path.join(GEN_DIR, "nodetree.pb-c.c")]
ext_sources = rel("python/_stepprof/*.c")
private_dirs = sorted({os.path.dirname(p) for p in core_sources})  # GEN_DIR included

core = Extension(
    "stepprof._core",
    sources=core_sources + ext_sources,
    include_dirs=["include", "src"] + private_dirs + (cupti_dirs or []),
    define_macros=[("_POSIX_C_SOURCE", "200809L")] + ([("SP_HAVE_CUPTI", "1")] if cupti_dirs else []),
    # As CMakeLists.txt, less -Werror: a newer compiler must not break installs.
    extra_compile_args=[
        "-std=c11", "-Wall", "-Wextra", "-Wshadow", "-Wstrict-prototypes",
        "-Wmissing-prototypes", "-fvisibility=hidden", "-ftls-model=initial-exec",
    ],
    libraries=["z", "protobuf-c", "m"],
    extra_link_args=["-pthread"],
    depends=rel("src/**/*.h") + rel("include/**/*.h") + rel("python/_stepprof/*.h"),
)

def torch_adapter():
    """stepprof._torch_adapter, compiled against the torch installed in the
    Python that runs this install (python/_stepprof_torch/adapter.cpp says
    why it is C++), or None without torch or with STEPPROF_TORCH=0. torch is
    asked in a child process: importing it here would cost seconds and load
    CUDA's libraries into the build. A failed compile skips the adapter
    (optional); stepprof/_torch_capture.py then says so when torch is used."""
    if os.environ.get("STEPPROF_TORCH", "1") == "0":
        return None
    probe = ("import json, os, torch; d = os.path.dirname(torch.__file__); "
             "print(json.dumps([torch.__version__, os.path.join(d, 'include'), os.path.join(d, 'lib'), "
             "int(torch._C._GLIBCXX_USE_CXX11_ABI)]))")
    try:
        out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
        version, include, lib, abi = json.loads(out.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None
    return Extension(
        "stepprof._torch_adapter",
        sources=["python/_stepprof_torch/adapter.cpp", "python/_stepprof_torch/flops.cpp"],
        language="c++",
        include_dirs=["include", "python/_stepprof", "python/_stepprof_torch", include],
        # NDEBUG: RecordFunction's layout differs in a debug build of torch's
        # headers from the release libtorch's.
        define_macros=[("NDEBUG", "1"), ("_GLIBCXX_USE_CXX11_ABI", str(abi)),
                       ("SPX_TORCH_BUILT_FOR", json.dumps(version))],
        extra_compile_args=["-std=c++20", "-O2", "-Wall", "-Wextra", "-fvisibility=hidden"],
        library_dirs=[lib],
        libraries=["c10", "torch_cpu"],
        runtime_library_dirs=[lib],
        depends=["python/_stepprof/record_api.h", "python/_stepprof_torch/flops.h"],
        optional=True,
    )


adapter = torch_adapter()
setup(
    ext_modules=[core] + ([adapter] if adapter else []),
    options={
        "build": {"build_base": "build/python"},
        "build_ext": {"parallel": os.cpu_count() or 2},
        "egg_info": {"egg_base": "build/python"},
    },
)

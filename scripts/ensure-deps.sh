#!/bin/sh
# Checks the build and test dependencies of stepprof and installs the missing
# ones with apt-get when running as root; otherwise prints the exact command.
# Debian packages: a C compiler, make, cmake, pkg-config, zlib, python3,
# protobuf-c (library and protoc-c, for saved results) and clang with its
# runtime libraries (the libFuzzer targets of tests/fuzz); optionally
# ISA-L (faster .json.gz).
set -u
missing=""

# Optional packages: installed with apt-get when root; otherwise, or if apt
# fails, it says what to run and what will be skipped, and exits 1.
optional() { # optional WHO-NEEDS-IT WHAT-IS-SKIPPED PACKAGE...
    who=$1 skipped=$2
    shift 2
    [ $# -eq 0 ] && exit 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "stepprof: installing for $who: $*"
        export DEBIAN_FRONTEND=noninteractive
        { apt-get install -y -qq "$@" >/dev/null 2>&1 ||
            { apt-get update -qq && apt-get install -y -qq "$@" >/dev/null; }; } && exit 0
    fi
    echo "stepprof: $who needs: $* (apt-get install -y $*); $skipped will be skipped" >&2
    exit 1
}

# `ensure-deps.sh compat`: what only `make compat` needs (headless Chromium
# and Debian's custom-elements-v0 polyfill, for catapult).
if [ "${1:-}" = compat ]; then
    want=""
    command -v chromium >/dev/null 2>&1 || want="$want chromium"
    [ -f /usr/lib/javascript/webcomponentsjs-custom-element-v0/CustomElements.js ] ||
        want="$want libjs-webcomponentsjs-custom-element-v0"
    optional "make compat" catapult $want
fi
# `ensure-deps.sh browser`: headless Chromium, in which `make test` opens the
# HTML report (tests/report/browser_check.py).
if [ "${1:-}" = browser ]; then
    command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 && exit 0
    optional "the HTML report's browser test" "that test" chromium
fi
# `ensure-deps.sh mpi`: Open MPI (mpicc, mpirun), for the MPI example and its
# 4-rank test (tests/examples/mpi_allreduce.sh).
if [ "${1:-}" = mpi ]; then
    want=""
    command -v mpirun >/dev/null 2>&1 || want="$want openmpi-bin"
    command -v mpicc >/dev/null 2>&1 || want="$want libopenmpi-dev"
    optional "the MPI example" "its test" $want
fi
need() { # need PACKAGE TEST-COMMAND...
    pkg=$1; shift
    "$@" >/dev/null 2>&1 || missing="$missing $pkg"
}
have() { command -v "$1"; }
need gcc have cc
need make have make
need cmake have cmake
need pkg-config have pkg-config
need python3 have python3
need zlib1g-dev test -f /usr/include/zlib.h
need libprotobuf-c-dev test -f /usr/include/protobuf-c/protobuf-c.h
need protobuf-c-compiler have protoc-c
need clang have clang
need libclang-rt-dev sh -c 'ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-*.a'

# ISA-L (Debian libisal-dev) writes .json.gz at a fraction of zlib's CPU
# time; without it the build uses zlib, so it is installed when root and
# only mentioned otherwise.
if [ ! -f /usr/include/isa-l/igzip_lib.h ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 &&
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libisal-dev >/dev/null 2>&1; then
        echo "stepprof: installed libisal-dev (faster .json.gz)"
    else
        echo "stepprof: optional: apt-get install -y libisal-dev writes .json.gz faster (zlib is used without it)" >&2
    fi
fi

if [ -z "$missing" ]; then
    exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "stepprof: installing build dependencies:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq $missing >/dev/null || {
        echo "stepprof: apt-get install failed; run: apt-get install -y$missing" >&2
        exit 1
    }
    exit 0
fi
echo "stepprof: missing build dependencies. Run:" >&2
echo "    sudo apt-get install -y$missing" >&2
exit 1

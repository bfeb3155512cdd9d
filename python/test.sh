#!/bin/sh
# python/test.sh: what `make test-python` runs. Makes a virtual environment
# in build/python-venv (once), puts pip, setuptools and pytest from PyPI in it
# (once), installs the package with `pip install .` (objects in build/python
# are reused, so a rerun compiles only what changed), then runs the pytest
# suite in tests/python (not with STEPPROF_INSTALL_ONLY=1). Works from a fresh clone; as root on Debian it
# installs python3-venv and python3-dev when they are missing.
#
# paddlepaddle (CPU) is installed into the venv once, for the tests that run
# paddle under both profilers (tests/python/test_paddle_capture.py). When pip
# cannot get it (offline, no wheel for this Python or platform) the marker
# $VENV/.stepprof-paddle-failed says why, those tests skip saying so, and later
# runs try again only after a day (or remove the marker). STEPPROF_PADDLE=0 skips
# the install; PADDLE_SPEC chooses the requirement (default "paddlepaddle>=3,<4").
#
# torch is installed the same way (marker .stepprof-torch / .stepprof-torch-failed,
# STEPPROF_TORCH=0 skips it, TORCH_SPEC chooses it, default "torch>=2.4,<3"),
# before the package: `pip install .` compiles stepprof's torch adapter against
# it. PyPI's wheel pulls CUDA's libraries (about 3 GB in pip's cache, used
# on CPU here); the first install took about 2 minutes on the CI machine's kind.
set -eu
PYTHON=${PYTHON:-python3}
VENV=${VENV:-build/python-venv}

has_headers() {
    "$PYTHON" -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'
}

ensure_system_packages() {
    if has_headers && "$PYTHON" -c 'import ensurepip, venv' >/dev/null 2>&1; then return 0; fi
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "stepprof: installing python3-venv python3-dev"
        DEBIAN_FRONTEND=noninteractive apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv python3-dev >/dev/null
    else
        echo "stepprof: the Python package needs Python's headers and venv. Run:" >&2
        echo "    sudo apt-get install -y python3-venv python3-dev" >&2
        exit 1
    fi
}

if [ ! -x "$VENV/bin/python" ]; then
    ensure_system_packages
    "$PYTHON" -m venv "$VENV"
fi
if [ ! -f "$VENV/.stepprof-tools" ]; then
    "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip setuptools pytest
    touch "$VENV/.stepprof-tools"
fi
# install_once NAME ENABLED SPEC WHY: pip-installs SPEC into the venv once
# (marker .stepprof-NAME), unless ENABLED is not 1. A failed install leaves
# .stepprof-NAME-failed with pip's last lines, which the tests' skip reason
# quotes, and is retried after a day, so that one network failure does not
# skip those tests for good.
install_once() {
    name=$1 enabled=$2 spec=$3 why=$4
    find "$VENV" -maxdepth 1 -name ".stepprof-$name-failed" -mmin +1440 -delete 2>/dev/null
    if [ "$enabled" != 1 ] || [ -f "$VENV/.stepprof-$name" ] || [ -f "$VENV/.stepprof-$name-failed" ]; then
        return 0
    fi
    echo "stepprof: installing $spec $why"
    if "$VENV/bin/python" -m pip install -q --disable-pip-version-check --timeout 30 --retries 1 \
        "$spec" >"$VENV/.stepprof-$name-log" 2>&1; then
        touch "$VENV/.stepprof-$name"
    else
        tail -n 3 "$VENV/.stepprof-$name-log" >"$VENV/.stepprof-$name-failed"
        echo "stepprof: could not install $spec; its tests will skip (see $VENV/.stepprof-$name-failed)" >&2
    fi
}
# paddle is pinned to the versions the capture supports
# (python/stepprof/_paddle_capture.py SUPPORTED): a newer major would turn
# capture off and fail the comparison, not skip it.
install_once paddle "${STEPPROF_PADDLE:-1}" "${PADDLE_SPEC:-paddlepaddle>=3,<4}" \
    "(CPU) for the paddle comparison tests"
# Perfetto's trace definitions (perfetto_trace_pb2, with protobuf, which
# the package requires), for decoding .pftrace files (tests/python/test_pftrace.py).
install_once perfetto "${STEPPROF_PERFETTO:-1}" "${PERFETTO_SPEC:-perfetto}" \
    "(Perfetto's trace definitions) for the .pftrace tests"
# torch before the package, whose torch adapter compiles against it.
install_once torch "${STEPPROF_TORCH:-1}" "${TORCH_SPEC:-torch>=2.4,<3}" \
    "for the torch capture tests (about 3 GB the first time)"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps .
# make bench only needs the package installed.
[ "${STEPPROF_INSTALL_ONLY:-0}" = 1 ] && exit 0
# -rs: a skipped test says why (the paddle and torch tests without them).
exec "$VENV/bin/python" -m pytest -q -rs tests/python "$@"

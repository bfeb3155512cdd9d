#!/bin/sh
# on_device.sh: `make gpu-check` on a lent GPU machine, in one command, from what
# `make gpu-carry` prepared in .devcarry/ on the development machine (nothing is built
# here but the Python package, which must be built by this machine's Python):
#
#   1. the carried build goes to build/, and the source root it was configured in is
#      linked to this tree (ctest's files and the test programs hold that path); a
#      program the tests run that is missing here (the build's Python) is linked to
#      python3;
#   2. libprotobuf-c.so.1 and protobuf-c.h go to /usr/local (as root; else, or with
#      GPU_CHECK_SYSTEM_INSTALL=0, through LD_LIBRARY_PATH and CFLAGS), and libcudart's folder to the loader's path if
#      it is not there;
#   3. the package is pip-installed into $PY (default python3, the one with torch),
#      with the carried protobuf code;
#   4. tools/gpu_check/gpu_check.py runs with a time budget and writes
#      docs/gpu-verification.md, which is copied to $OUT (default /tmp/gpu-check-out)
#      with the run's log and a tarball of every check's output.
#
# The whole run must end well inside the device's 10 minutes per command: the checks
# get GPU_CHECK_BUDGET_S (300) seconds, the install about a minute.
# Usage, from the repository root: sh tools/gpu_check/on_device.sh
set -u
cd "$(dirname "$0")/../.." || exit 1
C=.devcarry
OUT=${OUT:-/tmp/gpu-check-out}
PY=${PY:-python3}
BUDGET=${GPU_CHECK_BUDGET_S:-300}
mkdir -p "$OUT"
if [ ! -d "$C/build" ]; then
    echo "on_device: no $C/build here: run make gpu-carry on the development machine and name $C in carry"
    exit 1
fi
start=$(date +%s)
say() { echo "on_device: $* ($(($(date +%s) - start)) s)"; }

# 1. The build, where its paths point.
rm -rf build && mkdir -p build && cp -a "$C/build/." build/ || exit 1
here=$(pwd -P)
src=$(sed -n 1p "$C/origin")
bld=$(sed -n 2p "$C/origin")
if [ "$src" != "$here" ]; then
    if [ -e "$src" ] || [ -L "$src" ]; then
        say "$src exists here and is not this tree: ctest's paths may not resolve"
    else
        mkdir -p "$(dirname "$src")" && ln -s "$here" "$src" && say "linked $src -> $here"
    fi
fi
if [ "$bld" != "$src/build" ] && [ ! -e "$bld" ]; then
    mkdir -p "$(dirname "$bld")" && ln -s "$here/build" "$bld"
fi
while read -r prog; do
    if [ -n "$prog" ] && [ ! -e "$prog" ]; then
        mkdir -p "$(dirname "$prog")" && ln -s "$(command -v python3)" "$prog" && say "linked $prog -> python3"
    fi
done <"$C/programs"

# 2. protobuf-c and libcudart.
if [ "$(id -u)" = 0 ] && [ "${GPU_CHECK_SYSTEM_INSTALL:-1}" = 1 ]; then
    cp "$C/lib/libprotobuf-c.so.1" /usr/local/lib/ && ln -sf libprotobuf-c.so.1 /usr/local/lib/libprotobuf-c.so &&
        mkdir -p /usr/local/include/protobuf-c && cp "$C/include/protobuf-c/protobuf-c.h" /usr/local/include/protobuf-c/
    if ! ldconfig -p | grep -q 'libcudart\.so\.13'; then
        for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib; do
            if [ -e "$d/libcudart.so.13" ]; then echo "$d" >/etc/ld.so.conf.d/zz-stepprof-cudart.conf; break; fi
        done
    fi
    ldconfig
else
    mkdir -p build/devlib && cp "$C/lib/libprotobuf-c.so.1" build/devlib/ && ln -sf libprotobuf-c.so.1 build/devlib/libprotobuf-c.so
    export LD_LIBRARY_PATH="$here/build/devlib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    export CFLAGS="-I$here/$C/include" LDFLAGS="-L$here/build/devlib"
fi
say "build in place"

# 3. The Python package (objects under build/python; the protobuf code carried,
# newer than the .proto so that setup.py does not look for protoc-c).
mkdir -p build/python/gen && cp "$C"/gen/* build/python/gen/ && touch build/python/gen/*
if "$PY" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps --no-index . \
    >"$OUT/pip-install.log" 2>&1; then
    say "stepprof installed into $("$PY" -c 'import sys; print(sys.prefix)')"
else
    say "pip install failed; the torch checks will fail (see pip-install.log)"
    tail -20 "$OUT/pip-install.log"
fi

# 4. The checks.
timeout $((BUDGET + 60)) "$PY" tools/gpu_check/gpu_check.py --build build --python "$PY" \
    --logs build/gpu-check --budget-s "$BUDGET"
rc=$?
say "gpu_check.py exited $rc"
cp docs/gpu-verification.md "$OUT/" 2>/dev/null
cp build/gpu-check/gpu-check.log "$OUT/" 2>/dev/null
tar czf "$OUT/gpu-check-logs.tar.gz" -C build gpu-check 2>/dev/null
if [ "$(wc -c <"$OUT/gpu-check-logs.tar.gz")" -gt 15000000 ]; then # the device returns files up to 16 MiB
    (cd build && find gpu-check -name '*.log' | tar czf "$OUT/gpu-check-logs.tar.gz" -T -)
fi
say "in $OUT: $(ls "$OUT" | tr '\n' ' ')"
exit $rc

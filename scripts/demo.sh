#!/usr/bin/env bash
# shellcheck disable=SC1007 # `CDPATH= cd` clears CDPATH for that one command
# Builds the examples against an installed ascendless and runs them.
# Usage: demo.sh PREFIX [BUILD_ROOT]   (the examples are built under BUILD_ROOT, default build/)
#
# acl_init and adxl_capabilities show calls that are meant to fail, with the codes they return.
# The library logs every failure as an [ERROR] line, which would read as the demo going wrong,
# so its log is off (ASCEND_GLOBAL_LOG_LEVEL=4) for those two; every other program runs with
# the default log, and the demo's output has no [ERROR] line unless something went wrong
# (tests/install/run.sh checks this).
set -euo pipefail

prefix=$1
here=$(CDPATH= cd -- "$(dirname -- "$0")/.." >/dev/null && pwd)
root=${2:-$here/build}
build=$root/examples
# shellcheck source=/dev/null
source "$prefix/set_env.sh"
cmake -S "$here/examples-c" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j 2 >/dev/null
echo "== acl_init (C; the calls that fail here are meant to)"
ASCEND_GLOBAL_LOG_LEVEL=4 "$build/acl_init"
echo
echo "== runtime_copy (C)"
"$build/runtime_copy"
echo
"$here/examples-c/run_ipc.sh" "$build"
echo
echo "== adxl_capabilities (C++; the call that fails here is meant to)"
ASCEND_GLOBAL_LOG_LEVEL=4 "$build/adxl_capabilities"
echo
echo "== adxl_transfer (C, a server and a client engine over TCP)"
"$build/adxl_transfer"
echo
echo "== ADXL sample (C++, vendor-style CMake project: a server with device memory, a client with host memory)"
cmake -S "$here/examples-c/vendor-style" -B "$root/vendor-style" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$root/vendor-style" -j 2 >/dev/null
"$here/examples-c/vendor-style/run.sh" "$root/vendor-style"
echo
echo "== HIXL fabric-memory pair (C++, built by a CMake file in the vendor's HIXL examples layout)"
cmake -S "$here/examples-c/hixl-cann-layout" -B "$root/hixl-cann-layout" \
    -DCMAKE_PROJECT_INCLUDE="$prefix/lib64/cmake/Ascendless/AscendlessCannTargets.cmake" >/dev/null
cmake --build "$root/hixl-cann-layout" -j 2 >/dev/null
"$here/examples-c/hixl-cann-layout/run.sh" "$root/hixl-cann-layout"

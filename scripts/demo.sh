#!/usr/bin/env bash
# shellcheck disable=SC1007 # `CDPATH= cd` clears CDPATH for that one command
# Builds the examples against an installed ascendless (argument: its prefix) and runs them.
set -euo pipefail

prefix=$1
here=$(CDPATH= cd -- "$(dirname -- "$0")/.." >/dev/null && pwd)
build=$here/build/examples
# shellcheck source=/dev/null
source "$prefix/set_env.sh"
cmake -S "$here/examples-c" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j 2 >/dev/null
echo "== acl_init (C)"
"$build/acl_init"
echo
echo "== runtime_copy (C)"
"$build/runtime_copy"
echo
"$here/examples-c/run_ipc.sh" "$build"
echo
echo "== adxl_capabilities (C++)"
"$build/adxl_capabilities"
echo
echo "== adxl_transfer (C, a server and a client engine over TCP)"
"$build/adxl_transfer"
echo
echo "== ADXL sample (C++, vendor-style CMake project: a server with device memory, a client with host memory)"
cmake -S "$here/examples-c/vendor-style" -B "$here/build/vendor-style" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$here/build/vendor-style" -j 2 >/dev/null
"$here/examples-c/vendor-style/run.sh" "$here/build/vendor-style"

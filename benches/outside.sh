#!/usr/bin/env bash
# Builds one of the outside benchmarks (a CMake project under benches/c or benches/cxx, written
# against an installed tree as a user would) and runs it. Each project's run.sh calls this.
# Usage: outside.sh PROJECT_DIR PROGRAM PREFIX [BUILD_DIR] [-- ARGS...]
#   PREFIX     an installed tree (`make install PREFIX=...`); its set_env.sh is sourced
#   BUILD_DIR  where to build (default: a temporary directory, removed at the end)
#   ARGS       passed to PROGRAM (see the usage line at the top of its source)
set -euo pipefail

[ $# -ge 3 ] || { echo "usage: $0 PROJECT_DIR PROGRAM PREFIX [BUILD_DIR] [-- ARGS...]" >&2; exit 2; }
here=$1
program=$2
prefix=$(cd "$3" && pwd)
shift 3
build=
if [ $# -gt 0 ] && [ "$1" != -- ]; then
    build=$1
    shift
fi
[ $# -eq 0 ] || { [ "$1" = -- ] && shift; }
if [ -z "$build" ]; then
    build=$(mktemp -d)
    trap 'rm -rf "$build"' EXIT
fi

mkdir -p "$build"
# shellcheck source=/dev/null
source "$prefix/set_env.sh"
cmake -S "$here" -B "$build" -DCMAKE_BUILD_TYPE=Release >"$build/configure.log" 2>&1 ||
    { cat "$build/configure.log" >&2; exit 1; }
cmake --build "$build" -j 2 >"$build/build.log" 2>&1 || { cat "$build/build.log" >&2; exit 1; }
# The program bounds its own run (an alarm); this bounds the build-and-run once more.
timeout 900 "$build/$program" "$@"

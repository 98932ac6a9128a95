#!/usr/bin/env bash
# Builds the notify and IPC event ping-pong harness against an installed tree and runs it.
# Usage: run.sh PREFIX [BUILD_DIR] [-- ARGS...]
#   PREFIX     an installed tree (`make install PREFIX=...`); its set_env.sh is sourced
#   BUILD_DIR  where to build (default: a temporary directory, removed at the end)
#   ARGS       passed to notify_pingpong, e.g. --rounds 10 --iters 2000
# (see the usage line of notify_pingpong.c; docs/performance.md shows its output.)
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 PREFIX [BUILD_DIR] [-- ARGS...]" >&2; exit 2; }
prefix=$(cd "$1" && pwd)
shift
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
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
timeout 900 "$build/notify_pingpong" "$@"

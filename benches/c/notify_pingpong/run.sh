#!/usr/bin/env bash
# Builds the notify and IPC event ping-pong harness against an installed tree and runs it.
# Usage: run.sh PREFIX [BUILD_DIR] [-- ARGS...]
#   ARGS  passed to notify_pingpong, e.g. --rounds 10 --iters 2000
# (benches/outside.sh does the work; docs/performance.md shows the output.)
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../../outside.sh" "$here" notify_pingpong "$@"

#!/usr/bin/env bash
# Builds the HCCL benchmark against an installed tree and runs it.
# Usage: run.sh PREFIX [BUILD_DIR] [-- ARGS...]
#   ARGS  passed to hccl_bench, e.g. --ranks 8 --mib 64 --rounds 5
# (benches/outside.sh does the work; docs/performance.md shows the output.)
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../../outside.sh" "$here" hccl_bench "$@"

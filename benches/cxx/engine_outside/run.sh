#!/usr/bin/env bash
# Builds the outside engine benchmark against an installed tree and runs it.
# Usage: run.sh PREFIX [BUILD_DIR] [-- ARGS...]
#   ARGS  passed to engine_outside, e.g. --rounds 5 --transport tcp
# (benches/outside.sh does the work; docs/performance.md shows the output.)
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../../outside.sh" "$here" engine_outside "$@"

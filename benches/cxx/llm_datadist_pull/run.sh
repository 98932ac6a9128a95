#!/usr/bin/env bash
# Builds the LLM-DataDist pull benchmark against an installed tree and runs it.
# Usage: run.sh PREFIX [BUILD_DIR] [-- ARGS...]
#   ARGS  passed to llm_datadist_pull, e.g. --transport tcp --rounds 5 --duration 0.5
# (benches/outside.sh does the work; docs/performance.md shows the output.)
here=$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
exec "$here/../../outside.sh" "$here" llm_datadist_pull "$@"

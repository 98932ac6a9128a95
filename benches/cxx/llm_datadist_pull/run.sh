#!/usr/bin/env bash
# Builds the LLM-DataDist pull benchmark against an installed tree and runs it.
# Usage: run.sh PREFIX [BUILD_DIR] [-- ARGS...] (see benches/build_and_run.sh)
exec "$(dirname -- "${BASH_SOURCE[0]}")/../../build_and_run.sh" "$(cd "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)" llm_datadist_pull "$@"

#!/usr/bin/env bash
# Runs the two IPC examples against each other, with and without pid validation.
# Usage: run_ipc.sh BUILD_DIR   (the directory holding ipc_owner and ipc_peer)
set -euo pipefail

bin=$1
for mode in "" --no-pid-validation; do
    dir=$(mktemp -d)
    echo "== IPC notify flow ${mode:-with pid validation}"
    "$bin/ipc_peer" "$dir" &
    peer=$!
    status=0
    timeout 60 "$bin/ipc_owner" "$dir" $mode || status=$?
    wait "$peer" || status=$?
    rm -rf "$dir"
    [ "$status" -eq 0 ] || { echo "IPC flow failed ($status)" >&2; exit 1; }
done

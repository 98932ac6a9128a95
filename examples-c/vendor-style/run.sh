#!/usr/bin/env bash
# Runs the ADXL sample: adxl_server and adxl_client as two processes on 127.0.0.1.
# Usage: run.sh BUILD_DIR [PORT]   (BUILD_DIR holds adxl_server and adxl_client; PORT defaults
# to a free one)
set -euo pipefail

bin=$1
# shellcheck source=examples-c/free_port.sh
source "$(dirname -- "$0")/../free_port.sh"
port=${2:-$(free_port)}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "== ADXL sample: server on 127.0.0.1:$port, client READ then WRITE"
"$bin/adxl_server" "$port" "$dir" &
server=$!
status=0
timeout 60 "$bin/adxl_client" "$port" "$dir" || status=$?
if [ "$status" -ne 0 ]; then
    kill "$server" 2>/dev/null || true
fi
wait "$server" || status=$?
[ "$status" -eq 0 ] || { echo "ADXL sample failed ($status)" >&2; exit 1; }

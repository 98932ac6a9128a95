#!/usr/bin/env bash
# Runs a HIXL sample pair as two processes on 127.0.0.1: SERVER and CLIENT are executables
# taking "PORT DIR" (hixl_server/hixl_client here, or the ADXL sample's adxl_server/adxl_client,
# which speak to them: the same engine underneath).
# Usage: run.sh SERVER CLIENT PORT
set -euo pipefail
server_bin=$1 client_bin=$2 port=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "== HIXL sample: $(basename "$server_bin") on 127.0.0.1:$port, $(basename "$client_bin") READ then WRITE"
"$server_bin" "$port" "$dir" &
server=$!
status=0
timeout 60 "$client_bin" "$port" "$dir" || status=$?
if [ "$status" -ne 0 ]; then
    kill "$server" 2>/dev/null || true
fi
wait "$server" || status=$?
[ "$status" -eq 0 ] || { echo "HIXL sample failed ($status)" >&2; exit 1; }

#!/usr/bin/env bash
# Runs the ADXL example: a server engine and a client engine in two processes on loopback.
# Usage: run_adxl.sh BUILD_DIR
set -euo pipefail

bin=$1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/in"
echo "== ADXL over TCP: server 127.0.0.1:$port, client 127.0.0.1"
"$bin/adxl_transfer" server "127.0.0.1:$port" <"$dir/in" >"$dir/out" &
server=$!
exec 3>"$dir/in"          # holds the server's stdin open until we close it
for _ in $(seq 100); do
    grep -q '^ready ' "$dir/out" 2>/dev/null && break
    sleep 0.05
done
addr=$(sed -n 's/^ready //p' "$dir/out")
[ -n "$addr" ] || { echo "the server did not start" >&2; kill "$server"; exit 1; }
status=0
timeout 60 "$bin/adxl_transfer" client "127.0.0.1:$port" "$addr" || status=$?
exec 3>&-
wait "$server" || status=$?
grep -v '^ready ' "$dir/out" || true
exit "$status"

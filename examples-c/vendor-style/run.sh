#!/usr/bin/env bash
# Runs the ADXL sample: adxl_server and adxl_client as two processes on 127.0.0.1.
# Usage: run.sh BUILD_DIR [PORT]   (BUILD_DIR holds adxl_server and adxl_client; PORT defaults
# to a free one)
set -euo pipefail

bin=$1
# A port nothing listens on (a connection attempt to it is refused), below the kernel's range of
# ports for outgoing connections, which on a busy host may take a port inside it first.
free_port() {
    local lo=32768 span p
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
    span=$((lo - 20000))
    [ "$span" -ge 1000 ] || span=30000
    for _ in $(seq 100); do
        p=$((20000 + RANDOM % span))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
    done
    return 1
}
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

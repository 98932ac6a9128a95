#!/usr/bin/env bash
# Runs hixl_fabric_pair as two processes on 127.0.0.1 (devices 0 and 1), each writing into
# the other's memory. Usage: run.sh BUILD_DIR [PORT_A PORT_B]   (default: free ports)
set -euo pipefail
# shellcheck source=examples-c/free_port.sh
source "$(dirname -- "$0")/../free_port.sh"
port_a=${2:-$(free_port)}
port_b=${3:-$(free_port "$port_a")}
bin=$1/hixl_fabric_pair a=127.0.0.1:$port_a b=127.0.0.1:$port_b
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
echo "== HIXL fabric-memory pair (vendor examples layout): $a and $b write to each other"
timeout 60 "$bin" 0 "$a" "$b" "$dir" &
first=$!
status=0
timeout 60 "$bin" 1 "$b" "$a" "$dir" || status=$?
wait "$first" || status=$?
[ "$status" -eq 0 ] || { echo "HIXL fabric pair failed ($status)" >&2; exit 1; }

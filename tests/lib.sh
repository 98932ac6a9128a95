# Sourced by the test scripts (tests/*/run.sh): `here` (the repository), `work` (a temporary
# directory, removed on exit), `prefix` (an install prefix inside it), ok/fail lines in the
# TAP style the scripts print, and free_port.
# shellcheck shell=bash disable=SC1007,SC2034 # `CDPATH= cd` clears CDPATH; the caller uses the rest
here=$(CDPATH= cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." >/dev/null && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/toolkit
pass=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
fail() { echo "not ok - $*" >&2; exit 1; }

# free_port: a TCP port on 127.0.0.1 that nothing listens on, below the kernel's ephemeral range.
# Inside that range, outgoing connections hold ports (thousands, on a busy host, with thousands
# more closing), and one can take a port between the choice and the program's bind: "Address
# already in use". Below it, only listeners do, and those refuse no connection. (The Rust tests
# do the same: tests/common/ports.rs.)
free_port() {
    local lo=32768 base=20000 span p
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || lo=32768
    span=$((lo - base))
    [ "$span" -ge 1000 ] || span=30000 # a range starting low: no room below it, try anywhere
    for _ in $(seq 100); do
        p=$((base + RANDOM % span))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
            echo "$p"
            return
        fi
    done
    fail "no free port"
}

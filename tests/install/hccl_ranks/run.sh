#!/usr/bin/env bash
# HCCL between processes, against an installed tree: tests/install/hccl_ranks/run.sh <prefix>
# [one-host].
#
# Builds hccl_ranks.c with CMake (find_package(Ascendless), -Wall -Wextra -Werror) and runs it
# as 2, 4 and 8 ranks on this host (every collective and point-to-point call, bytes checked),
# 3 ranks of which the last is killed once joined (the others must fail, not hang, well within
# HCCL_EXEC_TIMEOUT), and 2 ranks on two "hosts": network namespaces joined by a veth pair,
# where the machine allows them. Every run has a time limit.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 <install prefix> [one-host]" >&2; exit 2; }
# one-host: the runs on this host only (no network namespaces), e.g. with another transport.
scope=${2:-all}
prefix=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/hccl_ranks.XXXXXX")
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT

fail() {
    echo "hccl_ranks: FAIL: $*" >&2
    exit 1
}
ok() { echo "hccl_ranks: ok: $*"; }

cmake -S "$here" -B "$work/build" -DCMAKE_PREFIX_PATH="$prefix" >"$work/cmake.log" 2>&1 ||
    fail "configure: $(cat "$work/cmake.log")"
cmake --build "$work/build" >"$work/build.log" 2>&1 || fail "build: $(cat "$work/build.log")"
app=$work/build/hccl_ranks
export HCCL_EXEC_TIMEOUT=20 HCCL_CONNECT_TIMEOUT=60 HCCL_IF_IP=127.0.0.1 ASCEND_GLOBAL_LOG_LEVEL=3

# Runs NRANKS ranks (extra arguments go to each), waits for all, and fails naming the first
# rank that failed. `launch` before the app (e.g. nsenter) is taken from the array LAUNCH_<rank>.
run_ranks() {
    local n=$1 info=$work/root_info.$1.$RANDOM
    shift
    pids=()
    for ((r = 0; r < n; r++)); do
        local -n launch="LAUNCH_$r"
        timeout 120 "${launch[@]}" "$app" "$n" "$r" "$info" "$@" >"$work/rank$r.log" 2>&1 &
        pids+=($!)
    done
    local r=0 status=0
    for p in "${pids[@]}"; do
        if ! { wait "$p"; } 2>/dev/null; then
            [ "$status" -ne 0 ] || status=$((r + 1))
        fi
        r=$((r + 1))
    done
    pids=()
    return "$status"
}

for ((r = 0; r < 8; r++)); do declare -a "LAUNCH_$r=(env)"; done

for n in 2 4 8; do
    if ! run_ranks "$n"; then
        fail "$n ranks: $(cat "$work"/rank*.log)"
    fi
    [ "$(cat "$work"/rank*.log | grep -c 'every collective and point-to-point call checked')" -eq "$n" ] ||
        fail "$n ranks did not all check: $(cat "$work"/rank*.log)"
    rm -f "$work"/rank*.log
    ok "$n ranks on one host: every collective and point-to-point call, bytes checked"
done

# A killed rank: the survivors' all-reduce fails at aclrtSynchronizeStream, each within 10 s.
start=$(date +%s)
run_ranks 3 kill && fail "3 ranks with one killed: the run succeeded"
for r in 0 1; do
    line=$(grep 'failed with' "$work/rank$r.log") || fail "rank $r with a killed peer: $(cat "$work/rank$r.log")"
    secs=$(sed -n 's/.* after \([0-9.]*\) s/\1/p' <<<"$line")
    awk -v s="$secs" 'BEGIN { exit !(s < 10) }' || fail "rank $r took $secs s to see its peer gone"
done
ok "a killed rank fails the others' all-reduce promptly ($(grep -ho 'after [0-9.]* s' "$work"/rank[01].log | tr '\n' ' ')), $(( $(date +%s) - start )) s in all"
rm -f "$work"/rank*.log

# A rank that stays alive but never calls the all-reduce: the others fail with the time-out
# code once HCCL_EXEC_TIMEOUT (3 s here) has passed, not before and not much later.
HCCL_EXEC_TIMEOUT=3 run_ranks 3 stall || true
for r in 0 1; do
    secs=$(sed -n 's/.*stalled rank failed with .* after \([0-9.]*\) s/\1/p' "$work/rank$r.log")
    [ -n "$secs" ] || fail "rank $r with a stalled peer: $(cat "$work/rank$r.log")"
    awk -v s="$secs" 'BEGIN { exit !(s >= 2.9 && s < 8) }' || fail "rank $r gave up on its stalled peer after $secs s"
done
ok "a rank that never calls the all-reduce fails the others with the time-out code after HCCL_EXEC_TIMEOUT ($(grep -ho 'after [0-9.]* s' "$work"/rank[01].log | tr '\n' ' '))"
rm -f "$work"/rank*.log

# A rank that never starts: the others' init fails with HCCL_E_TIMEOUT after HCCL_CONNECT_TIMEOUT.
LAUNCH_2=(true)
HCCL_CONNECT_TIMEOUT=2 run_ranks 3 absent || fail "init with a rank absent: $(cat "$work"/rank*.log)"
LAUNCH_2=(env)
for r in 0 1; do
    secs=$(sed -n 's/.*HCCL_E_TIMEOUT after \([0-9.]*\) s/\1/p' "$work/rank$r.log")
    awk -v s="$secs" 'BEGIN { exit !(s >= 1.9 && s < 6) }' || fail "rank $r: init gave up after '$secs' s: $(cat "$work/rank$r.log")"
done
ok "a rank that never starts fails the others' init with HCCL_E_TIMEOUT after HCCL_CONNECT_TIMEOUT ($(grep -ho 'after [0-9.]* s' "$work"/rank[01].log | tr '\n' ' '))"
rm -f "$work"/rank*.log

# Two hosts: network namespaces joined by a veth pair (10.78.0.1 and 10.78.0.2).
[ "$scope" = all ] || exit 0
if ! unshare -rn sh -c 'ip link add name va type veth peer name vb' >/dev/null 2>&1; then
    ok "# skipped two hosts: this machine allows no user and network namespaces"
    exit 0
fi
cat >"$work/two_hosts.sh" <<'SH'
set -eu
app=$1 info=$2 out=$3
ip link set lo up
unshare -n sh -c 'exec sleep 600' &
holder=$!
trap 'kill $holder' EXIT
while [ "$(readlink /proc/$holder/ns/net)" = "$(readlink /proc/self/ns/net)" ]; do sleep 0.01; done
ip link add name ha type veth peer name hb
ip link set hb netns "$holder"
ip addr add 10.78.0.1/24 dev ha
ip link set ha up
nsenter -t "$holder" -n sh -c 'ip link set lo up; ip addr add 10.78.0.2/24 dev hb; ip link set hb up'
HCCL_IF_IP=10.78.0.1 "$app" 2 0 "$info" >"$out.0" 2>&1 &
r0=$!
HCCL_IF_IP=10.78.0.2 nsenter -t "$holder" -n "$app" 2 1 "$info" >"$out.1" 2>&1 &
r1=$!
s=0
wait $r0 || s=1
wait $r1 || s=1
exit $s
SH
timeout 180 unshare -rn sh "$work/two_hosts.sh" "$app" "$work/root_info.hosts" "$work/host" ||
    fail "two hosts: $(cat "$work"/host.*)"
[ "$(cat "$work"/host.* | grep -c 'every collective and point-to-point call checked')" -eq 2 ] ||
    fail "two hosts did not both check: $(cat "$work"/host.*)"
ok "2 ranks on two hosts (network namespaces): every collective and point-to-point call, bytes checked"

#!/usr/bin/env bash
# shellcheck disable=SC1007 # `CDPATH= cd` clears CDPATH for that one command
# The UCX transport end to end, as a user would deploy it: builds the library with the cargo
# feature `ucx`, installs it into a temporary prefix, builds the C/C++ examples against that
# install with CMake, and runs every ADXL example (adxl_capabilities, adxl_transfer,
# adxl_prefill_decode, the vendor-style server/client sample), HCCL's multi-process ranks and a
# short ascendless-bench run with ASCENDLESS_TRANSPORT=ucx, once over UCX's TCP transport and once over its shared-memory
# transports. There is no RDMA hardware here, so UCX's verbs transports are not exercised.
# Any non-zero exit fails; every run is bounded by `timeout` and prints its duration.
# Needs UCX (Debian: libucx-dev); `make test-ucx` skips this script without it.
# Usage: run.sh VERSION   (CARGO and CARGO_TARGET_DIR are honoured as by the Makefile)
set -euo pipefail

version=$1
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname -- "$0")/../lib.sh"
# A target directory of its own: the default release build (used by test-install and
# test-sanitizers, maybe at the same time under make -j) must not be replaced by this one.
target=${CARGO_TARGET_DIR:-$here/target}/ucx
quiet() { "$@" >"$work/out.log" 2>&1 || { cat "$work/out.log" >&2; fail "$*"; }; }

pkg-config --exists ucx || fail "UCX is not installed (libucx-dev): pkg-config finds no ucx"

# Build with the feature and install, as `make install FEATURES=ucx` would.
(cd "$here" && quiet "${CARGO:-cargo}" build --release --lib --bin ascendless-bench --features ucx --target-dir "$target")
"$here/scripts/install.sh" "$prefix" "$prefix" "$target/release" "$version" >/dev/null
ok "built with --features ucx and installed (UCX $(pkg-config --modversion ucx))"

# shellcheck source=/dev/null
source "$prefix/set_env.sh"
export ASCENDLESS_TRANSPORT=ucx
# The library's own log lines are not what is checked here.
export ASCEND_GLOBAL_LOG_LEVEL=4

quiet cmake -S "$here/examples-c" -B "$work/examples" -DCMAKE_BUILD_TYPE=Debug
quiet cmake --build "$work/examples" -j 2
quiet cmake -S "$here/examples-c/vendor-style" -B "$work/sample" -DCMAKE_BUILD_TYPE=Debug
quiet cmake --build "$work/sample" -j 2
c++ -std=c++17 -Wall -Wextra -Werror -I"$prefix/include" -o "$work/llm_datadist_pair" \
    "$here/tests/c/llm_datadist_pair.cpp" -L"$prefix/lib64" -lllm_datadist -lgraph -lascendcl -Wl,-rpath,"$prefix/lib64" ||
    fail "tests/c/llm_datadist_pair.cpp does not build against the install"
ok "examples-c, the vendor-style sample and the LLM-DataDist pair build against the install"

# run LABEL CMD...: CMD under `timeout 120` with its output kept in out.log; one line with the
# duration, or the output and a failure.
run() {
    local label=$1 start ms status=0
    shift
    start=$(date +%s%N)
    timeout 120 "$@" >"$work/out.log" 2>&1 || status=$?
    ms=$((($(date +%s%N) - start) / 1000000))
    if [ "$status" -ne 0 ]; then
        cat "$work/out.log" >&2
        [ "$status" -eq 124 ] && fail "UCX_TLS=$UCX_TLS $label: timed out after 120 s"
        fail "UCX_TLS=$UCX_TLS $label: exit status $status"
    fi
    printf 'ok - UCX_TLS=%s %s (%d.%03d s)\n' "$UCX_TLS" "$label" $((ms / 1000)) $((ms % 1000))
    pass=$((pass + 1))
}

# UCX 1.13 transport names (`ucx_info -d` lists those this machine has; `ucx_info -c -f` the
# aliases): `tcp` alone, then `sm` (all shared-memory transports: posix, sysv, cma, knem, xpmem
# as present) with `self` (a worker talking to itself).
# UCX's TCP stays on loopback (UCX_NET_DEVICES=lo): the tests use no other address.
for tls in tcp sm,self; do
    export UCX_TLS=$tls
    if [ "$tls" = tcp ]; then export UCX_NET_DEVICES=lo; else unset UCX_NET_DEVICES; fi
    run adxl_capabilities "$work/examples/adxl_capabilities"
    run adxl_transfer "$work/examples/adxl_transfer"
    run adxl_prefill_decode "$work/examples/adxl_prefill_decode"
    run "vendor-style sample" "$here/examples-c/vendor-style/run.sh" "$work/sample" "$(free_port)"
    grep -q "client: READ .* verified" "$work/out.log" || fail "UCX_TLS=$tls: the ADXL sample did not verify its data"
    run "LLM-DataDist pair (prompt and decoder processes)" "$work/llm_datadist_pair" "$(free_port)"
    # The examples pass over TCP too when a call cannot take UCX; the benchmark's counters show
    # that its bytes really went through UCX.
    run "ascendless-bench adxl" ascendless-bench adxl --transport ucx --block 64K --duration 0.2 --json
    grep -q 'ASCENDLESS_TRANSPORT=ucx' "$work/out.log" || fail "UCX_TLS=$tls: the benchmark ran another transport"
    if grep -q 'UCX 0 B' "$work/out.log"; then fail "UCX_TLS=$tls: the benchmark moved no bytes through UCX"; fi
    # HCCL's ranks reach each other through their engines, so over UCX too: 2, 4 and 8 ranks,
    # every collective and point-to-point call, and the faults.
    run "HCCL ranks (tests/install/hccl_ranks)" "$here/tests/install/hccl_ranks/run.sh" "$prefix" one-host
done
unset UCX_TLS UCX_NET_DEVICES
echo "$pass passed, 0 failed"

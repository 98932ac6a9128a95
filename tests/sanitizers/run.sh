#!/usr/bin/env bash
# shellcheck disable=SC1007 # `CDPATH= cd` clears CDPATH for that one command
# Runs every C and C++ example (examples-c/, its IPC pair through run_ipc.sh, the vendor-style
# ADXL sample through its run.sh) and the C++ programs other tests run (tests/c/cxx_api.cpp,
# tests/c/adxl_peer.cpp, tests/install/cxx_preload_app.cpp), built against an installed package
# as a user would, twice:
#   asan      compiled with AddressSanitizer + UndefinedBehaviorSanitizer, LeakSanitizer on;
#   valgrind  compiled plainly (-O0 -g) and run under valgrind memcheck.
# Any report fails the run. Only the programs are instrumented, not the library; but both tools
# replace malloc for the whole process, so a leak or a bad heap access inside the library shows
# up as well. Reports are also collected from log files, so one from a forked child or a second
# process counts even when its exit status is lost.
# Usage: run.sh BUILD_DIR VERSION [asan|valgrind ...]   (default: both)
set -euo pipefail

build=$(CDPATH= cd -- "$1" >/dev/null && pwd) version=$2
shift 2
modes=("$@")
[ ${#modes[@]} -gt 0 ] || modes=(asan valgrind)
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname -- "$0")/../lib.sh"
supp=$here/tests/sanitizers
# quiet CMD...: runs CMD; if it fails, shows its output and any sanitizer or valgrind report.
quiet() {
    "$@" >"$work/out.log" 2>&1 && return
    cat "$work/out.log" "$work"/*/logs/* >&2 2>/dev/null || true
    fail "$*"
}

"$here/scripts/install.sh" "$prefix" "$prefix" "$build" "$version" >/dev/null
# shellcheck source=/dev/null
source "$prefix/set_env.sh"
# The library's own log lines are not what is checked here.
export ASCEND_GLOBAL_LOG_LEVEL=4

# build MODE CFLAGS LDFLAGS: every program, into $work/MODE/real; then $work/MODE/bin holds one
# wrapper per program that runs it the MODE's way, so the example run scripts need no change.
build() {
    local mode=$1 flags=$2 ldflags=$3 real=$work/$1/real
    mkdir -p "$real" "$work/$mode/bin" "$work/$mode/logs"
    quiet cmake -S "$here/examples-c" -B "$work/$mode/examples" -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$ldflags"
    quiet cmake --build "$work/$mode/examples" -j 2
    quiet cmake -S "$here/examples-c/vendor-style" -B "$work/$mode/sample" -DCMAKE_BUILD_TYPE=Debug \
        -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$ldflags"
    quiet cmake --build "$work/$mode/sample" -j 2
    for app in acl_init adxl_capabilities adxl_transfer adxl_prefill_decode runtime_copy ipc_owner ipc_peer; do
        cp "$work/$mode/examples/$app" "$real/"
    done
    cp "$work/$mode/sample/adxl_server" "$work/$mode/sample/adxl_client" "$real/"
    # The C++ programs other tests run; the LD_PRELOAD test's program with the vendor's old
    # string ABI and library name, as it is built there.
    for src in tests/c/cxx_api.cpp tests/c/adxl_peer.cpp tests/install/cxx_preload_app.cpp; do
        local prog=${src##*/} abi=() lib=-lascendless
        prog=${prog%.cpp}
        [ "$prog" = cxx_preload_app ] && abi=(-D_GLIBCXX_USE_CXX11_ABI=0) lib=-lllm_datadist
        # shellcheck disable=SC2086 # the flags are words
        quiet c++ -std=c++17 -g -Wall -Wextra -Werror $flags "${abi[@]}" -I"$prefix/include" -o "$real/$prog" \
            "$here/$src" $ldflags -L"$prefix/lib64" "$lib"
    done
    local runner
    case $mode in
        asan) runner= ;;
        valgrind)
            # valgrind runs one thread at a time; by default the thread that gives up its lock may
            # take it straight back, so a thread polling in a loop (adxl_prefill_decode's
            # GetTransferStatus) can starve the worker it waits for: the same run took 1.5 s or
            # 13 s. --fair-sched=yes hands the lock round in turn (1.2 to 1.7 s).
            runner="valgrind --tool=memcheck --fair-sched=yes --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite"
            runner+=" --suppressions=$supp/valgrind.supp --log-file=$work/$mode/logs/vg.%p"
            ;;
    esac
    for prog in "$real"/*; do
        printf '#!/bin/sh\nexec %s "%s" "$@"\n' "$runner" "$prog" >"$work/$mode/bin/${prog##*/}"
        chmod +x "$work/$mode/bin/${prog##*/}"
    done
}

# reports MODE: fails if any process of the run wrote a report.
reports() {
    local mode=$1 logs=$work/$1/logs bad=()
    case $mode in
        asan) mapfile -t bad < <(find "$logs" -type f) ;;
        valgrind) mapfile -t bad < <(grep -L 'ERROR SUMMARY: 0 errors' "$logs"/vg.* 2>/dev/null) ;;
    esac
    if [ ${#bad[@]} -gt 0 ]; then
        cat "${bad[@]}" >&2
        fail "$mode: ${#bad[@]} report(s)"
    fi
}

# Time limits, by what is run: at least three times what it takes under valgrind on a 2-core
# machine whose cores are both busy with other work (measured: one program under 7 s, a script
# running two or four processes under 13 s; docs/testing.md). Each run prints its time against
# its limit. ASCENDLESS_TEST_TIME_SCALE (a whole number) multiplies them, for slower machines.
TIME_SCALE=${ASCENDLESS_TEST_TIME_SCALE:-1}
case $TIME_SCALE in '' | *[!0-9]* | 0) fail "ASCENDLESS_TEST_TIME_SCALE must be a whole number > 0" ;; esac
ONE=$((60 * TIME_SCALE))  # one program (which may fork a second)
PAIR=$((90 * TIME_SCALE)) # a script running two or four processes

# timed LIMIT NAME CMD...: runs CMD as quiet does, killed after LIMIT seconds, and prints how long
# it took against its limit, so a shrinking margin shows in the log well before it fails.
timed() {
    local limit=$1 name=$2 t0 took
    shift 2
    t0=$EPOCHREALTIME
    quiet timeout "$limit" "$@"
    took=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
    echo "# $mode: $name took $took s (limit $limit s)"
}

# run_all MODE: every program, each the way the other tests run it.
run_all() {
    local mode=$1 bin=$work/$1/bin blocks=64
    # The KV hand-off's batch: under valgrind fewer blocks, the same flow (all requests in flight,
    # the notify after the data, every byte checked).
    [ "$mode" = valgrind ] && blocks=16
    timed $ONE acl_init "$bin/acl_init"
    timed $ONE adxl_capabilities "$bin/adxl_capabilities"
    timed $ONE runtime_copy "$bin/runtime_copy"
    ASCENDLESS_STRICT_DEVICE_MEMORY=1 timed $ONE "runtime_copy (strict)" "$bin/runtime_copy"
    timed $ONE adxl_transfer "$bin/adxl_transfer"
    ASCENDLESS_STRICT_DEVICE_MEMORY=1 timed $ONE "adxl_transfer (strict)" "$bin/adxl_transfer"
    timed $ONE adxl_prefill_decode "$bin/adxl_prefill_decode" "$blocks"
    ASCENDLESS_TRANSPORT=tcp timed $ONE "adxl_prefill_decode (tcp)" "$bin/adxl_prefill_decode" "$blocks"
    timed $PAIR run_ipc.sh "$here/examples-c/run_ipc.sh" "$bin"
    timed $PAIR vendor-style/run.sh "$here/examples-c/vendor-style/run.sh" "$bin" "$(free_port)"
    grep -q "client: READ .* verified" "$work/out.log" || fail "$mode: the ADXL sample did not verify its data"
    timed $ONE cxx_api "$bin/cxx_api" "$(free_port)"
    grep -q "0 failures" "$work/out.log" || fail "$mode: cxx_api: $(cat "$work/out.log")"
    timed $ONE cxx_preload_app "$bin/cxx_preload_app" "$(free_port)"
    grep -q 'READ and WRITE of .* bytes verified' "$work/out.log" || fail "$mode: cxx_preload_app: $(cat "$work/out.log")"
    local t0=$EPOCHREALTIME
    peer_pair "$bin"
    echo "# $mode: adxl_peer server and client took $(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }') s (limit $PAIR s)"
    reports "$mode"
}

# line_of FILE N: waits (up to $PAIR seconds) until FILE has N lines and prints line N.
line_of() {
    for _ in $(seq $((PAIR * 10))); do
        [ "$(wc -l <"$1")" -ge "$2" ] && { sed -n "$2p" "$1"; return; }
        sleep 0.1
    done
    fail "no line $2 in $1: $(cat "$1")"
}

# peer_pair BIN: tests/c/adxl_peer.cpp as a server and a client process; the server's commands
# come through a FIFO held open on fd 7 until the end.
peer_pair() {
    local bin=$1 port size=$((1 << 20)) addr pid out=$work/peer.out
    port=$(free_port)
    rm -f "$work/peer.in" && mkfifo "$work/peer.in"
    timeout $PAIR "$bin/adxl_peer" server "127.0.0.1:$port" "$size" <"$work/peer.in" >"$out" 2>&1 &
    pid=$!
    exec 7>"$work/peer.in"
    addr=$(line_of "$out" 1)
    [[ $addr == ready* ]] || fail "adxl_peer server: $addr"
    quiet timeout $PAIR "$bin/adxl_peer" client 127.0.0.1 "127.0.0.1:$port" "${addr#ready }" "$size"
    echo "check 2" >&7
    [ "$(line_of "$out" 2)" = ok ] || fail "adxl_peer server sees: $(cat "$out")"
    exec 7>&-
    wait "$pid" || fail "adxl_peer server exited with $?: $(cat "$out")"
}

for mode in "${modes[@]}"; do
    start=$SECONDS
    case $mode in
        asan)
            flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
            build asan "$flags" "-fsanitize=address,undefined"
            export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:abort_on_error=0:log_path=$work/asan/logs/asan"
            export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
            export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$work/asan/logs/ubsan"
            run_all asan
            unset ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS
            ok "examples and C++ test programs run clean under ASan+UBSan+LSan ($((SECONDS - start)) s)"
            ;;
        valgrind)
            command -v valgrind >/dev/null || fail "valgrind is not installed"
            build valgrind "-O0 -g" ""
            run_all valgrind
            ok "examples and C++ test programs run clean under valgrind memcheck ($((SECONDS - start)) s)"
            ;;
        *) fail "unknown mode $mode" ;;
    esac
done
echo "$pass passed, 0 failed"

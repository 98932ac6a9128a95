#!/usr/bin/env bash
# Two HCCL ranks in two processes against an installed tree: tests/install/hccl_style/run.sh
# <prefix>. In a clean environment where only <prefix>/set_env.sh was sourced, the project
# builds (vendor link line and find_package), each program runs its pair of ranks and checks
# every byte, and records only the vendor's library names.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 <install prefix>" >&2; exit 2; }
prefix=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/hccl_style.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
    echo "hccl_style: FAIL: $*" >&2
    exit 1
}

cp "$here"/CMakeLists.txt "$here"/*.c "$work/"
out=$(env -i HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin LANG=C timeout 600 bash -c '
    set -euo pipefail
    source "$1/set_env.sh"
    cd "$2"
    cmake -B build -DCMAKE_PREFIX_PATH="$1" >/dev/null
    cmake --build build -j >/dev/null
    for exe in hccl_pair hccl_pair_package; do
        status=0
        ASCEND_GLOBAL_LOG_LEVEL=3 timeout 120 ./build/$exe || status=$?
        [ "$status" != 124 ] || echo "$exe did not finish in 120 s"
        [ "$status" = 0 ] || exit "$status"
    done' _ "$prefix" "$work" 2>&1) || fail "$out"
[ "$(grep -cxF "[SUCCESS] two HCCL ranks: all-reduce, broadcast, send/recv, barrier" <<<"$out")" = 2 ] ||
    fail "not both programs succeeded:"$'\n'"$out"
needed=$(readelf -d "$work/build/hccl_pair" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case " $needed " in *" libhccl.so "*) ;; *) fail "hccl_pair does not record libhccl.so: $needed" ;; esac
case " $needed " in *libascendless*) fail "hccl_pair records ascendless's own library: $needed" ;; esac
echo "hccl_style: ok: two ranks in two processes (all-reduce, broadcast, send/recv), vendor link line and Ascendless::hccl"

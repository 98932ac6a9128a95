#!/usr/bin/env bash
# The vendor's profiling and dump samples (hicann/runtime example/5_performance), in our own
# words, against an installed tree: tests/install/profiling_style/run.sh <prefix>.
# In a clean environment where only <prefix>/set_env.sh was sourced: the project builds with the
# samples' include directories and link line (libmsprofiler.so, libascendcl.so, libprofapi.so,
# libc_sec.so; libascend_dump.so), runs, and leaves its data where aclprofInit said.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 <install prefix>" >&2; exit 2; }
prefix=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/profiling_style.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
    echo "profiling_style: FAIL: $*" >&2
    exit 1
}

cp "$here"/CMakeLists.txt "$here"/*.cpp "$here"/*.json "$work/"
out=$(env -i HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin LANG=C timeout 600 bash -c '
    set -euo pipefail
    source "$1/set_env.sh"
    source "$ASCEND_HOME_PATH/bin/setenv.bash"
    cd "$2"
    cmake -B build -DASCEND_CANN_PACKAGE_PATH="$ASCEND_HOME_PATH" >/dev/null
    cmake --build build -j >/dev/null
    ./build/prof_main
    ./build/dump_main' _ "$prefix" "$work" 2>&1) || fail "$out"
grep -qxF "[SUCCESS] profiling-style sample ran." <<<"$out" || fail "no profiling success line:"$'\n'"$out"
grep -qxF "[SUCCESS] dump-style sample ran." <<<"$out" || fail "no dump success line:"$'\n'"$out"
prof=$(find "$work/output" -maxdepth 1 -name 'PROF_*' | head -1)
[ -n "$prof" ] || fail "no PROF_* directory under the result path"
grep -q '"message":"model_load_mark"' "$prof/host/msproftx.jsonl" || fail "the mark is not in $prof/host/msproftx.jsonl"
grep -q '"tag":"end"' "$prof/host/step_trace.jsonl" || fail "the step's end is not recorded"
[ -s "$prof/device_0/task_time.jsonl" ] || fail "no task times of device 0"
ls "$work"/exc/extra-info/data-dump/0/save_exception_info.custom.* >/dev/null || fail "no saved exception info"
echo "profiling_style: ok: the samples' link line and calls; session data, subscription records, dump paths"

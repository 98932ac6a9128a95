#!/usr/bin/env bash
# shellcheck disable=SC1007 # `CDPATH= cd` clears CDPATH for that one command
# Runs every cargo-fuzz target of fuzz/ for SECONDS seconds each (argument, default 10) under
# libFuzzer with AddressSanitizer, debug assertions and a per-allocation limit, starting from
# the checked-in seed corpus. New inputs go to build/fuzz/corpus/ (kept between local runs),
# never into fuzz/corpus/; a failing input is left in build/fuzz/artifacts/<target>/.
# Installs nightly and cargo-fuzz when missing; without them it prints SKIPPED and succeeds.
set -euo pipefail

seconds=${1:-10}
here=$(CDPATH= cd -- "$(dirname -- "$0")/.." >/dev/null && pwd)
cd "$here"
# shellcheck source=scripts/nightly.sh
source scripts/nightly.sh

need_nightly fuzz
if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz"
    timeout 1800 cargo install cargo-fuzz --locked >/dev/null 2>&1 || skip fuzz "cargo install cargo-fuzz failed"
fi

# The fuzz build has other flags than the main one: a folder of its own beside it.
target_dir=$(realpath -m "${CARGO_TARGET_DIR:-target}")/fuzz
fuzz=(cargo +nightly fuzz)
opts=(--debug-assertions --target-dir "$target_dir")
mkdir -p build/fuzz
if ! "${fuzz[@]}" build "${opts[@]}" >build/fuzz/build.log 2>&1; then
    echo "fuzz: the fuzz targets do not build:"
    tail -n 40 build/fuzz/build.log
    exit 1
fi

failed=0
targets=$("${fuzz[@]}" list)
for t in $targets; do
    work=build/fuzz/corpus/$t
    artifacts=build/fuzz/artifacts/$t/
    log=build/fuzz/$t.log
    mkdir -p "$work" "$artifacts"
    # -malloc_limit_mb: any single allocation above it is a failure ("no unbounded allocation");
    # -timeout: an input that takes longer is a hang.
    if "${fuzz[@]}" run "${opts[@]}" "$t" "$work" "fuzz/corpus/$t" -- \
        -max_total_time="$seconds" -timeout=10 -rss_limit_mb=1024 -malloc_limit_mb=32 \
        -artifact_prefix="$artifacts" -print_final_stats=1 >"$log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        echo "fuzz $t: ${runs:-?} runs in ${seconds} s, no failure"
    else
        failed=$((failed + 1))
        echo "fuzz $t: FAILED; the input is in $artifacts, the log in $log:"
        grep -v -e '^#[0-9]' "$log" | tail -n 40
    fi
done
count=$(wc -w <<<"$targets")
echo "fuzz: $((count - failed)) passed, $failed failed"
[ "$failed" -eq 0 ]

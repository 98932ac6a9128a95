#!/usr/bin/env bash
# Sourced by scripts/fuzz.sh and scripts/miri.sh: `need_nightly WHAT COMPONENT...` makes sure
# the nightly toolchain (with the given rustup components) is there, installing it when
# missing; when it cannot be had it prints a SKIPPED line for WHAT and exits 0, since the
# stable tests still run. Downloads are bounded in time (a machine without the network fails).

skip() {
    echo "SKIPPED $1: $2"
    exit 0
}

need_nightly() {
    local what=$1
    shift
    if ! cargo +nightly --version >/dev/null 2>&1; then
        echo "$what: installing the nightly toolchain"
        timeout 900 rustup toolchain install nightly --profile minimal >/dev/null 2>&1 ||
            skip "$what" "no nightly Rust toolchain and rustup could not install one"
    fi
    if [ $# -gt 0 ]; then
        timeout 600 rustup component add --toolchain nightly "$@" >/dev/null 2>&1 ||
            skip "$what" "rustup could not add $* to the nightly toolchain"
    fi
}

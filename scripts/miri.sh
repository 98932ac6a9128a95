#!/usr/bin/env bash
# shellcheck disable=SC1007 # `CDPATH= cd` clears CDPATH for that one command
# Runs the library's unit tests of pure Rust logic under Miri (undefined behaviour, out-of-
# bounds and uninitialised reads, leaks): the parsers of untrusted input, the error tables and
# messages, the handle tables, the bookkeeping of exports, registrations and transfers, and the
# span copies of src/sys/ (unsafe code on plain memory). Tests that need system calls Miri
# cannot make (sockets, memfd, mmap, futex) are left out by these filters.
# Installs nightly with miri when missing; without it prints SKIPPED and succeeds.
set -euo pipefail

here=$(CDPATH= cd -- "$(dirname -- "$0")/.." >/dev/null && pwd)
cd "$here"
# shellcheck source=scripts/nightly.sh
source scripts/nightly.sh

need_nightly miri miri rust-src

filters=(
    engine::wire:: engine::name:: engine::options:: engine::capability::
    ipc::key:: ipc::wire::
    error:: handle:: config:: logging:: fuzz_targets:: ffi::ptr::
    runtime::memory::policy:: runtime::reduce:: profile:: runtime::init::
    sys::span::
)
# Left out though pure, for taking minutes each under Miri: a warning logged (env_logger's
# formatting, interpreted step by step) and every cut of every frame (the fuzz_targets test
# samples those). Not selected at all: the notify queue's test (thousands of notifies) and the
# tests that need memfd, sockets or /proc.
skips=(
    config::tests::the_transport_is_auto_or_tcp config::tests::values_are_read_and_bad_ones_fall_back
    engine::wire::tests::truncated_frames_are_refused
    # Files on disk (LocalCommRes' file rules): isolated Miri has no file system.
    engine::options::local_comm_res::tests::files_are_regular_small_and_not_links
    engine::options::tests::local_comm_res_path_is_read_unless_the_option_is_given
    engine::options::tests::the_options_page_lists_every_key_and_entry
)
args=("${filters[@]}")
for s in "${skips[@]}"; do
    args+=(--skip "$s")
done
cargo +nightly miri test --lib -- "${args[@]}"

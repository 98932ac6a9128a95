#!/usr/bin/env bash
# The vendor's TDT samples (hicann/runtime example/2_advanced_features/tdt_channel, tdt_queue),
# in our own words, against an installed tree: tests/install/tdt_samples/run.sh <prefix>.
#
# The project (project/) builds as those samples do (their CMake link line: the family's vendor
# library by full path, then libascendcl.so; C++17, old string ABI, -Wall -Werror) and runs their
# call sequence, with its run.sh, in a clean shell where only <prefix>/set_env.sh was sourced.
# Checked: both programs print their success line, and each records the vendor library of its
# family (libacl_tdt_channel.so, libacl_tdt_queue.so) and libascendcl.so, not libascendless.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 <install prefix>" >&2; exit 2; }
prefix=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/tdt_samples.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
    echo "tdt_samples: FAIL: $*" >&2
    exit 1
}
ok() { echo "tdt_samples: ok: $*"; }

cp -R "$here/project" "$work/"
out=$(env -i HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin LANG=C \
    timeout 600 bash -c 'source "$1/set_env.sh" && bash "$2"' _ "$prefix" "$work/project/run.sh" 2>&1) ||
    fail "the project did not build and run:"$'\n'"$out"
for line in "[SUCCESS] samples-style tdt channel ran." "[SUCCESS] samples-style tdt queue ran."; do
    grep -qxF "$line" <<<"$out" || fail "no line '$line':"$'\n'"$out"
done
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
for pair in tdt_channel:libacl_tdt_channel.so tdt_queue:libacl_tdt_queue.so; do
    exe=$work/project/build/${pair%%:*} lib=${pair#*:}
    n=" $(needed "$exe")"
    case "$n" in *" $lib "*) ;; *) fail "${pair%%:*} does not record $lib: $n" ;; esac
    case "$n" in *" libascendcl.so "*) ;; *) fail "${pair%%:*} does not record libascendcl.so: $n" ;; esac
    case "$n" in *libascendless*) fail "${pair%%:*} records libascendless: $n" ;; esac
done
ok "TDT channel and queue samples' style (libacl_tdt_channel.so / libacl_tdt_queue.so + libascendcl.so, -Wall -Werror): build, run, record only vendor names"

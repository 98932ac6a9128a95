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

# shellcheck source=examples-c/free_port.sh
source "$here/examples-c/free_port.sh"

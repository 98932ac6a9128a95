#!/usr/bin/env bash
# What `make test` needs from the system, listed once: `make test` runs this first, .ci/run runs
# it with --install. Usage: prereqs.sh [--install] [--ci]
#   (no option)  exits 0 when everything is there; otherwise prints one line naming the missing
#                Debian packages and the command that installs them, and exits 1
#   --install    installs the missing packages with apt-get instead (as root), as CI does
#   --ci         also wants what CI runs with beyond `make test`'s needs: libucx-dev, so that
#                `make test-ucx` runs instead of printing SKIPPED
set -euo pipefail

install=0 ci=0
for arg in "$@"; do
    case $arg in
        --install) install=1 ;;
        --ci) ci=1 ;;
        *)
            echo "usage: $0 [--install] [--ci]" >&2
            exit 2
            ;;
    esac
done

# need COMMAND PACKAGE: PACKAGE (Debian's name) provides COMMAND.
missing=()
need() {
    command -v "$1" >/dev/null 2>&1 && return
    case " ${missing[*]-} " in *" $2 "*) ;; *) missing+=("$2") ;; esac
}
need cmake cmake           # the C/C++ examples and programs are CMake projects
need pkg-config pkg-config # the install checks build with pkg-config
need valgrind valgrind     # make test-sanitizers runs every C/C++ program under memcheck
need cc gcc                # C, with AddressSanitizer and UBSan (gcc brings libasan, libubsan)
need c++ g++               # the C++ ADXL API and its programs
need readelf binutils      # the install checks read the library's soname and symbols
need nm binutils
need c++filt binutils
# The Python tests make a virtualenv (`python3 -m venv`, which needs ensurepip).
if ! command -v python3 >/dev/null 2>&1; then
    need python3 python3
    need python3 python3-venv
elif ! python3 -c 'import ensurepip, venv' >/dev/null 2>&1; then
    missing+=(python3-venv)
fi
if [ "$ci" = 1 ] && ! pkg-config --exists ucx 2>/dev/null; then
    missing+=(libucx-dev)
fi
rust=0
command -v cargo >/dev/null 2>&1 || rust=1

if [ ${#missing[@]} -eq 0 ] && [ "$rust" = 0 ]; then
    exit 0
fi
if [ "$install" = 1 ] && [ ${#missing[@]} -gt 0 ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${missing[@]}" >/dev/null
    [ "$rust" = 0 ] && exit 0
    missing=()
fi

# One line: what is missing and how to get it.
needs=() how=()
if [ ${#missing[@]} -gt 0 ]; then
    needs+=("${missing[@]}")
    sudo=
    [ "$(id -u)" = 0 ] || sudo="sudo "
    how+=("install them with: ${sudo}apt-get install ${missing[*]} (or run .ci/run as root: it installs them, then runs make test)")
fi
if [ "$rust" = 1 ]; then
    needs+=(cargo)
    how+=("install Rust (cargo) from https://rustup.rs")
fi
joined=$(printf '%s; ' "${how[@]}")
echo "make test needs: ${needs[*]} — ${joined%; }" >&2
exit 1

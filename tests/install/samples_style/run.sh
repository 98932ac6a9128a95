#!/usr/bin/env bash
# The vendor's runtime samples' scripts (hicann/runtime example/), in our own words, against an
# installed tree: tests/install/samples_style/run.sh <prefix>.
#
# Each sample-shaped project runs in a clean environment where only <prefix>/set_env.sh was
# sourced (as a new user does), with its own run.sh: `set -euo pipefail`, bin/setenv.bash found
# through ASCEND_HOME_PATH or ASCEND_INSTALL_PATH, SOC_VERSION read and passed to the build, the
# toolkit passed to CMake as ASCEND_CANN_PACKAGE_PATH. Checked: the host project builds and
# runs, and the SoC it was configured for is the one aclrtGetSocName reports (for several
# ASCENDLESS_SOC values, a bad one included); sourcing set_env.sh or bin/setenv.bash again
# changes nothing; a project that compiles an Ascend C kernel stops at configure with the
# reason. Nothing here uses the network; every step has a time limit.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 <install prefix>" >&2; exit 2; }
prefix=$(cd "$1" && pwd)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/samples_style.XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
    echo "samples_style: FAIL: $*" >&2
    exit 1
}
ok() { echo "samples_style: ok: $*"; }

cp -R "$here/host_sample" "$here/kernel_sample" "$work/"

# A clean shell of a new user: no toolkit variables at all, then `source set_env.sh` and one of
# the samples' scripts (extra NAME=value arguments go into the environment).
in_clean_shell() {
    local script=$1
    shift
    env -i HOME="$work" PATH=/usr/local/bin:/usr/bin:/bin LANG=C "$@" \
        timeout 600 bash -c 'source "$1/set_env.sh" && bash "$2"' _ "$prefix" "$script"
}

# 1. The ASCEND_HOME_PATH style, with the default SoC and ones ASCENDLESS_SOC picks. A name
#    ascendless does not know gives its default, as aclrtGetSocName does.
for soc in "" Ascend910_9391 " Ascend950PR_9579 " Ascend310P3 NoSuchSoc; do
    case "$soc" in
        "" | NoSuchSoc) want=Ascend910B1 ;;
        *) want=$(printf %s "$soc" | tr -d ' ') ;;
    esac
    out=$(in_clean_shell "$work/host_sample/run.sh" ${soc:+ASCENDLESS_SOC="$soc"} 2>&1) ||
        fail "host sample (ASCENDLESS_SOC='$soc'):"$'\n'"$out"
    grep -qxF "[INFO]: Current compile soc version is $want" <<<"$out" ||
        fail "SOC_VERSION for ASCENDLESS_SOC='$soc' is not $want:"$'\n'"$out"
    grep -qF "aclrtGetSocName: $want; SOC_VERSION at build: $want, at run: $want" <<<"$out" ||
        fail "aclrtGetSocName and SOC_VERSION differ for ASCENDLESS_SOC='$soc':"$'\n'"$out"
    grep -qxF "[SUCCESS] samples-style host probe ran." <<<"$out" || fail "no success line:"$'\n'"$out"
done
ok "ASCEND_HOME_PATH/bin/setenv.bash style under set -euo pipefail: builds, runs; SOC_VERSION = aclrtGetSocName (5 SoC settings)"

# 2. The ASCEND_INSTALL_PATH style (read under set -u, passed to CMake unquoted).
out=$(in_clean_shell "$work/host_sample/run_install_path.sh" 2>&1) || fail "ASCEND_INSTALL_PATH style:"$'\n'"$out"
grep -qxF "[SUCCESS] samples-style host probe ran." <<<"$out" || fail "no success line:"$'\n'"$out"
ok "ASCEND_INSTALL_PATH/bin/setenv.bash style: set_env.sh exports ASCEND_INSTALL_PATH; builds, installs, runs"

# 3. Sourcing again changes nothing: set_env.sh twice, then bin/setenv.bash, all under
#    set -euo pipefail, give the environment of one set_env.sh.
envs=$(env -i HOME="$work" PATH=/usr/bin:/bin LANG=C timeout 60 bash -c '
    set -euo pipefail
    source "$1/set_env.sh"; env | sort >"$2/once"
    source "$1/set_env.sh"; source "$1/bin/setenv.bash"; env | sort >"$2/again"
    for v in ASCEND_HOME_PATH ASCEND_TOOLKIT_HOME ASCEND_INSTALL_PATH ASCEND_AICPU_PATH SOC_VERSION ASCENDC_CMAKE_DIR; do
        printf "%s=%s\n" "$v" "${!v}"
    done' _ "$prefix" "$work" 2>&1) || fail "sourcing under set -euo pipefail: $envs"
diff "$work/once" "$work/again" >/dev/null || fail "sourcing again changed the environment:"$'\n'"$(diff "$work/once" "$work/again")"
for v in ASCEND_HOME_PATH ASCEND_TOOLKIT_HOME ASCEND_INSTALL_PATH ASCEND_AICPU_PATH; do
    grep -qxF "$v=$prefix" <<<"$envs" || fail "$v is not $prefix:"$'\n'"$envs"
done
grep -qxF "SOC_VERSION=Ascend910B1" <<<"$envs" || fail "default SOC_VERSION:"$'\n'"$envs"
[ -f "$(sed -n 's/^ASCENDC_CMAKE_DIR=//p' <<<"$envs")/ascendc.cmake" ] || fail "ASCENDC_CMAKE_DIR has no ascendc.cmake:"$'\n'"$envs"
ok "set_env.sh twice and bin/setenv.bash after it change nothing; the toolkit variables name the prefix"

# 4. A kernel sample stops at configure, saying why, and builds nothing.
if out=$(in_clean_shell "$work/kernel_sample/run.sh" 2>&1); then
    fail "the kernel sample's run.sh succeeded:"$'\n'"$out"
fi
grep -qF "compiles Ascend C device kernels" <<<"$out" || fail "the kernel sample failed without the reason:"$'\n'"$out"
grep -qF "Configuring incomplete" <<<"$out" || fail "the kernel sample did not stop at configure:"$'\n'"$out"
[ ! -e "$work/kernel_sample/build/main" ] || fail "the kernel sample built a program"
ok "a sample compiling an Ascend C kernel stops at configure with the reason"

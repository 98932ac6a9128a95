#!/usr/bin/env bash
# shellcheck disable=SC1007 # `CDPATH= cd` clears CDPATH for that one command
# Lays out a toolkit-shaped tree: install.sh DEST PREFIX BUILD_DIR VERSION
#   DEST      where files are written (DESTDIR + PREFIX)
#   PREFIX    the final, absolute location, recorded in set_env.sh as a fallback
#   BUILD_DIR cargo's output directory holding libascendless.so, libascendless.a and ascendless-bench
# Environment: FORCE=1 overwrites files in DEST that an earlier ascendless install did not write.
#
# DEST/share/ascendless/install-manifest.txt lists every file and symlink written and every
# directory this install created (those end in "/"), so `make uninstall` removes exactly that.
# A manifest left by an earlier install is uninstalled first, so no old version stays behind.
set -euo pipefail
shopt -u patsub_replacement 2>/dev/null || true # bash 5.2: keep "&" literal in ${x//a/b}

if [ $# -ne 4 ]; then
    echo "usage: $0 DEST PREFIX BUILD_DIR VERSION" >&2
    exit 2
fi
dest=$1 prefix=$2 build=$3 version=$4
here=$(CDPATH= cd -- "$(dirname -- "$0")/.." >/dev/null && pwd)
soname=libascendless.so.0
real=libascendless.so.$version
manifest_rel=share/ascendless/install-manifest.txt
manifest=$dest/$manifest_rel

die() { echo "install.sh: $*" >&2; exit 1; }
case $prefix in
    /*) ;;
    *) die "PREFIX must be an absolute path, not '$prefix'" ;;
esac
for f in libascendless.so libascendless.a ascendless-bench; do
    [ -f "$build/$f" ] || die "$build/$f not found: build it first (make build; CARGO_TARGET_DIR is honoured)"
done
# The vendor-named libraries (src/vendor_libs.txt): filters of the one library, each with the
# vendor's soname, built here from the library being installed so that they export its symbols.
vendor_libs=$(mktemp -d)
trap 'rm -rf -- "$vendor_libs"' EXIT
"$here/scripts/vendor_libs.sh" "$build/libascendless.so" "$vendor_libs" || die "could not build the vendor-named libraries"
mapfile -t vendor_names < <(CDPATH= cd -- "$vendor_libs" && find . -name '*.so' -printf '%P\n' | LC_ALL=C sort)
# Their CMake target names (lib<name>.so: name), for @VENDOR_LIBS@ in the CMake files.
vendor_targets=$(printf '%s\n' "${vendor_names[@]}" | sed 's/^lib//; s/\.so$//' | tr '\n' ' ')
vendor_targets=${vendor_targets% }

# The plan: every path to write (relative to DEST), in order, with how to make it.
paths=()
declare -A how from
plan() { paths+=("$2"); how[$2]=$1; from[$2]=$3; } # plan KIND REL SOURCE
plan file "lib64/$real" "$build/libascendless.so"
plan link "lib64/$soname" "$real"
plan link lib64/libascendless.so "$soname"
for name in "${vendor_names[@]}"; do plan file "lib64/$name" "$vendor_libs/$name"; done
plan file lib64/libascendless.a "$build/libascendless.a"
plan file bin/ascendless-bench "$build/ascendless-bench"
mapfile -t headers < <(find "$here/include" -type f -name '*.h' -printf '%P\n' | LC_ALL=C sort)
for h in "${headers[@]}"; do plan file "include/$h" "$here/include/$h"; done
plan subst lib64/cmake/Ascendless/AscendlessConfig.cmake "$here/cmake/AscendlessConfig.cmake.in"
plan subst lib64/cmake/Ascendless/AscendlessConfigVersion.cmake "$here/cmake/AscendlessConfigVersion.cmake.in"
plan subst lib64/cmake/Ascendless/AscendlessCannTargets.cmake "$here/cmake/AscendlessCannTargets.cmake"
plan subst share/cmake/Ascendless/AscendlessConfig.cmake "$here/cmake/forward-config.cmake.in"
plan subst share/cmake/Ascendless/AscendlessConfigVersion.cmake "$here/cmake/forward-config.cmake.in"
plan subst lib64/pkgconfig/ascendless.pc "$here/cmake/ascendless.pc.in"
plan subst lib64/pkgconfig/ascendless-native.pc "$here/cmake/ascendless-native.pc.in"
# The Python packages (python/acl, ...), where the vendor's toolkit keeps pyACL: set_env.sh puts
# python/site-packages on PYTHONPATH. Sources only: no bytecode, no bundled library copy.
for init in "$here"/python/*/__init__.py; do
    [ -f "$init" ] || continue
    pkg=${init%/__init__.py}
    pkg=${pkg##*/}
    mapfile -t pyfiles < <(CDPATH= cd -- "$here/python" && find "$pkg" \( -name __pycache__ -o -path "$pkg/lib" \) -prune -o \
        -type f \( -name '*.py' -o -name py.typed \) -print | LC_ALL=C sort)
    for f in "${pyfiles[@]}"; do plan file "python/site-packages/$f" "$here/python/$f"; done
done
plan subst set_env.sh "$here/cmake/set_env.sh.in"
# The vendor's toolkit also has <arch>-linux/include and <arch>-linux/lib64 (arch as `uname -m`
# says): builds such as Mooncake's and DLSlime's look there (ASCEND_HOME_PATH/<arch>-linux, or a
# glob of latest/*-linux). Links to the top-level directories, so there is one copy of each file.
arch_dir=$(uname -m)-linux
plan link "$arch_dir/include" ../include
plan link "$arch_dir/lib64" ../lib64
# What the vendor's runtime samples (hicann/runtime example/) look for: bin/setenv.bash (sources
# set_env.sh) and ascendc.cmake under tikcpp/ascendc_kernel_cmake, a stand-in that lets host-only
# projects configure and stops kernel builds with a clear error (cmake/ascendc.cmake). One copy,
# in tools/, linked from the other places the vendor's toolkits keep it.
plan subst bin/setenv.bash "$here/cmake/setenv.bash.in"
plan file tools/tikcpp/ascendc_kernel_cmake/ascendc.cmake "$here/cmake/ascendc.cmake"
plan link compiler/tikcpp ../tools/tikcpp
plan link "$arch_dir/tikcpp" ../tools/tikcpp
# At the vendor's default location the prefix is <toolkit>/latest, and users source
# <toolkit>/set_env.sh: that file too (last, so the prefix exists when it is written; the
# manifest lists it as ../set_env.sh, the one entry outside the prefix uninstall accepts).
if [ "${prefix##*/}" = latest ]; then
    plan subst ../set_env.sh "$here/cmake/toolkit-set_env.sh.in"
fi

# What an earlier install wrote (ours to replace) and the directories it created.
declare -A ours
old_dirs=()
if [ -f "$manifest" ]; then
    while IFS= read -r line; do
        case $line in
            '' | '#'*) ;;
            */) old_dirs+=("$line") ;;
            *) ours[$line]=1 ;;
        esac
    done <"$manifest"
fi

# Never silently replace someone else's file: a toolkit prefix may hold the vendor's libascendcl.so.
foreign=()
for p in "${paths[@]}"; do
    if { [ -e "$dest/$p" ] || [ -L "$dest/$p" ]; } && [ -z "${ours[$p]:-}" ]; then foreign+=("$p"); fi
done
if [ ${#foreign[@]} -gt 0 ] && [ "${FORCE:-}" != 1 ]; then
    {
        echo "install.sh: refusing to overwrite files in $dest that ascendless did not install:"
        printf '  %s\n' "${foreign[@]}"
        echo "They may belong to another toolkit (such as the vendor's libascendcl.so). Install into"
        echo "another PREFIX, or run again with FORCE=1 to overwrite them (uninstall then removes them)."
    } >&2
    exit 1
fi
if [ ${#foreign[@]} -gt 0 ]; then
    echo "install.sh: FORCE=1: overwriting $(printf '%s ' "${foreign[@]}")" >&2
fi

if [ -f "$manifest" ]; then
    "$here/scripts/uninstall.sh" "$dest" >/dev/null
fi
# Directories an earlier install created that still hold other files stay ours.
created=()
for d in "${old_dirs[@]}"; do
    if [ -d "$dest/${d%/}" ]; then created+=("$d"); fi
done

# From here on, the manifest is written even if the install fails half-way, so that
# `make uninstall` can still remove what was written.
written=()
finish() {
    local tmp
    ensure_dir share/ascendless
    tmp=$(mktemp)
    {
        echo "# ascendless $version: files and symlinks written, then directories created (ending in /)"
        printf '%s\n' "${written[@]}" "$manifest_rel"
        if [ ${#created[@]} -gt 0 ]; then printf '%s\n' "${created[@]}" | LC_ALL=C sort; fi
    } >"$tmp"
    install -m 644 -T "$tmp" "$manifest"
    rm -f -- "$tmp"
}
trap 'finish; rm -rf -- "$vendor_libs"' EXIT

ensure_dir() { # ensure_dir REL: makes DEST/REL, recording each directory it had to create
    local rel=$1 parent
    [ -d "$dest/$rel" ] && return 0
    if [ "$rel" = . ]; then
        mkdir -p -- "$dest"
        created+=("./")
        return 0
    fi
    parent=${rel%/*}
    [ "$parent" = "$rel" ] && parent=.
    ensure_dir "$parent"
    mkdir -- "$dest/$rel"
    created+=("$rel/")
}

# Fills the placeholders with bash expansion (no sed: a prefix may hold any character).
# @PREFIX_SH@ is PREFIX quoted as one shell word, @FILE@ the name of the file written.
prefix_sh=${prefix//"'"/"'\\''"}
prefix_sh="'$prefix_sh'"
render() { # render TEMPLATE REL DST
    local text=
    IFS= read -r -d '' text <"$1" || true
    text=${text//@VERSION@/"$version"}
    text=${text//@VENDOR_LIBS@/"$vendor_targets"}
    text=${text//@PREFIX_SH@/"$prefix_sh"}
    text=${text//@PREFIX@/"$prefix"}
    text=${text//@FILE@/"${2##*/}"}
    printf '%s' "$text" >"$3"
}

for p in "${paths[@]}"; do
    parent=${p%/*}
    [ "$parent" = "$p" ] && parent=.
    ensure_dir "$parent"
    target=$dest/$p
    rm -f -- "$target" # replace a symlink rather than write through it
    case ${how[$p]} in
        file)
            mode=644
            case $p in "lib64/$real" | lib64/*.so | bin/*) mode=755 ;; esac
            install -m "$mode" -T "${from[$p]}" "$target"
            ;;
        link) ln -sfnT "${from[$p]}" "$target" ;;
        subst) render "${from[$p]}" "$p" "$target" ;;
    esac
    written+=("$p")
done

trap - EXIT
finish
rm -rf -- "$vendor_libs"
echo "installed ascendless $version into $dest ($((${#written[@]} + 1)) files)"

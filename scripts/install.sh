#!/usr/bin/env bash
# Lays out a toolkit-shaped tree: install.sh DEST PREFIX BUILD_DIR VERSION
#   DEST      where files are written (DESTDIR + PREFIX)
#   PREFIX    the final location, recorded in set_env.sh as a fallback
#   BUILD_DIR cargo's output directory holding libascendless.so and libascendless.a
# Every file and symlink written is listed in DEST/share/ascendless/install-manifest.txt,
# which `make uninstall` reads to remove exactly what was installed.
set -euo pipefail

dest=$1 prefix=$2 build=$3 version=$4
here=$(cd "$(dirname "$0")/.." && pwd)
soname=libascendless.so.0
real=libascendless.so.$version
aliases=(libascendless.so libascendcl.so libacl_rt.so libllm_datadist.so libgraph.so libgraph_base.so libmetadef.so)

manifest_dir=$dest/share/ascendless
manifest=$manifest_dir/install-manifest.txt
mkdir -p "$manifest_dir"
: >"$manifest.new"
work_file=$(mktemp)
trap 'rm -f "$work_file"' EXIT
record() { printf '%s\n' "${1#"$dest"/}" >>"$manifest.new"; }

put() { # put SRC DST [MODE]
    mkdir -p "$(dirname "$2")"
    install -m "${3:-644}" "$1" "$2"
    record "$2"
}
link() { # link TARGET NAME
    ln -sfn "$1" "$2"
    record "$2"
}
subst() { # subst TEMPLATE DST: fills @VERSION@ and @PREFIX@
    mkdir -p "$(dirname "$2")"
    sed -e "s|@VERSION@|$version|g" -e "s|@PREFIX@|$prefix|g" "$1" >"$2"
    record "$2"
}

put "$build/libascendless.so" "$dest/lib64/$real" 755
link "$real" "$dest/lib64/$soname"
for name in "${aliases[@]}"; do
    link "$soname" "$dest/lib64/$name"
done
put "$build/libascendless.a" "$dest/lib64/libascendless.a"

(cd "$here/include" && find . -type f -name '*.h' | sort) | while read -r h; do
    put "$here/include/${h#./}" "$dest/include/${h#./}"
done

subst "$here/cmake/AscendlessConfig.cmake.in" "$dest/lib64/cmake/Ascendless/AscendlessConfig.cmake"
subst "$here/cmake/AscendlessConfigVersion.cmake.in" "$dest/lib64/cmake/Ascendless/AscendlessConfigVersion.cmake"
for file in AscendlessConfig.cmake AscendlessConfigVersion.cmake; do
    sed "s|@FILE@|$file|" "$here/cmake/forward-config.cmake.in" >"$work_file"
    subst "$work_file" "$dest/share/cmake/Ascendless/$file"
done
subst "$here/cmake/ascendless.pc.in" "$dest/lib64/pkgconfig/ascendless.pc"
subst "$here/cmake/set_env.sh.in" "$dest/set_env.sh"

record "$manifest"
mv "$manifest.new" "$manifest"
echo "installed ascendless $version into $dest ($(wc -l <"$manifest") files)"

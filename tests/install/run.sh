#!/usr/bin/env bash
# Installs ascendless into a temporary prefix and builds and runs programs against it every way
# a user would: find_package, the vendor's CMake style after set_env.sh, pkg-config (shared and
# static), LD_PRELOAD over another libascendcl, a moved install tree, valgrind; then uninstalls.
# Usage: run.sh BUILD_DIR VERSION
set -euo pipefail

build=$(cd "$1" && pwd) version=$2
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/toolkit
pass=0
ok() { pass=$((pass + 1)); echo "ok - $*"; }
fail() { echo "not ok - $*" >&2; exit 1; }

"$here/scripts/install.sh" "$prefix" "$prefix" "$build" "$version" >/dev/null

# Layout and names.
for f in include/acl/acl.h include/acl/acl_base.h include/acl/acl_rt.h include/acl/error_codes/rt_error_codes.h \
         include/adxl/adxl_engine.h include/adxl/adxl_types.h include/graph/ascend_string.h \
         include/ascendless.h include/external/ge_common/ge_api_error_codes.h \
         lib64/libascendless.a lib64/cmake/Ascendless/AscendlessConfig.cmake \
         lib64/cmake/Ascendless/AscendlessConfigVersion.cmake lib64/pkgconfig/ascendless.pc set_env.sh; do
    [ -e "$prefix/$f" ] || fail "installed tree lacks $f"
done
ok "installed tree has the toolkit layout"
real=$(readlink -f "$prefix/lib64/libascendless.so")
for name in libascendless.so libascendless.so.0 libascendcl.so libacl_rt.so libllm_datadist.so libgraph.so libgraph_base.so libmetadef.so; do
    [ "$(readlink -f "$prefix/lib64/$name")" = "$real" ] || fail "$name does not resolve to the library"
done
ok "vendor library names all resolve to one library"
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libascendless.so.0 ] || fail "soname is '$soname'"
ok "soname is libascendless.so.0"

# set_env.sh, as the vendor's.
(
    unset LD_LIBRARY_PATH CMAKE_PREFIX_PATH PKG_CONFIG_PATH
    # shellcheck source=/dev/null
    source "$prefix/set_env.sh"
    [ "$ASCEND_TOOLKIT_HOME" = "$prefix" ] && [ "$ASCEND_HOME_PATH" = "$prefix" ] || fail "toolkit home variables"
    [ "$LD_LIBRARY_PATH" = "$prefix/lib64" ] || fail "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    [ "$CMAKE_PREFIX_PATH" = "$prefix" ] || fail "CMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"
    [ "$PKG_CONFIG_PATH" = "$prefix/lib64/pkgconfig" ] || fail "PKG_CONFIG_PATH=$PKG_CONFIG_PATH"
) || exit 1
ok "set_env.sh sets the toolkit variables without empty path entries"

# shellcheck source=/dev/null
source "$prefix/set_env.sh"
quiet() { "$@" >"$work/out.log" 2>&1 || { cat "$work/out.log" >&2; fail "$*"; }; }

# find_package, as the examples are meant to be built.
quiet cmake -S "$here/examples-c" -B "$work/examples" -DCMAKE_BUILD_TYPE=Debug
quiet cmake --build "$work/examples" -j 2
quiet "$work/examples/acl_init"
quiet "$work/examples/adxl_capabilities"
quiet "$work/examples/runtime_copy"
ASCENDLESS_STRICT_DEVICE_MEMORY=1 quiet "$work/examples/runtime_copy"
ok "find_package(Ascendless) project builds with -Wall -Wextra -Werror and runs"

# The vendor's CMake style.
quiet cmake -S "$here/tests/install/vendor_style" -B "$work/vendor" -DEXAMPLES="$here/examples-c"
quiet cmake --build "$work/vendor" -j 2
for app in app adxl_app adxl_app_metadef; do quiet "$work/vendor/$app"; done
ok "vendor-style project (ASCEND_TOOLKIT_HOME, -lascendcl, -lllm_datadist -lgraph, ABI 0) builds and runs"

# pkg-config, shared and static.
# shellcheck disable=SC2046
quiet cc -Wall -Wextra -Werror -o "$work/pc_shared" "$here/examples-c/acl_init.c" $(pkg-config --cflags --libs ascendless)
quiet "$work/pc_shared"
ldd "$work/pc_shared" | grep -q "libascendless.so.0 => $prefix/lib64" || fail "pkg-config build does not use the install"
# shellcheck disable=SC2046
quiet cc -Wall -Wextra -Werror -o "$work/pc_static" "$here/examples-c/acl_init.c" $(pkg-config --cflags ascendless) \
    "$prefix/lib64/libascendless.a" $(pkg-config --static --libs-only-l ascendless | sed 's/-lascendless//')
if ldd "$work/pc_static" | grep -q libascendless; then fail "static build still needs the shared library"; fi
quiet "$work/pc_static"
ok "pkg-config builds (shared and static archive) run"

# LD_PRELOAD over a program linked against another libascendcl.
mkdir -p "$work/fake"
quiet cc -shared -fPIC -I"$prefix/include" -Wl,-soname,libascendcl.so -o "$work/fake/libascendcl.so" "$here/tests/install/fake_vendor_acl.c"
quiet cc -Wall -Wextra -Werror -I"$prefix/include" -o "$work/preload_app" "$here/examples-c/acl_init.c" -L"$work/fake" -lascendcl
if LD_LIBRARY_PATH="$work/fake" "$work/preload_app" >/dev/null 2>&1; then fail "the fake vendor library passed the example"; fi
LD_LIBRARY_PATH="$work/fake" LD_PRELOAD="$prefix/lib64/libascendless.so" quiet "$work/preload_app"
ok "LD_PRELOAD replaces another libascendcl"

# valgrind memcheck on the C and C++ examples.
if command -v valgrind >/dev/null; then
    for app in acl_init runtime_copy adxl_capabilities; do
        quiet valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$work/examples/$app"
    done
    ok "examples run clean under valgrind memcheck"
fi

# A moved tree still works (the CMake config and pkg-config file are relative).
mv "$prefix" "$work/moved"
(
    # shellcheck source=/dev/null
    source "$work/moved/set_env.sh"
    quiet cmake -S "$here/examples-c" -B "$work/examples-moved"
    quiet cmake --build "$work/examples-moved" -j 2
    quiet "$work/examples-moved/acl_init"
    # shellcheck disable=SC2046
    quiet cc -o "$work/pc_moved" "$here/examples-c/acl_init.c" $(pkg-config --cflags --libs ascendless)
    quiet "$work/pc_moved"
) || exit 1
mv "$work/moved" "$prefix"
ok "a moved install tree still builds and runs"

# Uninstall removes exactly what was installed.
echo keep >"$prefix/lib64/user-file"
quiet "$here/scripts/uninstall.sh" "$prefix"
left=$(cd "$prefix" && find . -mindepth 1 | sort | tr '\n' ' ')
[ "$left" = "./lib64 ./lib64/user-file " ] || fail "uninstall left: $left"
ok "uninstall removes exactly what was installed"

echo "$pass passed, 0 failed"

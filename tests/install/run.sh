#!/usr/bin/env bash
# shellcheck disable=SC1007 # `CDPATH= cd` clears CDPATH for that one command
# Installs ascendless into a temporary prefix and builds and runs programs against it every way
# a user would: find_package, the vendor's CMake style after set_env.sh, pkg-config (shared and
# static), LD_PRELOAD over another libascendcl and another libllm_datadist, the vendor-style ADXL
# sample (server and client, both string ABIs), a moved install tree, the <arch>-linux directories
# and the vendor's default location <toolkit>/latest; then uninstalls.
# (tests/sanitizers/run.sh runs the same programs under ASan and valgrind.)
# It also checks the install machinery itself: the Makefile's targets (CARGO_TARGET_DIR, DESTDIR,
# test-rust), exact uninstall and upgrade, existing files, odd prefixes, set_env.sh under several
# shells, the CMake version file and the installed library's exported symbols.
# Usage: run.sh BUILD_DIR VERSION
set -euo pipefail

build=$(CDPATH= cd -- "$1" >/dev/null && pwd) version=$2
# shellcheck source=SCRIPTDIR/../lib.sh
source "$(dirname -- "$0")/../lib.sh"

"$here/scripts/install.sh" "$prefix" "$prefix" "$build" "$version" >/dev/null

# Layout and names.
for f in include/acl/acl.h include/acl/acl_base.h include/acl/acl_rt.h include/acl/error_codes/rt_error_codes.h \
         include/adxl/adxl_engine.h include/adxl/adxl_types.h include/graph/ascend_string.h \
         include/ascendless.h include/external/ge_common/ge_api_error_codes.h include/external/ge_common/api_error_codes.h \
         lib64/libascendless.a lib64/cmake/Ascendless/AscendlessConfig.cmake \
         lib64/cmake/Ascendless/AscendlessConfigVersion.cmake lib64/pkgconfig/ascendless.pc set_env.sh; do
    [ -e "$prefix/$f" ] || fail "installed tree lacks $f"
done
ok "installed tree has the toolkit layout"

# <arch>-linux/include and <arch>-linux/lib64, as the vendor's toolkit has them beside the
# top-level ones: the same directories, found by a compile that names only them, and by the
# globs consumers' CMake files use (Mooncake: ASCEND_HOME_PATH/<arch>-linux; DLSlime:
# latest/*-linux, which must match exactly one directory).
arch_dir=$(uname -m)-linux
for d in include lib64; do
    [ -d "$prefix/$arch_dir/$d" ] && [ "$(readlink -f "$prefix/$arch_dir/$d")" = "$(readlink -f "$prefix/$d")" ] ||
        fail "$arch_dir/$d does not resolve to the top-level $d"
done
cc -Wall -Wextra -Werror -I"$prefix/$arch_dir/include" -o "$work/arch_app" "$here/examples-c/acl_init.c" \
    -L"$prefix/$arch_dir/lib64" -lascendcl -Wl,-rpath,"$prefix/$arch_dir/lib64" >"$work/out.log" 2>&1 ||
    fail "a build with -I$arch_dir/include -L$arch_dir/lib64 -lascendcl: $(cat "$work/out.log")"
"$work/arch_app" >"$work/out.log" 2>&1 || fail "the program built against $arch_dir/: $(cat "$work/out.log")"
cat >"$work/arch_glob.cmake" <<'CMAKE'
file(GLOB roots "${PREFIX}/*-linux")
list(LENGTH roots n)
if(NOT n EQUAL 1 OR NOT EXISTS "${roots}/include/adxl/adxl_engine.h" OR NOT EXISTS "${roots}/lib64/libascendcl.so")
  message(FATAL_ERROR "*-linux matched '${roots}'")
endif()
CMAKE
cmake -DPREFIX="$prefix" -P "$work/arch_glob.cmake" >"$work/out.log" 2>&1 || fail "glob of *-linux: $(cat "$work/out.log")"
ok "$arch_dir/include and $arch_dir/lib64 are the top-level directories; -I/-L there with -lascendcl builds and runs"
real=$(readlink -f "$prefix/lib64/libascendless.so")
[ "$(readlink -f "$prefix/lib64/libascendless.so.0")" = "$real" ] && [ "$real" = "$prefix/lib64/libascendless.so.$version" ] ||
    fail "libascendless.so and libascendless.so.0 do not resolve to libascendless.so.$version"
# (The vendor-named libraries beside it: tests/install/vendor_names.sh.)
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libascendless.so.0 ] || fail "soname is '$soname'"
ok "soname is libascendless.so.0"

# The installed library exports only the public API: C functions declared in the installed C
# headers, and the names of the C++ faces (src/cxx/faces.txt: export= globs, less private=
# ones). (Type A entries are symbol-version nodes, not code.)
face_words() { sed -e '/^[[:space:]]*#/d' "$here/src/cxx/faces.txt" | tr -s ' \t' '\n\n' | sed -n "s/^$1=//p"; }
mapfile -t cxx_exports < <(face_words export)
mapfile -t cxx_private < <(face_words private)
[ ${#cxx_exports[@]} -gt 0 ] || fail "src/cxx/faces.txt lists no export= glob"
is_face_symbol() {
    local glob
    for glob in "${cxx_private[@]}"; do
        # shellcheck disable=SC2254 # the globs are patterns
        case $1 in $glob) return 1 ;; esac
    done
    for glob in "${cxx_exports[@]}"; do
        # shellcheck disable=SC2254
        case $1 in $glob) return 0 ;; esac
    done
    return 1
}
c_headers=$(cat "$prefix"/include/acl/*.h "$prefix"/include/acl/error_codes/*.h "$prefix"/include/profiling/*.h "$prefix"/include/hccl/*.h "$prefix"/include/*.h)
mapfile -t syms < <(nm -D --defined-only --format=posix "$prefix/lib64/libascendless.so.$version" |
    awk '$2 != "A" { sub(/@.*/, "", $1); print $1 }')
mapfile -t demangled < <(printf '%s\n' "${syms[@]}" | c++filt)
[ ${#syms[@]} -eq ${#demangled[@]} ] || fail "c++filt output does not line up with nm's"
stray=() c_count=0 cxx_count=0
for i in "${!syms[@]}"; do
    sym=${syms[$i]} name=${demangled[$i]}
    case $sym in
        _Z*)
            if is_face_symbol "$name"; then cxx_count=$((cxx_count + 1)); else stray+=("$name"); fi
            ;;
        *)
            re="(^|[^A-Za-z0-9_])${sym}[[:space:]]*\\("
            if [[ $c_headers =~ $re ]]; then c_count=$((c_count + 1)); else stray+=("$sym"); fi
            ;;
    esac
done
[ ${#stray[@]} -eq 0 ] || fail "installed library exports names outside the public API: $(printf '[%s] ' "${stray[@]}")"
[ "$c_count" -gt 0 ] && [ "$cxx_count" -gt 0 ] || fail "nm found $c_count C and $cxx_count C++ exports"
ok "installed library exports only the public API ($c_count C functions, $cxx_count C++ members)"

# The benchmark tool: installed executable, on PATH after set_env.sh, listed in the manifest.
[ -x "$prefix/bin/ascendless-bench" ] || fail "installed tree lacks an executable bin/ascendless-bench"
grep -qx 'bin/ascendless-bench' "$prefix/share/ascendless/install-manifest.txt" ||
    fail "the manifest does not list bin/ascendless-bench"
(
    # shellcheck source=/dev/null
    source "$prefix/set_env.sh"
    [ "$(command -v ascendless-bench)" = "$prefix/bin/ascendless-bench" ] || fail "set_env.sh does not put ascendless-bench on PATH"
    ascendless-bench --help | grep -q 'Usage:' || fail "ascendless-bench --help prints no usage"
    out=$(ascendless-bench adxl --spawn --block 64K --duration 0.2 --json) || fail "ascendless-bench adxl --spawn failed"
    for key in '"baselines"' '"ratio"' '"raw TCP socket pair"' '"gbps"'; do
        grep -qF "$key" <<<"$out" || fail "ascendless-bench adxl --json lacks $key"
    done
) || exit 1
ok "installed ascendless-bench runs from PATH (--help, a short adxl --spawn with baselines)"

# set_env.sh, as the vendor's.
(
    unset LD_LIBRARY_PATH CMAKE_PREFIX_PATH PKG_CONFIG_PATH PYTHONPATH ASCENDC_CMAKE_DIR
    # shellcheck source=/dev/null
    source "$prefix/set_env.sh"
    [ "$ASCEND_TOOLKIT_HOME" = "$prefix" ] && [ "$ASCEND_HOME_PATH" = "$prefix" ] || fail "toolkit home variables"
    [ "$LD_LIBRARY_PATH" = "$prefix/lib64" ] || fail "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
    [ "$CMAKE_PREFIX_PATH" = "$prefix" ] || fail "CMAKE_PREFIX_PATH=$CMAKE_PREFIX_PATH"
    [ "$PKG_CONFIG_PATH" = "$prefix/lib64/pkgconfig" ] || fail "PKG_CONFIG_PATH=$PKG_CONFIG_PATH"
    [ "$PYTHONPATH" = "$prefix/python/site-packages" ] || fail "PYTHONPATH=$PYTHONPATH"
    [ "$ASCENDC_CMAKE_DIR" = "$prefix/tools/tikcpp/ascendc_kernel_cmake" ] || fail "ASCENDC_CMAKE_DIR=$ASCENDC_CMAKE_DIR"
    ASCENDC_CMAKE_DIR=/elsewhere
    # shellcheck source=/dev/null
    source "$prefix/set_env.sh"
    [ "$ASCENDC_CMAKE_DIR" = /elsewhere ] || fail "set_env.sh replaced an ASCENDC_CMAKE_DIR already set"
) || exit 1
ok "set_env.sh sets the toolkit variables without empty path entries, keeps an ASCENDC_CMAKE_DIR already set"

# bin/setenv.bash, the vendor's other entry point, has the same effect as set_env.sh, also under
# `set -u`, from another directory, and under dash (through the recorded prefix).
env_of() { # env_of SHELL SCRIPT: the toolkit variables after sourcing SCRIPT in a clean environment
    env -i PATH=/usr/bin:/bin HOME="$HOME" "$1" -c 'set -u; cd /; . "$1"; for v in ASCEND_TOOLKIT_HOME ASCEND_HOME_PATH \
        ASCENDC_CMAKE_DIR LD_LIBRARY_PATH CMAKE_PREFIX_PATH PKG_CONFIG_PATH PATH PYTHONPATH; do eval "echo $v=\$$v"; done' _ "$2"
}
[ -f "$prefix/bin/setenv.bash" ] || fail "installed tree lacks bin/setenv.bash"
want=$(env_of bash "$prefix/set_env.sh")
[ "$(env_of bash "$prefix/bin/setenv.bash")" = "$want" ] || fail "bin/setenv.bash under bash: $(env_of bash "$prefix/bin/setenv.bash")"
if command -v dash >/dev/null; then
    [ "$(env_of dash "$prefix/bin/setenv.bash")" = "$want" ] || fail "bin/setenv.bash under dash: $(env_of dash "$prefix/bin/setenv.bash")"
fi
ok "bin/setenv.bash sets what set_env.sh sets (bash, dash, set -u)"

# Python, as the vendor's toolkit: `import acl` after set_env.sh, with no pip step, in a clean
# environment (only PATH and HOME), calling into the installed library; sourcing twice changes
# nothing; a PYTHONPATH already set stays, after ours.
grep -qx 'python/site-packages/acl/__init__.py' "$prefix/share/ascendless/install-manifest.txt" ||
    fail "the manifest does not list the Python package"
grep -qx 'python/site-packages/llm_datadist/__init__.py' "$prefix/share/ascendless/install-manifest.txt" ||
    fail "the manifest does not list the llm_datadist package"
cat >"$work/py_probe.py" <<'PY'
import os, sys
import acl
from acl import rt
home = sys.argv[1]
assert acl.__file__ == os.path.join(home, "python", "site-packages", "acl", "__init__.py"), acl.__file__
assert acl.library_path == os.path.join(home, "lib64", "libascendcl.so"), acl.library_path
assert acl.init() == 0
assert rt.set_device(0) == 0
ptr, ret = rt.malloc(4096, 0)
assert ret == 0 and ptr != 0, ret
assert rt.free(ptr) == 0 and rt.reset_device(0) == 0
# One Python function per C runtime function, under pyACL's names (docs/python.md).
public = [n for n in rt.__all__ if callable(getattr(rt, n, None))]
assert len(public) >= 150, len(public)
for name in ("synchronize_device", "query_event_status", "event_elapsed_time", "launch_callback",
             "subscribe_report", "process_report", "unsubscribe_report", "get_run_mode", "memcpy_2d",
             "get_current_context", "set_current_context", "malloc_cached"):
    assert callable(getattr(rt, name, None)), name
assert rt.set_device(0) == 0 and rt.synchronize_device() == 0
mode, ret = rt.get_run_mode()
assert ret == 0, ret
assert rt.reset_device(0) == 0
# llm_datadist, beside acl, on the same library.
import llm_datadist
assert llm_datadist.__file__ == os.path.join(home, "python", "site-packages", "llm_datadist", "__init__.py")
config = llm_datadist.LLMConfig()
config.device_id = 0
dd = llm_datadist.LLMDataDist(llm_datadist.LLMRole.DECODER, 7)
dd.init(config.generate_options())
dd.finalize()
assert acl.finalize() == 0
PY
clean() { env -i PATH="$PATH" HOME="$HOME" "$@"; }
for before in "" /elsewhere; do
    out=$(clean ${before:+PYTHONPATH="$before"} bash -c '
        . "$1/set_env.sh"
        once=$PYTHONPATH
        . "$1/set_env.sh"
        [ "$once" = "$PYTHONPATH" ] || { echo "sourcing twice changed PYTHONPATH from $once to $PYTHONPATH"; exit 1; }
        echo "PYTHONPATH=$PYTHONPATH"
        python3 "$2" "$1"' _ "$prefix" "$work/py_probe.py" 2>&1) || fail "import acl after set_env.sh: $out"
    want="PYTHONPATH=$prefix/python/site-packages${before:+:$before}"
    [ "$out" = "$want" ] || fail "after set_env.sh: '$out', not '$want'"
done
# With PYTHONPATH set by hand instead, the package still finds the library installed with it.
out=$(clean PYTHONPATH="$prefix/python/site-packages" python3 "$work/py_probe.py" "$prefix" 2>&1) ||
    fail "import acl with only PYTHONPATH set: $out"
ok "after set_env.sh in a clean environment, import acl and llm_datadist call the installed library (twice: same PYTHONPATH)"

# shellcheck source=/dev/null
source "$prefix/set_env.sh"
quiet() { "$@" >"$work/out.log" 2>&1 || { cat "$work/out.log" >&2; fail "$*"; }; }

# find_package, as the examples are meant to be built.
quiet cmake -S "$here/examples-c" -B "$work/examples" -DCMAKE_BUILD_TYPE=Debug
quiet cmake --build "$work/examples" -j 2
quiet "$work/examples/acl_init"
quiet "$work/examples/adxl_capabilities"
quiet "$work/examples/adxl_transfer"
ASCENDLESS_STRICT_DEVICE_MEMORY=1 quiet "$work/examples/adxl_transfer"
quiet "$work/examples/adxl_prefill_decode"
ASCENDLESS_TRANSPORT=tcp quiet "$work/examples/adxl_prefill_decode"
quiet "$work/examples/runtime_copy"
ASCENDLESS_STRICT_DEVICE_MEMORY=1 quiet "$work/examples/runtime_copy"
quiet "$here/examples-c/run_ipc.sh" "$work/examples"
quiet "$here/examples-c/hixl-vendor-style/run.sh" "$work/examples/hixl_server" "$work/examples/hixl_client" "$(free_port)"
ok "find_package(Ascendless) project builds with -Wall -Wextra -Werror and runs"

# The vendor's CMake style.
quiet cmake -S "$here/tests/install/vendor_style" -B "$work/vendor" -DEXAMPLES="$here/examples-c"
quiet cmake --build "$work/vendor" -j 2
for app in app adxl_app adxl_app_metadef; do quiet "$work/vendor/$app"; done
ok "vendor-style project (ASCEND_TOOLKIT_HOME, -lascendcl, -lllm_datadist -lgraph, ABI 0) builds and runs"

# The vendor's runtime samples' style: bin/setenv.bash, then ascendc.cmake from ASCENDC_CMAKE_DIR.
# A host-only project builds and runs; a kernel build stops at configure and names the reason.
for d in tools compiler "$arch_dir"; do
    [ "$(readlink -f "$prefix/$d/tikcpp/ascendc_kernel_cmake/ascendc.cmake")" = \
        "$(readlink -f "$prefix/tools/tikcpp/ascendc_kernel_cmake/ascendc.cmake")" ] || fail "no $d/tikcpp/ascendc_kernel_cmake/ascendc.cmake"
done
(
    unset ASCENDC_CMAKE_DIR
    # shellcheck source=/dev/null
    source "$prefix/bin/setenv.bash"
    quiet cmake -S "$here/tests/install/ascendc_style" -B "$work/ascendc" -DEXAMPLES="$here/examples-c" \
        -DASCEND_CANN_PACKAGE_PATH="$ASCEND_HOME_PATH"
    quiet cmake --build "$work/ascendc" -j 2
    quiet "$work/ascendc/main"
    for fn in ascendc_library ascendc_fatbin_library; do
        if cmake -S "$here/tests/install/ascendc_style" -B "$work/ascendc_$fn" -DEXAMPLES="$here/examples-c" \
            -DASCEND_CANN_PACKAGE_PATH="$ASCEND_HOME_PATH" -DKERNEL="$fn" >"$work/out.log" 2>&1; then
            fail "$fn configured without the vendor's kernel compiler"
        fi
        tr -s ' \n' ' ' <"$work/out.log" | grep -q "$fn(kernels ...) compiles Ascend C device kernels, which needs the vendor's Ascend C compiler" ||
            fail "$fn does not say why it failed: $(cat "$work/out.log")"
    done
) || exit 1
ok "vendor runtime-sample style (bin/setenv.bash, ASCENDC_CMAKE_DIR/ascendc.cmake) builds host code; ascendc_library stops with the reason"
quiet timeout 900 "$here/tests/install/samples_style/run.sh" "$prefix"
ok "vendor runtime samples' run.sh style (set -euo pipefail, bin/setenv.bash, SOC_VERSION = aclrtGetSocName, ASCEND_CANN_PACKAGE_PATH): builds, runs; a kernel sample stops with the reason"
quiet timeout 900 "$here/tests/install/tdt_samples/run.sh" "$prefix"
ok "vendor TDT channel and queue samples' style (libacl_tdt_channel.so, libacl_tdt_queue.so): build, run, record only vendor names"
quiet timeout 900 "$here/tests/install/profiling_style/run.sh" "$prefix"
ok "vendor profiling and dump samples' style (libmsprofiler.so, libprofapi.so, libascend_dump.so by path): builds, runs, writes its data"
quiet timeout 900 "$here/tests/install/hccl_style/run.sh" "$prefix"
ok "HCCL: two ranks in two processes (tests/install/hccl_style, libhccl.so and Ascendless::hccl): all-reduce, broadcast, send/recv, bytes checked"
quiet timeout 900 "$here/tests/install/hccl_ranks/run.sh" "$prefix"
ok "HCCL: 2, 4 and 8 ranks in processes, two hosts in network namespaces (tests/install/hccl_ranks): every collective and point-to-point call, bytes checked; a killed, a stalled and an absent rank fail the others with the vendor's codes in time"

# pkg-config, shared and static.
# shellcheck disable=SC2046
quiet cc -Wall -Wextra -Werror -o "$work/pc_shared" "$here/examples-c/acl_init.c" $(pkg-config --cflags --libs ascendless)
quiet "$work/pc_shared"
ldd "$work/pc_shared" | grep "libascendcl.so => $prefix/lib64" >/dev/null || fail "pkg-config build does not use the install"
# shellcheck disable=SC2046
quiet cc -Wall -Wextra -Werror -o "$work/pc_static" "$here/examples-c/acl_init.c" $(pkg-config --cflags ascendless) \
    "$prefix/lib64/libascendless.a" $(pkg-config --static --libs-only-l ascendless-native | sed 's/-lascendless//')
if ldd "$work/pc_static" | grep libascendless >/dev/null; then fail "static build still needs the shared library"; fi
quiet "$work/pc_static"
ok "pkg-config builds (shared and static archive) run"

# LD_PRELOAD over a program linked against another libascendcl.
mkdir -p "$work/fake"
quiet cc -shared -fPIC -I"$prefix/include" -Wl,-soname,libascendcl.so -o "$work/fake/libascendcl.so" "$here/tests/install/fake_vendor_acl.c"
quiet cc -Wall -Wextra -Werror -I"$prefix/include" -o "$work/preload_app" "$here/examples-c/acl_init.c" -L"$work/fake" -lascendcl
if LD_LIBRARY_PATH="$work/fake" "$work/preload_app" >/dev/null 2>&1; then fail "the fake vendor library passed the example"; fi
LD_LIBRARY_PATH="$work/fake" LD_PRELOAD="$prefix/lib64/libascendless.so" quiet "$work/preload_app"
ok "LD_PRELOAD replaces another libascendcl"

# LD_PRELOAD over a C++ program linked against another libllm_datadist (the old string ABI, as
# vendor builds use): the stand-in fails every engine call; ascendless preloaded must transfer.
quiet c++ -std=c++17 -Wall -Wextra -Werror -shared -fPIC -I"$prefix/include" -Wl,-soname,libllm_datadist.so \
    -o "$work/fake/libllm_datadist.so" "$here/tests/install/fake_vendor_datadist.cpp"
quiet c++ -std=c++17 -Wall -Wextra -Werror -D_GLIBCXX_USE_CXX11_ABI=0 -I"$prefix/include" -o "$work/preload_cxx" \
    "$here/tests/install/cxx_preload_app.cpp" -L"$work/fake" -lllm_datadist
readelf -d "$work/preload_cxx" | grep 'NEEDED.*\[libllm_datadist.so\]' >/dev/null || fail "the C++ program does not need libllm_datadist.so"
if LD_LIBRARY_PATH="$work/fake" "$work/preload_cxx" "$(free_port)" >/dev/null 2>&1; then
    fail "the stand-in libllm_datadist passed the C++ program"
fi
LD_LIBRARY_PATH="$work/fake" LD_PRELOAD="$prefix/lib64/libllm_datadist.so" quiet "$work/preload_cxx" "$(free_port)"
grep -q 'READ and WRITE of .* bytes verified' "$work/out.log" || fail "the preloaded C++ program did not verify its data"
ok "LD_PRELOAD=<prefix>/lib64/libllm_datadist.so replaces another libllm_datadist (C++ engine)"

# The vendor-style ADXL sample (examples-c/vendor-style): its own CMake project, built the
# vendor's way with each string ABI, run as a server and a client process.
for abi in 0 1; do
    quiet cmake -S "$here/examples-c/vendor-style" -B "$work/sample$abi" -DCXX11_ABI="$abi"
    quiet cmake --build "$work/sample$abi" -j 2
    quiet "$here/examples-c/vendor-style/run.sh" "$work/sample$abi" "$(free_port)"
    grep -q "client: READ .* verified" "$work/out.log" && grep -q "server: the client's WRITE arrived intact" "$work/out.log" ||
        fail "the ADXL sample (ABI $abi) did not verify its data: $(cat "$work/out.log")"
done
nm -C "$work/sample1/adxl_client" | grep 'std::__cxx11::' >/dev/null || fail "the ABI 1 sample does not use the new string ABI"
if nm -C "$work/sample0/adxl_client" | grep 'std::__cxx11::' >/dev/null; then fail "the ABI 0 sample uses the new string ABI"; fi
ok "vendor-style ADXL sample (ASCEND_PATH, llm_datadist graph ascendcl, -Werror) server/client verify under string ABIs 0 and 1"

# The HIXL sample built the vendor's way (cann_hixl acl_rt, each string ABI), run as two
# processes; then Hixl and AdxlEngine processes against each other, both ways.
for abi in 0 1; do
    quiet cmake -S "$here/examples-c/hixl-vendor-style" -B "$work/hixl$abi" -DCXX11_ABI="$abi"
    quiet cmake --build "$work/hixl$abi" -j 2
    ldd "$work/hixl$abi/hixl_client" | grep "=> $prefix/lib64/" >/dev/null ||
        fail "the HIXL sample (-lcann_hixl) does not use the installed library"
    quiet "$here/examples-c/hixl-vendor-style/run.sh" "$work/hixl$abi/hixl_server" "$work/hixl$abi/hixl_client" "$(free_port)"
    grep -q "client: WROTE .* collected by user_data" "$work/out.log" && grep -q "server: the client's WRITE arrived intact" "$work/out.log" ||
        fail "the HIXL sample (ABI $abi) did not verify its data: $(cat "$work/out.log")"
done
quiet "$here/examples-c/hixl-vendor-style/run.sh" "$work/sample0/adxl_server" "$work/hixl0/hixl_client" "$(free_port)"
grep -q "server: the client's WRITE arrived intact" "$work/out.log" || fail "AdxlEngine server, Hixl client: $(cat "$work/out.log")"
quiet "$here/examples-c/hixl-vendor-style/run.sh" "$work/hixl1/hixl_server" "$work/sample1/adxl_client" "$(free_port)"
grep -q "server: the client's WRITE arrived intact" "$work/out.log" || fail "Hixl server, AdxlEngine client: $(cat "$work/out.log")"
ok "vendor-style HIXL sample (ASCEND_PATH, -lcann_hixl -lacl_rt, -Werror) verifies under string ABIs 0 and 1, and talks to the ADXL sample both ways"

# A build file in the shape of the vendor's HIXL examples (hicann/hixl examples/cpp: no
# find_package, the vendor build's target names cann_hixl, acl_rt_headers, acl_rt, ascend_hal),
# given those targets by the installed AscendlessCannTargets.cmake at project(); the program
# uses securec.h, std::cerr without <iostream>, virtual device memory and fabric memory, on the
# same-host path and over TCP.
quiet cmake -S "$here/examples-c/hixl-cann-layout" -B "$work/cann_layout" \
    -DCMAKE_PROJECT_INCLUDE="$prefix/lib64/cmake/Ascendless/AscendlessCannTargets.cmake"
quiet cmake --build "$work/cann_layout" -j 2
ldd "$work/cann_layout/hixl_fabric_pair" | grep "=> $prefix/lib64/" >/dev/null ||
    fail "the vendor-layout HIXL program does not use the installed library"
for transport in auto tcp; do
    ASCENDLESS_TRANSPORT=$transport quiet "$here/examples-c/hixl-cann-layout/run.sh" "$work/cann_layout"
    [ "$(grep -c "the peer's WRITE of .* bytes arrived intact" "$work/out.log")" -eq 2 ] ||
        fail "the vendor-layout HIXL pair ($transport) did not verify: $(cat "$work/out.log")"
done
ok "a project in the vendor's HIXL examples layout (CMAKE_PROJECT_INCLUDE=AscendlessCannTargets.cmake) builds with -Werror and its fabric-memory pair verifies, same host and over TCP"

# The LLM-DataDist pull benchmark (benches/cxx/llm_datadist_pull), built by its run.sh against
# the install, in a smoke run: 16 blocks, one call a round, each case's bytes verified; over
# the same-host path and over TCP. No figure is judged here (docs/performance.md has them).
for transport in auto tcp; do
    quiet "$here/benches/cxx/llm_datadist_pull/run.sh" "$prefix" "$work/llm_pull" -- --blocks 16 --rounds 1 --calls 1 \
        --transport "$transport" --port "$(free_port)"
    [ "$(grep -c 'bytes verified for both' "$work/out.log")" -eq 2 ] && grep -q 'ratio face/baseline' "$work/out.log" ||
        fail "the LLM-DataDist pull benchmark ($transport) did not verify both cases: $(cat "$work/out.log")"
done
ok "the LLM-DataDist pull benchmark (C++ against the install, -Werror) runs: PullKvBlocks and TransferSync verified, same host and TCP"

# Issue 37's outside harnesses, built by their run.sh against the install, in smoke runs of a
# round each (no figure judged here: docs/performance.md has them).
quiet "$here/benches/c/notify_pingpong/run.sh" "$prefix" "$work/notify_pingpong" -- --rounds 1 --iters 50 --no-idle
grep -q 'IPC event + stream ping-pong' "$work/out.log" && grep -q 'notify + stream ping-pong' "$work/out.log" ||
    fail "the notify and IPC event ping-pong harness did not report both: $(cat "$work/out.log")"
quiet "$here/benches/cxx/engine_outside/run.sh" "$prefix" "$work/engine_outside" -- --rounds 1 --calls 50 --setups 10
[ "$(grep -c '^  ratio p50' "$work/out.log")" -eq 2 ] ||
    fail "the outside engine benchmark did not report the transfer and the setup: $(cat "$work/out.log")"
ok "issue 37's outside harnesses (C and C++ against the install, -Werror) run: notify, IPC event and futex ping-pongs; TransferSync and engine setup against raw TCP"
quiet "$here/benches/cxx/hccl_bench/run.sh" "$prefix" "$work/hccl_bench" -- --ranks 2 --mib 1 --rounds 1 --iters 1
[ "$(grep -c 'ratio (baseline time / HCCL time)' "$work/out.log")" -eq 2 ] ||
    fail "the HCCL benchmark did not report the all-reduce and the send/recv: $(cat "$work/out.log")"
ok "the HCCL benchmark (C++ against the install, -Werror) runs: all-reduce against a plain shared-memory reduction (results compared), send/recv against TransferSync"

# The demo (scripts/demo.sh, as `make demo` runs it) with the library's default log: the calls
# its examples make to show a failure must not print [ERROR] lines, which read as the demo failing.
env -u RUST_LOG -u ASCEND_GLOBAL_LOG_LEVEL "$here/scripts/demo.sh" "$prefix" "$work/demo" >"$work/demo.log" 2>&1 ||
    { cat "$work/demo.log" >&2; fail "scripts/demo.sh failed"; }
grep -q 'adxl_capabilities: all as documented' "$work/demo.log" && grep -q 'acl_init: all as documented' "$work/demo.log" ||
    fail "the demo did not run its examples: $(cat "$work/demo.log")"
if grep -E '\[(ERROR|WARNING)\]' "$work/demo.log" >&2; then fail "the demo prints [ERROR]/[WARNING] lines (above)"; fi
ok "the demo runs every example and prints no [ERROR] or [WARNING] line"

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

# --- The install machinery ------------------------------------------------------------------
snapshot() { (CDPATH= cd -- "$1" >/dev/null && find . -mindepth 1 -printf '%y %p\n' | LC_ALL=C sort); }
# make, run in the source tree as a user would, not as part of the make running this script.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$here" "$@"; }
mkdir -p "$work/bin"
fake_cargo=$work/bin/cargo
printf '#!/bin/sh\n# A stand-in for cargo that only records how it was called.\necho "$*" >>"${FAKE_CARGO_LOG:-/dev/null}"\n' >"$fake_cargo"
chmod +x "$fake_cargo"

# scripts/prereqs.sh (run first by `make test`): with cmake and valgrind hidden from PATH, one
# line naming them and the command that installs them; with everything there, silence.
mkdir -p "$work/some-tools"
for tool in pkg-config cc c++ readelf nm c++filt cargo id; do ln -s "$(command -v "$tool")" "$work/some-tools/$tool"; done
ln -s "$(python3 -c 'import sys; print(sys.executable)')" "$work/some-tools/python3"
if PATH=$work/some-tools "$BASH" "$here/scripts/prereqs.sh" >"$work/prereqs.log" 2>&1; then fail "prereqs.sh passed without cmake"; fi
[ "$(wc -l <"$work/prereqs.log")" = 1 ] && grep -q '^make test needs: cmake valgrind — .*apt-get install cmake valgrind' "$work/prereqs.log" ||
    fail "prereqs.sh with cmake and valgrind hidden says: $(cat "$work/prereqs.log")"
ln -s "$(command -v cmake)" "$work/some-tools/cmake"
ln -s "$(command -v valgrind)" "$work/some-tools/valgrind"
PATH=$work/some-tools "$BASH" "$here/scripts/prereqs.sh" >"$work/prereqs.log" 2>&1 || fail "prereqs.sh: $(cat "$work/prereqs.log")"
[ ! -s "$work/prereqs.log" ] || fail "prereqs.sh printed $(cat "$work/prereqs.log") with everything there"
mk -n test >"$work/dry.log"
[ "$(head -n 1 "$work/dry.log")" = scripts/prereqs.sh ] || fail "make test does not run scripts/prereqs.sh first"
ok "make test first checks its prerequisites: one line naming what is missing and how to install it"

# `make test-rust` builds the shared library before the tests that read it (tests/c_abi.rs).
FAKE_CARGO_LOG=$work/cargo.log quiet mk test-rust CARGO="$fake_cargo"
build_at=$(grep -n -m1 -E '^build( .*)? --lib( |$)' "$work/cargo.log" | cut -d: -f1 || true)
test_at=$(grep -n -m1 -E '^test( .*)? --all-targets( |$)' "$work/cargo.log" | cut -d: -f1 || true)
[ -n "$build_at" ] && [ -n "$test_at" ] && [ "$build_at" -lt "$test_at" ] ||
    fail "make test-rust does not run 'cargo build --lib' before 'cargo test': $(tr '\n' ';' <"$work/cargo.log")"
ok "make test-rust builds the library before running the tests"

# make install (and demo, test-install) take the build from CARGO_TARGET_DIR.
mkdir -p "$work/cargo-target/release"
cp "$build/libascendless.a" "$build/ascendless-bench" "$work/cargo-target/release/"
{ cat "$build/libascendless.so"; echo ascendless-test-marker; } >"$work/cargo-target/release/libascendless.so"
CARGO_TARGET_DIR=$work/cargo-target quiet mk install PREFIX="$work/ctd" DESTDIR= CARGO="$fake_cargo"
cmp -s "$work/ctd/lib64/libascendless.so.$version" "$work/cargo-target/release/libascendless.so" ||
    fail "make install did not install the library from CARGO_TARGET_DIR"
CARGO_TARGET_DIR=$work/cargo-target mk -n demo test-install CARGO="$fake_cargo" >"$work/dry.log"
[ "$(grep -c -F "$work/cargo-target/release" "$work/dry.log")" -ge 2 ] || fail "make demo/test-install ignore CARGO_TARGET_DIR"
quiet mk uninstall PREFIX="$work/ctd" DESTDIR=
[ ! -e "$work/ctd" ] || fail "uninstall left the prefix it created: $(snapshot "$work/ctd")"
ok "make install, demo and test-install honour CARGO_TARGET_DIR"

# FEATURES reaches cargo (`make install FEATURES=ucx` installs a UCX-enabled library); unset, the
# default build.
mk -n build FEATURES=ucx CARGO="$fake_cargo" | grep -qE -- '^[^ ]+ build --release .*--features ucx' ||
    fail "make build FEATURES=ucx does not pass --features ucx to cargo"
if mk -n build FEATURES= CARGO="$fake_cargo" | grep -q -- '--features'; then fail "make build passes --features without FEATURES"; fi
ok "make build/install pass FEATURES to cargo as --features"

# DESTDIR stages the tree; set_env.sh records the final PREFIX for shells that cannot find it.
quiet mk install DESTDIR="$work/stage" PREFIX=/opt/x RELEASE_DIR="$build" CARGO="$fake_cargo"
[ -f "$work/stage/opt/x/lib64/libascendcl.so" ] && [ -f "$work/stage/opt/x/include/acl/acl.h" ] &&
    [ -f "$work/stage/opt/x/share/ascendless/install-manifest.txt" ] || fail "DESTDIR install is not under DESTDIR/PREFIX"
[ "$(snapshot "$work/stage" | grep -c -v '^. ./opt/x/')" = 2 ] || fail "DESTDIR install wrote outside DESTDIR/PREFIX"
grep -qxF "    _ascendless_home='/opt/x'" "$work/stage/opt/x/set_env.sh" || fail "staged set_env.sh does not record /opt/x"
if command -v dash >/dev/null; then
    [ "$(dash -c '. "$1"; printf %s "$ASCEND_TOOLKIT_HOME"' _ "$work/stage/opt/x/set_env.sh")" = /opt/x ] ||
        fail "staged set_env.sh under dash does not fall back to /opt/x"
fi
quiet mk uninstall DESTDIR="$work/stage" PREFIX=/opt/x
[ "$(snapshot "$work/stage")" = "d ./opt" ] || fail "staged uninstall left: $(snapshot "$work/stage")"
ok "DESTDIR stages under DESTDIR/PREFIX and set_env.sh falls back to PREFIX"

# An odd prefix, installed by a relative script path with CDPATH exported: set_env.sh, sourced by
# a relative path, twice, under set -eu, in each shell, gives absolute one-line paths.
odd_name="odd dir &|\\x'q"
odd=$work/$odd_name
(CDPATH= cd "$here" && CDPATH=".:$work" quiet scripts/install.sh "$odd" "$odd" "$build" "$version") || exit 1
[ -f "$odd/include/acl/acl.h" ] || fail "install.sh with CDPATH exported did not install the headers"
cat >"$work/env_probe.sh" <<'EOF'
set -eu
unset LD_LIBRARY_PATH CMAKE_PREFIX_PATH PKG_CONFIG_PATH PYTHONPATH
path0=$PATH
. "$1"
once="$ASCEND_TOOLKIT_HOME|$ASCEND_HOME_PATH|$LD_LIBRARY_PATH|$CMAKE_PREFIX_PATH|$PKG_CONFIG_PATH|$PYTHONPATH|${PATH%":$path0"}"
. "$1"
twice="$ASCEND_TOOLKIT_HOME|$ASCEND_HOME_PATH|$LD_LIBRARY_PATH|$CMAKE_PREFIX_PATH|$PKG_CONFIG_PATH|$PYTHONPATH|${PATH%":$path0"}"
[ "$once" = "$twice" ] || { echo "sourcing twice changed $once to $twice"; exit 1; }
printf '%s\n' "$once"
EOF
want="$odd|$odd|$odd/lib64|$odd|$odd/lib64/pkgconfig|$odd/python/site-packages|$odd/bin"
shells=()
for sh in bash zsh dash sh; do # zsh and dash are checked when installed
    if command -v "$sh" >/dev/null; then shells+=("$sh"); fi
done
for sh in "${shells[@]}"; do
    got=$(CDPATH= cd "$work" && CDPATH=".:$work" "$sh" env_probe.sh "$odd_name/set_env.sh" 2>&1) || fail "$sh: $got"
    [ "$got" = "$want" ] || fail "set_env.sh under $sh gives '$got', not '$want'"
done
quiet cc -Wall -Wextra -Werror -I"$odd/include" -o "$work/odd_app" "$here/examples-c/acl_init.c" -L"$odd/lib64" -lascendcl
quiet bash -c '. "$1" && "$2"' _ "$odd/set_env.sh" "$work/odd_app"
clean bash -c '. "$1" && python3 "$2" "$3"' _ "$odd/set_env.sh" "$work/py_probe.py" "$odd" >"$work/out.log" 2>&1 ||
    fail "import acl from the odd prefix: $(cat "$work/out.log")"
quiet "$here/scripts/uninstall.sh" "$odd"
[ ! -e "$odd" ] || fail "uninstall left the prefix it created: $(snapshot "$odd")"
ok "prefix with space & | \\ ', CDPATH set, set_env.sh sourced relatively, twice, under set -eu: ${shells[*]}; import acl; uninstall leaves nothing"

# The vendor's default location, <toolkit>/latest (staged with DESTDIR, as a package would be):
# <toolkit>/set_env.sh is written beside latest, sets up what latest/set_env.sh does, and falls
# back to the recorded location under shells that cannot find their own file; a DLSlime-style
# build (latest/*-linux/include, latest/lib64, ascendcl metadef llm_datadist) compiles, links and
# runs the ADXL sample's client code; uninstall removes exactly that, and a vendor's own
# <toolkit>/set_env.sh is refused unless FORCE=1.
root=$work/root
toolkit=/usr/local/Ascend/ascend-toolkit
quiet mk install DESTDIR="$root" PREFIX="$toolkit/latest" RELEASE_DIR="$build" CARGO="$fake_cargo"
staged=$root$toolkit
[ -f "$staged/set_env.sh" ] && [ -d "$staged/latest/$arch_dir/include/acl" ] || fail "no toolkit-level set_env.sh or $arch_dir"
[ "$(snapshot "$root" | grep -c -v -E -e '^. ./usr/local/Ascend/ascend-toolkit/(latest(/|$)|set_env.sh$)')" = 4 ] ||
    fail "an install at <toolkit>/latest wrote beside it more than set_env.sh: $(snapshot "$root" | grep -v /latest/)"
got=$(clean bash -c '. "$1" && printf "%s|%s|%s" "$ASCEND_TOOLKIT_HOME" "$ASCEND_HOME_PATH" "$LD_LIBRARY_PATH"' _ "$staged/set_env.sh")
[ "$got" = "$staged/latest|$staged/latest|$staged/latest/lib64" ] || fail "<toolkit>/set_env.sh under bash: $got"
grep -qxF "    _ascendless_latest='$toolkit/latest'" "$staged/set_env.sh" ||
    fail "<toolkit>/set_env.sh does not record $toolkit/latest for shells that cannot find it"
dlslime_root=$(echo "$staged"/latest/*-linux)
quiet c++ -std=c++17 -Wall -Wextra -Werror -c -I"$dlslime_root/include" -o "$work/dlslime.o" \
    "$here/tests/install/cxx_preload_app.cpp"
quiet c++ -o "$work/dlslime_app" "$work/dlslime.o" -L"$staged/latest/lib64" -L"$dlslime_root/lib64" \
    -lascendcl -lmetadef -lllm_datadist -Wl,-rpath,"$dlslime_root/lib64"
quiet "$work/dlslime_app" "$(free_port)"
quiet mk uninstall DESTDIR="$root" PREFIX="$toolkit/latest"
[ "$(snapshot "$root")" = "$(printf 'd ./usr\nd ./usr/local\nd ./usr/local/Ascend\nd ./usr/local/Ascend/ascend-toolkit')" ] ||
    fail "uninstall from <toolkit>/latest left: $(snapshot "$root")"
# The vendor's shape: latest a link to a versioned directory; its own set_env.sh beside it.
mkdir -p "$staged/8.0.0"
ln -s 8.0.0 "$staged/latest"
echo "vendor" >"$staged/set_env.sh"
if "$here/scripts/install.sh" "$staged/latest" "$toolkit/latest" "$build" "$version" >"$work/out.log" 2>&1; then
    fail "install replaced the vendor's <toolkit>/set_env.sh"
fi
grep -q '\.\./set_env.sh' "$work/out.log" || fail "unclear refusal: $(cat "$work/out.log")"
rm "$staged/set_env.sh"
quiet "$here/scripts/install.sh" "$staged/latest" "$toolkit/latest" "$build" "$version"
[ -f "$staged/8.0.0/lib64/libascendless.so.$version" ] && [ -L "$staged/latest" ] || fail "install through latest -> 8.0.0"
quiet "$here/scripts/uninstall.sh" "$staged/latest"
[ "$(snapshot "$staged")" = "$(printf 'd ./8.0.0\nl ./latest')" ] || fail "uninstall through latest left: $(snapshot "$staged")"
# A <toolkit>/set_env.sh that another toolkit wrote after ours stays.
quiet "$here/scripts/install.sh" "$staged/latest" "$toolkit/latest" "$build" "$version"
echo "vendor" >"$staged/set_env.sh"
quiet "$here/scripts/uninstall.sh" "$staged/latest"
[ "$(cat "$staged/set_env.sh")" = vendor ] || fail "uninstall removed a <toolkit>/set_env.sh it no longer owned"
ok "make install PREFIX=$toolkit/latest: $arch_dir, <toolkit>/set_env.sh (found by bash, recorded for dash), a DLSlime-style build runs; exact uninstall; latest as a link; the vendor's set_env.sh kept"

# Exact uninstall over existing directories, and an upgrade leaves no old version behind.
pre=$work/existing
mkdir -p "$pre/lib64" "$pre/include/acl" "$pre/share/empty"
echo mine >"$pre/lib64/user-file"
before=$(snapshot "$pre")
quiet "$here/scripts/install.sh" "$pre" "$pre" "$build" 0.0.1-old
quiet "$here/scripts/install.sh" "$pre" "$pre" "$build" "$version"
[ ! -e "$pre/lib64/libascendless.so.0.0.1-old" ] || fail "reinstall left the old version's library"
[ "$(readlink -f "$pre/lib64/libascendless.so")" = "$pre/lib64/libascendless.so.$version" ] || fail "reinstall links"
quiet "$here/scripts/uninstall.sh" "$pre"
[ "$(snapshot "$pre")" = "$before" ] ||
    fail "install, upgrade and uninstall changed the prefix: $(diff <(echo "$before") <(snapshot "$pre") | tr '\n' ' ')"
up=$work/upgrade
quiet "$here/scripts/install.sh" "$up" "$up" "$build" 0.0.1-old
echo mine >"$up/lib64/user-file"
quiet "$here/scripts/install.sh" "$up" "$up" "$build" "$version"
rm "$up/lib64/user-file"
quiet "$here/scripts/uninstall.sh" "$up"
[ ! -e "$up" ] || fail "uninstall after an upgrade left the prefix: $(snapshot "$up")"
# ... also over a manifest from an install.sh that recorded only files (no header, no directories).
quiet "$here/scripts/install.sh" "$up" "$up" "$build" 0.0.1-old
grep -v -e '^#' -e '/$' "$up/share/ascendless/install-manifest.txt" >"$work/legacy.txt"
cp "$work/legacy.txt" "$up/share/ascendless/install-manifest.txt"
quiet "$here/scripts/install.sh" "$up" "$up" "$build" "$version"
quiet "$here/scripts/uninstall.sh" "$up"
[ "$(snapshot "$up")" = "" ] || fail "upgrade over an old-style manifest left: $(snapshot "$up")"
rmdir "$up"
ok "uninstall keeps directories that existed before; an upgrade leaves nothing of the old version"

# A file that is not ours (the vendor's libascendcl.so) is not overwritten without FORCE=1.
echo vendor >"$pre/lib64/libascendcl.so"
before=$(snapshot "$pre")
if "$here/scripts/install.sh" "$pre" "$pre" "$build" "$version" >"$work/out.log" 2>&1; then
    fail "install overwrote a file it did not install"
fi
grep -q 'lib64/libascendcl.so' "$work/out.log" && grep -q 'FORCE=1' "$work/out.log" || fail "unclear refusal: $(cat "$work/out.log")"
[ "$(snapshot "$pre")" = "$before" ] && [ "$(cat "$pre/lib64/libascendcl.so")" = vendor ] ||
    fail "a refused install changed the prefix"
FORCE=1 quiet "$here/scripts/install.sh" "$pre" "$pre" "$build" "$version"
readelf -d "$pre/lib64/libascendcl.so" 2>/dev/null | grep -qF 'Library soname: [libascendcl.so]' || fail "FORCE=1 did not overwrite"
quiet "$here/scripts/uninstall.sh" "$pre"
ok "install refuses to overwrite another toolkit's files unless FORCE=1"

# The version file: a project with no language enabled (no CMAKE_SIZEOF_VOID_P) is accepted;
# a 32-bit one and another major version are not.
major=${version%%.*} minor=${version#*.}
minor=${minor%%.*}
n=0
version_case() { # version_case WANT EXPECT [CMAKE ARGS...]
    n=$((n + 1))
    quiet cmake -S "$here/tests/install/version_check" -B "$work/version$n" -DCMAKE_PREFIX_PATH="$prefix" \
        -DWANT="$1" -DEXPECT="$2" "${@:3}"
}
version_case "$major.$minor" YES -DSTATIC_APP="$here/examples-c/acl_init.c"
version_case "$version" YES -DCMAKE_SIZEOF_VOID_P=8
version_case "$major.$minor" NO -DCMAKE_SIZEOF_VOID_P=4
version_case "$((major + 1)).0" NO
quiet cmake --build "$work/version1"
if ldd "$work/version1/static_app" | grep libascendless >/dev/null; then fail "Ascendless::static app needs the shared library"; fi
quiet "$work/version1/static_app"
ok "find_package(Ascendless $major.$minor) works from project(x NONE) (Ascendless::static links); 32-bit and $((major + 1)).0 are refused"

# Uninstall removes exactly what was installed.
echo keep >"$prefix/lib64/user-file"
quiet "$here/scripts/uninstall.sh" "$prefix"
left=$(cd "$prefix" && find . -mindepth 1 | sort | tr '\n' ' ')
[ "$left" = "./lib64 ./lib64/user-file " ] || fail "uninstall left: $left"
ok "uninstall removes exactly what was installed"

echo "$pass passed, 0 failed"

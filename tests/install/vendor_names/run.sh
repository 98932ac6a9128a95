#!/usr/bin/env bash
# The vendor-named libraries of an installed tree (src/vendor_libs.txt, docs/install.md "One
# library under the vendor's names"): built here, runs there.
#  1. Each lib64/<vendor name> is a real shared object with the vendor's soname, a filter of
#     libascendless.so.0, exporting exactly the symbols the table gives it.
#  2. Programs linked every documented way (vendor-style -l lines, with and without
#     --as-needed; find_package targets; the vendor's CMake targets; pkg-config) record only
#     vendor names in NEEDED; ascendless's own API (ascendless.h) records libascendless.so.0.
#  3. Those programs start and run against a stand-in for a vendor machine: a directory holding
#     only libraries with the vendor's names and sonames (copies of ascendless's library with
#     the soname rewritten) and no libascendless.so* anywhere on the search path.
#  4. One runtime: a symbol looked up through any vendor name is the one library's function, and
#     a device set through libacl_rt.so is current through libascendcl.so.
# Usage: run.sh BUILD_DIR VERSION
set -euo pipefail

build=$(CDPATH= cd -- "$1" >/dev/null && pwd) version=$2
# shellcheck source=SCRIPTDIR/../../lib.sh
source "$(dirname -- "$0")/../../lib.sh"
quiet() { "$@" >"$work/out.log" 2>&1 || { cat "$work/out.log" >&2; fail "$*"; }; }

"$here/scripts/install.sh" "$prefix" "$prefix" "$build" "$version" >/dev/null
lib64=$prefix/lib64
mapfile -t sonames < <(sed -e 's/#.*//' "$here/src/vendor_libs.txt" | awk 'NF { print $1 }')
[ ${#sonames[@]} -ge 10 ] || fail "src/vendor_libs.txt lists ${#sonames[@]} libraries"
dynamic() { readelf -d "$1" | sed -n "s/.*($2).*\\[\\(.*\\)\\]/\\1/p"; } # dynamic FILE TAG

# 1. The libraries themselves.
"$here/scripts/vendor_libs.sh" --list "$lib64/libascendless.so.$version" >"$work/want.txt"
for name in "${sonames[@]}"; do
    f=$lib64/$name
    [ -f "$f" ] && [ ! -L "$f" ] || fail "$name is not a file of its own"
    [ "$(dynamic "$f" SONAME)" = "$name" ] || fail "$name has soname '$(dynamic "$f" SONAME)'"
    [ "$(dynamic "$f" FILTER)" = libascendless.so.0 ] || fail "$name is not a filter of libascendless.so.0"
    [ "$(dynamic "$f" RUNPATH)" = "\$ORIGIN" ] || fail "$name does not find libascendless.so.0 beside it"
    got=$(nm -D --defined-only --format=posix "$f" | awk '$2 != "A" && $1 != "_init" && $1 != "_fini" { print $1 }' | LC_ALL=C sort)
    want=$(awk -v lib="$name" '$1 == lib { print $2 }' "$work/want.txt" | LC_ALL=C sort)
    [ "$got" = "$want" ] || fail "$name exports $(diff <(echo "$want") <(echo "$got") | grep -c '^[<>]') symbols other than its faces'"
done
for name in libascendcl.so libacl_rt.so libllm_datadist.so libcann_hixl.so libmetadef.so libc_sec.so; do
    [ "$(awk -v lib="$name" '$1 == lib' "$work/want.txt" | wc -l)" -gt 0 ] || fail "$name exports nothing"
done
[ "$(awk '$1 == "libascendcl.so"' "$work/want.txt" | wc -l)" -ge 390 ] || fail "libascendcl.so exports too few acl functions"
if awk '$2 ~ /^ascendless_/' "$work/want.txt" | grep -q .; then fail "a vendor-named library exports ascendless's own API"; fi
# docs/install.md's table says the same as src/vendor_libs.txt.
table=$(sed -n '/^## One library under the vendor/,/^## /p' "$here/docs/install.md" |
    sed -n 's/^| `\(lib[a-z_]*\.so\)` | \([A-Za-z_ =*]*\) *|$/\1 \2/p' | sed 's/ *$//')
from_table=$(sed -e 's/#.*//' "$here/src/vendor_libs.txt" | awk 'NF { $1 = $1; print }')
[ "$table" = "$from_table" ] || fail "docs/install.md's table of vendor names differs from src/vendor_libs.txt: $(diff <(echo "$from_table") <(echo "$table") | tr '\n' ' ')"
ok "${#sonames[@]} vendor-named libraries: real files, the vendor's sonames, filters of libascendless.so.0, each exporting its faces' symbols"

# 2. Programs built every documented way record only the vendor's names.
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' '; }
vendor_only() { # vendor_only PROGRAM NAME...: NEEDED has each NAME and no libascendless
    local n got
    got=$(needed "$1")
    case " $got" in *" libascendless"*) fail "${1##*/} records libascendless: $got" ;; esac
    for n in "${@:2}"; do
        case " $got " in *" $n "*) ;; *) fail "${1##*/} does not record $n: $got" ;; esac
    done
}
inc=(-I"$prefix/include" -I"$prefix/include/external/ge_common")
quiet cc -Wall -Wextra -Werror "${inc[@]}" -o "$work/c_app" "$here/examples-c/acl_init.c" -L"$lib64" -lascendcl
vendor_only "$work/c_app" libascendcl.so
quiet cc -Wall -Wextra -Werror "${inc[@]}" -o "$work/rt_app" "$here/examples-c/runtime_copy.c" -L"$lib64" -lacl_rt
vendor_only "$work/rt_app" libacl_rt.so
for flags in -Wl,--no-as-needed -Wl,--as-needed; do
    quiet c++ -std=c++17 -Wall -Wextra -Werror -D_GLIBCXX_USE_CXX11_ABI=0 "${inc[@]}" -o "$work/cxx_app$flags" \
        "$here/tests/install/cxx_preload_app.cpp" "$flags" -L"$lib64" -lllm_datadist -lgraph -lascendcl
    vendor_only "$work/cxx_app$flags" libllm_datadist.so
    quiet c++ -std=c++17 -Wall -Wextra -Werror "${inc[@]}" -I"$here/examples-c/vendor-style" -o "$work/hixl_client$flags" \
        "$here/examples-c/hixl-vendor-style/hixl_client.cpp" "$flags" -L"$lib64" -lcann_hixl -lacl_rt
    vendor_only "$work/hixl_client$flags" libcann_hixl.so
done
vendor_only "$work/cxx_app-Wl,--no-as-needed" libllm_datadist.so libgraph.so libascendcl.so
vendor_only "$work/hixl_client-Wl,--no-as-needed" libcann_hixl.so libacl_rt.so
cp "$work/cxx_app-Wl,--as-needed" "$work/cxx_app"
cp "$work/hixl_client-Wl,--as-needed" "$work/hixl_client"
quiet c++ -std=c++17 -Wall -Wextra -Werror "${inc[@]}" -I"$here/examples-c/vendor-style" -o "$work/hixl_server" \
    "$here/examples-c/hixl-vendor-style/hixl_server.cpp" -L"$lib64" -lcann_hixl -lacl_rt
# shellcheck disable=SC2046
quiet cc -Wall -Wextra -Werror -o "$work/pc_app" "$here/examples-c/acl_init.c" $(PKG_CONFIG_PATH="$lib64/pkgconfig" pkg-config --cflags --libs ascendless)
vendor_only "$work/pc_app" libascendcl.so
(
    # shellcheck source=/dev/null
    source "$prefix/set_env.sh"
    quiet cmake -S "$here/examples-c" -B "$work/examples"
    quiet cmake --build "$work/examples" -j 2
    quiet cmake -S "$here/examples-c/hixl-cann-layout" -B "$work/cann_layout" \
        -DCMAKE_PROJECT_INCLUDE="$lib64/cmake/Ascendless/AscendlessCannTargets.cmake"
    quiet cmake --build "$work/cann_layout" -j 2
) || exit 1
vendor_only "$work/examples/acl_init" libascendcl.so
vendor_only "$work/examples/adxl_capabilities" libllm_datadist.so
vendor_only "$work/examples/hixl_client" libcann_hixl.so
vendor_only "$work/cann_layout/hixl_fabric_pair" libcann_hixl.so
case " $(needed "$work/examples/adxl_transfer") " in
    *" libascendless.so.0 "*) ;;
    *) fail "adxl_transfer (ascendless.h, Ascendless::ascendless) does not record libascendless.so.0" ;;
esac
ok "programs linked with -lascendcl, -lacl_rt, -lllm_datadist -lgraph -lascendcl and -lcann_hixl -lacl_rt (with and without --as-needed), find_package, the vendor's CMake targets and pkg-config record only vendor names; ascendless.h's target records libascendless.so.0"

# 3. A stand-in for a machine with the vendor's toolkit: only the vendor's names and sonames.
# Each is ascendless's library with its soname (the string in .dynstr) rewritten in place.
vendor=$work/vendor-machine
mkdir -p "$vendor"
for name in "${sonames[@]}"; do
    python3 - "$lib64/libascendless.so.$version" "$vendor/$name" "$name" <<'PY' || fail "could not make a stand-in $name"
import subprocess, sys
src, dst, name = sys.argv[1], sys.argv[2], sys.argv[3].encode()
old = b"libascendless.so.0"
assert len(name) <= len(old), name
data = bytearray(open(src, "rb").read())
sections = subprocess.run(["readelf", "-W", "-S", src], check=True, capture_output=True, text=True).stdout
row = next(line.split("]", 1)[1].split() for line in sections.splitlines() if " .dynstr " in line)
start, size = int(row[3], 16), int(row[4], 16)
at = data.find(old + b"\0", start, start + size)
assert at >= 0 and data.find(old + b"\0", at + 1, start + size) < 0, "one soname string in .dynstr"
data[at:at + len(old)] = name.ljust(len(old), b"\0")
open(dst, "wb").write(data)
PY
    [ "$(dynamic "$vendor/$name" SONAME)" = "$name" ] || fail "stand-in $name has soname $(dynamic "$vendor/$name" SONAME)"
done
on_vendor() { env -u LD_PRELOAD LD_LIBRARY_PATH="$vendor" "$@"; }
for app in c_app rt_app cxx_app hixl_client hixl_server; do
    if on_vendor ldd "$work/$app" | grep -E 'libascendless|not found' >&2; then fail "$app on the stand-in (above)"; fi
done
if ls "$vendor" | grep libascendless >&2; then fail "the stand-in holds libascendless (above)"; fi
on_vendor timeout 60 "$work/c_app" >"$work/out.log" 2>&1 || fail "acl_init on the stand-in: $(cat "$work/out.log")"
on_vendor timeout 60 "$work/rt_app" >"$work/out.log" 2>&1 || fail "runtime_copy on the stand-in: $(cat "$work/out.log")"
on_vendor timeout 60 "$work/cxx_app" "$(free_port)" >"$work/out.log" 2>&1 || fail "the ADXL program on the stand-in: $(cat "$work/out.log")"
grep -q 'READ and WRITE of .* bytes verified' "$work/out.log" || fail "the ADXL program on the stand-in: $(cat "$work/out.log")"
on_vendor timeout 120 "$here/examples-c/hixl-vendor-style/run.sh" "$work/hixl_server" "$work/hixl_client" "$(free_port)" >"$work/out.log" 2>&1 ||
    fail "the HIXL pair on the stand-in: $(cat "$work/out.log")"
grep -q "server: the client's WRITE arrived intact" "$work/out.log" || fail "the HIXL pair on the stand-in: $(cat "$work/out.log")"
ok "those programs start and run against a stand-in holding only the vendor's names and sonames, no libascendless.so* (C runtime, ADXL in one process, a HIXL server and client)"

# 4. One runtime behind every name.
pairs=()
while read -r name sym; do
    case " ${pairs[*]-} " in *" $name:"*) ;; *) pairs+=("$name:$sym") ;; esac
done <"$work/want.txt"
quiet cc -Wall -Wextra -Werror "${inc[@]}" -o "$work/one_runtime" "$here/tests/install/vendor_names/one_runtime.c" -ldl
env -u LD_LIBRARY_PATH timeout 60 "$work/one_runtime" "$lib64" "${pairs[@]}" >"$work/out.log" 2>&1 || fail "one runtime: $(cat "$work/out.log")"
grep -q "one_runtime: ${#pairs[@]} lookups" "$work/out.log" || fail "one runtime: $(cat "$work/out.log")"
ok "one runtime: a symbol of each of ${#pairs[@]} vendor names resolves to libascendless.so.0's own, and a device set through libacl_rt.so is current through libascendcl.so"

"$here/scripts/uninstall.sh" "$prefix" >/dev/null
[ ! -e "$prefix" ] || fail "uninstall left $(find "$prefix" | head -n 5)"
ok "uninstall removes the vendor-named libraries"
echo "$pass passed, 0 failed"

#!/usr/bin/env bash
# uninstall.sh DEST: removes exactly what install.sh installed into DEST, as listed in
# DEST/share/ascendless/install-manifest.txt: the files and symlinks it wrote (one of them may be
# ../set_env.sh, the toolkit-level file of an install at <toolkit>/latest), then the
# directories it created (lines ending in "/"), deepest first and only if empty. Directories
# that existed before the install stay, even empty ones. The bytecode Python wrote for an
# installed module (its __pycache__) goes with the module.
set -euo pipefail

if [ $# -ne 1 ]; then
    echo "usage: $0 DEST" >&2
    exit 2
fi
dest=$1
manifest=$dest/share/ascendless/install-manifest.txt
if [ ! -f "$manifest" ]; then
    echo "nothing to uninstall: $manifest not found" >&2
    exit 1
fi
files=() dirs=() legacy=1
while IFS= read -r line; do
    case $line in
        '#'*) legacy=0 ;;
        '') ;;
        ../set_env.sh) # the toolkit-level file of an install at <toolkit>/latest (install.sh)
            files+=("$line")
            ;;
        /* | .. | ../* | */.. | */../*) # never outside DEST
            echo "uninstall.sh: ignoring manifest entry '$line'" >&2
            ;;
        */) dirs+=("${line%/}") ;;
        *) files+=("$line") ;;
    esac
done <"$manifest"
# A manifest without the header comment comes from an install.sh that recorded no directories:
# as that version did, try the directories that held its files.
if [ "$legacy" = 1 ]; then
    for f in "${files[@]}"; do
        while [ "${f%/*}" != "$f" ]; do
            f=${f%/*}
            dirs+=("$f")
        done
    done
fi

for f in "${files[@]}"; do
    if [ "$f" = ../set_env.sh ] && [ -f "$dest/$f" ] && ! grep -q _ascendless_latest "$dest/$f"; then
        echo "uninstall.sh: keeping $dest/$f: another toolkit has replaced it" >&2
        continue
    fi
    rm -f -- "$dest/$f"
    # Python writes the bytecode of an imported module next to it (dir/__pycache__/NAME.*.pyc):
    # it goes with its source, and so does the __pycache__ directory once empty.
    case $f in
        *.py)
            pycache=__pycache__
            [ "${f%/*}" = "$f" ] || pycache=${f%/*}/__pycache__
            base=${f##*/}
            rm -f -- "$dest/$pycache/${base%.py}".*.pyc
            dirs+=("$pycache")
            ;;
    esac
done
# Deepest first, so a parent is tried after its children; rmdir keeps any non-empty directory.
if [ ${#dirs[@]} -gt 0 ]; then
    printf '%s\n' "${dirs[@]}" | LC_ALL=C sort -u | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2- |
        while IFS= read -r d; do
            if [ "$d" = . ]; then rmdir -- "$dest" 2>/dev/null || true; else rmdir -- "$dest/$d" 2>/dev/null || true; fi
        done
fi
echo "uninstalled ascendless from $dest (${#files[@]} files)"

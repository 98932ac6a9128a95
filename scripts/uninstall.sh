#!/usr/bin/env bash
# Removes exactly what install.sh installed into DEST, then the directories that became empty.
set -euo pipefail

dest=$1
manifest=$dest/share/ascendless/install-manifest.txt
if [ ! -f "$manifest" ]; then
    echo "nothing to uninstall: $manifest not found" >&2
    exit 1
fi
mapfile -t files <"$manifest"
for f in "${files[@]}"; do
    rm -f -- "$dest/$f"
done
# Deepest directories first; rmdir leaves any directory that still holds other files.
for f in "${files[@]}"; do dirname -- "$f"; done | sort -u | awk '{ print length($0) " " $0 }' |
    sort -rn | cut -d' ' -f2- | while read -r d; do
    while [ "$d" != "." ] && rmdir -- "$dest/$d" 2>/dev/null; do d=$(dirname -- "$d"); done
done
echo "uninstalled ascendless from $dest (${#files[@]} files)"

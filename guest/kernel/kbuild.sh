#!/bin/sh
# Build one out-of-tree module with Kbuild in a copy of its sources (Kbuild of 6.1
# writes next to the sources; the checkout stays clean).
# usage: kbuild.sh KERNEL_HEADERS INCLUDE_DIR WORK_DIR OUTPUT_KO SOURCE_FILE...
# INCLUDE_DIR: the checkout's include/ (retrolink/ headers), as RETROLINK_INCLUDE for Kbuild
set -e
kdir=$1 inc=$(cd "$2" && pwd) work=$3 out=$4
shift 4
mkdir -p "$work"
for f in "$@"; do
    cmp -s "$f" "$work/$(basename "$f")" || cp "$f" "$work/"
done
make -s -C "$kdir" M="$(cd "$work" && pwd)" RETROLINK_INCLUDE="$inc" modules W=1 >"$work/build.log" 2>&1 || {
    cat "$work/build.log" >&2
    exit 1
}
# Kbuild warnings are errors for us: the module must build clean
if grep -E "warning:" "$work/build.log" >&2; then
    exit 1
fi
cp "$work/$(basename "$out")" "$out"

#!/bin/sh
# Build one out-of-tree module with Kbuild in a copy of its sources (Kbuild of 6.1
# writes next to the sources; the checkout stays clean).
# usage: kbuild.sh KERNEL_HEADERS INCLUDE_DIR WORK_DIR OUTPUT_KO SOURCE_FILE...
# INCLUDE_DIR: the checkout's include/ (retrolink/ headers), as RETROLINK_INCLUDE for Kbuild
# A SOURCE_FILE ending in .symvers is another module's Module.symvers, whose exports this
# module uses (KBUILD_EXTRA_SYMBOLS: norma.ko over cenju3.ko); this module's own goes to
# OUTPUT_KO with .symvers for .ko, for the modules over it.
set -e
kdir=$1 inc=$(cd "$2" && pwd) work=$3 out=$4
shift 4
mkdir -p "$work"
extra=""
for f in "$@"; do
    case $f in
    *.symvers) extra="$extra $(cd "$(dirname "$f")" && pwd)/$(basename "$f")" ;;
    *) cmp -s "$f" "$work/$(basename "$f")" || cp "$f" "$work/" ;;
    esac
done
# no checkout or build path in the module (debug info): the same .ko from every clone
work_abs=$(cd "$work" && pwd)
make -s -C "$kdir" M="$work_abs" RETROLINK_INCLUDE="$inc" \
    KCFLAGS="-ffile-prefix-map=$work_abs/= -ffile-prefix-map=$(dirname "$inc")/=" \
    KBUILD_EXTRA_SYMBOLS="${extra# }" modules W=1 >"$work/build.log" 2>&1 || {
    cat "$work/build.log" >&2
    exit 1
}
# Kbuild warnings are errors for us: the module must build clean
if grep -E "warning:" "$work/build.log" >&2; then
    exit 1
fi
cp "$work/$(basename "$out")" "$out"
cp "$work/Module.symvers" "${out%.ko}.symvers"

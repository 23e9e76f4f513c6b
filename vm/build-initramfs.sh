#!/usr/bin/env bash
# build-initramfs.sh: pack busybox-static, hackbench (with the shared
# libraries it loads), the kit's init, its guest scripts and their library into
# $KIT_WORK/initramfs.cpio, an uncompressed newc archive.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

out=$KIT_INITRAMFS
# A class's shared kit has its own, which only make share remakes.
if shared_build; then
	[ -f "$out" ] || die "the shared kit in $KIT_SHARED has no initramfs; ask for make share to be run again"
	exit 0
fi
busybox=/bin/busybox
hackbench=/usr/bin/hackbench
for f in "$busybox" "$hackbench"; do
	[ -x "$f" ] || die "$f is missing; run: make deps"
done

# Rebuild only when an input is newer than the archive.
if [ -f "$out" ] && [ -z "$(find "$KIT_ROOT/vm/guest" "$busybox" "$hackbench" \
	-newer "$out" -print -quit)" ]; then
	exit 0
fi

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,usr/bin,proc,sys,dev,tmp,kit}
cp "$busybox" "$root/bin/busybox"
cp "$KIT_ROOT/vm/guest/init" "$root/init"
cp -r "$KIT_ROOT/vm/guest/run" "$root/kit/run"
cp "$KIT_ROOT/vm/guest/lib.sh" "$root/kit/lib.sh"
cp "$hackbench" "$root/usr/bin/hackbench"
# The dynamic loader and libraries, at the paths ldd names.
ldd "$hackbench" | grep -o '/[^ ]*' | while read -r lib; do
	mkdir -p "$root$(dirname "$lib")"
	cp -L "$lib" "$root$lib"
done
mkdir -p "$(dirname "$out")"
(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet -R 0:0) >"$out.new"
mv "$out.new" "$out"
note "==> initramfs: $out"

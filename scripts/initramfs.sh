#!/usr/bin/env bash
# initramfs.sh STAGE: make the initramfs the stage's kernel boots with, and
# print its path: busybox-static, hackbench (with the shared libraries it
# loads), the kit's init, guest scripts and their library (guest/), and
# the stage's own guest files (scripts/build-kernel.sh: the kit's modules in
# /lib/modules/kit, the stage's slabinfo tool).  One list says what goes
# in, written next to the archive (KIT_WORK/boot/LABEL.list), and the
# tree's own usr/gen_init_cpio, built with the kernel, packs it: entries
# owned by root and a /dev/console for init, without being root.  Made
# again at each boot (a fraction of a second), in KIT_WORK (the build
# folder may be a class's, read-only), and replaced by a rename, so that
# two boots at once read whole files.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
label=$(stage_label "$stage")
out=$KIT_BUILD/$label
gen=$out/usr/gen_init_cpio
[ -x "$gen" ] || die "stage $stage is not built (no $gen); run: make build STAGE=$stage"
busybox=/bin/busybox
hackbench=/usr/bin/hackbench
for f in "$busybox" "$hackbench"; do
	[ -x "$f" ] || die "$f is missing; run: make deps"
done

declare -A made=()
# guest_dir PATH: the directory PATH of the guest, and those above it,
# once each.
guest_dir() {
	[ "$1" != / ] && [ -z "${made[$1]:-}" ] || return 0
	guest_dir "$(dirname "$1")"
	made[$1]=1
	echo "dir $1 0755 0 0"
}

# guest_file PATH HOST_FILE MODE: a file of the guest, from the host's.
guest_file() {
	guest_dir "$(dirname "$1")"
	echo "file $1 $2 $3 0 0"
}

list() {
	local f lib
	# init's standard input and output: the kernel opens /dev/console
	# before it starts init (devtmpfs, mounted later, has the same node).
	guest_dir /dev
	echo "nod /dev/console 0600 0 0 c 5 1"
	for f in /proc /sys /tmp /sbin; do guest_dir "$f"; done
	guest_file /bin/busybox "$busybox" 0755
	guest_file /init "$KIT_ROOT/guest/init" 0755
	guest_file /kit/lib.sh "$KIT_ROOT/guest/lib.sh" 0644
	for f in "$KIT_ROOT"/guest/run/*; do
		guest_file "/kit/run/${f##*/}" "$f" 0755
	done
	guest_file /usr/bin/hackbench "$hackbench" 0755
	# The dynamic loader and libraries, at the paths ldd names.
	for lib in $(ldd "$hackbench" | grep -o '/[^ ]*'); do
		guest_file "$lib" "$(realpath "$lib")" 0755
	done
	if [ -d "$out/guest" ]; then
		while IFS= read -r f; do
			guest_file "${f#"$out/guest"}" "$f" "$(stat -c %a "$f")"
		done < <(find "$out/guest" -type f | LC_ALL=C sort)
	fi
}

boot=$KIT_WORK/boot
mkdir -p "$boot"
spec=$(mktemp "$boot/$label.list.XXXXXX")
tmp=$(mktemp "$boot/$label.cpio.XXXXXX")
list >"$spec"
if ! "$gen" "$spec" >"$tmp"; then
	rm -f "$spec" "$tmp"
	die "usr/gen_init_cpio of stage $label could not pack its initramfs (its error is above)"
fi
chmod 644 "$spec" "$tmp"
mv "$spec" "$boot/$label.list"
mv "$tmp" "$boot/$label.cpio"
printf '%s\n' "$boot/$label.cpio"

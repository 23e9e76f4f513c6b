#!/usr/bin/env bash
# share.sh [STAGE...]: make KIT_WORK a class's shared kit, for the students
# on this host (KIT_SHARED=KIT_WORK, docs/instructors.md): build each stage
# (by default every one) and the initramfs, keep each stage's source as gdb
# must show it, and let everyone read it all.
#
# The kernels' debug information names the one tree they were built from,
# which holds one stage at a time; gdb reads each stage's source from
# source/STAGE instead: hard links to one pristine copy, but for the files
# the stage's patch changes.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ -z "$KIT_SHARED" ] || die "make share builds a shared kit in KIT_WORK; leave KIT_SHARED out"
[ -z "$KIT_SOURCE" ] || die "make share builds the stages' own source; leave TREE out"
[ -z "$KIT_VARIANT" ] || die "make share builds the stages' own configuration; leave VARIANT out"

stages=()
if [ $# -eq 0 ]; then
	mapfile -t stages < <(kit_stages)
else
	for spec in "$@"; do
		stages+=("$(stage_resolve "$spec")")
	done
fi

"$KIT_ROOT/vm/build-initramfs.sh"
"$KIT_ROOT/vm/unpack-source.sh"

source=$KIT_WORK/source
pristine=$source/pristine
if [ ! -d "$pristine" ]; then
	note "==> keeping a pristine copy of the source in $pristine"
	rm -rf "$pristine.new"
	mkdir -p "$pristine.new"
	git -C "$KIT_TREE" archive pristine | tar -x -C "$pristine.new"
	mv "$pristine.new" "$pristine"
fi

for stage in "${stages[@]}"; do
	"$KIT_ROOT/vm/build-kernel.sh" "$stage"
	# The files the stage's patch changes, adds or removes, as the tree
	# holds them now: each replaces its link to the pristine copy.
	dir=$source/$stage
	rm -rf "$dir.new"
	cp -al "$pristine" "$dir.new"
	{
		git -C "$KIT_TREE" diff --name-only --no-renames pristine
		git -C "$KIT_TREE" ls-files -o --exclude-standard
	} | while IFS= read -r file; do
		rm -f "$dir.new/$file"
		if [ -e "$KIT_TREE/$file" ]; then
			mkdir -p "$(dirname "$dir.new/$file")"
			cp -p "$KIT_TREE/$file" "$dir.new/$file"
		fi
	done
	rm -rf "$dir"
	mv "$dir.new" "$dir"
	note "==> stage $stage is shared: its kernel in $KIT_BUILD/$stage, its source in $dir"
done

chmod -R a+rX "$KIT_BUILD" "$source" "$KIT_INITRAMFS"
{
	printf 'tree %s\n' "$(realpath "$KIT_TREE")"
	for stage in $(kit_stages); do
		if [ -d "$source/$stage" ] && [ -f "$KIT_BUILD/$stage/kit-built" ]; then
			printf 'stage %s %s\n' "$stage" "$(readlink "$KIT_BUILD/$stage")"
		fi
	done
} >"$KIT_WORK/kit-shared.new"
mv "$KIT_WORK/kit-shared.new" "$KIT_WORK/kit-shared"
chmod a+r "$KIT_WORK/kit-shared"
note "==> students on this host use it with: export KIT_SHARED=$(realpath "$KIT_WORK")"

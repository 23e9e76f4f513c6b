#!/usr/bin/env bash
# share.sh [STAGE...]: make KIT_WORK a class's shared kit, for the students
# on this host (KIT_SHARED=KIT_WORK, docs/instructors.md): build each stage
# (by default every one), keep each stage's source as gdb
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
[ -z "$KIT_TREE" ] || die "make share builds the stages' own source; leave TREE out"
[ -z "$KIT_VARIANT" ] || die "make share builds the stages' own configuration; leave VARIANT out"

stages=()
if [ $# -eq 0 ]; then
	mapfile -t stages < <(kit_stages)
else
	for spec in "$@"; do
		stages+=("$(stage_resolve "$spec")")
	done
fi

"$KIT_ROOT/scripts/unpack-source.sh"

# The pristine copy, made again when the tree's pristine commit changes
# (a new linux-source unpacked).
source=$KIT_WORK/source
pristine=$source/pristine
commit=$(git -C "$KIT_KERNEL_TREE" rev-parse pristine)
if [ "$(cat "$source/pristine.commit" 2>/dev/null)" != "$commit" ]; then
	note "==> keeping a pristine copy of the source in $pristine"
	rm -rf "$pristine.new" "$source/pristine.commit"
	mkdir -p "$pristine.new"
	git -C "$KIT_KERNEL_TREE" archive pristine | tar -x -C "$pristine.new"
	rm -rf "$pristine"
	mv "$pristine.new" "$pristine"
	echo "$commit" >"$source/pristine.commit"
fi

for stage in "${stages[@]}"; do
	"$KIT_ROOT/scripts/build-kernel.sh" "$stage"
	# The files the stage's patch changes, adds or removes, as the tree
	# holds them now (untracked ones too: Debian's .gitignore ignores
	# every path): each replaces its link to the pristine copy.  Swapped
	# in by renames, so that a student's gdb finds one or the other.
	dir=$source/$stage
	rm -rf "$dir.new" "$dir.old"
	cp -al "$pristine" "$dir.new"
	{
		git -C "$KIT_KERNEL_TREE" diff --name-only --no-renames pristine
		git -C "$KIT_KERNEL_TREE" ls-files -o
	} | while IFS= read -r file; do
		rm -f "$dir.new/$file"
		if [ -e "$KIT_KERNEL_TREE/$file" ]; then
			mkdir -p "$(dirname "$dir.new/$file")"
			cp -p "$KIT_KERNEL_TREE/$file" "$dir.new/$file"
		fi
	done
	if [ -d "$dir" ]; then mv "$dir" "$dir.old"; fi
	mv "$dir.new" "$dir"
	rm -rf "$dir.old"
	note "==> stage $stage is shared: its kernel in $KIT_BUILD/$stage, its source in $dir"
done

# Everyone reads the stages' kernels, their sources, and the
# gdb scripts that the build folders link to in the tree.
chmod a+rX "$KIT_WORK" "$KIT_BUILD" "$KIT_KERNEL_TREE" "$KIT_KERNEL_TREE/scripts"
for stage in "${stages[@]}"; do
	chmod -R a+rX "$(realpath "$KIT_BUILD/$stage")" "$source/$stage"
done
chmod -R a+rX "$source/pristine" "$KIT_KERNEL_TREE/scripts/gdb"
{
	printf 'tree %s\n' "$(realpath "$KIT_KERNEL_TREE")"
	for stage in $(kit_stages); do
		if [ -d "$source/$stage" ] && [ -f "$KIT_BUILD/$stage/kit-built" ]; then
			printf 'stage %s %s\n' "$stage" "$(readlink "$KIT_BUILD/$stage")"
		fi
	done
} >"$KIT_WORK/kit-shared.new"
chmod a+r "$KIT_WORK/kit-shared.new"
mv "$KIT_WORK/kit-shared.new" "$KIT_WORK/kit-shared"
note "==> students on this host use it with: export KIT_SHARED=$(realpath "$KIT_WORK")"
# The folders above it must let others through.
dir=$(realpath "$KIT_WORK")
while dir=$(dirname "$dir"); [ "$dir" != / ]; do
	if [ "$(( $(stat -c %#a "$dir") & 1 ))" -eq 0 ]; then
		note "warning: other users cannot enter $dir, so not the shared kit either;" \
			"let them with: chmod o+x $dir, or make share in a folder such as /srv/slubq-kit"
	fi
done

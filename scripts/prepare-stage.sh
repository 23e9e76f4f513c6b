#!/usr/bin/env bash
# prepare-stage.sh STAGE: make the work tree hold exactly that stage's
# source, pristine 6.1 plus the stage's cumulative patch; with TREE=exercise
# (KIT_TREE), the student's tree of that lab: the files of it that differ
# from the stage's source, copied over it.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
patch=$KIT_ROOT/stages/$stage/stage.patch
[ -f "$patch" ] || die "$patch is missing"

"$KIT_ROOT/scripts/unpack-source.sh"

# The stamp says what the tree holds: the digest of a stage's patch, with
# " exercise REF" after it while files of a student's tree are over it (REF
# names the stage's commit in that tree); the list, which files those are.
stamp=$(tree_git_dir)/kit-stage
list=$(tree_git_dir)/kit-exercise-files
want=$(sha256sum <"$patch" | cut -d' ' -f1)
have=$(cat "$stamp" 2>/dev/null || true)
over=''
if [[ $have == "$want exercise "* ]]; then
	over=${have#"$want exercise "}
	# A tree since removed (make test's): start again from pristine.
	if ! git -C "$KIT_KERNEL_TREE" rev-parse -q --verify "$over^{commit}" >/dev/null; then
		over='' have=''
	fi
fi

# restore_stage_files REF: put back the stage's version of the files named
# on standard input, from REF, the stage's commit in a student's tree.
restore_stage_files() {
	local base=$1 file
	while IFS= read -r file; do
		if git -C "$KIT_KERNEL_TREE" cat-file -e "$base:$file" 2>/dev/null; then
			git -C "$KIT_KERNEL_TREE" show "$base:$file" >"$KIT_KERNEL_TREE/$file.kit-new"
			# The same content keeps its time (see switch_tree).
			if cmp -s "$KIT_KERNEL_TREE/$file.kit-new" "$KIT_KERNEL_TREE/$file"; then
				rm "$KIT_KERNEL_TREE/$file.kit-new"
			else
				mv "$KIT_KERNEL_TREE/$file.kit-new" "$KIT_KERNEL_TREE/$file"
			fi
		else
			rm -f "$KIT_KERNEL_TREE/$file"
		fi
	done
}

# switch_tree: make the tree hold the stage's source, writing only the
# files whose content changes.  make goes by time stamps: a file rewritten
# with the content it had would recompile everything that includes it in
# every stage's O= build (percpu.h: nearly all of them), and a build folder
# started as a copy of another stage's (build-kernel.sh) relies on every
# file that differs from that stage's being newer than its objects.  The
# patched files are made in a scratch folder from pristine copies, so that
# a patch that does not apply leaves the tree as it was.
switch_tree() {
	local scratch file
	local -a patched=()
	local -A in_patch=()
	scratch=$(mktemp -d)
	# shellcheck disable=SC2064 # the folder is known now
	trap "rm -rf '$scratch'" EXIT
	if [ -s "$patch" ]; then
		mapfile -t patched < <(git apply --numstat "$patch" | cut -f3)
	fi
	for file in "${patched[@]}"; do
		in_patch[$file]=1
		mkdir -p "$scratch/$(dirname "$file")"
		if git -C "$KIT_KERNEL_TREE" cat-file -e "pristine:$file" 2>/dev/null; then
			git -C "$KIT_KERNEL_TREE" show "pristine:$file" >"$scratch/$file"
		fi
	done
	"$KIT_ROOT/scripts/apply-stage-patch.sh" "$scratch" "$patch"
	# What may differ: the patch's files, and whatever differs from
	# pristine in the tree now, tracked or not.
	{
		printf '%s\n' "${patched[@]}"
		git -C "$KIT_KERNEL_TREE" diff --name-only --no-renames pristine
		git -C "$KIT_KERNEL_TREE" ls-files -o
	} | LC_ALL=C sort -u | while IFS= read -r file; do
		if [ -z "$file" ]; then
			continue
		elif [ -n "${in_patch[$file]:-}" ]; then
			if [ ! -e "$scratch/$file" ]; then
				rm -f "$KIT_KERNEL_TREE/$file"
			elif ! cmp -s "$scratch/$file" "$KIT_KERNEL_TREE/$file"; then
				install -D -m 644 "$scratch/$file" "$KIT_KERNEL_TREE/$file"
			fi
		elif git -C "$KIT_KERNEL_TREE" cat-file -e "pristine:$file" 2>/dev/null; then
			# Listed by git diff: it differs from pristine.
			git -C "$KIT_KERNEL_TREE" checkout -q pristine -- "$file"
		else
			rm -f "$KIT_KERNEL_TREE/$file"
		fi
	done
}

if [ "$have" != "$want" ] && [ -z "$over" ]; then
	rm -f "$stamp" "$list"
	switch_tree
	note "==> source tree holds stage $stage"
fi

if [ "$KIT_TREE" = exercise ]; then
	tree=$(exercise_tree "$stage")
	[ -d "$tree" ] || die "no tree of yours for lab $stage; run: make exercise LAB=${stage%%-*}"
	# The files of the student's tree that differ from the stage's source,
	# committed or not (new files are not looked at).  Those that do not
	# change are not touched, so the build recompiles only what did.
	base=$(exercise_ref "$stage" stage)
	git -C "$tree" diff --name-only --no-renames "$base" >"$list.new"
	if [ -n "$over" ] && [ "$over" != "$base" ]; then
		# Another tree's files (make test's): the stage's own first.
		restore_stage_files "$over" <"$list"
		rm -f "$list"
	fi
	if [ -f "$list" ]; then
		grep -vxF -f "$list.new" "$list" | restore_stage_files "$base" || true
	fi
	while IFS= read -r file; do
		if [ ! -e "$tree/$file" ]; then
			rm -f "$KIT_KERNEL_TREE/$file"
		elif ! cmp -s "$tree/$file" "$KIT_KERNEL_TREE/$file"; then
			cp "$tree/$file" "$KIT_KERNEL_TREE/$file"
		fi
	done <"$list.new"
	mv "$list.new" "$list"
	printf '%s exercise %s\n' "$want" "$base" >"$stamp"
elif [ -n "$over" ]; then
	restore_stage_files "$over" <"$list"
	rm -f "$list"
	printf '%s\n' "$want" >"$stamp"
	note "==> source tree holds stage $stage again, without your files"
else
	printf '%s\n' "$want" >"$stamp"
fi

#!/usr/bin/env bash
# prepare-stage.sh STAGE: make the work tree hold exactly that stage's
# source, pristine 6.1 plus the stage's cumulative patch; with TREE=exercise
# (KIT_SOURCE), the student's tree of that lab: the files of it that differ
# from the stage's source, copied over it.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
patch=$KIT_ROOT/stages/$stage/stage.patch
[ -f "$patch" ] || die "$patch is missing"

"$KIT_ROOT/vm/unpack-source.sh"

# The stamp says what the tree holds: the digest of a stage's patch, with
# " exercise REF" after it while files of a student's tree are over it (REF
# names the stage's commit in that tree); the list, which files those are.
stamp=$KIT_TREE/.git/kit-stage
list=$KIT_TREE/.git/kit-exercise-files
want=$(sha256sum <"$patch" | cut -d' ' -f1)
have=$(cat "$stamp" 2>/dev/null || true)
over=''
if [[ $have == "$want exercise "* ]]; then
	over=${have#"$want exercise "}
	# A tree since removed (make test's): start again from pristine.
	if ! git -C "$KIT_TREE" rev-parse -q --verify "$over^{commit}" >/dev/null; then
		over='' have=''
	fi
fi

# restore_stage_files REF: put back the stage's version of the files named
# on standard input, from REF, the stage's commit in a student's tree.
restore_stage_files() {
	local base=$1 file
	while IFS= read -r file; do
		if git -C "$KIT_TREE" cat-file -e "$base:$file" 2>/dev/null; then
			git -C "$KIT_TREE" show "$base:$file" >"$KIT_TREE/$file.kit-new"
			mv "$KIT_TREE/$file.kit-new" "$KIT_TREE/$file"
		else
			rm -f "$KIT_TREE/$file"
		fi
	done
}

if [ "$have" != "$want" ] && [ -z "$over" ]; then
	rm -f "$stamp" "$list"
	# Only the files that differ are rewritten, so each stage's O= build
	# only recompiles what the switch changed.
	git -C "$KIT_TREE" reset -q --hard pristine
	git -C "$KIT_TREE" clean -q -fdx
	"$KIT_ROOT/vm/apply-stage-patch.sh" "$KIT_TREE" "$patch"
	note "==> source tree holds stage $stage"
fi

if [ "$KIT_SOURCE" = exercise ]; then
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
			rm -f "$KIT_TREE/$file"
		elif ! cmp -s "$tree/$file" "$KIT_TREE/$file"; then
			cp "$tree/$file" "$KIT_TREE/$file"
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

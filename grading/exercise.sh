#!/usr/bin/env bash
# exercise.sh LAB: set up the student's folder for the lab's graded work
# (labs/LAB/graded.toml), KIT_EXERCISES/LAB.  For a coding exercise it is a
# git worktree of the kit's kernel tree, on the branch exercises/LAB, at
# the stage's source with the functions to write blanked (grading/exercise.py);
# its two commits are named by refs: refs/exercises/LAB/stage (the
# solution) and refs/exercises/LAB/skeleton (exercise_ref, scripts/lib.sh).  For
# a lab with questions, it holds "answers", a line per question to fill in.
# An existing folder is left as it is: it holds the student's work.
# `make grade` grades it; TREE=exercise builds the tree.
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"

stage=$(stage_resolve "${1:-}")
spec=$KIT_ROOT/labs/$stage/graded.toml
if [ ! -f "$spec" ]; then
	have=$(for s in $(kit_stages); do
		if [ -f "$KIT_ROOT/labs/$s/graded.toml" ]; then echo "${s%%-*}"; fi
	done)
	die "lab $stage has no graded work; the labs that have some: $(echo "$have" | paste -sd ' ')"
fi
tree=$(exercise_tree "$stage")
branch=$(exercise_ref "$stage")

commit() {
	git -C "$tree" add -A -f
	git -C "$tree" -c user.name=slubq-kit -c user.email=slubq-kit@localhost \
		commit -q --allow-empty -m "$1"
}

make_tree() {
	git -C "$KIT_KERNEL_TREE" worktree prune
	if git -C "$KIT_KERNEL_TREE" show-ref -q --verify "refs/heads/$branch"; then
		# The tree was removed, the branch was not: take it up again.
		git -C "$KIT_KERNEL_TREE" worktree add -q "$tree" "$branch"
		return
	fi
	git -C "$KIT_KERNEL_TREE" worktree add -q -b "$branch" "$tree" pristine
	"$KIT_ROOT/scripts/apply-stage-patch.sh" "$tree" "$KIT_ROOT/stages/$stage/stage.patch"
	commit "stage $stage: the solution"
	git -C "$tree" update-ref "$(exercise_ref "$stage" stage)" HEAD
	python3 "$KIT_ROOT/grading/exercise.py" skeleton "$spec" "$tree"
	commit "lab $stage: the skeleton, functions to write"
	git -C "$tree" update-ref "$(exercise_ref "$stage" skeleton)" HEAD
}

mapfile -t functions < <(python3 "$KIT_ROOT/grading/exercise.py" functions "$spec" name)
if [ -e "$tree" ]; then
	note "==> your folder for lab $stage is there already, with your work: $tree"
elif [ ${#functions[@]} -eq 0 ]; then
	mkdir -p "$tree"
else
	"$KIT_ROOT/scripts/unpack-source.sh"
	mkdir -p "$KIT_EXERCISES"
	# A tree half made is no one's work: remove it if a step fails.
	trap 'git -C "$KIT_KERNEL_TREE" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"' EXIT
	step "$KIT_LOGS/$stage/exercise.log" "making your tree for lab $stage ($tree)" make_tree
	trap - EXIT
fi

answers=$tree/answers
if [ ! -e "$answers" ] && python3 "$KIT_ROOT/grading/exercise.py" answers "$spec" >"$answers.new" &&
	grep -q '^[^#]' "$answers.new"; then
	mv "$answers.new" "$answers"
fi
rm -f "$answers.new"

echo "Your folder: $tree"
if [ ${#functions[@]} -gt 0 ]; then
	echo "Write these functions (the TODO comments in them say what they must do):"
	python3 "$KIT_ROOT/grading/exercise.py" where "$spec" "$tree" |
		while IFS=$'\t' read -r file name first _; do
			echo "  $name() in $tree/$file:$first"
		done
	echo "The handout, labs/$stage/README.md, has their specifications."
fi
if [ -f "$answers" ]; then
	echo "Answer the handout's questions in $answers (a line each: ID: answer)."
fi
echo "Then: make grade LAB=${stage%%-*}"
if [ ${#functions[@]} -gt 0 ]; then
	echo "To debug your kernel: make lab STAGE=${stage%%-*} TREE=exercise"
fi

#!/usr/bin/env bash
# series.sh import | export | delta STAGE
# The working form of the kit's patch series is the branch "series" in the
# work tree's git repository (KIT_WORK/linux): on top of the commit tagged
# "pristine", one commit per stage, each subject starting "NN-name:".
#   import       rebuild the branch from stages/*/stage.patch
#   export [DIR] write each stage's cumulative patch from the branch, to
#                DIR/NN-name/stage.patch (default: the kit's stages/)
#   delta STAGE  print what STAGE changes over the stage before it
# KIT_SERIES_BRANCH names another branch than "series".
# To change the series: series.sh import; git worktree add DIR series;
# edit, commit and rebase there (one commit per stage); series.sh export.
# Nothing here touches a checked-out tree: trees are built in a temporary
# index.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

branch=${KIT_SERIES_BRANCH:-series}

git_tree() {
	git -C "$KIT_KERNEL_TREE" "$@"
}

# tree_of STAGE: the git tree object of pristine plus STAGE's patch.
tree_of() {
	local stage=$1 patch index rc=0
	patch=$KIT_ROOT/stages/$stage/stage.patch
	index=$(mktemp)
	GIT_INDEX_FILE=$index git_tree read-tree pristine
	if [ -s "$patch" ]; then
		GIT_INDEX_FILE=$index git_tree apply --cached "$patch" || rc=$?
	fi
	[ "$rc" -eq 0 ] && GIT_INDEX_FILE=$index git_tree write-tree
	rm -f "$index"
	[ "$rc" -eq 0 ] || die "stages/$stage/stage.patch does not apply (git apply named the" \
		"file and line above); it was made against linux-source-6.1 $(kit_recorded_version)"
}

import() {
	local stage prev commit title
	prev=$(git_tree rev-parse pristine)
	for stage in $(kit_stages); do
		[ "${stage%%-*}" = 00 ] && continue # stage 00 is pristine itself
		title=$(head -n 1 "$KIT_ROOT/stages/$stage/README.md" |
			sed 's/^# *//; s/^Stage [0-9]*: *//')
		commit=$(git_tree -c user.name=slubq-kit -c user.email=slubq-kit@localhost \
			commit-tree "$(tree_of "$stage")" -p "$prev" -m "$stage: $title")
		prev=$commit
	done
	git_tree branch -f "$branch" "$prev"
	note "==> branch $branch in $KIT_KERNEL_TREE:" \
		"$(git_tree rev-list --count "pristine..$branch") stage commits"
}

export_patches() {
	local dir=${1:-$KIT_ROOT/stages} commit stage
	git_tree rev-parse -q --verify "$branch" >/dev/null ||
		die "no branch $branch in $KIT_KERNEL_TREE; run: scripts/series.sh import"
	for commit in $(git_tree rev-list --reverse "pristine..$branch"); do
		stage=$(git_tree log -1 --format=%s "$commit" | cut -d: -f1)
		[ -d "$KIT_ROOT/stages/$stage" ] ||
			die "commit $commit: subject does not start with a stage folder name"
		mkdir -p "$dir/$stage"
		# --full-index: abbreviated ids would vary with the repository.
		git_tree diff --no-color --no-ext-diff --full-index --src-prefix=a/ --dst-prefix=b/ \
			pristine "$commit" >"$dir/$stage/stage.patch"
		note "wrote $dir/$stage/stage.patch"
	done
}

delta() {
	local stage prev
	stage=$(stage_resolve "${1:-}")
	prev=$(kit_stages | grep -B1 -x "$stage" | head -n 1)
	[ "$prev" != "$stage" ] || die "stage $stage is the first: it changes nothing"
	git_tree diff --no-color --stat --patch "$(tree_of "$prev")" "$(tree_of "$stage")"
}

"$KIT_ROOT/scripts/unpack-source.sh"
case "${1:-}" in
import) import ;;
export) export_patches "${2:-}" ;;
delta) delta "${2:-}" ;;
*) die "usage: series.sh import | export [DIR] | delta STAGE" ;;
esac

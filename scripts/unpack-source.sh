#!/usr/bin/env bash
# Unpack the packaged kernel source into the work directory as a git
# repository whose first commit, tagged "pristine", is the source as Debian
# ships it.  Does nothing when the tree is already there for this version.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ -f "$LINUX_TARBALL" ] ||
	die "no kernel source at $LINUX_TARBALL; run: make deps (it installs linux-source-6.1)"

installed=$(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)
recorded=$(kit_recorded_version)
if [ "$installed" != "$recorded" ]; then
	note "note: the stage patches were made against linux-source-6.1 $recorded;" \
		"this machine has $installed. They may still apply; if one does not," \
		"the error names the file and hunk."
fi

want="$LINUX_TARBALL $installed"
# (No git -C on a folder that is not there: it would find a repository
# around it.)
if [ -e "$KIT_KERNEL_TREE/.git" ] && [ "$(cat "$(tree_git_dir)/kit-source" 2>/dev/null)" = "$want" ]; then
	exit 0
fi

unpack() {
	rm -rf "$KIT_KERNEL_TREE" "$KIT_KERNEL_TREE.new"
	mkdir -p "$KIT_KERNEL_TREE.new"
	local -a decompress=()
	# xz on every core: Debian's tarball is in 55 blocks, which decompress
	# apart (9 s on one core, 5.6 s on two).  tar finds any other format.
	[[ $LINUX_TARBALL != *.xz ]] || decompress=(-I 'xz -T0')
	tar "${decompress[@]}" -xf "$LINUX_TARBALL" -C "$KIT_KERNEL_TREE.new" --strip-components=1
	cd "$KIT_KERNEL_TREE.new"
	git init -q
	# Debian's top-level .gitignore ignores everything: add by force.
	git add -A -f
	git -c user.name=slubq-kit -c user.email=slubq-kit@localhost \
		commit -q -m "linux-source-6.1 $installed as packaged by Debian"
	git tag pristine
	cd - >/dev/null
	mv "$KIT_KERNEL_TREE.new" "$KIT_KERNEL_TREE"
	printf '%s\n' "$want" >"$KIT_KERNEL_TREE/.git/kit-source"
}

# A variant's tree is a worktree of the stages' tree, at pristine: it
# shares its history, the tag and the branches of the students' trees.
add_worktree() {
	git -C "$KIT_STAGE_TREE" worktree remove --force "$KIT_KERNEL_TREE" 2>/dev/null || rm -rf "$KIT_KERNEL_TREE"
	git -C "$KIT_STAGE_TREE" worktree prune
	git -C "$KIT_STAGE_TREE" worktree add -q --detach "$KIT_KERNEL_TREE" pristine
	printf '%s\n' "$want" >"$(tree_git_dir)/kit-source"
}

if [ "$KIT_KERNEL_TREE" = "$KIT_STAGE_TREE" ]; then
	step "$KIT_LOGS/unpack.log" "unpacking linux-source-6.1 $installed into $KIT_KERNEL_TREE" unpack
else
	KIT_VARIANT='' "$0"
	step "$KIT_LOGS/unpack${KIT_VARIANT:++$KIT_VARIANT}.log" \
		"checking out linux-source-6.1 $installed into $KIT_KERNEL_TREE" add_worktree
fi

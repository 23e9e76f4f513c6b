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

stamp=$KIT_TREE/.git/kit-source
want="$LINUX_TARBALL $installed"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	exit 0
fi

unpack() {
	rm -rf "$KIT_TREE" "$KIT_TREE.new"
	mkdir -p "$KIT_TREE.new"
	tar -xf "$LINUX_TARBALL" -C "$KIT_TREE.new" --strip-components=1
	cd "$KIT_TREE.new"
	git init -q
	# Debian's top-level .gitignore ignores everything: add by force.
	git add -A -f
	git -c user.name=slubq-kit -c user.email=slubq-kit@localhost \
		commit -q -m "linux-source-6.1 $installed as packaged by Debian"
	git tag pristine
	cd - >/dev/null
	mv "$KIT_TREE.new" "$KIT_TREE"
	printf '%s\n' "$want" >"$stamp"
}
step "$KIT_LOGS/unpack.log" "unpacking linux-source-6.1 $installed into $KIT_TREE" unpack

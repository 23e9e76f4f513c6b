#!/usr/bin/env bash
# apply-stage-patch.sh TREE PATCH: apply a stage's cumulative patch to a
# pristine tree with no fuzz.  When it does not apply, say which files and
# hunks fail and which kernel the kit expected, and change nothing.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -eq 2 ] || die "usage: apply-stage-patch.sh TREE PATCH"
tree=$1 patch=$2
[ -s "$patch" ] || exit 0 # an empty cumulative patch: the pristine tree

if ! out=$(patch -d "$tree" -p1 -F0 --dry-run --no-backup-if-mismatch <"$patch" 2>&1); then
	failed=$(printf '%s\n' "$out" | awk '
		/^(checking|patching) file / { file = $3 }
		/^Hunk #[0-9]+ FAILED/ { printf "%s%s hunk %s", sep, file, $2; sep = ", " }
		/^can.t find file to patch/ { printf "%smissing file", sep; sep = ", " }')
	die "$patch does not apply (${failed:-see below}); it was made against" \
		"linux-source-6.1 $(kit_recorded_version)."$'\n'"$out"
fi
patch -d "$tree" -p1 -F0 --no-backup-if-mismatch --quiet <"$patch"

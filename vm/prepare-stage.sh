#!/usr/bin/env bash
# prepare-stage.sh STAGE: make the work tree hold exactly that stage's
# source, pristine 6.1 plus the stage's cumulative patch.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
patch=$KIT_ROOT/stages/$stage/stage.patch
[ -f "$patch" ] || die "$patch is missing"

"$KIT_ROOT/vm/unpack-source.sh"

stamp=$KIT_TREE/.git/kit-stage
want=$(sha256sum <"$patch" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
	exit 0
fi
rm -f "$stamp"
# Only the files that differ are rewritten, so each stage's O= build only
# recompiles what the switch changed.
git -C "$KIT_TREE" reset -q --hard pristine
git -C "$KIT_TREE" clean -q -fdx
"$KIT_ROOT/vm/apply-stage-patch.sh" "$KIT_TREE" "$patch"
printf '%s\n' "$want" >"$stamp"
note "==> source tree holds stage $stage"

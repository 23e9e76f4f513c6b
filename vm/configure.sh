#!/usr/bin/env bash
# configure.sh STAGE: write the stage's .config in its build folder:
# tinyconfig, then vm/kit.config (then the stage's own kit.config, if it has
# one, and with KIT_VARIANT the variant's vm/variants/VARIANT.config) merged
# with the kernel's merge_config.sh, then checked.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
label=$(stage_label "$stage")
out=$KIT_BUILD/$label
mapfile -t fragments < <(stage_fragments "$stage")

# The build folder is named by a digest of the fragments (stage_key), so a
# checked .config in it is the config of these fragments.
[ -f "$out/.config.checked" ] && exit 0

mkdir -p "$out"
all=$(mktemp)
trap 'rm -f "$all"' EXIT
cat "${fragments[@]}" >"$all"
configure() {
	kernel_make "$out" tinyconfig
	(cd "$KIT_TREE" && scripts/kconfig/merge_config.sh -m -O "$out" "$out/.config" "$all")
	kernel_make "$out" olddefconfig
}
step "$KIT_LOGS/$label/configure.log" "configuring stage $label" configure
"$KIT_ROOT/vm/check-config.sh" "$out/.config" "${fragments[@]}"
touch "$out/.config.checked"

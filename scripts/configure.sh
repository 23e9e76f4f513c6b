#!/usr/bin/env bash
# configure.sh STAGE: write the stage's .config in its build folder:
# tinyconfig, then config/kit.config (then the stage's own kit.config, if it has
# one, and with KIT_VARIANT the variant's config/variants/VARIANT.config) merged
# with the kernel's merge_config.sh, then checked.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
label=$(stage_label "$stage")
out=$KIT_BUILD/$label
mapfile -t fragments < <(stage_fragments "$stage")

# What the .config is made from: the fragments, and the Kconfig files as
# the stage's patch leaves them.  .config.checked holds its digest, so that
# a build folder started as a copy of another stage's (scripts/build-kernel.sh)
# keeps that .config when it would come out the same.
inputs=$({
	cat "${fragments[@]}"
	git --no-optional-locks -C "$KIT_KERNEL_TREE" diff pristine -- ':(glob)**/Kconfig*'
} | sha256sum | cut -d' ' -f1)
[ "$(cat "$out/.config.checked" 2>/dev/null)" != "$inputs" ] || exit 0

mkdir -p "$out"
all=$(mktemp)
trap 'rm -f "$all"' EXIT
cat "${fragments[@]}" >"$all"
configure() {
	kernel_make "$out" tinyconfig
	(cd "$KIT_KERNEL_TREE" && scripts/kconfig/merge_config.sh -m -O "$out" "$out/.config" "$all")
	kernel_make "$out" olddefconfig
}
step "$KIT_LOGS/$label/configure.log" "configuring stage $label" configure
"$KIT_ROOT/scripts/check-config.sh" "$out/.config" "${fragments[@]}"
echo "$inputs" >"$out/.config.checked"

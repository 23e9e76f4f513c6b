#!/usr/bin/env bash
# configure.sh STAGE: write the stage's .config in its build folder:
# tinyconfig, then vm/kit.config (and the stage's own kit.config, if it has
# one) merged with the kernel's merge_config.sh, then checked.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
out=$KIT_BUILD/$stage
fragments=("$KIT_ROOT/vm/kit.config")
[ -f "$KIT_ROOT/stages/$stage/kit.config" ] &&
	fragments+=("$KIT_ROOT/stages/$stage/kit.config")

# Reconfigure only when a fragment is newer than the last checked .config.
if [ -f "$out/.config.checked" ]; then
	fresh=1
	for f in "${fragments[@]}"; do
		[ "$f" -nt "$out/.config.checked" ] && fresh=0
	done
	[ "$fresh" -eq 1 ] && exit 0
fi

mkdir -p "$out"
all=$(mktemp)
trap 'rm -f "$all"' EXIT
cat "${fragments[@]}" >"$all"
configure() {
	make -C "$KIT_TREE" O="$out" ARCH=x86_64 CC="ccache gcc" tinyconfig
	(cd "$KIT_TREE" && scripts/kconfig/merge_config.sh -m -O "$out" "$out/.config" "$all")
	make -C "$KIT_TREE" O="$out" ARCH=x86_64 CC="ccache gcc" olddefconfig
}
step "$KIT_LOGS/$stage/configure.log" "configuring stage $stage" configure
"$KIT_ROOT/vm/check-config.sh" "$out/.config" "${fragments[@]}"
touch "$out/.config.checked"

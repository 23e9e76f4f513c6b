#!/usr/bin/env bash
# compile-i386.sh STAGE: compile the slab allocator of STAGE (mm/slub.o and
# mm/slab_common.o) for 32-bit x86 (config/i386.config), warnings as errors.
# mm/slab.h checks at compile time that struct slab overlays struct page
# (SLAB_MATCH), so a layout that only fits 64-bit fails here.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
out=$KIT_BUILD/i386-$(sha256sum <"$KIT_ROOT/config/i386.config" | cut -c1-12)
"$KIT_ROOT/scripts/check-deps.sh"

lock_tree
"$KIT_ROOT/scripts/prepare-stage.sh" "$stage"

i386_make() {
	make -C "$KIT_KERNEL_TREE" O="$out" ARCH=i386 CC=ccache-gcc "$@"
}
configure() {
	i386_make tinyconfig
	(cd "$KIT_KERNEL_TREE" && scripts/kconfig/merge_config.sh -m -O "$out" \
		"$out/.config" "$KIT_ROOT/config/i386.config")
	i386_make olddefconfig
	"$KIT_ROOT/scripts/check-config.sh" "$out/.config" "$KIT_ROOT/config/i386.config"
	grep -q '^CONFIG_X86_32=y' "$out/.config" || die "$out/.config is not 32-bit"
	touch "$out/.config.checked"
}
compile() {
	i386_make -j"$(nproc)" KCFLAGS=-Werror mm/slub.o mm/slab_common.o
}
[ -f "$out/.config.checked" ] ||
	step "$KIT_LOGS/i386/configure.log" "configuring a 32-bit x86 kernel" configure
step "$KIT_LOGS/$stage/compile-i386.log" \
	"compiling stage $stage's mm/slub.o and mm/slab_common.o for i386" compile

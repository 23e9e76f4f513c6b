#!/usr/bin/env bash
# build-kernel.sh STAGE: bring the work tree to STAGE, configure it, and
# build bzImage, vmlinux and the gdb scripts in the stage's build folder.
# With ccache, a rebuild after a stage change takes seconds.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
out=$KIT_BUILD/$stage
"$KIT_ROOT/vm/check-deps.sh"

# One build at a time: all stages share the one source tree.
mkdir -p "$KIT_WORK"
exec 9>"$KIT_WORK/build.lock"
flock -n 9 || { note "waiting for another build in $KIT_WORK to finish"; flock 9; }

# KIT_BUILD/STAGE is a link to the build of the stage's key, shared by the
# stages that build the same kernel.
key=kernel-$(stage_key "$stage")
mkdir -p "$KIT_BUILD/$key"
[ -L "$out" ] || rm -rf "$out"
ln -sfn "$key" "$out"
# A build folder that no stage's key names any more (the config or a patch
# changed) is 400 MB of nothing: remove it.
for dir in "$KIT_BUILD"/kernel-*; do
	used=0
	for s in $(kit_stages); do
		[ "$dir" = "$KIT_BUILD/kernel-$(stage_key "$s")" ] && used=1
	done
	[ "$used" -eq 1 ] || rm -rf "$dir"
done

"$KIT_ROOT/vm/prepare-stage.sh" "$stage"
"$KIT_ROOT/vm/configure.sh" "$stage"

build() {
	kernel_make "$out" -j"$(nproc)" bzImage scripts_gdb
	if grep -q '^CONFIG_MODULES=y' "$out/.config"; then
		kernel_make "$out" -j"$(nproc)" modules
	fi
}
step "$KIT_LOGS/$stage/build.log" "building the stage $stage kernel ($KIT_BUILD/$key)" build

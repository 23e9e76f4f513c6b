#!/usr/bin/env bash
# build-kernel.sh STAGE: bring the work tree to STAGE, configure it, and
# build bzImage, vmlinux, the gdb scripts and the kit's modules in the
# stage's build folder.
# With ccache, a rebuild after a stage change takes seconds.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
label=$(stage_label "$stage")
out=$KIT_BUILD/$label
"$KIT_ROOT/scripts/check-deps.sh"

# A class's shared kit holds the stage's kernel, built by the instructor
# from the same stage patch and configuration as this checkout's (its
# folder is named by their key, and make share recorded it), or the kit was
# updated on one side only.
if shared_build; then
	key=kernel-$(stage_key "$stage")
	if ! grep -qxF "stage $stage $key" "$KIT_SHARED/kit-shared" ||
		[ "$(readlink "$out" 2>/dev/null)" != "$key" ] || [ ! -f "$out/kit-built" ]; then
		die "the shared kit in $KIT_SHARED has no kernel of stage $label as this checkout of the" \
			"kit makes it (an update on one side only?); ask for make share to be run again with" \
			"this checkout, or build your own: leave KIT_SHARED out"
	fi
	note "==> the stage $label kernel is the class's, built in $KIT_SHARED"
	exit 0
fi

lock_tree

# ccache's mode for this build (scripts/compiler/ccache-gcc).  A stage
# kernel, in the default mode: the next stage's first build finds in the
# cache every file that its header edits leave the same once preprocessed
# (stage 02's percpu.h edit: nearly all of them).  A variant kernel, built
# from nothing with a configuration of its own, in depend mode: about a
# sixth quicker through an empty cache.
if [ -n "$KIT_VARIANT" ]; then
	unset CCACHE_NODEPEND
	export CCACHE_DEPEND=true
else
	unset CCACHE_DEPEND
	export CCACHE_NODEPEND=true
fi

# KIT_BUILD/STAGE (STAGE+VARIANT) is a link to the build of the stage's
# key, shared by the stages that build the same kernel.  A student's
# kernel (STAGE+exercise) has a folder of its own, started again when the
# stage's key changes.
key=kernel-$(stage_key "$stage")
if [ "$KIT_TREE" = exercise ]; then
	tree=$(exercise_tree "$stage")
	[ -d "$tree" ] || die "no tree of yours for lab $stage; run: make exercise LAB=${stage%%-*}"
	if [ -L "$out" ] || [ "$(cat "$out/kit-key" 2>/dev/null)" != "$key" ]; then
		rm -rf "$out"
	fi
	mkdir -p "$out"
	echo "$key" >"$out/kit-key"
else
	mkdir -p "$KIT_BUILD/$key"
	[ -L "$out" ] || rm -rf "$out"
	ln -sfn "$key" "$out"
fi
# A build folder that no stage's key names any more (the config or a patch
# changed) is 400 MB of nothing: remove it.
used=' '
while IFS= read -r variant; do
	for s in $(kit_stages); do
		used+="kernel-$(KIT_VARIANT=$variant stage_key "$s") "
	done
done < <(kit_variants)
for dir in "$KIT_BUILD"/kernel-*; do
	[[ $used == *" $(basename "$dir") "* ]] || rm -rf "$dir"
done

# donor_build: the finished build folder a new one starts from: the
# build of the same variant of the nearest stage before this one, else
# after it (their sources differ least); for a student's kernel, the
# stage's own first.
donor_build() {
	local -a stages order=()
	local i here=0 s dir
	mapfile -t stages < <(kit_stages)
	for i in "${!stages[@]}"; do
		[ "${stages[i]}" != "$stage" ] || here=$i
	done
	[ "$KIT_TREE" != exercise ] || order+=("$here")
	for ((i = here - 1; i >= 0; i--)); do order+=("$i"); done
	for ((i = here + 1; i < ${#stages[@]}; i++)); do order+=("$i"); done
	for i in "${order[@]}"; do
		s=$KIT_BUILD/${stages[i]}${KIT_VARIANT:++$KIT_VARIANT}
		[ -L "$s" ] || continue
		dir=$(realpath "$s")
		if [ -f "$dir/kit-built" ] && [ "$dir" != "$folder" ]; then
			printf '%s\n' "$dir"
			return 0
		fi
	done
}

# seed: make the build folder a copy of the donor's, marked kit-seeding
# until the copy is whole (an interrupted one is started again).
seed() {
	local key_file
	key_file=$(cat "$folder/kit-key" 2>/dev/null || true)
	rm -rf "$folder"
	cp -a "$donor" "$folder"
	touch "$folder/kit-seeding"
	rm -f "$folder/kit-built" "$folder/kit-key"
	[ -z "$key_file" ] || echo "$key_file" >"$folder/kit-key"
	# objtool's own build names its folder by absolute path, so the copy
	# builds it again.  It is the same program, but a newer objtool would
	# make every object it checked compile again: it gets the donor's time.
	if [ -x "$donor/tools/objtool/objtool" ]; then
		kernel_make "$folder" tools/objtool
		find "$folder/tools/objtool" -newer "$donor/tools/objtool/objtool" \
			-exec touch -h -r "$donor/tools/objtool/objtool" {} +
	fi
	rm "$folder/kit-seeding"
}
folder=$(realpath "$out")
if [ ! -f "$folder/.config" ] || [ -f "$folder/kit-seeding" ]; then
	donor=$(donor_build)
	if [ -n "$donor" ]; then
		step "$KIT_LOGS/$label/seed.log" \
			"starting $folder as a copy of $donor (only what differs will compile)" seed
	fi
fi

"$KIT_ROOT/scripts/prepare-stage.sh" "$stage"
"$KIT_ROOT/scripts/configure.sh" "$stage"

# copy_changed SRC DST: copies SRC's files into DST, each only if its
# content differs there, with a new time. The kernel's make compares
# times: a copy that kept its source's time (cp -p) could be older than
# the object built from other content before (another checkout's module
# in the same work directory), and the old object would stay.
copy_changed() {
	local src=$1 dst=$2 file
	while IFS= read -r -d '' file; do
		mkdir -p "$dst/$(dirname "$file")"
		cmp -s "$src/$file" "$dst/$file" || cp "$src/$file" "$dst/$file"
	done < <(cd "$src" && find . -type f -print0)
}
# The stage's files in its initramfs (scripts/initramfs.sh packs them), in
# OUT/guest at their paths in the guest: the kit's own modules
# (modules/NAME, each with a Kbuild) as /lib/modules/kit/NAME.ko, built
# out of tree against the stage's kernel in a copy under the build folder
# (the repository stays clean), and the kernel's slabinfo tool as
# /usr/bin/slabinfo, built statically from the stage's tools/vm/slabinfo.c.
guest_files() {
	local dir name root=$out/guest
	local -a names=()
	rm -rf "$root"
	mkdir -p "$root/lib/modules/kit" "$root/usr/bin" "$out/kit-modules"
	for dir in "$KIT_ROOT"/modules/*/; do
		[ -f "$dir/Kbuild" ] || continue
		name=$(basename "$dir")
		names+=("$name")
		copy_changed "$dir" "$out/kit-modules/$name"
	done
	# All of them in one make, which reads the kernel's configuration and
	# symbols once: a make that finds nothing to do takes seconds.
	printf 'obj-m += %s/\n' "${names[@]}" >"$out/kit-modules/Kbuild"
	kernel_make "$out" M="$out/kit-modules" modules
	for name in "${names[@]}"; do
		# The guest needs no debug info; gdb reads the unstripped one.
		strip --strip-debug -o "$root/lib/modules/kit/$name.ko" \
			"$out/kit-modules/$name/$name.ko"
	done
	gcc -O2 -static -o "$root/usr/bin/slabinfo" "$KIT_KERNEL_TREE/tools/vm/slabinfo.c"
	chmod -R u=rwX,go=rX "$root"
}

build() {
	local -a targets=(bzImage scripts_gdb)
	# Modules in the same make: each run of it walks the whole tree.  A
	# rebuild after a change to mm/slub.c took 19 s and then 6 s for the
	# modules apart, 18 s together.
	! grep -q '^CONFIG_MODULES=y' "$out/.config" || targets+=(modules)
	kernel_make "$out" -j"$(nproc)" "${targets[@]}"
	# What boots must be what gdb reads.  A cache that returns a stale
	# object where a file is embedded (as ccache's depend mode did with the
	# bzImage's piggy.o, scripts/compiler/ccache-gcc) breaks that without
	# a warning.
	bzimage_holds "$out/arch/x86/boot/bzImage" "$out/vmlinux" ||
		die "the bzImage does not hold the vmlinux just built; remove $folder and build again"
	if grep -q '^CONFIG_MODULES=y' "$out/.config"; then
		guest_files
	else
		rm -rf "$out/guest"
	fi
}
# source_digest: what the build is made from: the tree's commit, its
# changes over it (the stage's patch, a student's files, anyone's edits),
# its untracked files, the configuration, the kit's modules, and how they
# are built.  A build folder that was built from the same has nothing to
# do: the kernel's own make would only find that out after a quarter of a
# minute.  Read-only git (no index refresh written).
source_digest() {
	{
		# The debug information names the tree by its path.
		realpath "$KIT_KERNEL_TREE"
		git -C "$KIT_KERNEL_TREE" rev-parse HEAD
		git --no-optional-locks -C "$KIT_KERNEL_TREE" diff HEAD --binary
		(cd "$KIT_KERNEL_TREE" && git --no-optional-locks ls-files -o -z | xargs -0 -r sha256sum --)
		cat "$out/.config"
		(cd "$KIT_ROOT" && find modules -type f | LC_ALL=C sort | xargs sha256sum --)
		# How the folder is built, which a kit update may change.
		declare -f build guest_files copy_changed
	} | sha256sum | cut -d' ' -f1
}
# A build from nothing compiles about this many files with the kit's
# configuration (make test checks it against stage 00's build folder): the
# progress line of such a build says "of about" it.
cold_build_files=710
digest=$(source_digest)
if [ "$(cat "$out/kit-built" 2>/dev/null)" = "$digest" ] && [ -f "$out/vmlinux" ]; then
	note "==> the stage $label kernel is built from this source already ($folder)"
else
	rm -f "$out/kit-built"
	if [ ! -f "$out/vmlinux" ] && [ -z "$KIT_VARIANT" ]; then
		step_files=$cold_build_files
	fi
	step "$KIT_LOGS/$label/build.log" "building the stage $label kernel ($folder)" build
	echo "$digest" >"$out/kit-built"
fi
# A stage switch writes the files it changes, so that the kernel's make
# sees them, and they are newer than a vmlinux built from them before:
# gdb would warn at its first listing that the source is more recent than
# the executable, and make the student doubt what the labs stand on.  The
# vmlinux is this source's own build: it takes the time it is known to be.
touch "$out/vmlinux"

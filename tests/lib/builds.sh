# shellcheck shell=bash
# tests/lib/builds.sh, sourced by tests/run.sh: the stage patches, their
# configs and the builds of their kernels.

# features_match_patches: each stage's features (stage_has) are what its
# patch shows: SLUB+Q's retrieve_objects(), resize_cpu_queue(), and the
# end of MAX_OBJS_PER_PAGE; no other word is listed.
features_match_patches() {
	local stage feature evidence rc=0
	local -A shows=([cpu-queues]=retrieve_objects [resizable-queues]=resize_cpu_queue
		[big-slabs]='^-#define MAX_OBJS_PER_PAGE' [sheaves]=barn_replace_full_sheaf)
	for stage in $(kit_stages); do
		[ -f "stages/$stage/features" ] || { echo "$stage: no stages/$stage/features"; rc=1; continue; }
		while IFS= read -r feature; do
			[ -n "${shows[$feature]:-}" ] || { echo "$stage: unknown feature '$feature'"; rc=1; }
		done <"stages/$stage/features"
		for feature in "${!shows[@]}"; do
			evidence=no
			if grep -qE -- "${shows[$feature]}" "stages/$stage/stage.patch"; then evidence=yes; fi
			if stage_has "$stage" "$feature"; then
				[ "$evidence" = yes ] || { echo "$stage lists $feature; its patch does not show it"; rc=1; }
			else
				[ "$evidence" = no ] || { echo "$stage does not list $feature; its patch shows it"; rc=1; }
			fi
		done
	done
	return "$rc"
}

# The options that need free pointers inside objects cannot be turned on.
# (SLAB_FREELIST_HARDENED can, with a meaning of its own: stage 07's README;
# the proof variant turns it on, which scripts/configure.sh checks.)
kconfig_refuses() {
	local stage=$1 dir=$out/kconfig-$1 option rc=0
	local options=(SLUB_CPU_PARTIAL SLAB_FREELIST_RANDOM)
	mkdir -p "$dir"
	cp "$KIT_BUILD/$stage/.config" "$dir/.config"
	for option in "${options[@]}"; do
		echo "CONFIG_$option=y" >>"$dir/.config"
	done
	kernel_make "$dir" olddefconfig >/dev/null
	for option in "${options[@]}"; do
		if grep -q "^CONFIG_$option=y" "$dir/.config"; then
			echo "CONFIG_$option=y survived olddefconfig"
			rc=1
		fi
	done
	# The test above must be able to fail: an option that stays selectable.
	grep -q '^CONFIG_SLUB_STATS=y' "$dir/.config" || { echo "SLUB_STATS lost"; rc=1; }
	# Generic KASAN is selectable again (stage 07's README).
	echo CONFIG_KASAN=y >>"$dir/.config"
	kernel_make "$dir" olddefconfig >/dev/null
	grep -q '^CONFIG_KASAN_GENERIC=y' "$dir/.config" || { echo "generic KASAN refused"; rc=1; }
	return "$rc"
}

# variant_config_holds STAGE VARIANT...: each variant's fragments (its
# bases' first), merged over the stage's config, survive olddefconfig (what
# scripts/configure.sh checks before a build), for variants that make test
# does not build.
variant_config_holds() {
	local stage=$1 variant dir=$out/variant-config fragments
	shift
	# One folder for all: kconfig's tools are built there once.
	mkdir -p "$dir"
	for variant in "$@"; do
		cp "$KIT_BUILD/$stage/.config" "$dir/.config" || return 1
		mapfile -t fragments < <(variant_fragments "$variant")
		cat "${fragments[@]}" >>"$dir/.config" || return 1
		kernel_make "$dir" olddefconfig >/dev/null || return 1
		mapfile -t fragments < <(KIT_VARIANT=$variant stage_fragments "$stage")
		scripts/check-config.sh "$dir/.config" "${fragments[@]}" || return 1
	done
}

# The series round trip: patches -> one commit per stage -> patches.
series_round_trip() {
	local stage
	KIT_SERIES_BRANCH=kit-test-round-trip scripts/series.sh import
	KIT_SERIES_BRANCH=kit-test-round-trip scripts/series.sh export "$out/series"
	for stage in $(kit_stages | tail -n +2); do
		cmp "stages/$stage/stage.patch" "$out/series/$stage/stage.patch" || return 1
	done
}

# make delta: empty exactly where two cumulative patches are the same.
delta_matches_patches() {
	local prev='' stage
	for stage in $(kit_stages); do
		if [ -n "$prev" ]; then
			make --no-print-directory delta STAGE="$stage" >"$out/delta"
			if cmp -s "stages/$prev/stage.patch" "stages/$stage/stage.patch"; then
				[ ! -s "$out/delta" ] || { echo "$stage: delta not empty"; return 1; }
			else
				grep -q '^diff --git' "$out/delta" || { echo "$stage: delta empty"; return 1; }
			fi
		fi
		prev=$stage
	done
}

# cold_build_size_right STAGE: the objects in the stage's build folder (the
# kernel's, not objtool's or the kit's modules) are within a tenth of the
# figure the progress line of a build from nothing counts on.
cold_build_size_right() {
	local want got
	want=$(sed -n 's/^cold_build_files=//p' scripts/build-kernel.sh)
	got=$(find "$(realpath "$KIT_BUILD/$1")" -name '*.o' ! -path '*/tools/*' ! -path '*/kit-modules/*' | wc -l)
	echo "$got objects; the progress line counts on about $want"
	[ "$got" -ge $((want * 9 / 10)) ] && [ "$got" -le $((want * 11 / 10)) ]
}

# delta_files STAGE: the files in which the stage's source differs from the
# stage's before it.
delta_files() {
	scripts/series.sh delta "$1" | sed -n 's|^diff --git a/\(.*\) b/.*|\1|p'
}

# only_c_changed STAGE: whether the stage differs from the one before it
# in C files only (no header, no Kconfig): then a build of it that starts
# from the earlier stage's compiles exactly those files.
only_c_changed() {
	local files
	[ "$1" != "$(kit_stages | sed -n 1p)" ] || return 1
	files=$(delta_files "$1")
	[ -n "$files" ] && ! grep -qv '\.c$' <<<"$files"
}

# build_starts_from_copy STAGE: the stage's kernel, built in a new folder,
# starts from a copy of the stage before it's and compiles exactly the C
# files in which the two stages differ: the tree switch rewrote no other
# file, and objtool's rebuild in the copy recompiled nothing.
build_starts_from_copy() {
	local stage=$1 prev want got
	prev=$(kit_stages | grep -B1 -x "$stage" | head -n 1)
	want=$(delta_files "$stage" | sed 's/\.c$/.o/' | LC_ALL=C sort)
	# The copy is of the earlier stage's folder as make left it: make it
	# run there, not only find its digest (the tree may have held other
	# stages since, whose files are newer than its objects).
	rm -f "$(realpath -m "$KIT_BUILD/$prev")/kit-built"
	scripts/build-kernel.sh "$prev"
	rm -rf "$(realpath -m "$KIT_BUILD/$stage")"
	scripts/build-kernel.sh "$stage" 2>&1 | tee "$out/build"
	grep -qF "as a copy of $(realpath "$KIT_BUILD/$prev")" "$out/build" ||
		{ echo "the build did not start from stage $prev's"; return 1; }
	# The kernel's objects, not the kit's modules ([M]) or objtool's, and
	# not the three that every link of 6.1 compiles again (they hold the
	# build's time and number, and the compressed kernel's size).
	got=$(sed -n 's/^  CC      \([^/ ][^ ]*\.o\)$/\1/p' "$KIT_LOGS/$stage/build.log" |
		grep -vx -e init/version-timestamp.o -e arch/x86/boot/version.o \
			-e arch/x86/boot/compressed/misc.o | LC_ALL=C sort || true)
	[ "$got" = "$want" ] ||
		{ printf 'compiled:\n%s\nexpected (what stage %s changes):\n%s\n' "$got" "$stage" "$want"; return 1; }
}

# module_built_from_checkout STAGE: a kit module that the stage's build
# folder last compiled from other content (another checkout of the kit
# sharing the work directory, with a changed slab_bench.c) is compiled
# again from this checkout's file, which is older than that object: the
# kernel's make compares times, so a copy that kept the file's time would
# leave the other checkout's module in the guest.
module_built_from_checkout() {
	local folder=$KIT_BUILD/$1 copy ko
	# The folder by the name the build gives make (M=): its objects record
	# the command that made them, path and all, and another path would
	# compile them again whatever their times.
	copy=$folder/kit-modules/slab_bench
	ko=$folder/guest/lib/modules/kit/slab_bench.ko
	cp modules/slab_bench/slab_bench.c "$copy/slab_bench.c"
	echo 'MODULE_INFO(kit_other_checkout, "yes");' >>"$copy/slab_bench.c"
	kernel_make "$folder" M="$folder/kit-modules" modules >"$out/other-module.log" 2>&1 ||
		{ cat "$out/other-module.log"; echo "the other checkout's module did not build"; return 1; }
	grep -qa 'kit_other_checkout=yes' "$copy/slab_bench.ko" ||
		{ echo "the other checkout's module lacks its mark"; return 1; }
	[ modules/slab_bench/slab_bench.c -ot "$copy/slab_bench.o" ] ||
		{ echo "this checkout's slab_bench.c is not older than the object: the case is not made"; return 1; }
	# The other checkout's build recorded its own digest.
	rm -f "$folder/kit-built"
	scripts/build-kernel.sh "$1"
	! grep -qa 'kit_other_checkout=yes' "$ko" ||
		{ echo "the guest's slab_bench.ko is the other checkout's ($ko)"; return 1; }
	cmp -s modules/slab_bench/slab_bench.c "$copy/slab_bench.c" ||
		{ echo "the build folder's slab_bench.c is not this checkout's"; return 1; }
}

# The kernel's own style checker, on all the code the kit adds to 6.1.
checkpatch_clean() {
	local stage
	for stage in $(kit_stages); do
		[ -s "stages/$stage/stage.patch" ] || continue
		echo "== $stage"
		perl "$KIT_KERNEL_TREE/scripts/checkpatch.pl" --no-tree --quiet - <"stages/$stage/stage.patch"
	done
}

# build_folders ELF: the compilation folders its debug information
# records, each with the number of compilation units that name it.
build_folders() {
	readelf --debug-dump=info --dwarf-depth=1 "$1" |
		sed -n 's/.*DW_AT_comp_dir.*: //p' | sort | uniq -c
}

# one_build_folder ELF: its debug information names one build folder,
# /kit-build (scripts/compiler/ccache-gcc), whichever folder each object was
# compiled in.  With two, gdb holds each header twice, and a `list` of a
# header's line is ambiguous.
one_build_folder() {
	local folders
	folders=$(build_folders "$1")
	echo "$folders"
	[ "$(awk '{ print $2 }' <<<"$folders")" = /kit-build ] ||
		{ echo "$1 names other build folders than /kit-build"; return 1; }
}

# listed_once ELF FILE LINE: gdb lists FILE (a header) from LINE, in
# ELF, as one place, as lab 01's first step does with percpu.h.  ("FILE:14,14"
# would read the second 14 as another file's line.)
listed_once() {
	local listed
	listed=$(gdb -q -nx -batch -iex 'set auto-load python-scripts off' \
		-ex "list $2:$3," "$1" 2>&1)
	echo "$listed"
	if grep -qE 'ambiguous|No such file' <<<"$listed" || ! head -n 1 <<<"$listed" | grep -q "^$3[[:space:]]"; then
		echo "gdb did not list $2 from line $3 as one place"
		return 1
	fi
}

# build_folder_recorded STAGE: one build folder, and a header listed once.
build_folder_recorded() {
	one_build_folder "$KIT_BUILD/$1/vmlinux" || return 1
	listed_once "$KIT_BUILD/$1/vmlinux" include/linux/percpu.h 14
}

# build_folder_check_fails: objects that gcc compiled in two folders fail
# both checks (gdb finds their header's line twice); compiled by the kit's
# compiler, ccache-gcc, they pass.
build_folder_check_fails() {
	local elf
	elf=$(objects_in_two_folders gcc) || return 1
	fails_with "names other build folders" one_build_folder "$elf" || return 1
	fails_with "did not list shared.h from line 3 as one place" listed_once "$elf" shared.h 3 || return 1
	elf=$(objects_in_two_folders ccache-gcc) || return 1
	one_build_folder "$elf" && listed_once "$elf" shared.h 3
}

# objects_in_two_folders COMPILER: tests/fixtures/two-folders' two C files,
# each compiled with COMPILER in its own folder, their header named by
# absolute path as the kernel's are, linked: the ELF's path.
objects_in_two_folders() {
	local dir=$out/two-folders
	rm -rf "$dir"
	cp -R "$fixtures/two-folders" "$dir"
	(cd "$dir/a" && "$1" -g -I"$dir" -c a.c) && (cd "$dir/b" && "$1" -g -I"$dir" -c b.c) &&
		gcc "$dir/a/a.o" "$dir/b/b.o" -o "$dir/linked" && echo "$dir/linked"
}

#!/usr/bin/env bash
# The kit's test suite: `make test`.  Fast checks of the scripts and their
# errors first, then, for every stage, build, boot to the ready line with a
# smoke test, and the gdb walkthrough checked against its expected patterns.
# Prints TAP (version 13): one line per check, the plan last, then
# "N passed, N failed" (and "N skipped" when some were).
#
# KIT_TEST_STAGE (make test STAGE=N) runs one stage's checks and what they
# need, nothing else; KIT_TEST_FILTER (make test FILTER=REGEX) keeps the
# checks whose names match the extended regular expression REGEX, and the
# builds they need.
set -euo pipefail
# The suite builds and checks its own kernels, never a class's shared kit.
unset KIT_SHARED
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
cd "$KIT_ROOT"

only_stage=''
if [ -n "${KIT_TEST_STAGE:-}" ]; then
	only_stage=$(stage_resolve "$KIT_TEST_STAGE")
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# (Absolute: kunit.py, for one, runs in the kernel tree.)
fixtures=$KIT_ROOT/tests/fixtures
# shellcheck source=../grading/tap.sh
. grading/tap.sh
# shellcheck source=../scripts/console.sh
. scripts/console.sh
# The checks, by concern.  Their functions read $out (this run's scratch
# folder) and the settings above, and write only under $out.
# shellcheck source=lib/assert.sh
. tests/lib/assert.sh
# shellcheck source=lib/kit.sh
. tests/lib/kit.sh
# shellcheck source=lib/builds.sh
. tests/lib/builds.sh
# shellcheck source=lib/boots.sh
. tests/lib/boots.sh
# shellcheck source=lib/handouts.sh
. tests/lib/handouts.sh
# shellcheck source=lib/grading.sh
. tests/lib/grading.sh
tap_start "$out" "${KIT_TEST_FILTER:-}"
[ -z "$only_stage" ] || tap_scope off

# --- The kit's own code -------------------------------------------------
mapfile -t scripts < <(shell_scripts)
check "shellcheck is clean on the kit's scripts" shellcheck -x "${scripts[@]}"
check "the test output is TAP; a failed build skips what needs it; FILTER selects" tap_works
check "the gdb helpers compile" \
	python3 -c 'import sys; [compile(open(f).read(), f, "exec") for f in sys.argv[1:]]' gdb/*.py grading/*.py

check "make bench's report has the tables and plots of every kernel's figures" bench_report_made
check "  ... and its check fails a results folder without SLAB's hackbench times" \
	fails_with "hackbench: no time for SLAB, 2 CPUs, 100 groups" bench_report_made --drop SLAB
check "  ... and one without a boot of SLUB+Q's hackbench in instructions" \
	fails_with "hackbench in instructions: no count for SLUB+Q, 100 groups, boot 2" \
	bench_report_made --drop-icount SLUB+Q

tap_group_begin
prerequisite "make docs renders every handout and diagram; the answers only with EDITION=instructor" docs_build
check "the book opens in headless Chromium: pages load, images show, links lead somewhere" book_in_browser
tap_group_end

check "make help and the README list every setting the scripts read" settings_documented

# --- Bad input gets a one-line error ------------------------------------
kit=$(kit_without_graded_lab 00-baseline)
check "make exercise on a lab without graded work says which labs have some" \
	fails_with "lab 00-baseline has no graded work; the labs that have some: $(graded_labs "$kit" | paste -sd ' ')" \
	"$kit/grading/exercise.sh" 0
check "  ... and make grade, before make exercise, says to run it" \
	fails_with "no tree of yours for lab 07-cpu-queues; run: make exercise LAB=07" \
	env KIT_EXERCISES="$out/no-exercises" grading/grade.sh 7

check "a lab's graded.toml with a key its schema lacks, in a nested table, is refused, naming both" \
	fails_with "[[tests]] 1 (drain-each): unknown key pionts (a tests table has id, boot, kind, points, name, hint)" \
	python3 grading/exercise.py tests "$fixtures/graded/key-misspelt.toml"

check "an unknown STAGE is refused, naming the valid ones" \
	fails_with "unknown STAGE '99'; valid stages: $(kit_stages | tr '\n' ' ' | sed 's/ $//')" \
	make --no-print-directory build STAGE=99

check "a stage that is not built is named with the command that builds it" \
	fails_with "stage 07-cpu-queues is not built; run: make build STAGE=07-cpu-queues" \
	env KIT_WORK="$out/no-builds" scripts/qemu.sh 7

check "a KIT_SHARED that make share did not make is refused, with the command that makes one" \
	fails_with "KIT_SHARED=$out is not a class's shared kit (it has no kit-shared file); an instructor makes one with: make share KIT_WORK=$out" \
	env KIT_SHARED="$out" scripts/build-kernel.sh 0
check "  ... and a shared kit built from other stage patches than this checkout's" \
	fails_with "the shared kit in $out/shared has no kernel of stage 00-baseline as this checkout of the kit makes it (an update on one side only?); ask for make share to be run again with this checkout, or build your own: leave KIT_SHARED out" \
	env KIT_SHARED="$(shared_kit_of_other_patches)" scripts/build-kernel.sh 0

# Handouts that cannot be run as written are refused (scripts/handout.py).
check "a handout's not-run marker must mark a code block" \
	fails_with "not-run-marker-alone.md:3: <!-- not run: ... --> is not followed by a code block" \
	scripts/handout.py steps "$fixtures/handouts/not-run-marker-alone.md"
check "a handout's gdb line without its prompt is refused" \
	fails_with "gdb-line-without-prompt.md:3: a gdb line without the prompt (gdb) that continues no command" \
	scripts/handout.py steps "$fixtures/handouts/gdb-line-without-prompt.md"
check "a handout's guest step that looks like the shell's prompt is refused" \
	fails_with "guest-step-like-prompt.md:2: a guest step with \" # \" after a path" \
	scripts/handout.py steps "$fixtures/handouts/guest-step-like-prompt.md"

check "a long step shows its progress, files compiled of about how many, and ends with its command" \
	step_shows_progress

check "a missing package is named with the command that installs it" \
	fails_with "missing packages: kit-no-such-package (from $fixtures/packages-missing.txt); run: scripts/deps.sh $fixtures/packages-missing.txt" \
	scripts/check-deps.sh "$fixtures/packages-missing.txt"

check "a missing linux-source tarball is reported" \
	fails_with "no kernel source at /nonexistent/linux.tar.xz; run: make deps" \
	env KIT_WORK="$out/work" LINUX_TARBALL=/nonexistent/linux.tar.xz scripts/unpack-source.sh

cp -R "$fixtures/bad-patch" "$out/bad-patch"
check "a patch that does not apply names the file, the hunk and the kernel" \
	fails_with "mm/fixture.c hunk #1" scripts/apply-stage-patch.sh "$out/bad-patch/tree" "$fixtures/bad-patch/stage.patch"
check "  ... and names the kernel version it expected" \
	fails_with "made against linux-source-6.1 $(kit_recorded_version)" \
	scripts/apply-stage-patch.sh "$out/bad-patch/tree" "$fixtures/bad-patch/stage.patch"

configs=$fixtures/configs
check "the config check names each option olddefconfig dropped" \
	fails_with "CONFIG_SLUB_STATS (asked y, got n)" \
	scripts/check-config.sh "$configs/both-wrong.config" "$configs/fragment.config"
check "  ... and each option it was asked to leave out" \
	fails_with "CONFIG_SLAB_FREELIST_HARDENED (asked n, got y)" \
	scripts/check-config.sh "$configs/both-wrong.config" "$configs/fragment.config"
check "  ... and passes a config that has them all" \
	scripts/check-config.sh "$configs/as-asked.config" "$configs/fragment.config"
check "  ... where a later fragment (a variant's) overrides an earlier one" \
	scripts/check-config.sh "$configs/as-the-variant-asks.config" "$configs/fragment.config" "$configs/variant.config"

# --- The stage patches ---------------------------------------------------
check "each stage's features (stages/*/features) are what its patch shows" features_match_patches
check "the series survives import and export byte for byte" series_round_trip
check "make delta is empty exactly for the stages that change nothing" delta_matches_patches
check "scripts/checkpatch.pl is clean on every stage patch" checkpatch_clean

# --- Every stage: build, boot, walk through, grade -----------------------
# What shows a checker able to fail, or checks the tree itself, runs on
# the first stage that has what it needs, not on each (tap_first_time).
tap_scope on
smoked=' '
slubq_stages=() design=queues first_slubq=''
first=$(kit_stages | sed -n 1p) last=$(kit_stages | tail -n 1)
# The last stage of the 2010 design, with one queue a CPU: make bench's
# SLUB+Q, and a proof kernel of its own (stage 11 replaces the queues).
last_queues=$(last_queue_stage)
page_modes=$(page_mode_stages)
for stage in $(kit_stages); do
	# What this stage's checks look back at: the earlier SLUB+Q stages
	# of its design (stage 11's sheaves start anew).
	if stage_has "$stage" sheaves && [ "$design" != sheaves ]; then
		design=sheaves slubq_stages=()
	fi
	if stage_has "$stage" cpu-queues; then
		slubq_stages+=("$stage")
		first_slubq=${first_slubq:-$stage}
	fi
	if [ -n "$only_stage" ] && [ "$stage" != "$only_stage" ]; then
		continue
	fi
	tap_group_begin
	# Before the stage's own build, which then finds it done: a stage
	# built twice would cost a build.
	if only_c_changed "$stage" && tap_first_time copy-build; then
		check "stage $stage: a new build folder starts as a copy of the stage before's and compiles only what differs" \
			build_starts_from_copy "$stage"
	fi
	prerequisite "stage $stage: patch applies, config checks, kernel builds" scripts/build-kernel.sh "$stage"
	if tap_first_time tree-checks; then
		# KUnit's parser and 6.1's headers come with the tree, unpacked by
		# the first build.
		check "a failing SLUB KUnit case is named on the console" \
			fails_with "[FAILED] test_two" kunit_passed "$fixtures/kunit-failing.log"
		check "the gdb helpers' table of cache flags is 6.1's (include/linux/slab.h)" \
			python3 tests/check_slab_flags.py "$KIT_KERNEL_TREE" gdb/readers.py
		check "a build from nothing compiles about as many files as its progress line says" \
			cold_build_size_right "$stage"
		check "a kit module last built from another checkout's file is built again from this one's, though older" \
			module_built_from_checkout "$stage"
	fi
	# Stages that change nothing boot the kernel of the stage before them:
	# one smoke boot per distinct kernel.
	key=$(stage_key "$stage")
	if [[ $smoked != *" $key "* ]]; then
		check "stage $stage: boots to the ready line and passes the smoke test" boot_run "$stage" smoke
		check "stage $stage: the gdb helpers load on its vmlinux and each runs once" helpers_load "$stage"
		# The build's own check that its bzImage boots its vmlinux
		# (scripts/build-kernel.sh), shown able to fail on the first two
		# kernels that differ.
		if [ -n "${first_smoked:-}" ] && tap_first_time bzimage-fault; then
			check "  ... and the build's check fails a bzImage that boots another stage's kernel" \
				fails_with "does not hold the kernel of" bzimage_holds \
				"$KIT_BUILD/$first_smoked/arch/x86/boot/bzImage" "$KIT_BUILD/$stage/vmlinux"
		fi
		check "stage $stage: its vmlinux names one build folder, and gdb lists a header's line once" \
			build_folder_recorded "$stage"
		if tap_first_time build-folder-fault; then
			check "  ... and that check fails on objects compiled by plain gcc in two folders, not by the kit's ccache-gcc" \
				build_folder_check_fails
		fi
		first_smoked=${first_smoked:-$stage}
		smoked+="$key "
	fi
	if grep -qx "$((10#${stage%%-*}))" <<<"$page_modes"; then
		check "stage $stage: boots with percpu_alloc=page, its first chunk whole pages, its dynamic area the floor" \
			page_first_chunk "$stage"
	fi
	if stage_has "$stage" cpu-queues; then
		check "stage $stage: the allocator compiles for 32-bit x86 (i386), warnings as errors" \
			scripts/compile-i386.sh "$stage"
		# What the handouts of this and the earlier SLUB+Q stages break on.
		mapfile -t targets < <(break_targets "${slubq_stages[@]}")
		check "stage $stage: each function the handouts break on is one location (${#targets[@]} functions)" \
			breaks_resolve_once "$stage" "${targets[@]}"
		if tap_first_time inline-break-fault; then
			# An inline function, with a copy in each caller, must fail it.
			check "  ... and an inline function fails that check" \
				fails_with "map: not one location" breaks_resolve_once "$stage" map
		fi
		mapfile -t conditions < <(break_conditions "$stage")
		if [ ${#conditions[@]} -gt 0 ]; then
			check "stage $stage: gdb takes the conditions of its breakpoints (${#conditions[@]})" \
				conditions_parse "$stage" "${conditions[@]}"
			if tap_first_time condition-fault; then
				check "  ... and a condition on a name the function lacks fails that check" \
					fails_with "No symbol" conditions_parse "$stage" "break drain_objects if no_such_name > 1"
			fi
		fi
		# A stage's Kconfig is the stage before's unless it changes a Kconfig
		# file (14 s a check).
		if [ -n "$only_stage" ] || [ "$stage" = "${slubq_stages[0]}" ] ||
			[[ $(delta_files "$stage") == *Kconfig* ]]; then
			check "stage $stage: Kconfig refuses the options that need free pointers" kconfig_refuses "$stage"
		fi
		if [ "$stage" = "$last_queues" ] || [ "$stage" = "$last" ]; then
			check "stage $stage: the irqsoff variant's config (tracers for make irqsoff) holds" \
				variant_config_holds "$stage" irqsoff
		fi
		check "stage $stage: with slub_debug=FZPU, the torture module passes and every cache validates" \
			boot_run "$stage" validate slub_debug=FZPU
		check "stage $stage: memcg, CPU hotplug, KFENCE, init_on_alloc/free keep working; slabinfo adds up" \
			boot_run "$stage" features "init_on_alloc=1 init_on_free=1 kfence.sample_interval=10"
		if tap_first_time slabinfo-fault; then
			check "  ... and a count that stays wrong in every listing fails slabinfo's check" \
				slabinfo_catches_miscount "$stage"
		fi
		if stage_has "$stage" resizable-queues; then
			check "stage $stage: cpu_queue_size and cpu_batch_size take good values, refuse bad ones" \
				boot_run "$stage" queue-sizes
			# The torture module's run on every CPU, with queues resized.
			check "stage $stage: the torture module passes while queues are resized in a loop" \
				boot_run "$stage" resize-stress
		else
			check "stage $stage: the torture module passes on every CPU" boot_run "$stage" torture
		fi
		if stage_has "$stage" sheaves; then
			check "stage $stage: sheaf_capacity follows the slot size, barn_sheaves adds up, both refuse writes" \
				boot_run "$stage" sheaf-files
		fi
		if stage_has "$stage" big-slabs; then
			check "stage $stage: slabs of more than 32767 objects (slub_min_order=7) pass the torture test" \
				boot_run "$stage" big-slabs slub_min_order=7
		fi
		# The proof kernel, of the first SLUB+Q stage, of the last with
		# queues, which holds all that the stages between change, and of
		# the last (sheaves); of any stage that STAGE= names.  (Stages 08's and 09's took 4.5 min of the 60 the
		# whole suite may take.)  If it does not build, only the proof
		# checks are skipped.  (Built in the background under SCHED_IDLE
		# instead, it slowed the checks beside it by about a third on the
		# kit's 2-core machines: lab 00's grade check took 38 to 42 s
		# instead of 27 to 30 s.)
		if [ -n "$only_stage" ] || [ "$stage" = "$first_slubq" ] ||
			[ "$stage" = "$last_queues" ] || [ "$stage" = "$last" ]; then
			tap_group_begin
			prerequisite "stage $stage: the proof kernel (lockdep, KASAN, 2 NUMA nodes) builds" \
				env KIT_VARIANT=proof scripts/build-kernel.sh "$stage"
			check "stage $stage: on it, torture, resizing, CPU hotplug: no lockdep, KASAN or might_sleep report" \
				proof_run "$stage"
			if tap_first_time kasan-fault; then
				check "  ... and a use after free planted in the torture module fails it (KASAN)" \
					kasan_catches_use_after_free "$stage"
			fi
			tap_group_end
		fi
		if tap_first_time torture-fault; then
			check "stage $stage: the torture module catches a corrupted object" \
				torture_catches_corruption "$stage"
			check "stage $stage: the torture module catches an object of another node than it asked for" \
				torture_catches_off_node "$stage"
		fi
	fi
	read -r run shown < <(handout_counts "$stage")
	check "stage $stage: every step of lab $stage's handout runs ($run of $shown), with what it should show" \
		handout_runs "$stage" "$run" "$shown"
	# Stock SLUB's freelists, in the first stage, while its kernel is built.
	if [ "$stage" = "$first" ]; then
		check "kit-cpu-slab reports a CPU freelist that loops or leaves its slab's objects" \
			freelist_corruption_reported "$stage"
	fi
	if [ -f "labs/$stage/graded.toml" ]; then
		graded_lab_checks "$stage"
	fi
	tap_group_end
done
if [ -z "$only_stage" ] || [ "$only_stage" = "$last" ]; then
	check "the initramfs holds /dev/console, init, the guest scripts and the stage's modules, all root's" \
		initramfs_holds "$last"
	check "make lab: gdb prompt with QEMU halted at the first instruction" lab_reaches_prompt "$last"
	check "a gdb port in use is reported" port_in_use "$last"
	check "QEMU that does not start is reported with its error" qemu_failure_reported "$last"
	check "a handout step that gdb refuses fails the handout" \
		handout_step_fails "$last" "print kit_no_such_symbol" 'gdb said: No symbol "kit_no_such_symbol" in current context.'
	check "  ... and so does one whose output says UNEXPECTED" \
		handout_step_fails "$last" 'echo UNEXPECTED: planted\n' "the output says UNEXPECTED"
	check "  ... and so does an output excerpt that gdb did not print" handout_excerpt_checked "$last"
	check "  ... and so does a value printed <optimized out>" \
		handout_step_fails "$last" 'echo s = <optimized out>\n' "the output says <optimized out>"
	check "  ... unless the excerpt after the step shows it so" handout_optimized_out_shown "$last"
	check "  ... and so does a step whose prompt never comes, and its QEMU ends with it" \
		handout_hang_ended "$last"
	check "make excerpts runs past a stale excerpt and shows what was printed instead" \
		excerpts_refreshed "$last"
	check "make boot and make gdb in two terminals: break, type in the guest, detach" \
		two_terminals "$last" "$first"
	check "make share, then two students at once debug and type lab $last's handout from it, building nothing" \
		shared_class "$last"
fi
# make bench, last: its SLUB, SLUB+Q and sheaves kernels are the stage
# kernels built above.
if [ -z "$only_stage" ]; then
	prerequisite "make bench's SLAB kernel (stage $first, VARIANT=slab-smoke) builds" \
		env KIT_VARIANT=slab-smoke scripts/build-kernel.sh "$first"
	check "make bench --smoke: SLAB, SLUB, SLUB+Q and sheaves boot, and every figure of its report comes out" bench_smoke
	check "  ... and a guest that does not come up is stopped and booted again, three times at most, each console kept" \
		bench_hung_kernel_booted_again
	check "make bench's own kernels' configs hold: bench, slab, stats, slab-stats over stage $first; bench, stats over $last_queues and $last" \
		bench_configs_hold "$first" "$last_queues" "$last"
fi

tap_finish

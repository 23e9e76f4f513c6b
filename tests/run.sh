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
# shellcheck source=../scripts/tap.sh
. scripts/tap.sh
# shellcheck source=../scripts/console.sh
. scripts/console.sh
tap_start "$out" "${KIT_TEST_FILTER:-}"
[ -z "$only_stage" ] || in_scope=0

# fails_with TEXT COMMAND...: COMMAND must exit non-zero and say TEXT.
fails_with() {
	local text=$1 rc=0
	shift
	"$@" >"$out/fail" 2>&1 || rc=$?
	cat "$out/fail"
	[ "$rc" -ne 0 ] || { echo "exited 0; expected a failure saying: $text"; return 1; }
	grep -qF -- "$text" "$out/fail" || { echo "the error does not say: $text"; return 1; }
}

# matches_all PATTERNS FILE: every extended regular expression in PATTERNS
# (one a line; # starts a comment) matches some line of FILE, and every
# one written !PATTERN matches none.
matches_all() {
	local patterns=$1 file=$2 pat bad=0
	while IFS= read -r pat; do
		case "$pat" in
		'' | '#'*) continue ;;
		'!'*)
			if grep -qE -- "${pat#!}" "$file"; then
				echo "matched, but must not: ${pat#!}"
				grep -nE -- "${pat#!}" "$file" | sed -n 1,3p
				bad=1
			fi
			;;
		*)
			if ! grep -qE -- "$pat" "$file"; then
				echo "no line matches: $pat"
				near "$pat" "$file"
				bad=1
			fi
			;;
		esac
	done <"$patterns"
	return "$bad"
}

# near PATTERN FILE: where in FILE a line for PATTERN was expected: the
# lines around the first one that has the pattern's longest word.
near() {
	local word line
	word=$(grep -oE '[A-Za-z_][A-Za-z0-9_-]{3,}' <<<"$1" | awk '{ print length, $0 }' |
		sort -rn | sed -n 1p | cut -d' ' -f2-)
	line=$(grep -nF -m 1 -- "${word:-@@none@@}" "$2" | cut -d: -f1)
	if [ -n "$line" ]; then
		echo "  the transcript near its first \"$word\" (line $line):"
		sed -n "$((line > 3 ? line - 3 : 1)),$((line + 3))p" "$2" | sed 's/^/  | /'
	else
		echo "  the transcript has no \"${word:-}\"; its last lines:"
		tail -n 5 "$2" | sed 's/^/  | /'
	fi
}

# --- The kit's own code -------------------------------------------------
shell_scripts() {
	grep -lE '^#!.*(bash|/sh)' scripts/*.sh scripts/compiler/* vm/guest/init vm/guest/run/* tests/*.sh docs/*.sh .ci/run
}
mapfile -t scripts < <(shell_scripts)
check "shellcheck is clean on the kit's scripts" shellcheck -x "${scripts[@]}"
# The suite's own machinery (scripts/tap.sh): output that a TAP parser reads
# without error, a failed prerequisite skipping what needs it, the filter
# leaving checks out and running a prerequisite they need, once.
tap_works() {
	bash -c 'set -euo pipefail
		. scripts/lib.sh
		. scripts/tap.sh
		tap_start "$1" "^(build|boot|walk)"
		prerequisite build false
		check boot true
		check "left out" true
		skip=""
		prerequisite compile true
		saved=("${pending[@]}")
		check walk true
		pending=("${saved[@]}")
		check "walk again" true
		tap_finish' _ "$out" >"$out/tap.txt" && { echo "tap_finish passed a failed check"; return 1; }
	cat "$out/tap.txt"
	grep -qx 'TAP version 13' "$out/tap.txt"
	grep -qx 'not ok 1 - build' "$out/tap.txt"
	grep -qx 'ok 2 - boot # SKIP needs: build' "$out/tap.txt"
	grep -qE '^ok 3 - compile \([0-9]+s\)$' "$out/tap.txt"
	grep -qE '^ok 4 - walk \([0-9]+s\)$' "$out/tap.txt"
	grep -qE '^ok 5 - walk again \([0-9]+s\)$' "$out/tap.txt"
	if grep 'left out' "$out/tap.txt"; then
		echo "the filter did not leave that check out"
		return 1
	fi
	grep -qx '1..5' "$out/tap.txt"
	grep -qx '3 passed, 1 failed, 1 skipped' "$out/tap.txt"
	perl -MTAP::Parser -e 'local $/; my $p = TAP::Parser->new({ tap => <STDIN> });
		$p->run; print "TAP parse error: $_\n" for $p->parse_errors;
		exit($p->parse_errors || $p->tests_run != 5 || $p->failed != 1 || $p->skipped != 1)' \
		<"$out/tap.txt"
}
check "the test output is TAP; a failed build skips what needs it; FILTER selects" tap_works
check "the gdb helpers compile" python3 -c 'import sys; compile(open(sys.argv[1]).read(), sys.argv[1], "exec")' vm/gdb/slubq.py

# make bench's report (scripts/bench_report.py) and the check of a results
# folder (tests/check_bench.py), on made-up figures: no kernel boots.
bench_report_made() {
	rm -rf "$out/bench"
	python3 tests/bench_sample.py "$out/bench" "$@"
	python3 scripts/bench_report.py "$out/bench"
	python3 tests/check_bench.py "$out/bench"
}
check "make bench's report has the tables and plots of every kernel's figures" bench_report_made
check "  ... and its check fails a results folder without SLAB's hackbench times" \
	fails_with "hackbench: no time for SLAB, 2 CPUs, 100 groups" bench_report_made --drop SLAB

# bench_smoke: make bench's whole pipeline at its smallest (scripts/bench.sh
# --smoke: stage 00's and the last stage's kernels and a SLAB one, each
# booted, timed, counted and run under -icount), and every figure of it in
# the results folder.
bench_smoke() {
	rm -rf "$out/bench-smoke"
	KIT_BENCH_RESULTS=$out/bench-smoke scripts/bench.sh --smoke
	python3 tests/check_bench.py "$out/bench-smoke"
}

# bench_configs_hold: the configurations of the kernels make bench times
# and counts, which the smoke run does not build, hold.
bench_configs_hold() {
	variant_config_holds "$first" bench slab stats slab-stats
	variant_config_holds "$last" bench stats
}

# make docs: an HTML page per handout, an SVG per diagram; the answers
# only in the instructors' edition.
docs_build() {
	local md dot page
	make --no-print-directory docs
	make --no-print-directory docs EDITION=instructor
	for md in README.md docs/*.md stages/*/README.md labs/*/README.md solutions/*.md; do
		page=$(printf '%s' "${md%.md}" | tr '/' '-').html
		grep -qF "href=\"$page\"" docs/html-instructor/index.html ||
			{ echo "the instructors' edition's contents do not list $md"; return 1; }
		case "$md" in
		solutions/*) [ ! -e "docs/html/$page" ] ||
			{ echo "the students' edition has $md"; return 1; } ;;
		*) grep -qF "href=\"$page\"" docs/html/index.html ||
			{ echo "the students' edition's contents do not list $md"; return 1; } ;;
		esac
	done
	for dot in diagrams/*.dot; do
		grep -q '<svg' "docs/html/$(basename "${dot%.dot}").svg" || { echo "no SVG for $dot"; return 1; }
		grep -qF "src=\"$(basename "${dot%.dot}").svg\"" docs/html/*.html ||
			{ echo "no chapter shows $dot"; return 1; }
	done
}
prerequisite "make docs renders every handout and diagram; the answers only with EDITION=instructor" docs_build

# book_in_browser: both editions of the book open in headless Chromium
# (tests/check_book.py): every page loads, every image is drawn, every link
# inside the book leads somewhere; screenshots of the students' edition
# go to KIT_LOGS/book.  A copy with a dead link and a missing image fails it.
book_in_browser() {
	python3 tests/check_book.py docs/html "$KIT_LOGS/book" &&
		python3 tests/check_book.py docs/html-instructor || return 1
	rm -rf "$out/book"
	cp -r docs/html "$out/book"
	sed -i 's|</body>|<p><a href="no-such-page.html">dead</a><img src="no-such.svg" alt=""></p></body>|' \
		"$out/book/README.html"
	fails_with "broken: README.html: image no-such.svg is not drawn" \
		python3 tests/check_book.py "$out/book" &&
		grep -qF "broken: README.html: link to /book/no-such-page.html, which does not exist" "$out/fail"
}
check "the book opens in headless Chromium: pages load, images show, links lead somewhere" book_in_browser
# The checks below do not need the book.
skip=''

# settings_documented: every setting that scripts/ reads from the environment
# with a default (${NAME:-...}) is listed by make help and in the README's
# table, under its make name (KIT_VARIANT is VARIANT=).  KIT_SERIES_BRANCH
# is the tests' hook, not a setting.
settings_documented() {
	local name shown help bad=0
	help=$(make --no-print-directory help)
	while IFS= read -r name; do
		case "$name" in
		KIT_SERIES_BRANCH) continue ;;
		KIT_VARIANT) shown=VARIANT ;;
		KIT_SOURCE) shown=TREE ;;
		KIT_TEST_FILTER | KIT_GRADE_FILTER) shown=FILTER ;;
		*) shown=$name ;;
		esac
		grep -qE -- "(^| )$shown=" <<<"$help" || { echo "make help does not list $shown"; bad=1; }
		grep -qF -- "| \`$shown=" README.md || { echo "the README's table does not list $shown"; bad=1; }
	done < <(grep -ohE '\$\{(KIT_[A-Z_]+|GDB_PORT|LINUX_TARBALL):-' scripts/*.sh |
		sed -E 's/^\$\{//; s/:-$//' | sort -u)
	return "$bad"
}
check "make help and the README list every setting the scripts read" settings_documented

# --- Bad input gets a one-line error ------------------------------------
# A lab without graded work, in a copy of the kit whose lab 00 has none
# (every lab of the kit has some).
mkdir -p "$out/kit"
cp -R scripts vm stages labs "$out/kit/"
rm "$out/kit/labs/00-baseline/exercise.toml"
graded=$(for spec in "$out"/kit/labs/*/exercise.toml; do basename "$(dirname "$spec")" | cut -d- -f1; done)
check "make exercise on a lab without graded work says which labs have some" \
	fails_with "lab 00-baseline has no graded work; the labs that have some: $(echo "$graded" | paste -sd ' ')" \
	"$out/kit/scripts/exercise.sh" 0
check "  ... and make grade, before make exercise, says to run it" \
	fails_with "no tree of yours for lab 07-cpu-queues; run: make exercise LAB=07" \
	env KIT_EXERCISES="$out/no-exercises" scripts/grade.sh 7

check "an unknown STAGE is refused, naming the valid ones" \
	fails_with "unknown STAGE '99'; valid stages: $(kit_stages | tr '\n' ' ' | sed 's/ $//')" \
	make --no-print-directory build STAGE=99

check "a stage that is not built is named with the command that builds it" \
	fails_with "stage 07-cpu-queues is not built; run: make build STAGE=07-cpu-queues" \
	env KIT_WORK="$out/no-builds" scripts/qemu.sh 7

check "a KIT_SHARED that make share did not make is refused, with the command that makes one" \
	fails_with "KIT_SHARED=$out is not a class's shared kit (it has no kit-shared file); an instructor makes one with: make share KIT_WORK=$out" \
	env KIT_SHARED="$out" scripts/build-kernel.sh 0
mkdir -p "$out/shared/build"
printf 'tree %s\n' "$out/shared/linux" >"$out/shared/kit-shared"
ln -s kernel-000000000000 "$out/shared/build/00-baseline"
check "  ... and a shared kit built from other stage patches than this checkout's" \
	fails_with "the shared kit in $out/shared has no kernel of stage 00-baseline as this checkout of the kit makes it (an update on one side only?); ask for make share to be run again with this checkout, or build your own: leave KIT_SHARED out" \
	env KIT_SHARED="$out/shared" scripts/build-kernel.sh 0

# Handouts that cannot be run as written are refused (scripts/handout.py).
printf '%s\n' 'Text.' '<!-- not run: needs a person -->' 'More text.' >"$out/handout-reason.md"
check "a handout's not-run marker must mark a code block" \
	fails_with "handout-reason.md:3: <!-- not run: ... --> is not followed by a code block" \
	scripts/handout.py steps "$out/handout-reason.md"
printf '%s\n' '```gdb' '(gdb) break kmem_cache_init' 'continue' '```' >"$out/handout-prompt.md"
check "a handout's gdb line without its prompt is refused" \
	fails_with "handout-prompt.md:3: a gdb line without the prompt (gdb) that continues no command" \
	scripts/handout.py steps "$out/handout-prompt.md"
printf '%s\n' '```guest' 'cd /tmp # the shell prompts "/tmp # " too' '```' >"$out/handout-guest.md"
check "a handout's guest step that looks like the shell's prompt is refused" \
	fails_with "handout-guest.md:2: a guest step with \" # \" after a path" \
	scripts/handout.py steps "$out/handout-guest.md"

printf 'kit-no-such-package\n' >"$out/packages"
# step_shows_progress: a long step says, while it runs, how long it has run
# and how many files it has compiled, and ends when its command does: its
# progress line's sleep (a minute's, off a terminal) must not hold the
# caller's pipe open past the timeout.
# shellcheck disable=SC2016 # the inner shell's variables
step_shows_progress() {
	local rc=0
	timeout 20 bash -c '. scripts/lib.sh; step_every=1 step_files=9
		compile() { for i in 1 2 3; do echo "  CC      a$i.o"; sleep 1; done; }
		{ step "$1" "a planted step" compile; step_every=60 step "$1" "another" sleep 1; } 2>&1 | cat' \
		_ "$out/step.log" >"$out/step" || rc=$?
	cat "$out/step"
	[ "$rc" -eq 0 ] || { echo "the steps did not end within 20 s (exit $rc)"; return 1; }
	grep -qE '^    0m0[1-3]s, [1-3] files compiled of about 9$' "$out/step" &&
		[ "$(grep -c '^    done in' "$out/step")" -eq 2 ]
}
check "a long step shows its progress, files compiled of about how many, and ends with its command" \
	step_shows_progress

check "a missing package is named with the command that installs it" \
	fails_with "missing packages: kit-no-such-package (from $out/packages); run: scripts/deps.sh $out/packages" \
	scripts/check-deps.sh "$out/packages"

check "a missing linux-source tarball is reported" \
	fails_with "no kernel source at /nonexistent/linux.tar.xz; run: make deps" \
	env KIT_WORK="$out/work" LINUX_TARBALL=/nonexistent/linux.tar.xz scripts/unpack-source.sh

mkdir -p "$out/tree/mm"
printf 'one\ntwo\nthree\n' >"$out/tree/mm/slub.c"
cat >"$out/bad.patch" <<'PATCH'
--- a/mm/slub.c
+++ b/mm/slub.c
@@ -1,3 +1,3 @@
 one
-TWO
+2
 three
PATCH
check "a patch that does not apply names the file, the hunk and the kernel" \
	fails_with "mm/slub.c hunk #1" scripts/apply-stage-patch.sh "$out/tree" "$out/bad.patch"
check "  ... and names the kernel version it expected" \
	fails_with "made against linux-source-6.1 $(kit_recorded_version)" \
	scripts/apply-stage-patch.sh "$out/tree" "$out/bad.patch"

printf 'CONFIG_SLUB=y\nCONFIG_SLUB_STATS=y\n# CONFIG_SLAB_FREELIST_HARDENED is not set\n' >"$out/fragment"
printf 'CONFIG_SLUB=y\n# CONFIG_SLUB_STATS is not set\nCONFIG_SLAB_FREELIST_HARDENED=y\n' >"$out/config"
check "the config check names each option olddefconfig dropped" \
	fails_with "CONFIG_SLUB_STATS (asked y, got n)" scripts/check-config.sh "$out/config" "$out/fragment"
check "  ... and each option it was asked to leave out" \
	fails_with "CONFIG_SLAB_FREELIST_HARDENED (asked n, got y)" scripts/check-config.sh "$out/config" "$out/fragment"
printf 'CONFIG_SLUB=y\nCONFIG_SLUB_STATS=y\n' >"$out/config"
check "  ... and passes a config that has them all" scripts/check-config.sh "$out/config" "$out/fragment"
printf '# CONFIG_SLUB_STATS is not set\n' >"$out/variant"
printf 'CONFIG_SLUB=y\n# CONFIG_SLUB_STATS is not set\n' >"$out/config"
check "  ... where a later fragment (a variant's) overrides an earlier one" \
	scripts/check-config.sh "$out/config" "$out/fragment" "$out/variant"

# --- Every stage: build, boot, walk through -----------------------------
# boot_run STAGE SCRIPT [KERNEL ARGS]: boot_console, and fail unless the
# console passes (console_passed, scripts/console.sh).
boot_run() {
	local console
	console=$(boot_console "$@")
	console_passed "$console" "$1" "$2"
}

# proof_run STAGE: boot the stage's proof kernel (vm/config/variants/proof.config:
# lockdep, sleeping-in-atomic checks, KASAN, two NUMA nodes) with the guest
# script proof, as boot_run does.
proof_run() {
	KIT_VARIANT=proof
	export KIT_VARIANT
	boot_run "$1" proof
}

# boot_fails STAGE SCRIPT ARGS PATTERN: the boot with the fault that ARGS
# plants shows PATTERN on its console, and SCRIPT's verdict is FAILED.
boot_fails() {
	local console
	console=$(boot_console "$1" "$2" "$3")
	grep -E "^(BUG: KASAN|(slubq_)?torture: |$2: FAILED)" "$console" || true
	grep -q -- "$4" "$console" && [[ $(verdict "$console" "$2") == FAILED:* ]]
}

# The proof boot can fail: KASAN reports a use after free that the torture
# module plants, one the module's own checks cannot see.
kasan_catches_use_after_free() {
	KIT_VARIANT=proof
	export KIT_VARIANT
	boot_fails "$1" proof kit.torture=inject_use_after_free=1 \
		'^BUG: KASAN: use-after-free in slubq_torture'
}

# The torture test can fail: it catches an object it did not leave as it was.
torture_catches_corruption() {
	boot_fails "$1" torture kit.torture=inject_fault=1 \
		'^slubq_torture: FAILED: 1 corrupt object'
}

# slabinfo's check can fail: a count that stays wrong in every listing
# (planted by vm/guest/run/slabinfo-tool itself) fails it.
slabinfo_catches_miscount() {
	boot_fails "$1" slabinfo-tool kit.slabinfo_miscount=kmalloc-64 \
		'^slabinfo-tool: FAILED: each of 5 listings in a row found something; the last: .*kmalloc-64: Slabs/Part/Cpu 1/9/[0-9]'
}

# helpers_load STAGE: the gdb helpers load on the stage's vmlinux with the
# kernel's own gdb scripts (as make gdb loads them), and each helper runs
# once, as tests/helper-uses.txt uses it.  No kernel runs: a helper may
# find no registers or memory there, or say what it cannot do on that
# stage, but any other Python exception (a field the stage's types lack,
# say) is a bug of the helper.
helpers_load() {
	local dir name command
	local -a args=()
	local -A use=()
	while IFS=$'\t' read -r name command; do
		command=${command//CACHE/kmalloc_caches[0][6]}
		use[$name]=${command//OBJECT/0xffff888000100000}
	done < <(grep -v '^#' tests/helper-uses.txt)
	while IFS= read -r name; do
		[ -n "${use[$name]:-}" ] || { echo "tests/helper-uses.txt does not use $name: add it"; return 1; }
		args+=(-ex "echo == $name\n" -ex "${use[$name]}")
	done < <(sed -n 's/^    name = "\(kit[-_a-z]*\)"$/\1/p' vm/gdb/slubq.py)
	dir=$(realpath "$KIT_BUILD/$1")
	(cd "$dir" && gdb -q -nx -batch -iex "add-auto-load-safe-path $dir" \
		-ex "python import sys; sys.path.insert(0, '$KIT_ROOT/vm/gdb'); import slubq" \
		"${args[@]}" vmlinux) >"$out/helpers" 2>&1 || true
	cat "$out/helpers"
	[ "$(grep -c '^== ' "$out/helpers")" -eq "${#use[@]}" ] || { echo "not every helper ran"; return 1; }
	! grep -E '^Traceback|Undefined command|Invalid data type' "$out/helpers" &&
		! grep -P "^Python Exception <class '(?!gdb\.MemoryError'|gdb\.error'>: No registers\.$)" \
			"$out/helpers"
}

# features_match_patches: each stage's features (stage_has) are what its
# patch shows: SLUB+Q's retrieve_objects(), resize_cpu_queue(), and the
# end of MAX_OBJS_PER_PAGE; no other word is listed.
features_match_patches() {
	local stage feature evidence rc=0
	local -A shows=([cpu-queues]=retrieve_objects [resizable-queues]=resize_cpu_queue
		[big-slabs]='^-#define MAX_OBJS_PER_PAGE')
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
kconfig_refuses() {
	local stage=$1 dir=$out/kconfig-$1 option rc=0
	local options=(SLUB_CPU_PARTIAL SLAB_FREELIST_HARDENED SLAB_FREELIST_RANDOM)
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

# break_conditions STAGE: the conditional breakpoints (break FUNC if COND)
# of the stage's handout and answers, one a line.
break_conditions() {
	cat "labs/$1/README.md" "solutions/$1.md" | sed -nE 's/^[[:space:]]*(\(gdb\) )?(t?break [A-Za-z_][A-Za-z0-9_]* if .*)$/\2/p'
}

# conditions_parse STAGE BREAK...: gdb takes each BREAK (a conditional
# breakpoint) on the stage's vmlinux.  A condition names the function's
# arguments, which gdb finds only if the breakpoint's address lies in the
# function's own scope: where the compiler put inlined code first, gdb says
# "No symbol ... in current context" and the breakpoint never stops.
conditions_parse() {
	local vmlinux=$KIT_BUILD/$1/vmlinux line
	local -a gdb_args=()
	shift
	for line in "$@"; do
		gdb_args+=(-ex "echo == $line\n" -ex "$line")
	done
	gdb -q -nx -batch -iex 'set auto-load no' "${gdb_args[@]}" "$vmlinux" >"$out/conditions" 2>&1
	cat "$out/conditions"
	if grep -E '^No symbol|[Ee]rror' "$out/conditions"; then
		echo "gdb refused a condition (above)"
		return 1
	fi
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

# break_targets STAGE...: the functions that the stages' handouts and
# answers (in code blocks and in `inline code`) break on (break, tbreak),
# one a line.
break_targets() {
	local stage
	for stage in "$@"; do
		grep -hE '^(    |\t|\(gdb\) )' "labs/$stage/README.md" "solutions/$stage.md" || true
		grep -hoE '`t?break +[A-Za-z_][A-Za-z0-9_]*' \
			"labs/$stage/README.md" "solutions/$stage.md" || true
	done | grep -oE '(^|[ "`])t?break +[A-Za-z_][A-Za-z0-9_]*' |
		awk '{ print $NF }' | sort -u
}

# breaks_resolve_once STAGE NAME...: each NAME is one real function in
# STAGE's kernel: one symbol of that name in vmlinux and no compiler clone
# of it (NAME.isra.0, NAME.constprop.0: gdb would stop in those with
# arguments optimized out), and gdb's `break NAME` finds one location.
breaks_resolve_once() {
	local vmlinux=$KIT_BUILD/$1/vmlinux name bad=0 symbols
	local -a gdb_args=()
	shift
	[ $# -gt 0 ] || { echo "no functions to break on"; return 1; }
	symbols=$(nm "$vmlinux" | awk '{ print $3 }')
	for name in "$@"; do
		if [ "$(grep -cxF -- "$name" <<<"$symbols")" -ne 1 ]; then
			echo "$name: $(grep -cxF -- "$name" <<<"$symbols") symbols of that name in vmlinux, not 1"
			bad=1
		fi
		if grep -E -- "^$name\.(isra|constprop|part)" <<<"$symbols"; then
			echo "$name: the compiler made clones of it (above)"
			bad=1
		fi
		gdb_args+=(-ex "echo == $name\\n" -ex "break $name")
	done
	gdb -q -nx -batch -iex 'set auto-load no' "${gdb_args[@]}" "$vmlinux" >"$out/breaks" 2>&1
	cat "$out/breaks"
	# Each "== NAME" line is followed by what gdb said of `break NAME`:
	# one location is "Breakpoint N at ADDR: file F, line L."
	awk '/^== / { name = $2; next }
		name != "" {
			if ($0 !~ /^Breakpoint [0-9]+ at 0x[0-9a-f]+: file .*, line [0-9]+\.$/)
				{ print name ": not one location"; bad = 1 }
			name = ""
		}
		END { exit bad }' "$out/breaks" || bad=1
	return "$bad"
}


# handout_counts STAGE: "N M": of the M steps that the lab's handout
# shows, the N that are to run (the others say why not).
handout_counts() {
	scripts/handout.py steps "labs/$1/README.md" |
		awk -F '\t' '$2 != "check" && $2 != "output" { m++; if ($3 == "run") n++ } END { print n + 0, m + 0 }'
}

# handout_runs STAGE N M: every step of the lab's handout that is to run
# ran (make walkthrough types them), and the transcript has what the
# stage's walkthrough.expect asks, and no sign of a broken step.
handout_runs() {
	local transcript=$KIT_LOGS/$1/walkthrough.txt
	scripts/walkthrough.sh "$1" >/dev/null || { tail -n 25 "$transcript"; return 1; }
	matches_all "stages/$1/walkthrough.expect" "$transcript"
	matches_all tests/walkthrough-common.expect "$transcript"
	grep -qx "handout steps executed: $2 of $3" "$transcript" ||
		{ echo "the transcript does not end with: handout steps executed: $2 of $3"; return 1; }
}

# make lab: QEMU halted at the reset vector, gdb attached and taking commands.
lab_reaches_prompt() {
	printf 'info registers rip\nquit\n' | scripts/lab.sh "$1" >"$out/lab" 2>&1
	cat "$out/lab"
	grep -qE '\(gdb\) rip +0xfff0 ' "$out/lab"
}

port_in_use() {
	local port=$(($(kit_gdb_port) + 1)) pid rc=0
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(30)' "$port" &
	pid=$!
	sleep 1
	fails_with "gdb port $port is in use" env GDB_PORT="$port" scripts/qemu.sh "$1" || rc=$?
	kill "$pid"
	return "$rc"
}

# page_mode_stages: the stages that the handouts and answers boot with
# percpu_alloc=page (make lab STAGE=N APPEND=percpu_alloc=page), one a line.
page_mode_stages() {
	cat labs/*/README.md solutions/*.md |
		sed -nE 's/.*make (lab|boot) STAGE=([0-9]+) APPEND=percpu_alloc=page.*/\2/p' | sort -un
}

# percpu_early_size STAGE: PERCPU_DYNAMIC_EARLY_SIZE in the stage's kernel,
# in bytes: the stage patch's, or else the pristine tree's.
percpu_early_size() {
	local def
	def=$(sed -n 's/^+#define PERCPU_DYNAMIC_EARLY_SIZE//p' "stages/$1/stage.patch")
	[ -n "$def" ] || def=$(git -C "$KIT_TREE" show pristine:include/linux/percpu.h |
		sed -n 's/^#define PERCPU_DYNAMIC_EARLY_SIZE//p')
	[[ $def =~ \(([0-9]+)\ \<\<\ 10\) ]] || { echo "cannot read PERCPU_DYNAMIC_EARLY_SIZE: $def" >&2; return 1; }
	echo $((BASH_REMATCH[1] << 10))
}

# page_first_chunk STAGE: with percpu_alloc=page (labs 01 and 02), the
# kernel boots, its SLUB boot caches included, and the first chunk is
# whole pages: static, reserved and dynamic sizes add up to its pages, and
# the dynamic area is PERCPU_DYNAMIC_EARLY_SIZE plus less than a page.
page_first_chunk() {
	local stage=$1 console floor pages static reserved dyn
	floor=$(percpu_early_size "$stage")
	console=$(boot_console "$stage" smoke percpu_alloc=page)
	console_passed "$console" "$stage" smoke
	grep 'percpu: ' "$console"
	read -r pages static reserved dyn < <(sed -nE \
		's/.*percpu: ([0-9]+) 4K pages\/cpu s([0-9]+) r([0-9]+) d([0-9]+)$/\1 \2 \3 \4/p' "$console") ||
		{ echo "no line \"percpu: N 4K pages/cpu ...\": not in page mode"; return 1; }
	[ $((pages * 4096)) -eq $((static + reserved + dyn)) ] ||
		{ echo "$pages pages are not s + r + d = $((static + reserved + dyn)) bytes"; return 1; }
	if [ "$dyn" -lt "$floor" ] || [ "$dyn" -ge $((floor + 4096)) ]; then
		echo "d$dyn is not PERCPU_DYNAMIC_EARLY_SIZE ($floor) plus less than a page"
		return 1
	fi
	echo "$pages pages a CPU; the dynamic area: $floor bytes and $((dyn - floor)) of rounding"
}

# The two-terminal flow of labs 04 and 07-10, as a handout that the
# handout runner types (scripts/handout.py): make boot gives a shell on the
# serial console; make gdb attaches to that running kernel and breaks
# where a command typed in the guest while gdb waits leads; gdb detaches,
# the guest goes on and powers off at exit.  While it runs, make gdb of
# another stage and a second boot say which guest runs.
two_terminals() {
	local stage=$1 other=$2 port number=${1%%-*}
	port=$(kit_gdb_port)
	cat >"$out/two-terminals.md" <<-EOF_HANDOUT
		\`\`\`host
		make boot STAGE=$number
		scripts/gdb.sh $other 2>&1 | grep -F 'the guest on port $port runs another kernel (STAGE=$number)'
		scripts/qemu.sh $number 2>&1 | grep -F 'gdb port $port is in use by a guest of yours, STAGE=$number;'
		make gdb STAGE=$number
		\`\`\`

		\`\`\`gdb
		(gdb) break get_slabinfo
		(gdb) continue
		\`\`\`

		\`\`\`guest
		cat /proc/slabinfo >/dev/null; echo done-\$((6*7))
		\`\`\`

		\`\`\`gdb
		(gdb) print s->name
		(gdb) delete
		(gdb) detach
		\`\`\`
	EOF_HANDOUT
	scripts/handout.py run "$out/two-terminals.md" "$out/two-terminals.log"
	cat "$out/two-terminals.log"
	grep -qF 'Breakpoint 1, get_slabinfo ' "$out/two-terminals.log" ||
		{ echo "gdb did not stop in get_slabinfo"; return 1; }
	grep -qE '[$]1 = 0x[0-9a-f]+ "[a-z]' "$out/two-terminals.log" || { echo "gdb printed no cache name"; return 1; }
	grep -qF '[Inferior 1 (process 1) detached]' "$out/two-terminals.log" || { echo "gdb did not detach"; return 1; }
	# $((6*7)) tells what the guest's shell ran from the terminal's echo.
	tr -d '\r' <"$out/two-terminals.log.console" | grep -x 'done-42' >/dev/null ||
		{ echo "the guest did not go on after gdb detached"; tail -n 5 "$out/two-terminals.log.console"; return 1; }
	fails_with "no QEMU gdb stub on port $port" make --no-print-directory gdb STAGE="$number"
}

# shared_class STAGE: a class on one host.  make share makes the suite's
# work directory a shared kit with STAGE; then two students, each with a
# HOME and a gdb port of their own, work from it at the same time with
# KIT_SHARED: one types the lab's handout (make walkthrough), the other
# debugs (make lab, a breakpoint, gdb's source).  Both pass, neither builds
# anything, nothing shared changes, and gdb reads the stage's source from
# the shared copy, whatever the instructor's tree holds next.
shared_class() {
	local stage=$1 port rc=0 work changed file pid1 pid2
	local -a counts
	scripts/share.sh "$stage"
	# The shared copy has the files the stage's patch changes, as patched.
	git -C "$KIT_TREE" diff --name-only pristine >"$out/changed"
	while IFS= read -r file; do
		cmp "$KIT_TREE/$file" "$KIT_WORK/source/$stage/$file" || return 1
	done <"$out/changed"
	touch "$out/shared.stamp"
	port=$(kit_gdb_port)
	read -ra counts < <(handout_counts "$stage")
	printf '%s\n' '```host' "make lab STAGE=${stage%%-*}" '```' '```gdb' '(gdb) break slab_alloc' \
		'(gdb) continue' '(gdb) info source' '(gdb) quit' '```' >"$out/debug.md"
	mkdir -p "$out/student1" "$out/student2"
	student() {
		env -u KIT_WORK -u XDG_CACHE_HOME -u CCACHE_DIR HOME="$out/student$1" \
			KIT_SHARED="$KIT_WORK" GDB_PORT=$((port + 100 + $1)) "${@:2}" >"$out/student$1.log" 2>&1
	}
	student 1 scripts/walkthrough.sh "$stage" &
	pid1=$!
	student 2 scripts/handout.py run "$out/debug.md" "$out/debug.log" &
	pid2=$!
	wait "$pid1" || { echo "student 1, make walkthrough:"; tail -n 25 "$out/student1.log"; rc=1; }
	wait "$pid2" || { echo "student 2, make lab:"; cat "$out/student2.log" "$out/debug.log"; rc=1; }
	[ "$rc" -eq 0 ] || return 1
	work=$out/student1/.cache/slubq-kit
	matches_all "stages/$stage/walkthrough.expect" "$work/logs/$stage/walkthrough.txt"
	grep -qx "handout steps executed: ${counts[0]} of ${counts[1]}" "$work/logs/$stage/walkthrough.txt" ||
		{ echo "student 1's transcript does not end with all the handout's steps run"; return 1; }
	cat "$out/debug.log"
	grep -qx "Located in $KIT_WORK/source/$stage/mm/slub.c" "$out/debug.log" ||
		{ echo "student 2's gdb did not read the shared copy of the stage's mm/slub.c"; return 1; }
	for work in "$out"/student[12]/.cache/slubq-kit; do
		if [ -e "$work/linux" ] || [ -e "$work/build" ]; then
			echo "a student unpacked or built a kernel: $(ls "$work")"
			return 1
		fi
	done
	changed=$(find "$KIT_WORK/build" "$KIT_WORK/build/$(readlink "$KIT_BUILD/$stage")/" \
		"$KIT_WORK/source" "$KIT_WORK/kit-shared" "$KIT_TREE/scripts/gdb" \
		-maxdepth 1 -newer "$out/shared.stamp" -print -quit)
	[ -z "$changed" ] || { echo "a student changed the shared kit: $changed"; return 1; }
}

# initramfs_holds STAGE: the stage's initramfs (scripts/initramfs.sh) holds a
# /dev/console for init, init, every guest script and their library, the
# kit's modules and the stage's slabinfo, all root's, made without root.
initramfs_holds() {
	local archive want
	archive=$(scripts/initramfs.sh "$1")
	echo "$archive"
	cpio -itv --quiet <"$archive" >"$out/cpio" 2>&1
	grep -E 'console|init$|kit/|modules/kit/|slabinfo' "$out/cpio"
	grep -qE '^crw------- +1 root +root +5, +1 .* dev/console$' "$out/cpio" ||
		{ echo "no /dev/console, a character device 5,1 of root's"; return 1; }
	local -a wants=(init kit/lib.sh usr/bin/slabinfo usr/bin/hackbench bin/busybox)
	for want in vm/guest/run/*; do wants+=("kit/run/${want##*/}"); done
	for want in vm/modules/*/Kbuild; do
		want=${want%/Kbuild}
		wants+=("lib/modules/kit/${want##*/}.ko")
	done
	for want in "${wants[@]}"; do
		grep -qE " $want\$" "$out/cpio" || { echo "no $want"; return 1; }
	done
	! grep -vE '^[-dc]r[-w][-x][-r][-w-][-x][-r][-w-][-x] +[0-9]+ root +root ' "$out/cpio" ||
		{ echo "an entry above is not root's"; return 1; }
}

# QEMU that exits at once (here: an accelerator it does not know) is
# reported by make lab in QEMU's own words.
qemu_failure_reported() {
	fails_with "QEMU did not start:" env KIT_ACCEL=kit-no-such-accel scripts/lab.sh "$1" </dev/null
	grep -qF kit-no-such-accel "$out/fail" || { echo "QEMU's own error is not shown"; return 1; }
}

# handout_step_fails STAGE STEP TEXT: a handout of one gdb step, STEP,
# after make lab STAGE, fails and says TEXT.
handout_step_fails() {
	printf '%s\n' '```host' "make lab STAGE=$1" '```' '' '```gdb' "(gdb) $2" '```' >"$out/handout.md"
	fails_with "$3" scripts/handout.py run "$out/handout.md" "$out/handout.log"
	cat "$out/handout.log"
	grep -qx 'handout steps executed: 1 of 2' "$out/handout.log" ||
		{ echo "the failed step is counted as executed"; return 1; }
}

# handout_hang_ended STAGE: a step whose prompt never comes (continue past
# a breakpoint that does not hit) fails the handout once
# KIT_WALKTHROUGH_TIMEOUT runs out, and the runner ends make lab's QEMU
# with it: one left running held the gdb port, and every boot after it
# failed.
handout_hang_ended() {
	local port
	port=$(kit_gdb_port)
	printf '%s\n' '```host' "make lab STAGE=$1" '```' '' '```gdb' '(gdb) break panic' \
		'(gdb) continue' '```' >"$out/handout.md"
	KIT_WALKTHROUGH_TIMEOUT=15 fails_with "no gdb prompt after 15 s" \
		scripts/handout.py run "$out/handout.md" "$out/handout.log" || return 1
	if port_listening "$port"; then
		echo "something still listens on the gdb port $port after the handout ended:"
		pgrep -af qemu-system || true
		return 1
	fi
}

# stale_excerpt_handout STAGE: a handout of three prints after make lab
# STAGE, each with its excerpt: the first marks the number (<n>), the second
# is stale (6*8 is not 41), the third is right.
# shellcheck disable=SC2016 # $1 to $3 are gdb's values, not the shell's
stale_excerpt_handout() {
	printf '%s\n' '```host' "make lab STAGE=$1" '```' \
		'```gdb' '(gdb) print 6*7' '```' '```output' '$1 = <n>' '```' \
		'```gdb' '(gdb) print 6*8' '```' '```output' '$2 = 41' '```' \
		'```gdb' '(gdb) print 6*9' '```' '```output' '$3 = 54' '```' >"$out/handout.md"
}

# handout_excerpt_checked STAGE: a handout's output excerpt passes when the
# output has its lines (<n> marks a number) and fails the handout when not.
# shellcheck disable=SC2016 # $2 is gdb's value, not the shell's
handout_excerpt_checked() {
	stale_excerpt_handout "$1"
	fails_with 'handout.md:14: the handout shows a line that was not printed: $2 = 41' \
		scripts/handout.py run "$out/handout.md" "$out/handout.log"
	cat "$out/handout.log"
	grep -qx 'output excerpts matched: 1 of 3' "$out/handout.log" ||
		{ echo "the first excerpt did not match, or the second did"; return 1; }
}

# freelist_corruption_reported STAGE (a stock SLUB stage): kit-cpu-slab
# says so when a free pointer makes the CPU freelist loop, or leave the
# slab's objects, as the kernel's on_freelist() would, instead of listing
# objects up to a limit.  gdb writes the free pointer (encoded as the
# kernel does with CONFIG_SLAB_FREELIST_HARDENED); the guest never runs
# again.
# shellcheck disable=SC2016 # gdb's $s and $head, not the shell's
freelist_corruption_reported() {
	local write='s = gdb.parse_and_eval("$s"); head = int(gdb.parse_and_eval("$head")); addr = head + int(s["offset"])
key = int(s["random"]) ^ int.from_bytes(addr.to_bytes(8, "little"), "big") if any(f.name == "random" for f in s.dereference().type.fields()) else 0'
	printf '%s\n' '```host' "make lab STAGE=${1%%-*}" '```' '```gdb' \
		'(gdb) break __kmem_cache_alloc_node if $_streq(s->name, "kmalloc-64") && $kit_cpu_freelist(s) != 0' \
		'(gdb) continue' '(gdb) set $s = s' '(gdb) set $head = (unsigned long)$kit_cpu_freelist(s)' \
		'(gdb) python' "$write" \
		'gdb.selected_inferior().write_memory(addr, ((head ^ key) & (2**64 - 1)).to_bytes(8, "little"))' \
		'end' '(gdb) kit-cpu-slab kmalloc-64' \
		'(gdb) python' "$write" \
		'gdb.selected_inferior().write_memory(addr, (((head + 8) ^ key) & (2**64 - 1)).to_bytes(8, "little"))' \
		'end' '(gdb) kit-cpu-slab kmalloc-64' '```' >"$out/corrupt.md"
	scripts/handout.py run "$out/corrupt.md" "$out/corrupt.log"
	cat "$out/corrupt.log"
	grep -qE '^CORRUPTED freelist: 0x[0-9a-f]+ comes again after 1 objects: a cycle$' "$out/corrupt.log" ||
		{ echo "a freelist whose head points to itself is not reported as a cycle"; return 1; }
	grep -qE '^CORRUPTED freelist: 0x[0-9a-f]+ is not one of the 64 objects of the slab at 0x[0-9a-f]+$' "$out/corrupt.log" ||
		{ echo "a free pointer between two objects is not reported"; return 1; }
}

# excerpts_refreshed STAGE: make excerpts goes on past a stale excerpt,
# runs every step, and reports it with what the terminal printed instead.
# shellcheck disable=SC2016 # $2 is gdb's value, not the shell's
excerpts_refreshed() {
	stale_excerpt_handout "$1"
	fails_with "1 excerpt(s) no longer match" scripts/handout.py excerpts "$out/handout.md" "$out/handout.log"
	cat "$out/handout.log.excerpts"
	grep -qx 'handout.md:14: the excerpt.s line "$2 = 41" was not printed' <(sed 's/^.*handout.md/handout.md/' "$out/handout.log.excerpts") ||
		{ echo "the stale excerpt is not reported with its line"; return 1; }
	sed -n '/^--- the terminal printed:$/,$p' "$out/handout.log.excerpts" | grep -x '$2 = 48' >/dev/null ||
		{ echo "the report does not show what gdb printed instead"; return 1; }
	grep -qx 'handout steps executed: 4 of 4' "$out/handout.log" || { echo "the run stopped at the stale excerpt"; return 1; }
	grep -qx 'output excerpts matched: 2 of 3' "$out/handout.log" || { echo "the later excerpt was not matched"; return 1; }
}

# handout_optimized_out_shown STAGE: a step that prints "<optimized out>"
# passes when the excerpt after it shows that, as a handout does to show
# what inlining costs, and only as many times as it shows it.
# shellcheck disable=SC2016 # $1 is gdb's value, not the shell's
handout_optimized_out_shown() {
	printf '%s\n' '```host' "make lab STAGE=$1" '```' \
		'```gdb' '(gdb) echo $1 = <optimized out>\n' '```' \
		'```output' '$1 = <optimized out>' '```' >"$out/handout.md"
	scripts/handout.py run "$out/handout.md" "$out/handout.log"
	cat "$out/handout.log"
	grep -qx 'output excerpts matched: 1 of 1' "$out/handout.log"
	# One shown, two printed: the second is not what the handout shows.
	printf '%s\n' '```host' "make lab STAGE=$1" '```' \
		'```gdb' '(gdb) echo $1 = <optimized out>\n$2 = <optimized out>\n' '```' \
		'```output' '$1 = <optimized out>' '```' >"$out/handout.md"
	fails_with "the output says <optimized out>" scripts/handout.py run "$out/handout.md" "$out/handout.log"
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

# The kernel's own style checker, on all the code the kit adds to 6.1.
checkpatch_clean() {
	local stage
	for stage in $(kit_stages); do
		[ -s "stages/$stage/stage.patch" ] || continue
		echo "== $stage"
		perl "$KIT_TREE/scripts/checkpatch.pl" --no-tree --quiet - <"stages/$stage/stage.patch"
	done
}

check "each stage's features (stages/*/features) are what its patch shows" features_match_patches
check "the series survives import and export byte for byte" series_round_trip
check "make delta is empty exactly for the stages that change nothing" delta_matches_patches
check "scripts/checkpatch.pl is clean on every stage patch" checkpatch_clean

# --- Graded labs: the grader is tested ---------------------------------
# make test's own trees of the labs, apart from the student's.
test_exercises=$KIT_WORK/test-exercises

# in_test_tree COMMAND...: COMMAND with make test's trees.
in_test_tree() {
	KIT_EXERCISES=$test_exercises "$@"
}

lab_spec() {
	python3 scripts/exercise.py "$1" "labs/$2/exercise.toml" "${@:3}"
}

# lab_questions STAGE: the ids of the lab's questions (tests of kind answer).
lab_questions() {
	lab_spec tests "$1" | awk -F'\t' '$3 == "answer" { print $1 }'
}

# grade STAGE FILTER: make grade on make test's tree of the lab, the tests
# whose names match FILTER; its output in $out/grade, and shown.
grade() {
	local rc=0
	KIT_GRADE_FILTER=$2 in_test_tree scripts/grade.sh "$1" >"$out/grade" 2>&1 || rc=$?
	cat "$out/grade"
	return "$rc"
}

# graded STAGE ID ok|fail [WHY]: $out/grade has test ID of the lab passed,
# or failed with its hint (and WHY, the start of what it says went wrong).
graded() {
	local stage=$1 id=$2 how=$3 why=${4:-}
	if [ "$how" = ok ]; then
		grep -q "^ok [0-9]* - $id: " "$out/grade" || { echo "$id did not pass"; return 1; }
		return 0
	fi
	grep -q "^not ok [0-9]* - $id: " "$out/grade" || { echo "$id did not fail"; return 1; }
	grep -qF -- "#   hint: $(lab_spec hint "$stage" "$id")" "$out/grade" ||
		{ echo "no hint of $id"; return 1; }
	if [ -n "$why" ]; then
		grep -qF -- "#   why: $why" "$out/grade" || { echo "$id does not say: $why"; return 1; }
	fi
}

# fresh_exercise STAGE: make exercise, from nothing, in make test's trees:
# each function to write is a TODO, with the stub, and nothing else of the
# stage's source changed; the answers file has a line for each question.
fresh_exercise() {
	local stage=$1 tree=$test_exercises/$1 file name first last todo=0 id
	git -C "$KIT_TREE" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
	git -C "$KIT_TREE" worktree prune
	git -C "$KIT_TREE" branch -q -D "$(in_test_tree exercise_ref "$stage")" 2>/dev/null || true
	in_test_tree scripts/exercise.sh "$stage"
	for id in $(lab_questions "$stage"); do
		grep -qx "$id: " "$tree/answers" || { echo "$tree/answers has no line for $id"; return 1; }
	done
	[ -n "$(lab_spec functions "$stage")" ] || return 0
	while IFS=$'\t' read -r file name first last; do
		todo=$((todo + 1))
		sed -n "${first},${last}p" "$tree/$file" >"$out/function"
		grep -q "TODO $todo: " "$out/function" ||
			{ echo "$name() in $tree/$file has no TODO $todo"; cat "$out/function"; return 1; }
		[ "$(wc -l <"$out/function")" -lt 16 ] ||
			{ echo "$name() still has a body:"; cat "$out/function"; return 1; }
	done < <(lab_spec where "$stage" "$tree")
	git -C "$tree" diff --stat "$(in_test_tree exercise_ref "$stage" stage)" >"$out/stat"
	cat "$out/stat"
	[ "$(grep -c '|' "$out/stat")" -eq "$(lab_spec functions "$stage" | cut -f1 | sort -u | wc -l)" ] ||
		{ echo "the skeleton changes other files than the exercise's"; return 1; }
}

# with_source STAGE [PATCH]: the stage's own source (the solution) in the
# exercise's files of make test's tree, with PATCH (a planted mistake)
# applied.
with_source() {
	local stage=$1 patch=${2:-} tree=$test_exercises/$1 files
	mapfile -t files < <(lab_spec functions "$stage" | cut -f1 | sort -u)
	git -C "$tree" checkout -q "$(in_test_tree exercise_ref "$stage" stage)" -- "${files[@]}"
	if [ -n "$patch" ]; then
		git -C "$tree" apply "$KIT_ROOT/$patch"
	fi
}

# grade_gives STAGE SCORE: make grade on make test's tree prints the score
# SCORE/TOTAL (TOTAL the sum of the tests' points) and exits 0 only for
# full marks; every failed test has a hint.
grade_gives() {
	local stage=$1 want=$2 total rc=0 failed hints
	total=$(lab_spec tests "$stage" | awk -F'\t' '{ t += $2 } END { print t }')
	[ "$want" != all ] || want=$total
	grade "$stage" '' || rc=$?
	grep -qx "score: $want/$total (lab $stage, $test_exercises/$stage)" "$out/grade" ||
		{ echo "the score is not $want/$total"; return 1; }
	if [ "$want" = "$total" ]; then
		[ "$rc" -eq 0 ] || { echo "full marks, but grade.sh exited $rc"; return 1; }
	else
		[ "$rc" -ne 0 ] || { echo "not full marks, but grade.sh exited 0"; return 1; }
	fi
	failed=$(grep -c '^not ok ' "$out/grade" || true)
	hints=$(grep -c '^#   hint: ' "$out/grade" || true)
	[ "$failed" -eq "$hints" ] || { echo "$failed tests failed, $hints hints"; return 1; }
}

# compile_error_reported STAGE: a tree that does not compile fails the
# tests, each saying so with the compiler's error.
compile_error_reported() {
	local stage=$1 file
	file=$(lab_spec functions "$stage" | cut -f1 | sed -n 1p)
	with_source "$stage"
	echo '#error planted by make test' >>"$test_exercises/$stage/$file"
	! grade "$stage" '^[a-z]+-[a-z]+: ' || { echo "grade.sh passed a tree that does not compile"; return 1; }
	grep -q '^not ok' "$out/grade" || { echo "no test failed"; return 1; }
	! grep -q '^ok [0-9]' "$out/grade" || { echo "a test passed"; return 1; }
	grep -q 'why: your kernel does not build' "$out/grade" &&
		grep -q "error: #error planted by make test" "$out/grade"
}

solution_graded() {
	with_source "$1"
	answer_key "$1"
	grade_gives "$1" all
}

# answer_key STAGE: the instructor's answers (solutions/STAGE.answers) in
# make test's answers file of the lab.
answer_key() {
	if [ -n "$(lab_questions "$1")" ]; then
		cp "solutions/$1.answers" "$test_exercises/$1/answers"
	fi
}

# wrong_answer "ID: ANSWER": the line with a wrong answer, a number one
# more or a name with a letter more.
wrong_answer() {
	case "${1#*: }" in
	0x* | [0-9]*) echo "${1%%:*}: $((${1#*: } + 1))" ;;
	*) echo "${1}x" ;;
	esac
}

# questions_graded STAGE: the answer key with its first answer wrong and
# its second left out: those two fail, each with its hint, the first
# saying what was answered, and the others pass, each value read in the
# live kernel.  A lab of one or two questions, where that leaves no right
# answer, is graded twice: first the key as it is, all right, then so.
questions_graded() {
	local stage=$1 answers=$test_exercises/$1/answers ids wrong i
	mapfile -t ids < <(lab_questions "$stage")
	answer_key "$stage"
	wrong=$(wrong_answer "$(grep -m 1 "^${ids[0]}:" "$answers")")
	if [ "${#ids[@]}" -le 2 ]; then
		grade "$stage" '^q[0-9]+-' || { echo "grade.sh failed the answer key"; return 1; }
		for i in "${!ids[@]}"; do
			graded "$stage" "${ids[i]}" ok || return 1
		done
	fi
	{
		echo "$wrong"
		grep -v -e "^${ids[0]}:" -e "^${ids[1]:-${ids[0]}}:" "$answers"
	} >"$answers.new"
	mv "$answers.new" "$answers"
	! grade "$stage" '^q[0-9]+-' || { echo "grade.sh passed a wrong answer"; return 1; }
	graded "$stage" "${ids[0]}" fail "you answered ${wrong#*: }; " || return 1
	[ "${#ids[@]}" -eq 1 ] || graded "$stage" "${ids[1]}" fail "no answer in $answers" || return 1
	for ((i = 2; i < ${#ids[@]}; i++)); do
		graded "$stage" "${ids[$i]}" ok || return 1
	done
}

# caught_by PATCH: the test ID that the planted mistake PATCH names in its
# header ("Caught by: ID"); nothing if it names none.
caught_by() {
	sed -n 's/^Caught by: //p' "$1"
}

# mistake_caught STAGE PATCH: the test that the planted mistake PATCH
# names fails on it, with its hint.
mistake_caught() {
	local stage=$1 patch=$2 id
	id=$(caught_by "$patch")
	[ -n "$id" ] || { echo "$patch names no test (Caught by: ID)"; return 1; }
	with_source "$stage" "$patch"
	! grade "$stage" "^$id: " || { echo "grade.sh passed the mistake"; return 1; }
	grep -q "^not ok 1 - $id: " "$out/grade" || { echo "test $id did not fail"; return 1; }
	graded "$stage" "$id" fail
}

# correct_answer_graded STAGE PATCH: a correct answer written unlike the
# solution (PATCH, in the lab's correct/) gets every point of the tests of
# the code (the questions are another check's).
correct_answer_graded() {
	local stage=$1 patch=$2 ids want
	ids=$(lab_spec tests "$stage" | awk -F'\t' '$3 != "answer" { print $1 }' | paste -sd '|')
	want=$(lab_spec tests "$stage" | awk -F'\t' '$3 != "answer" { t += $2 } END { print t }')
	with_source "$stage" "$patch"
	grade "$stage" "^($ids): " || { echo "grade.sh failed a correct answer"; return 1; }
	grep -q "^score: $want/" "$out/grade" || { echo "the score is not $want"; return 1; }
}

# grader_fault_reported STAGE: a check that fails in the grader itself
# (planted in a copy of the kit: a read of a variable the kernel does not
# have, as a check that reads a student's local variables would meet) is
# reported once as the grader's, naming what it could not read and where;
# the live test it would decide is skipped, not failed; the console test
# of the same boot is still graded; and grade.sh does not exit 0.
grader_fault_reported() {
	local stage=$1 kit=$out/faulty-kit live console rc=0
	live=$(lab_spec tests "$stage" | awk -F'\t' '$3 == "gdb" { print $1; exit }')
	console=$(lab_spec tests "$stage" | awk -F'\t' -v boot="$(lab_spec tests "$stage" |
		awk -F'\t' '$3 == "gdb" { print $4; exit }')" '$3 == "console" && $4 == boot { print $1; exit }')
	if [ -z "$live" ] || [ -z "$console" ]; then
		echo "lab $stage has no live and console test of one boot"
		return 1
	fi
	rm -rf "$kit"
	mkdir -p "$kit"
	cp -R scripts vm stages labs "$kit/"
	cat "$KIT_ROOT/tests/fixtures/grader-fault.py" >>"$kit/labs/$stage/checks.py"
	with_source "$stage"
	KIT_GRADE_FILTER="^($live|$console): " in_test_tree "$kit/scripts/grade.sh" "$stage" >"$out/grade" 2>&1 || rc=$?
	cat "$out/grade"
	[ "$rc" -ne 0 ] || { echo "grade.sh exited 0 with a test not graded"; return 1; }
	grep -q "^ok 1 - $live: .* # SKIP not graded: the grader failed (below)$" "$out/grade" ||
		{ echo "$live is not skipped as not graded"; return 1; }
	grep -q "^ok 2 - $console: " "$out/grade" || { echo "$console was not graded"; return 1; }
	[ "$(grep -c '^grader error: ' "$out/grade")" -eq 1 ] || { echo "not one line that says grader error"; return 1; }
	grep -q "^grader error: No symbol \"planted_by_make_test\" in current context\. (labs/$stage/checks.py:[0-9]*, in gdb_checks());" "$out/grade" ||
		{ echo "the grader error does not say what and where"; return 1; }
	! grep -q '^#   why: ' "$out/grade" || { echo "a test was charged with the grader's fault"; return 1; }
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
	cp -R tests/fixtures/two-folders "$dir"
	(cd "$dir/a" && "$1" -g -I"$dir" -c a.c) && (cd "$dir/b" && "$1" -g -I"$dir" -c b.c) &&
		gcc "$dir/a/a.o" "$dir/b/b.o" -o "$dir/linked" && echo "$dir/linked"
}

# lab_shows_student_source STAGE: make lab TREE=exercise reads the first
# function to write from the student's file, not the kit's tree, even once
# the kit's tree holds the stage's own source again.  (Last of a lab's
# checks: it puts the kit's tree back, which the next grade would undo.)
lab_shows_student_source() {
	local stage=$1 file name
	IFS=$'\t' read -r file name _ < <(lab_spec functions "$stage")
	scripts/prepare-stage.sh "$stage"
	printf '%s\ninfo source\nquit\n' "python s = gdb.lookup_static_symbol('$name') or gdb.lookup_global_symbol('$name'); gdb.execute('list %s:%d,+12' % (s.symtab.filename, s.line))" |
		KIT_SOURCE=exercise in_test_tree scripts/lab.sh "$stage" >"$out/lab" 2>&1
	cat "$out/lab"
	grep -qx "Located in $test_exercises/$stage/$file" "$out/lab"
}

graded_lab_checks() {
	local stage=$1 patch id
	if [ -z "$(lab_spec functions "$stage")" ]; then
		prerequisite "lab $stage: make exercise makes the answers file, a line a question" \
			fresh_exercise "$stage"
		check "lab $stage: make grade passes right answers, fails a wrong one and a missing one, with hints" \
			questions_graded "$stage"
		return
	fi
	prerequisite "lab $stage: make exercise makes a tree whose functions to write are TODOs" \
		fresh_exercise "$stage"
	if [ -n "$(lab_questions "$stage")" ]; then
		check "lab $stage: make grade passes right answers, fails a wrong one and a missing one, with hints" \
			questions_graded "$stage"
		# The skeleton's grade, next, has no answers.
		rm -f "$test_exercises/$stage/answers"
	fi
	check "lab $stage: make grade gives the untouched skeleton 0, a hint for each test" \
		grade_gives "$stage" 0
	# grade.sh's own path, the same for every lab.
	if first_time compile-error; then
		check "lab $stage: a tree that does not compile fails the tests, with the compiler's error" \
			compile_error_reported "$stage"
	fi
	check "lab $stage: make grade gives the solution full marks" \
		solution_graded "$stage"
	# Fair: answers written otherwise than the solution get full marks.
	# In the whole suite the first (by file name), as for the mistakes
	# below; with STAGE=, every one.  (Each costs a build and two boots,
	# about a minute.)
	local correct_seen=''
	for patch in "labs/$stage"/correct/*.patch; do
		[ -f "$patch" ] || continue
		[ -n "$only_stage" ] || [ -z "$correct_seen" ] || continue
		correct_seen=1
		check "lab $stage: correct answer $(basename "$patch" .patch), written unlike the solution, gets full marks" \
			correct_answer_graded "$stage" "$patch"
	done
	# The grader's own failures are its own, the same path for every lab.
	if first_time grader-fault; then
		check "lab $stage: a fault of the grader is reported as such, once, and charged to no test" \
			grader_fault_reported "$stage"
	fi
	# Each test shown failing on a mistake: in the whole suite, the first
	# (by name) that each test catches; with STAGE=, every one.  (Four
	# tests catch two each; the second ones took about 2 min.)
	local -A caught=()
	for patch in "labs/$stage"/mistakes/*.patch; do
		[ -f "$patch" ] || continue
		# (One that names no test runs, and fails for it.)
		id=$(caught_by "$patch") id=${id:-$patch}
		[ -n "$only_stage" ] || [ -z "${caught[$id]+set}" ] || continue
		caught[$id]=1
		check "lab $stage: planted mistake $(basename "$patch" .patch) fails the test it names" \
			mistake_caught "$stage" "$patch"
	done
	check "lab $stage: make lab TREE=exercise shows the student's source in gdb" \
		lab_shows_student_source "$stage"
}

# --- The checks of each stage, and of the last -------------------------
# first_time NAME: whether NAME is asked for the first time in this run.
# What shows a checker able to fail, or checks the tree itself, runs on
# the first stage that has what it needs, not on each.
asked=' '
first_time() {
	[[ $asked != *" $1 "* ]] || return 1
	asked+="$1 "
}
in_scope=1
base_skip=$skip base_pending=("${pending[@]}")
smoked=' '
slubq_stages=()
first=$(kit_stages | sed -n 1p) last=$(kit_stages | tail -n 1)
page_modes=$(page_mode_stages)
for stage in $(kit_stages); do
	# What this stage's checks look back at: the earlier SLUB+Q stages.
	if stage_has "$stage" cpu-queues; then
		slubq_stages+=("$stage")
	fi
	if [ -n "$only_stage" ] && [ "$stage" != "$only_stage" ]; then
		continue
	fi
	skip=$base_skip pending=("${base_pending[@]}")
	# Before the stage's own build, which then finds it done: a stage
	# built twice would cost a build.
	if only_c_changed "$stage" && first_time copy-build; then
		check "stage $stage: a new build folder starts as a copy of the stage before's and compiles only what differs" \
			build_starts_from_copy "$stage"
	fi
	prerequisite "stage $stage: patch applies, config checks, kernel builds" scripts/build-kernel.sh "$stage"
	if first_time tree-checks; then
		# KUnit's parser and 6.1's headers come with the tree, unpacked by
		# the first build.
		printf '%s\n' 'KTAP version 1' '1..1' '    KTAP version 1' '    # Subtest: slub_test' \
			'    1..2' '    ok 1 test_one' '    not ok 2 test_two' 'not ok 1 slub_test' >"$out/kunit-bad"
		check "a failing SLUB KUnit case is named on the console" \
			fails_with "[FAILED] test_two" kunit_passed "$out/kunit-bad"
		check "the gdb helpers' table of cache flags is 6.1's (include/linux/slab.h)" \
			python3 tests/check_slab_flags.py "$KIT_TREE" vm/gdb/slubq.py
		check "a build from nothing compiles about as many files as its progress line says" \
			cold_build_size_right "$stage"
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
		if [ -n "${first_smoked:-}" ] && first_time bzimage-fault; then
			check "  ... and the build's check fails a bzImage that boots another stage's kernel" \
				fails_with "does not hold the kernel of" bzimage_holds \
				"$KIT_BUILD/$first_smoked/arch/x86/boot/bzImage" "$KIT_BUILD/$stage/vmlinux"
		fi
		check "stage $stage: its vmlinux names one build folder, and gdb lists a header's line once" \
			build_folder_recorded "$stage"
		if first_time build-folder-fault; then
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
		if first_time inline-break-fault; then
			# An inline function, with a copy in each caller, must fail it.
			check "  ... and an inline function fails that check" \
				fails_with "map: not one location" breaks_resolve_once "$stage" map
		fi
		mapfile -t conditions < <(break_conditions "$stage")
		if [ ${#conditions[@]} -gt 0 ]; then
			check "stage $stage: gdb takes the conditions of its breakpoints (${#conditions[@]})" \
				conditions_parse "$stage" "${conditions[@]}"
			if first_time condition-fault; then
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
		if [ "$stage" = "$last" ]; then
			check "stage $stage: the irqsoff variant's config (tracers for make irqsoff) holds" \
				variant_config_holds "$stage" irqsoff
		fi
		check "stage $stage: with slub_debug=FZPU, the torture module passes and every cache validates" \
			boot_run "$stage" validate slub_debug=FZPU
		check "stage $stage: memcg, CPU hotplug, KFENCE, init_on_alloc/free keep working; slabinfo adds up" \
			boot_run "$stage" features "init_on_alloc=1 init_on_free=1 kfence.sample_interval=10"
		if first_time slabinfo-fault; then
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
		if stage_has "$stage" big-slabs; then
			check "stage $stage: slabs of more than 32767 objects (slub_min_order=7) pass the torture test" \
				boot_run "$stage" big-slabs slub_min_order=7
		fi
		# The proof kernel, of the first SLUB+Q stage and of the last, which
		# holds all that the stages between change; of any stage that
		# STAGE= names.  (Stages 08's and 09's took 4.5 min of the 60 the
		# whole suite may take.)  If it does not build, only the proof
		# checks are skipped.  (Built in the background under SCHED_IDLE
		# instead, it slowed the checks beside it by about a third on the
		# kit's 2-core machines: lab 00's grade check took 38 to 42 s
		# instead of 27 to 30 s.)
		if [ -n "$only_stage" ] || [ ${#slubq_stages[@]} -eq 1 ] || [ "$stage" = "$last" ]; then
			stage_skip=$skip stage_pending=${#pending[@]}
			prerequisite "stage $stage: the proof kernel (lockdep, KASAN, 2 NUMA nodes) builds" \
				env KIT_VARIANT=proof scripts/build-kernel.sh "$stage"
			check "stage $stage: on it, torture, resizing, CPU hotplug: no lockdep, KASAN or might_sleep report" \
				proof_run "$stage"
			if first_time kasan-fault; then
				check "  ... and a use after free planted in the torture module fails it (KASAN)" \
					kasan_catches_use_after_free "$stage"
			fi
			# A proof build that no selected check needed stays pending no more.
			skip=$stage_skip
			if [ ${#pending[@]} -gt "$stage_pending" ]; then
				unset 'pending[-1]'
			fi
		fi
		if first_time torture-fault; then
			check "stage $stage: the torture module catches a corrupted object" \
				torture_catches_corruption "$stage"
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
	if [ -f "labs/$stage/exercise.toml" ]; then
		graded_lab_checks "$stage"
	fi
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
# make bench, last: its SLUB and SLUB+Q kernels are the stage kernels built
# above.
if [ -z "$only_stage" ]; then
	prerequisite "make bench's SLAB kernel (stage $first, VARIANT=slab-smoke) builds" \
		env KIT_VARIANT=slab-smoke scripts/build-kernel.sh "$first"
	check "make bench --smoke: SLAB, SLUB and SLUB+Q boot, and every figure of its report comes out" bench_smoke
	check "make bench's own kernels' configs hold: bench, slab, stats, slab-stats over stage $first; bench, stats over $last" \
		bench_configs_hold
fi

tap_finish

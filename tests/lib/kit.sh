# shellcheck shell=bash
# tests/lib/kit.sh, sourced by tests/run.sh: the kit's own code: its
# scripts, the suite's machinery, the book, make bench's report, the
# settings; and the fixtures of the checks of bad input.

shell_scripts() {
	grep -lE '^#!.*(bash|/sh)' scripts/*.sh scripts/compiler/* grading/*.sh guest/init guest/run/* tests/*.sh docs/*.sh .ci/run
}

# The suite's own machinery (grading/tap.sh): output that a TAP parser reads
# without error, a failed prerequisite skipping what needs it in its group
# and nothing after, the filter leaving checks out and running a
# prerequisite they need, once, across groups; a scope turned off.
tap_works() {
	bash -c 'set -euo pipefail
		. scripts/lib.sh
		. grading/tap.sh
		tap_start "$1" "^(build|boot|walk)"
		tap_group_begin
		prerequisite build false
		check boot true
		tap_group_end
		check "left out" true
		prerequisite compile true
		tap_group_begin
		check walk true
		tap_group_end
		tap_group_begin
		check "walk again" true
		tap_group_end
		tap_scope off
		check "walk out of scope" true
		if tap_first_time once && ! tap_first_time once; then echo once >"$1/first-time"; fi
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
	if grep 'out of scope' "$out/tap.txt"; then
		echo "tap_scope off did not leave that check out"
		return 1
	fi
	grep -qx once "$out/first-time" || { echo "tap_first_time said yes twice, or never"; return 1; }
	grep -qx '1..5' "$out/tap.txt"
	grep -qx '3 passed, 1 failed, 1 skipped' "$out/tap.txt"
	perl -MTAP::Parser -e 'local $/; my $p = TAP::Parser->new({ tap => <STDIN> });
		$p->run; print "TAP parse error: $_\n" for $p->parse_errors;
		exit($p->parse_errors || $p->tests_run != 5 || $p->failed != 1 || $p->skipped != 1)' \
		<"$out/tap.txt"
}

# make bench's report (scripts/bench_report.py) and the check of a results
# folder (tests/check_bench.py), on made-up figures: no kernel boots.
bench_report_made() {
	rm -rf "$out/bench"
	python3 tests/bench_sample.py "$out/bench" "$@"
	python3 scripts/bench_report.py "$out/bench"
	python3 tests/check_bench.py "$out/bench"
}

# bench_smoke: make bench's whole pipeline at its smallest (scripts/bench.sh
# --smoke: the kernels of stage 00, of the last stage with queues and of
# stage 11, and a SLAB one, each booted, timed, counted and run under
# -icount), and every figure of it in the results folder.
bench_smoke() {
	rm -rf "$out/bench-smoke"
	KIT_BENCH_RESULTS=$out/bench-smoke scripts/bench.sh --smoke
	python3 tests/check_bench.py "$out/bench-smoke"
}

# bench_hung_kernel_booted_again: make bench stops a guest that does not
# come up in KIT_BENCH_READY_WAIT seconds (its init sleeps instead), boots
# it again, twice, keeping each console and naming it in meta.txt, then
# stops, saying why.
bench_hung_kernel_booted_again() {
	local results=$out/bench-hung
	rm -rf "$results"
	fails_with "the SLAB kernel's guest did not come up in 3 boots in a row" \
		env KIT_APPEND='rdinit=/bin/busybox sleep 100000' KIT_BENCH_READY_WAIT=10 \
		KIT_BENCH_RESULTS="$results" scripts/bench.sh --smoke || return 1
	[ "$(grep -c "^boot again: the SLAB kernel's guest did not come up (bench.sh: stopped, no ready line in 10 s; " \
		"$results/meta.txt")" -eq 3 ] ||
		{ echo "meta.txt does not name three boots of SLAB that were stopped:"; cat "$results/meta.txt"; return 1; }
	ls "$results"/consoles/SLAB-cpus2-boot1-failed{1,2,3}.log || return 1
}

# bench_configs_hold FIRST STAGE...: the configurations of the kernels
# make bench times and counts, of the first stage and of each STAGE, which
# the smoke run does not build, hold.
bench_configs_hold() {
	local stage
	# (|| return: a check runs its function where errexit does not hold.)
	variant_config_holds "$1" bench slab stats slab-stats || return 1
	for stage in "${@:2}"; do
		variant_config_holds "$stage" bench stats || return 1
	done
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
		KIT_TREE) shown=TREE ;;
		KIT_TEST_FILTER | KIT_GRADE_FILTER) shown=FILTER ;;
		*) shown=$name ;;
		esac
		grep -qE -- "(^| )$shown=" <<<"$help" || { echo "make help does not list $shown"; bad=1; }
		grep -qF -- "| \`$shown=" README.md || { echo "the README's table does not list $shown"; bad=1; }
	done < <(grep -ohE '\$\{(KIT_[A-Z_]+|GDB_PORT|LINUX_TARBALL):-' scripts/*.sh |
		sed -E 's/^\$\{//; s/:-$//' | sort -u)
	return "$bad"
}

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

# graded_labs KIT: the numbers of the labs of the kit in folder KIT that
# have graded work, one a line.
graded_labs() {
	local spec
	for spec in "$1"/labs/*/graded.toml; do
		basename "$(dirname "$spec")" | cut -d- -f1
	done
}

# kit_without_graded_lab LAB: a copy of the kit's scripts, stages and labs
# in which LAB has no graded work (every lab of the kit has some); prints
# its folder.
kit_without_graded_lab() {
	mkdir -p "$out/kit"
	cp -R scripts grading config guest gdb modules stages labs "$out/kit/"
	rm "$out/kit/labs/$1/graded.toml"
	echo "$out/kit"
}

# shared_kit_of_other_patches: a folder that make share could have made,
# but whose stage 00 kernel is of other stage patches than this checkout's;
# prints it.
shared_kit_of_other_patches() {
	mkdir -p "$out/shared/build"
	printf 'tree %s\n' "$out/shared/linux" >"$out/shared/kit-shared"
	ln -sfn kernel-000000000000 "$out/shared/build/00-baseline"
	echo "$out/shared"
}

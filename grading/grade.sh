#!/usr/bin/env bash
# grade.sh LAB: grade the student's work on a lab (made by make exercise):
# build their tree (ccache: only what changed), boot it, and run the lab's
# tests (labs/LAB/graded.toml); check their answers to the lab's questions
# on the stage's own kernel.  Prints TAP: a line per test with its points, and
# for a failed one what went wrong and a hint; then the plan, the score and
# "N passed, N failed".  Fails unless every test passed; if the grader
# itself failed, the tests it could not decide are skipped, not failed, and
# a last line says what failed and where.
#
# A test reads one boot of the kernel: live tests stop it in gdb
# (grading/grader.py), console tests read what the guest printed.  Each
# boot runs once, for all the tests that read it.  KIT_GRADE_FILTER (make's
# FILTER=) keeps the tests whose names ("ID: what it checks") match, and
# boots only for those: FILTER=^drain-lock: runs one test.
# (grading/tap.sh's check runs grade_test: shellcheck does not see the call.)
# shellcheck disable=SC2317
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
# shellcheck source=../scripts/console.sh
. "$KIT_ROOT/scripts/console.sh"

stage=$(stage_resolve "${1:-}")
spec=$KIT_ROOT/labs/$stage/graded.toml
[ -f "$spec" ] || die "lab $stage has nothing to grade (no $spec)"
tree=$(exercise_tree "$stage")
[ -d "$tree" ] || die "no tree of yours for lab $stage; run: make exercise LAB=${stage%%-*}"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# shellcheck source=tap.sh
. "$KIT_ROOT/grading/tap.sh"

exercise() {
	python3 "$KIT_ROOT/grading/exercise.py" "$1" "$spec" "${@:2}"
}
mapfile -t tests < <(exercise tests id points kind boot name)
[ ${#tests[@]} -gt 0 ] || die "$spec lists no tests"
tap_start "$out" "${KIT_GRADE_FILTER:-}"

nr_selected=0
for line in "${tests[@]}"; do
	IFS=$'\t' read -r id _ _ _ name <<<"$line"
	if selected "$id: $name"; then nr_selected=$((nr_selected + 1)); fi
done
[ "$nr_selected" -gt 0 ] || die "FILTER='$tap_filter' matches no test of lab $stage; the tests:" \
	"$(printf '%s\n' "${tests[@]}" | cut -f1 | paste -sd ' ')"

# --- The boots the selected tests read, and their kernels ---------------
# A boot's kernel is the student's ("exercise", KIT_TREE=exercise) or the
# stage's own ("stage": the questions are about the stage, not about the
# student's code).
declare -A boot_ids=() boot_console_test=() boot_kernel=() built=()
for line in "${tests[@]}"; do
	IFS=$'\t' read -r id _ kind boot name <<<"$line"
	selected "$id: $name" || continue
	if [ "$kind" = console ]; then
		boot_ids[$boot]+=''
		boot_console_test[$boot]=1
	else
		boot_ids[$boot]+="${boot_ids[$boot]:+,}$id"
	fi
	boot_kernel[$boot]=$(exercise boot "$boot" kernel)
done

# kernel_env KERNEL: the KIT_TREE of that kernel.
kernel_env() {
	[ "$1" != exercise ] || echo exercise
}

# --- Build ----------------------------------------------------------------
note "==> grading $tree (lab $stage)"
for kernel in $(printf '%s\n' "${boot_kernel[@]}" | sort -u); do
	built[$kernel]=1
	KIT_TREE=$(kernel_env "$kernel") "$KIT_ROOT/scripts/build-kernel.sh" "$stage" \
		>"$out/build-$kernel.out" 2>&1 || built[$kernel]=0
done

# run_boot BOOT: boot the kernel as BOOT says, gdb running the live tests
# if it has some; the console in $out/console-BOOT, the live results in
# $out/live-BOOT.
run_boot() {
	local boot=$1 run append watch kernel logs
	run=$(exercise boot "$boot" run)
	append=$(exercise boot "$boot" append)
	watch=$(exercise boot "$boot" gdb)
	kernel=$(exercise boot "$boot" kernel)
	KIT_TREE=$(kernel_env "$kernel")
	export KIT_TREE
	logs=$KIT_LOGS/$(stage_label "$stage")
	note "==> boot \"$boot\": ${kernel/exercise/your} kernel, guest script $run${append:+, kernel parameters $append}"
	if [ "$watch" = yes ]; then
		KIT_GRADE_SPEC=$spec KIT_GRADE_TESTS=${boot_ids[$boot]} \
			KIT_GRADE_RESULTS=$out/live-$boot KIT_GRADE_ANSWERS=$tree/answers \
			KIT_GRADE_UNTIL_POWEROFF=${boot_console_test[$boot]:-} \
			"$KIT_ROOT/scripts/lab.sh" --script "$KIT_ROOT/grading/grader.py" --run "$run" \
			${append:+--append "$append"} "$stage" >"$out/gdb-$boot.log" 2>&1 || true
		tr -d '\r' <"$logs/console.log" >"$out/console-$boot"
	else
		cp "$(boot_console "$stage" "$run" "$append")" "$out/console-$boot"
	fi
}

for boot in "${!boot_ids[@]}"; do
	if [ "${built[${boot_kernel[$boot]}]}" = 1 ]; then
		(run_boot "$boot")
	fi
done

# --- The tests ------------------------------------------------------------
# grader_fault ID BOOT: what the grader could not do when it was to decide
# test ID (grading/grader.py's "error" result); fails if it decided it.
grader_fault() {
	local result
	result=$(grep -m 1 "^$1"$'\t'error$'\t' "$out/live-$2" 2>/dev/null) || return 1
	echo "${result#*$'\t'error$'\t'}"
}

# crash_lines LOG: what the kernel said when it went wrong: its first
# report in LOG (a console, or the log gdb read), without registers and
# memory dumps, to the end of the call trace.  (awk reads to the end: under
# pipefail, a reader that stops early fails the pipe.)
crash_lines() {
	[ -f "$1" ] || return 0
	sed -E 's/^\[ *[0-9]+\.[0-9]+\] //' "$1" | awk '
		/BUG|WARNING|Oops|Kernel panic|\[#[0-9]+\]/ { on = 1 }
		!on || n >= 16 || /^(Code|RSP|RAX|RDX|RBP|R10|R13|FS|CS|CR2|DR[0-9]):|^(Object|Bytes b4|Redzone|Padding) |^---/ { next }
		{ print "  | " $0; n++ }
		/<\/TASK>/ { n = 16 }'
}

# grade_test ID KIND BOOT: the test's verdict, and if it failed, why and
# the hint.
grade_test() {
	local id=$1 kind=$2 boot=$3 kernel result
	kernel=${boot_kernel[$boot]}
	if [ "${built[$kernel]}" = 0 ]; then
		if [ "$kernel" = exercise ]; then
			echo "why: your kernel does not build; the compiler says:"
			grep -E 'error:|undefined reference' "$KIT_LOGS/$stage+exercise/build.log" | head -n 8 |
				sed 's/^/  /' || true
			echo "hint: fix what the compiler says; make build STAGE=$stage TREE=exercise" \
				"shows the whole build"
		else
			echo "the stage's kernel does not build (a problem of the kit or the machine):"
			tail -n 8 "$out/build-$kernel.out" | sed 's/^/  /'
		fi
		return 1
	fi
	if [ "$kind" != console ]; then
		result=$(grep -m 1 "^$id"$'\t' "$out/live-$boot" 2>/dev/null || true)
		case "$result" in
		"$id"$'\t'ok) return 0 ;;
		"$id"$'\t'fail$'\t'*) echo "why: ${result#*$'\t'fail$'\t'}" ;;
		*) echo "why: gdb gave no result; its transcript:" \
			"$KIT_LOGS/$(KIT_TREE=$(kernel_env "$kernel") stage_label "$stage")/grader.txt" ;;
		esac
		crash_lines "$out/live-$boot.log"
	else
		console_passed "$out/console-$boot" "$stage" "$(exercise boot "$boot" run)" \
			>"$out/console-verdict" && return 0
		echo "why:"
		grep -vE '^(kit-init|slubq_torture: loading)' "$out/console-verdict" | tail -n 6 | sed 's/^/  /'
		crash_lines "$out/console-$boot"
	fi
	echo "hint: $(exercise hint "$id")"
	return 1
}

# A test that the grader failed to decide is not the student's to lose:
# it is skipped, and its points are named as not graded.
score=0 total=0 ungraded=0 fault='' fault_kernel='' said=''
for line in "${tests[@]}"; do
	IFS=$'\t' read -r id points kind boot name <<<"$line"
	total=$((total + points))
	selected "$id: $name" || continue
	if [ "$kind" != console ] && [ "${built[${boot_kernel[$boot]}]}" = 1 ] &&
		said=$(grader_fault "$id" "$boot"); then
		fault=$said fault_kernel=${boot_kernel[$boot]}
		tap_skip "$id: $name [$points points]" "not graded: the grader failed (below)"
		ungraded=$((ungraded + points))
		continue
	fi
	check "$id: $name [$points points]" grade_test "$id" "$kind" "$boot"
	[ "$check_status" -ne 0 ] || score=$((score + points))
done
status=0
tap_finish || status=$?
echo "score: $score/$total (lab $stage, $tree)"
if [ "$ungraded" -gt 0 ]; then
	echo "grader error: $fault. The kit's fault, not your code's: $ungraded points were" \
		"not graded; tell your instructor (gdb's transcript:" \
		"$KIT_LOGS/$(KIT_TREE=$(kernel_env "$fault_kernel") stage_label "$stage")/grader.txt)"
	[ "$status" -ne 0 ] || status=3
fi
exit "$status"

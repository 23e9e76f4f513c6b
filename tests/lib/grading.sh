# shellcheck shell=bash
# tests/lib/grading.sh, sourced by tests/run.sh: the graded labs: make
# exercise and make grade on make test's own trees, the solution, the
# skeleton, correct answers and planted mistakes.

# make test's own trees of the labs, apart from the student's.
test_exercises=$KIT_WORK/test-exercises

# in_test_tree COMMAND...: COMMAND with make test's trees.
in_test_tree() {
	KIT_EXERCISES=$test_exercises "$@"
}

lab_spec() {
	python3 grading/exercise.py "$1" "labs/$2/graded.toml" "${@:3}"
}

# lab_questions STAGE: the ids of the lab's questions (tests of kind answer).
lab_questions() {
	lab_spec tests "$1" id kind | awk -F'\t' '$2 == "answer" { print $1 }'
}

# grade STAGE FILTER: make grade on make test's tree of the lab, the tests
# whose names match FILTER; its output in $out/grade, and shown.
grade() {
	local rc=0
	KIT_GRADE_FILTER=$2 in_test_tree grading/grade.sh "$1" >"$out/grade" 2>&1 || rc=$?
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
# each function to write is a TODO, with the stub, declared __noclone, and
# nothing else of the stage's source changed; the answers file has a line
# for each question.
fresh_exercise() {
	local stage=$1 tree=$test_exercises/$1 file name first last todo=0 id
	git -C "$KIT_KERNEL_TREE" worktree remove --force "$tree" 2>/dev/null || rm -rf "$tree"
	git -C "$KIT_KERNEL_TREE" worktree prune
	git -C "$KIT_KERNEL_TREE" branch -q -D "$(in_test_tree exercise_ref "$stage")" 2>/dev/null || true
	in_test_tree grading/exercise.sh "$stage"
	for id in $(lab_questions "$stage"); do
		grep -qx "$id: " "$tree/answers" || { echo "$tree/answers has no line for $id"; return 1; }
	done
	[ -n "$(lab_spec functions "$stage" name)" ] || return 0
	while IFS=$'\t' read -r file name first last; do
		todo=$((todo + 1))
		sed -n "${first},${last}p" "$tree/$file" >"$out/function"
		grep -q "TODO $todo: " "$out/function" ||
			{ echo "$name() in $tree/$file has no TODO $todo"; cat "$out/function"; return 1; }
		[ "$(wc -l <"$out/function")" -lt 16 ] ||
			{ echo "$name() still has a body:"; cat "$out/function"; return 1; }
		# A body that leaves an argument unused (the stub does) would
		# otherwise become a clone with other arguments (.isra), whose
		# registers the grader cannot read.
		sed -n "$((first - 1)),${first}p" "$tree/$file" | grep -qw __noclone ||
			{ echo "$name() in $tree/$file is not declared __noclone"; return 1; }
	done < <(lab_spec where "$stage" "$tree")
	git -C "$tree" diff --stat "$(in_test_tree exercise_ref "$stage" stage)" >"$out/stat"
	cat "$out/stat"
	[ "$(grep -c '|' "$out/stat")" -eq "$(lab_spec functions "$stage" file | sort -u | wc -l)" ] ||
		{ echo "the skeleton changes other files than the exercise's"; return 1; }
}

# with_source STAGE [PATCH]: the stage's own source (the solution) in the
# exercise's files of make test's tree, with PATCH (a planted mistake)
# applied.
with_source() {
	local stage=$1 patch=${2:-} tree=$test_exercises/$1 files
	mapfile -t files < <(lab_spec functions "$stage" file | sort -u)
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
	total=$(lab_spec tests "$stage" points | awk '{ t += $1 } END { print t }')
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
	file=$(lab_spec functions "$stage" file | sed -n 1p)
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
	ids=$(lab_spec tests "$stage" id kind | awk -F'\t' '$2 != "answer" { print $1 }' | paste -sd '|')
	want=$(lab_spec tests "$stage" points kind | awk -F'\t' '$2 != "answer" { t += $1 } END { print t }')
	with_source "$stage" "$patch"
	grade "$stage" "^($ids): " || { echo "grade.sh failed a correct answer"; return 1; }
	grep -q "^score: $want/" "$out/grade" || { echo "the score is not $want"; return 1; }
}

# live_and_console_boot STAGE: "LIVE CONSOLE", a live test of the lab and
# a console test of the same boot, if it has such a pair; else nothing.
live_and_console_boot() {
	local boot
	boot=$(lab_spec tests "$1" kind boot | awk -F'\t' '$1 == "gdb" { print $2; exit }')
	[ -n "$boot" ] || return 0
	lab_spec tests "$1" id kind boot | awk -F'\t' -v boot="$boot" '
		$2 == "gdb" && $3 == boot && !live { live = $1 }
		$2 == "console" && $3 == boot && !console { console = $1 }
		END { if (live && console) print live, console }'
}

# grader_fault_reported STAGE: a check that fails in the grader itself
# (planted in a copy of the kit: a read of a variable the kernel does not
# have, as a check that reads a student's local variables would meet) is
# reported once as the grader's, naming what it could not read and where;
# the live test it would decide is skipped, not failed; the console test
# of the same boot is still graded; and grade.sh does not exit 0.
grader_fault_reported() {
	local stage=$1 kit=$out/faulty-kit live console rc=0
	read -r live console < <(live_and_console_boot "$stage") || true
	if [ -z "$live" ] || [ -z "$console" ]; then
		echo "lab $stage has no live and console test of one boot"
		return 1
	fi
	rm -rf "$kit"
	mkdir -p "$kit"
	cp -R scripts grading config guest gdb modules stages labs "$kit/"
	cat "$fixtures/grader-fault.py" >>"$kit/labs/$stage/checks.py"
	with_source "$stage"
	KIT_GRADE_FILTER="^($live|$console): " in_test_tree "$kit/grading/grade.sh" "$stage" >"$out/grade" 2>&1 || rc=$?
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

# lab_shows_student_source STAGE: make lab TREE=exercise reads the first
# function to write from the student's file, not the kit's tree, even once
# the kit's tree holds the stage's own source again.  (Last of a lab's
# checks: it puts the kit's tree back, which the next grade would undo.)
lab_shows_student_source() {
	local stage=$1 file name
	IFS=$'\t' read -r file name < <(lab_spec functions "$stage" file name)
	scripts/prepare-stage.sh "$stage"
	printf '%s\ninfo source\nquit\n' "python s = gdb.lookup_static_symbol('$name') or gdb.lookup_global_symbol('$name'); gdb.execute('list %s:%d,+12' % (s.symtab.filename, s.line))" |
		KIT_TREE=exercise in_test_tree scripts/lab.sh "$stage" >"$out/lab" 2>&1
	cat "$out/lab"
	grep -qx "Located in $test_exercises/$stage/$file" "$out/lab"
}

graded_lab_checks() {
	local stage=$1 patch id
	if [ -z "$(lab_spec functions "$stage" name)" ]; then
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
	if tap_first_time compile-error; then
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
	# The grader's own failures are its own, the same path for every lab
	# (shown on the first that has a live and a console test of one boot).
	if [ -n "$(live_and_console_boot "$stage")" ] && tap_first_time grader-fault; then
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

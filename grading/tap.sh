# shellcheck shell=bash
# grading/tap.sh: checks as TAP (version 13), with selection: make test's
# (tests/run.sh) and make grade's (grading/grade.sh).  Sourced after
# scripts/lib.sh (run_logged).
#
#   tap_start DIR [REGEX]    print the version line; DIR holds each check's
#                            output; only checks whose names match REGEX run
#   check NAME COMMAND...    one test line: ok, not ok (with the command's
#                            last 30 lines of output), or ok # SKIP
#   tap_skip NAME WHY        a line for a check that cannot run: ok # SKIP WHY
#   prerequisite NAME COMMAND...
#                            a check that those after it need (a build): if
#                            it fails, they are skipped, naming it; left out
#                            by the filter, it runs anyway before the first
#                            of them that runs
#   tap_finish               the plan, then "N passed, N failed" (and
#                            "N skipped"); fails if a check failed
#   tap_group_begin          the start of a group of checks (a stage's, say)
#   tap_group_end            its end: a prerequisite of the group that
#                            failed skips no check after it, and one that
#                            the filter left out is no longer pending
#   tap_scope on|off         checks that follow run (on), or are left out
#                            as the filter leaves them out (off)
#   tap_first_time NAME      whether NAME is asked for the first time in
#                            this run: what runs once, on the first group
#                            that has what it needs
#
# Its state is its own: callers change it through these functions alone.

tap_start() {
	tap_dir=$1 tap_filter=${2:-}
	passed=0 failed=0 skipped=0
	# in_scope: 1 while checks run (tap_scope); skip: why the checks that
	# follow cannot run (empty: they can); pending: the prerequisites that
	# the filter left out, each quoted for eval, in order; tap_group_skip
	# and tap_group_pending: skip and pending at each open group's start.
	in_scope=1 skip='' pending=() tap_group_skip=() tap_group_pending=()
	tap_asked=' '
	# The prerequisites that ran, and how: a pending one runs once.
	declare -gA tap_ran=()
	echo 'TAP version 13'
}

# tap_line NAME COMMAND...: run one check and print its line; sets
# check_status.  A test function fails at its first failing command (see
# run_logged).
tap_line() {
	local name=$1 start=$SECONDS
	shift
	if [ -n "$skip" ]; then
		tap_skip "$name" "$skip"
		check_status=1
		return 0
	fi
	run_logged "$tap_dir/last" "$@"
	# shellcheck disable=SC2154 # set by run_logged (scripts/lib.sh)
	check_status=$run_status
	if [ "$run_status" -eq 0 ]; then
		passed=$((passed + 1))
		printf 'ok %d - %s (%ds)\n' "$((passed + failed + skipped))" "$name" "$((SECONDS - start))"
	else
		failed=$((failed + 1))
		printf 'not ok %d - %s\n' "$((passed + failed + skipped))" "$name"
		tail -n 30 "$tap_dir/last" | sed 's/^/#   /'
	fi
}

tap_skip() {
	skipped=$((skipped + 1))
	printf 'ok %d - %s # SKIP %s\n' "$((passed + failed + skipped))" "$1" "$2"
}

# selected NAME: whether a check of that name is to run.
selected() {
	[ "$in_scope" = 1 ] && { [ -z "$tap_filter" ] || [[ $1 =~ $tap_filter ]]; }
}

# tap_pending: run the prerequisites that the filter left out, in order.
tap_pending() {
	local needed
	for needed in "${pending[@]}"; do
		eval "tap_needed $needed"
	done
	pending=()
}

check() {
	selected "$1" || return 0
	tap_pending
	tap_line "$@"
}

prerequisite() {
	[ "$in_scope" = 1 ] || return 0
	if selected "$1"; then
		tap_pending
		tap_needed "$@"
	else
		pending+=("$(printf '%q ' "$@")")
	fi
}

# tap_needed NAME COMMAND...: run a prerequisite, unless it ran already;
# if it failed, what follows is skipped.
tap_needed() {
	if [ -n "${tap_ran[$1]+set}" ]; then
		check_status=${tap_ran[$1]}
	else
		tap_line "$@"
		tap_ran[$1]=$check_status
	fi
	if [ "$check_status" -ne 0 ] && [ -z "$skip" ]; then
		skip="needs: $1"
	fi
}

tap_finish() {
	local summary="$passed passed, $failed failed"
	echo "1..$((passed + failed + skipped))"
	[ "$skipped" -eq 0 ] || summary+=", $skipped skipped"
	echo "$summary"
	[ "$failed" -eq 0 ]
}

tap_group_begin() {
	tap_group_skip+=("$skip")
	if [ ${#pending[@]} -eq 0 ]; then
		tap_group_pending+=('')
	else
		tap_group_pending+=("$(printf '%s\n' "${pending[@]}")")
	fi
}

tap_group_end() {
	[ ${#tap_group_skip[@]} -gt 0 ] || die "tap_group_end without tap_group_begin"
	skip=${tap_group_skip[-1]}
	pending=()
	# (Each is printf %q's: a line, whatever it quotes.)
	if [ -n "${tap_group_pending[-1]}" ]; then
		mapfile -t pending <<<"${tap_group_pending[-1]}"
	fi
	unset 'tap_group_skip[-1]' 'tap_group_pending[-1]'
}

tap_scope() {
	case "$1" in
	on) in_scope=1 ;;
	off) in_scope=0 ;;
	*) die "tap_scope: on or off, not '$1'" ;;
	esac
}

tap_first_time() {
	[[ $tap_asked != *" $1 "* ]] || return 1
	tap_asked+="$1 "
}

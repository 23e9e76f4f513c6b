# shellcheck shell=bash
# Reading a guest's console: what tests/run.sh and grading/grade.sh judge a boot
# by.  Sourced after lib.sh, never run.

# boot_console STAGE SCRIPT [KERNEL ARGS]: boot, have the guest run SCRIPT,
# keep the console (CR LF made LF) in a log named for SCRIPT and ARGS, and
# print that log's path.
boot_console() {
	local stage=$1 script=$2 append=${3:-} console
	console=$KIT_LOGS/$(stage_label "$stage")/$script${append:+-${append//[^a-zA-Z0-9]/_}}.log
	mkdir -p "$(dirname "$console")"
	timeout 600 "$KIT_ROOT/scripts/qemu.sh" --run "$script" ${append:+--append "$append"} "$stage" \
		</dev/null 2>&1 | tr -d '\r' >"$console" || true
	echo "$console"
}

# The guest's side of these lines: guest/init (the ready line) and
# guest/lib.sh (each script's verdict).

# ready_cpus CONSOLE STAGE: the number of CPUs the guest's ready line gives,
# if the guest came up as STAGE; status 1, printing nothing, if not.
ready_cpus() {
	local cpus
	cpus=$(sed -n "s/^kit-init: ready: stage $2, .*, \([0-9]*\) CPUs\$/\1/p" "$1" | sed -n 1p)
	[ -n "$cpus" ] && echo "$cpus"
}

# verdict CONSOLE SCRIPT: the last verdict of guest script SCRIPT, "passed"
# or "FAILED: WHY"; status 1, printing nothing, if it gave none.
verdict() {
	sed -n -E "s/^$2: (passed|FAILED: .*)\$/\1/p" "$1" | tail -n 1 | grep .
}

# kunit_passed CONSOLE: the kernel's SLUB KUnit suite ran and passed, as
# the tree's own KTAP parser (tools/testing/kunit/kunit.py) reads the
# console: it names a failing case.
kunit_passed() {
	local report
	report=$(python3 "$KIT_KERNEL_TREE/tools/testing/kunit/kunit.py" parse "$1" 2>&1) || {
		grep -E 'FAILED|CRASHED|ERROR|Testing complete' <<<"$report"
		return 1
	}
	grep -qF '[PASSED] slub_test ' <<<"$report" || { echo "no slub_test suite on the console"; return 1; }
}

# console_passed CONSOLE STAGE SCRIPT: the console's lines that say how
# SCRIPT went (with the verdict of any script it ran that failed: "NAME:
# FAILED: WHY"); passes if the system came up, the SLUB KUnit suite (it
# runs at every boot) passed, the guest script SCRIPT said "SCRIPT:
# passed", and the kernel did not complain (its own BUG and
# WARNING reports, which lockdep's, KASAN's and might_sleep()'s are, and
# SLUB's "BUG cache (...)" and "FIX" lines).  Where the kit's torture
# module ran, it must have run on every CPU and done the operations it was
# asked for (ops=, a million by default).
console_passed() {
	local console=$1 stage=$2 script=$3 cpus ops asked said
	grep -E "^kit-init|^$script:|^[a-z-]+: FAILED: |slub_test|slubq_torture" "$console" || true
	cpus=$(ready_cpus "$console" "$stage") ||
		{ echo "the system did not come up (no ready line)"; return 1; }
	kunit_passed "$console" || return 1
	said=$(verdict "$console" "$script") || { echo "no \"$script: passed\" line"; return 1; }
	[ "$said" = passed ] || { echo "$script: $said"; return 1; }
	if grep -E '(BUG|WARNING):|^BUG [^ ]+ \(|^FIX |Oops|Kernel panic|Call Trace' "$console"; then
		echo "the kernel complained: see $console"
		return 1
	fi
	grep -q '^slubq_torture: ' "$console" || return 0
	ops=$(sed -n "s/^slubq_torture: passed: \([0-9]*\) operations on $cpus CPUs .*/\1/p" "$console" |
		head -n 1)
	asked=$(sed -n 's/^torture: insmod slubq_torture.* ops=\([0-9]*\).*/\1/p' "$console" | head -n 1)
	[ -n "$ops" ] || { echo "no summary line of slubq_torture on $cpus CPUs"; return 1; }
	[ "$ops" -ge "${asked:-1000000}" ] ||
		{ echo "slubq_torture did only $ops operations of ${asked:-1000000}"; return 1; }
}

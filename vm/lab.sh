#!/usr/bin/env bash
# lab.sh [--walkthrough] STAGE: boot the stage's kernel in QEMU halted at
# its first instruction, with the console in a log file, and attach gdb.
# Interactive by default; with --walkthrough, run the stage's
# walkthrough.gdb in batch mode and print the transcript.  QEMU stops when
# gdb does.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

walkthrough=0
if [ "${1:-}" = --walkthrough ]; then
	walkthrough=1
	shift
fi
stage=$(stage_resolve "${1:-}")
script=$KIT_ROOT/stages/$stage/walkthrough.gdb
logs=$KIT_LOGS/$(stage_label "$stage")
mkdir -p "$logs"

# A walkthrough may name the guest script that drives it and extra kernel
# parameters in header lines: "# kit-run: NAME", "# kit-append: ARGS".
run=churn append=''
if [ "$walkthrough" -eq 1 ]; then
	[ -f "$script" ] || die "stage $stage has no walkthrough ($script)"
	run=$(sed -n 's/^# kit-run: *//p' "$script" | head -n 1)
	append=$(sed -n 's/^# kit-append: *//p' "$script" | head -n 1)
	run=${run:-churn}
fi
qemu_args=(--halted --run "$run")
[ -n "$append" ] && qemu_args+=(--append "$append")

console=$logs/console.log
# In a session of its own, so that the Ctrl-C a student types to stop the
# kernel in gdb does not reach QEMU and end it.
setsid "$KIT_ROOT/vm/qemu.sh" "${qemu_args[@]}" "$stage" </dev/null >"$console" 2>&1 &
qemu=$!
trap 'kill "$qemu" 2>/dev/null || true; wait "$qemu" 2>/dev/null || true' EXIT

port=$(kit_gdb_port)
for _ in $(seq 50); do
	port_listening "$port" && break
	kill -0 "$qemu" 2>/dev/null || die "QEMU did not start: $(tail -n 5 "$console")"
	sleep 0.2
done
note "==> QEMU is halted at the first instruction; the guest console goes to $console"

if [ "$walkthrough" -eq 0 ]; then
	"$KIT_ROOT/vm/gdb.sh" "$stage"
	exit 0
fi

transcript=$logs/walkthrough.txt
limit=${KIT_WALKTHROUGH_TIMEOUT:-600}
note "==> running $script (transcript: $transcript)"
set +e
timeout "$limit" "$KIT_ROOT/vm/gdb.sh" "$stage" -batch -x "$script" </dev/null 2>&1 | tee "$transcript"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 124 ] && die "the walkthrough took longer than $limit s (a breakpoint that never hit?);" \
	"see $transcript and $console"
[ "$rc" -eq 0 ] || die "gdb exited with status $rc; see $transcript"

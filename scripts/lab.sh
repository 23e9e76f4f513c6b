#!/usr/bin/env bash
# lab.sh [--script FILE [--run NAME] [--append ARGS]] STAGE
# Boot the stage's kernel in QEMU halted at its first instruction, with the
# console in a log file, and attach gdb.  Interactive by default;
#   --script FILE  run FILE (gdb commands, or Python if it ends in .py) in
#                  batch mode, the guest running NAME (default: churn) with
#                  ARGS on its command line (grading/grade.sh does)
# QEMU stops when gdb does.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

# qemu.sh boots the guest running NAME (churn unless --run says), with
# ARGS (--append) on its command line.
script='' run=churn qemu_args=(--halted)
while [ $# -gt 0 ]; do
	case "$1" in
	--script) script=${2:?--script needs a file}; shift ;;
	--run) run=${2:?--run needs a script name}; shift ;;
	--append) qemu_args+=("$1" "${2:?$1 needs arguments}"); shift ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
qemu_args+=(--run "$run")
stage=$(stage_resolve "${1:-}")
logs=$KIT_LOGS/$(stage_label "$stage")
mkdir -p "$logs"

console=$logs/console.log
# In a session of its own, so that the Ctrl-C a student types to stop the
# kernel in gdb does not reach QEMU and end it.
setsid "$KIT_ROOT/scripts/qemu.sh" "${qemu_args[@]}" "$stage" </dev/null >"$console" 2>&1 &
qemu=$!
trap 'kill "$qemu" 2>/dev/null || true; wait "$qemu" 2>/dev/null || true' EXIT

port=$(kit_gdb_port)
for _ in $(seq 50); do
	port_listening "$port" && break
	kill -0 "$qemu" 2>/dev/null || die "QEMU did not start: $(tail -n 5 "$console")"
	sleep 0.2
done
note "==> QEMU is halted at the first instruction; the guest console goes to $console"

if [ -z "$script" ]; then
	"$KIT_ROOT/scripts/gdb.sh" "$stage"
	exit 0
fi

transcript=$logs/$(basename "${script%.*}").txt
limit=${KIT_WALKTHROUGH_TIMEOUT:-600}
note "==> running $script (transcript: $transcript)"
set +e
timeout "$limit" "$KIT_ROOT/scripts/gdb.sh" "$stage" -batch -x "$script" </dev/null 2>&1 | tee "$transcript"
rc=${PIPESTATUS[0]}
set -e
[ "$rc" -eq 124 ] && die "$(basename "$script") took longer than $limit s (a breakpoint that never hit?);" \
	"see $transcript and $console"
[ "$rc" -eq 0 ] || die "gdb exited with status $rc; see $transcript"

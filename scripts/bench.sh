#!/usr/bin/env bash
# bench.sh [STAGE...]: hackbench -P -g 10 -l 200, five runs in a fresh boot
# of each stage (default: 00, the last stage before the queues, and the
# last stage), and a table of the medians.  A benchmark, not a test: TCG
# emulates the CPUs, and other load on the host shows in the numbers.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(00 06 "$(kit_stages | tail -n 1)")

printf '%-28s %8s   %s\n' stage median runs
for spec in "${stages[@]}"; do
	stage=$(stage_resolve "$spec")
	log=$KIT_LOGS/$stage/bench.log
	mkdir -p "$(dirname "$log")"
	"$KIT_ROOT/scripts/build-kernel.sh" "$stage" >"$log" 2>&1 ||
		die "stage $stage does not build; see $log"
	timeout 900 "$KIT_ROOT/scripts/qemu.sh" --run bench "$stage" </dev/null 2>&1 |
		tr -d '\r' >"$log" || true
	mapfile -t runs < <(sed -n 's/^bench: run [0-9]*: //p' "$log")
	[ ${#runs[@]} -eq 5 ] || die "stage $stage: not five runs of hackbench; see $log"
	median=$(printf '%s\n' "${runs[@]}" | sort -n | sed -n 3p)
	printf '%-28s %8s   %s\n' "$stage" "$median" "${runs[*]}"
done

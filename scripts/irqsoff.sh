#!/usr/bin/env bash
# irqsoff.sh [STAGE...]: how long the allocator keeps interrupts off where
# it gives objects back to the slabs, in the stage's irqsoff kernel
# (config/variants/irqsoff.config), timed with the function graph tracer
# (guest script irqsoff): a resize that empties queues of the longest
# length, and a torture run.  Two boots per stage: default slab orders, and
# slub_min_order=7 (slabs of 512 KiB, up to 64527 objects from stage 10
# on; stage 11's sheaves cannot be resized, and only the torture run is
# timed).  Default stages: 08, the first with resizable queues, 10, the
# last with queues, and the last, 11, with sheaves.
# A benchmark, not a test: TCG emulates the CPUs, so the figures compare
# designs, not hardware.
set -euo pipefail
export KIT_VARIANT=irqsoff
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stages=("$@")
[ ${#stages[@]} -gt 0 ] || stages=(08 "$(last_queue_stage)" "$(kit_stages | tail -n 1)")

for spec in "${stages[@]}"; do
	stage=$(stage_resolve "$spec")
	log=$KIT_LOGS/$(stage_label "$stage")/irqsoff.log
	mkdir -p "$(dirname "$log")"
	"$KIT_ROOT/scripts/build-kernel.sh" "$stage" >"$log" 2>&1 ||
		die "stage $stage does not build; see $log"
	for append in '' slub_min_order=7; do
		timeout 900 "$KIT_ROOT/scripts/qemu.sh" --run irqsoff \
			${append:+--append "$append"} "$stage" </dev/null 2>&1 |
			tr -d '\r' >"$log" || true
		grep -q '^irqsoff: done' "$log" ||
			die "stage $stage${append:+ ($append)}: the guest did not finish; see $log"
		sed -n "s/^irqsoff: /$stage${append:+ $append}: /p" "$log" | grep -v ': done$'
	done
done

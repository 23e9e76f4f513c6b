#!/usr/bin/env bash
# bench.sh [--quick | --smoke] [STAGE]: the 2010 comparison, on 6.1, and
# what came of it.  Four kernels that differ only in the allocator: SLAB
# and stock SLUB (stage 00), SLUB+Q (STAGE, by default the last with
# queues, 10) and its descendant, sheaves (stage 11), all with the bench
# configuration (config/variants/bench.config, and slab.config for SLAB).
# Each is booted in turn, A B C D A B C D ..., KIT_BENCH_BOOTS times with
# two CPUs and again with one; a boot (guest/run/bench) runs hackbench -P at each
# group count KIT_BENCH_RUNS times, reads the slab memory, and runs the
# microbenchmark module (modules/slab_bench).  Then two boots of each
# kernel with one CPU under -icount, where time counts instructions, run
# the module and then hackbench once at each group count
# (guest/run/bench-instructions).  Last, one boot of each allocator built
# with its statistics (variants stats and slab-stats) counts the
# allocations and frees of each hackbench run that take the fast path.  The figures go to
# a results folder, with the date, the machine, QEMU's version and the
# configuration; scripts/bench_report.py writes its report and plots and
# prints the table of ratios.
#
# A benchmark, not a test: TCG emulates the CPUs, and other load on the
# host shows in the seconds (not in the instruction counts).  --quick is
# the lab's shorter run: three boots of each kernel with two CPUs, two runs
# a boot, no statistics kernels.  --smoke runs the whole pipeline at the
# smallest settings, one boot of each kernel, to show that every figure
# comes out; its numbers mean nothing.  It builds one kernel, not eight: it
# times and counts with the stage kernels themselves for SLUB, SLUB+Q and
# sheaves (the lab configuration has SLUB's statistics) and with one of the same
# configuration for SLAB (variant slab-smoke); make test runs it.
#
# KIT_BENCH_BOOTS (default 5) and KIT_BENCH_RUNS (3) set the boots of each
# kernel and the runs of each hackbench in a boot; KIT_BENCH_CPUS ("2 1")
# the CPU counts to boot with; KIT_BENCH_RESULTS the results folder (by
# default a new one, named for the date, in the work directory);
# KIT_BENCH_READY_WAIT the seconds a guest has to come up (300).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

profile=''
case "${1:-}" in
--quick | --smoke) profile=${1#--}; shift ;;
esac
slubq=$(stage_resolve "${1:-$(last_queue_stage)}")
stage_has "$slubq" cpu-queues || die "stage $slubq has no cpu queues; name a SLUB+Q stage: 07 or later"
base=$(kit_stages | sed -n 1p)
# Stage 11's sheaves, beside the design they grew from.
sheaves=$(stages_with sheaves | tail -n 1)
[ -n "$sheaves" ] || die "no stage with sheaves in stages/ (stage 11 has them)"

boots=${KIT_BENCH_BOOTS:-5} runs=${KIT_BENCH_RUNS:-3} cpu_counts=${KIT_BENCH_CPUS:-2 1} stats=1
# A guest comes up in about 5 s under TCG: 300 s are for a kernel that hung.
ready_wait=${KIT_BENCH_READY_WAIT:-300}
# Loops scaled so that a run takes seconds under TCG; the cover letter's
# ran 20000 loops at each group count.
hackbench=1x2000,10x200,100x20
# The module's operations of each kind: ten times more under -icount, so
# that a timer interrupt that lands in one boot's timed loop and not in
# the other's moves a count by less than 0.5 % (at 10000, by up to 3 %).
objects=10000 icount_objects=100000 sizes=8,32,128,512,2048,8192
case "$profile" in
quick) boots=3 runs=2 cpu_counts=2 stats='' ;;
smoke)
	# Ten groups at most: the lab configuration's BASE_SMALL caps pid_max
	# at 4096, and hackbench -P -g 100 runs 4000 tasks.
	boots=1 runs=1 cpu_counts=2
	hackbench=1x20,10x2 icount_objects=10000 sizes=64
	;;
esac

# The kernels: name, stage, the variant timed, the variant that counts
# ("-": the stage kernel itself); and each build they need, "NAME STAGE
# VARIANT", once.
kernels=("SLAB $base slab slab-stats" "SLUB $base bench stats" "SLUB+Q $slubq bench stats"
	"sheaves $sheaves bench stats")
[ "$profile" != smoke ] || kernels=("SLAB $base slab-smoke slab-smoke" "SLUB $base - -" "SLUB+Q $slubq - -"
	"sheaves $sheaves - -")

# read_spec SPEC: name, stage, variant and counting from a kernels or
# builds entry, with "-" made the empty KIT_VARIANT.
read_spec() {
	read -r name stage variant counting <<<"$1"
	[ "$variant" != - ] || variant=''
	[ "${counting:-}" != - ] || counting=''
}

builds=()
for spec in "${kernels[@]}"; do
	read -r name stage variant counting <<<"$spec"
	builds+=("$name $stage $variant")
	[ -z "$stats" ] || [ "$counting" = "$variant" ] || builds+=("$name $stage $counting")
done

results=${KIT_BENCH_RESULTS:-$KIT_WORK/bench/$(date +%Y-%m-%d-%H%M%S)${profile:+-$profile}}
mkdir -p "$results/consoles"

for spec in "${builds[@]}"; do
	read_spec "$spec"
	KIT_VARIANT=$variant "$KIT_ROOT/scripts/build-kernel.sh" "$stage" ||
		die "the $name kernel (stage $stage, VARIANT=${variant:-none}) does not build"
done

# What the figures were made on and with.
{
	echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "host: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | sed -n 1p)," \
		"$(awk '/^MemTotal:/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
	echo "qemu: $(qemu-system-x86_64 --version | sed -n 1p), TCG"
	echo "linux: linux-source-6.1 $(dpkg-query -W -f='${Version}' linux-source-6.1 2>/dev/null || echo unknown)"
	echo "kit: $(git -C "$KIT_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	for spec in "${builds[@]}"; do
		read_spec "$spec"
		echo "kernel: $name = stage $stage, VARIANT=${variant:-none} ($(KIT_VARIANT=$variant stage_fragments "$stage" |
			sed "s|^$KIT_ROOT/||" | paste -sd ' '))"
	done
	echo "settings: boots=$boots runs=$runs cpus=${cpu_counts// /,} hackbench=$hackbench objects=$objects" \
		"icount_objects=$icount_objects sizes=$sizes${profile:+ ($profile)}"
} >"$results/meta.txt"
echo 'kernel,cpus,clock,boot,groups,loops,run,seconds' >"$results/hackbench.csv"
echo 'kernel,cpus,boot,when,slab_kb,sunreclaim_kb,queued_kb' >"$results/memory.csv"
echo 'kernel,cpus,clock,boot,test,size,ops,ns' >"$results/micro.csv"
echo 'kernel,groups,loops,alloc_fast,alloc_slow,free_fast,free_slow' >"$results/paths.csv"

# host_tsc_khz: the host's TSC rate in kHz as its kernel logged it (the
# refined calibration if there is one), or nothing if the log cannot be
# read or has no such line.
host_tsc_khz() {
	{ dmesg 2>/dev/null || true; } | awk '
		/tsc: Refined TSC clocksource calibration: [0-9.]+ MHz$/ { refined = $(NF - 1) }
		/tsc: Detected [0-9.]+ MHz processor$/ { detected = $(NF - 2) }
		END {
			mhz = refined ? refined : detected
			if (mhz) printf "%d\n", mhz * 1000 + 0.5
		}'
}

# The guest's TSC rate in kHz, given to every boot in real time
# (tsc_early_khz=): under TCG the guest's TSC is the host's (QEMU reads
# it with rdtsc), so the host's own figure when its kernel log has it,
# and otherwise the rate the first boot that calibrated it found.
tsc_khz=$(host_tsc_khz)
if [ -n "$tsc_khz" ]; then
	echo "tsc_khz: $tsc_khz (the host's, from its kernel log; given to every boot)" >>"$results/meta.txt"
fi

# run_guest CONSOLE VARIANT QEMU-OPTION... STAGE: boot the stage's kernel
# with scripts/qemu.sh, its console (CR LF made LF) in CONSOLE as it comes;
# a guest that has not come up (printed its ready line) in
# KIT_BENCH_READY_WAIT seconds, its kernel hung as it booted, is stopped,
# and its console ends with a line that says so.
run_guest() {
	local console=$1 variant=$2 pidfile=$1.pid stopped=$1.stopped watchdog s
	shift 2
	: >"$console"
	(
		for ((s = 0; s < ready_wait; s++)); do
			sleep 1
			! grep -q '^kit-init: ready: ' "$console" || exit 0
		done
		echo "bench.sh: stopped, no ready line in $ready_wait s" >"$stopped"
		kill "$(cat "$pidfile")" 2>/dev/null || true
	) &
	watchdog=$!
	# sh's pid is the pid of the timeout it becomes, which passes a
	# SIGTERM on to QEMU.
	KIT_VARIANT=$variant sh -c 'echo "$$" >"$0"; exec timeout 3600 "$@"' "$pidfile" \
		"$KIT_ROOT/scripts/qemu.sh" "$@" </dev/null 2>&1 | stdbuf -oL tr -d '\r' >"$console" || true
	kill "$watchdog" 2>/dev/null || true
	wait "$watchdog" 2>/dev/null || true
	rm -f "$pidfile"
	if [ -e "$stopped" ]; then
		cat "$stopped" >>"$console"
		rm "$stopped"
	fi
}

# boot NAME STAGE VARIANT SCRIPT OBJECTS CONSOLE QEMU-OPTION...: boot the
# kernel with the guest running SCRIPT (the module making OBJECTS
# operations of each kind), keep its console, and fail unless SCRIPT
# passed.
boot() {
	local name=$1 stage=$2 variant=$3 script=$4 ops=$5 console=$6 try=0 failed=0 kept tsc='' given='' mhz realtime=1
	shift 6
	[[ " $* " != *" --icount "* ]] || realtime=''
	# The module times with the kernel's clock, which must be the TSC: with
	# two CPUs the kernel finds TCG's TSCs unsynchronized and falls back to
	# jiffies, a 4 ms clock (tsc=reliable: the timed loops run on one CPU
	# each).  The kernel often fails to calibrate the TSC against the PIT,
	# its only reference here, and then gives it up (five SLAB boots in a
	# row once, on a quiet host): so a boot in real time is given the
	# host's rate (above) or the rate an earlier boot found, and without
	# either the first ones are made again until one finds it.  Under
	# -icount the guest's TSC counts virtual time, at another rate, which
	# the kernel calibrates without fail.
	if [ -n "$tsc_khz" ] && [ -n "$realtime" ]; then
		given=" tsc_early_khz=$tsc_khz"
	fi
	while :; do
		run_guest "$console" "$variant" --run "$script" \
			--append "tsc=reliable$given kit.runs=$runs kit.hackbench=$hackbench kit.objects=$ops kit.sizes=$sizes" \
			"$@" "$stage"
		# A kernel can die or hang before its guest comes up, the
		# allocator's work not begun: under TCG with two CPUs, now and
		# then, where a static key flips (sched_clock's "Marking stable")
		# and the other CPU runs the int3 of code already patched back,
		# in stock SLUB as in the kit's stages.  Such a boot is made
		# again, and the results say so; three in a row are no accident.
		if ! grep -q '^kit-init: ready: ' "$console"; then
			failed=$((failed + 1))
			kept=${console%.log}-failed$failed.log
			mv "$console" "$kept"
			echo "boot again: the $name kernel's guest did not come up ($(grep -m 1 -E \
				'^(Kernel panic|int3:|BUG:|Oops:|general protection|bench.sh: stopped)' "$kept" ||
				echo 'its console says no more'); console: ${kept#"$results"/})" >>"$results/meta.txt"
			[ "$failed" -lt 3 ] ||
				die "the $name kernel's guest did not come up in $failed boots in a row" \
					"(consoles: ${console%.log}-failed*.log): see why with make boot STAGE=$stage VARIANT=${variant:-none}"
			note "the $name kernel's guest did not come up; boot $failed of 3"
			continue
		fi
		# The clock it last switched to: tsc, or tsc-early in a boot too
		# short to reach the switch from one to the other (-icount).
		if grep '^clocksource: Switched to clocksource ' "$console" | tail -n 1 |
			grep -qE ' tsc(-early)?$'; then
			tsc=1
			mhz=$(sed -n 's/^tsc: Detected \([0-9.]*\) MHz processor$/\1/p' "$console")
			if [ -z "$tsc_khz" ] && [ -n "$mhz" ] && [ -n "$realtime" ]; then
				tsc_khz=$(awk -v m="$mhz" 'BEGIN { printf "%d", m * 1000 + 0.5 }')
				echo "tsc_khz: $tsc_khz (found by the $name kernel's first boot, given to later ones)" >>"$results/meta.txt"
			fi
			break
		fi
		try=$((try + 1))
		note "the $name kernel's clock is not the TSC in this boot ($(grep -m 1 'Marking TSC unstable' "$console" ||
			echo 'no reason given')); try $try of 5"
		[ "$try" -lt 5 ] || break
	done
	[ -n "$tsc" ] ||
		die "the $name kernel would not keep the TSC as its clock in five boots (console: $console)"
	grep -qx "$script: passed" "$console" ||
		die "the $name kernel's $script run failed: $(grep -E "^$script: FAILED" "$console" || echo 'no verdict')" \
			"(console: $console)"
	# A configuration that silently fell back to SLUB must not pass for
	# SLAB.
	if grep -q "^$script: allocator " "$console"; then
		grep -qxF "$script: allocator $name" "$console" ||
			die "the $name kernel booted with another allocator:" \
				"$(grep "^$script: allocator" "$console") (console: $console)"
	fi
}

# micro_rows NAME CPUS CLOCK BOOT CONSOLE: the module's figures as CSV rows.
micro_rows() {
	sed -n "s/^microbench: \([a-z0-9-]*\) size=\([0-9]*\) ops=\([0-9]*\) ns=\([0-9]*\)\$/$1,$2,$3,$4,\1,\2,\3,\4/p" "$5"
}

# hackbench_rows NAME CPUS CLOCK BOOT SCRIPT CONSOLE: the hackbench times
# that SCRIPT printed, as CSV rows.
hackbench_rows() {
	sed -n "s/^$5: hackbench groups=\([0-9]*\) loops=\([0-9]*\) run=\([0-9]*\) seconds=\([0-9.]*\)\$/$1,$2,$3,$4,\1,\2,\3,\4/p" "$6"
}

for cpus in $cpu_counts; do
	for ((b = 1; b <= boots; b++)); do
		for spec in "${kernels[@]}"; do
			read_spec "$spec"
			console=$results/consoles/$name-cpus$cpus-boot$b.log
			note "==> $name, $cpus CPUs, boot $b of $boots"
			# hackbench -P -g 100 runs 4000 processes.
			boot "$name" "$stage" "$variant" bench "$objects" "$console" --cpus "$cpus" --memory 2048
			hackbench_rows "$name" "$cpus" real "$b" bench "$console" >>"$results/hackbench.csv"
			sed -n "s/^bench: memory when=\([a-z]*\) slab_kb=\([0-9]*\) sunreclaim_kb=\([0-9]*\) queued_kb=\([0-9-]*\)\$/$name,$cpus,$b,\1,\2,\3,\4/p" \
				"$console" >>"$results/memory.csv"
			micro_rows "$name" "$cpus" real "$b" "$console" >>"$results/micro.csv"
		done
	done
done

# Instructions: one CPU, two boots of each kernel, which must agree.
# -icount runs every CPU in one host thread, and with two its boots
# stalled as the second CPU came up (two boots in five, 7 December 2026):
# one CPU runs the same hackbench, without the second's remote frees,
# in as much memory as the boots above.
for rep in 1 2; do
	for spec in "${kernels[@]}"; do
		read_spec "$spec"
		console=$results/consoles/$name-icount-boot$rep.log
		note "==> $name, instructions (-icount), boot $rep of 2"
		boot "$name" "$stage" "$variant" bench-instructions "$icount_objects" "$console" \
			--cpus 1 --memory 2048 --icount
		micro_rows "$name" 1 icount "$rep" "$console" >>"$results/micro.csv"
		hackbench_rows "$name" 1 icount "$rep" bench-instructions "$console" >>"$results/hackbench.csv"
	done
done

# Where the time goes: one boot of each allocator with its statistics,
# two CPUs, each hackbench once.
if [ -n "$stats" ]; then
	for spec in "${kernels[@]}"; do
		read_spec "$spec"
		console=$results/consoles/$name-paths.log
		note "==> $name, its fast and slow paths counted (VARIANT=${counting:-none})"
		boot "$name" "$stage" "$counting" bench-paths "$objects" "$console" --cpus 2 --memory 2048
		sed -n "s/^bench-paths: paths groups=\([0-9]*\) loops=\([0-9]*\) alloc_fast=\([0-9]*\) alloc_slow=\([0-9]*\) free_fast=\([0-9]*\) free_slow=\([0-9]*\)\$/$name,\1,\2,\3,\4,\5,\6/p" \
			"$console" >>"$results/paths.csv"
	done
fi

python3 "$KIT_ROOT/scripts/bench_report.py" "$results"
note "==> the report: $results/report.md"

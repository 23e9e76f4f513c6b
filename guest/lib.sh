# shellcheck shell=dash disable=SC2034 # fits and max are the caller's
# /kit/lib.sh: what the kit's guest scripts (/kit/run/*) share, sourced
# first by each: ". /kit/lib.sh".  A script's lines start with its name
# ("torture: ..."), and a script that checks something ends with its
# verdict, the line the host reads (scripts/console.sh): "NAME: passed", or
# "NAME: FAILED: WHY" and exit status 1.

kit_name=${0##*/}
why=''

# say TEXT...: a line of the script's, "NAME: TEXT".
say() {
	echo "$kit_name: $*"
}

# fail WHY...: the verdict will be FAILED, saying WHY after the reasons
# given before.
fail() {
	why="${why:+$why; }$*"
}

# finish: print the verdict and exit with it.
finish() {
	if [ -z "$why" ]; then
		say passed
		exit 0
	fi
	say "FAILED: $why"
	exit 1
}

# kit_arg NAME [DEFAULT]: the value of kit.NAME= on the kernel command
# line, or DEFAULT.
kit_arg() {
	kit_value=${2:-}
	# shellcheck disable=SC2013 # the command line is words, not lines
	for kit_word in $(cat /proc/cmdline); do
		case "$kit_word" in
		"kit.$1="*) kit_value=${kit_word#kit."$1"=} ;;
		esac
	done
	echo "$kit_value"
}

# slab_allocator: which allocator this kernel has, SLAB, SLUB, SLUB+Q or
# sheaves, by what it shows (stage 11's caches have a sheaf_capacity file,
# SLUB+Q's a cpu_objects file, SLUB's have sysfs at all, SLAB's none), for
# the host to check against the kernel it meant to boot.
slab_allocator() {
	if [ -e /sys/kernel/slab/kmalloc-64/sheaf_capacity ]; then
		echo sheaves
	elif [ -e /sys/kernel/slab/kmalloc-64/cpu_objects ]; then
		echo SLUB+Q
	elif [ -d /sys/kernel/slab ]; then
		echo SLUB
	else
		echo SLAB
	fi
}

# stat_sum STAT: the sum of the allocator statistic STAT (a file of
# /sys/kernel/slab/CACHE, such as alloc_fastpath) over every cache, each
# counted once (an alias is a link to the cache it names).
stat_sum() {
	stat_total=0
	for stat_dir in /sys/kernel/slab/*/; do
		[ -L "${stat_dir%/}" ] && continue
		read -r stat_n _ <"$stat_dir$1"
		stat_total=$((stat_total + stat_n))
	done
	echo "$stat_total"
}

# bench_needs NAME...: make bench (scripts/bench.sh) gives each kit.NAME=
# and holds their defaults: a boot without one ends here, FAILED, naming it.
bench_needs() {
	for bench_arg in "$@"; do
		[ -n "$(kit_arg "$bench_arg")" ] && continue
		fail "booted without kit.$bench_arg= (make bench gives it)"
		finish
	done
}

# hackbench_configs: the GROUPSxLOOPS words of kit.hackbench= (bench_needs
# it first).
hackbench_configs() {
	kit_arg hackbench | tr , ' '
}

# hackbench_run GROUPS LOOPS: hackbench -P (processes, socketpairs,
# 100-byte messages, as in the 2010 cover letter), its output in
# /tmp/hackbench.out; if it fails, the output and the FAILED verdict.
# hackbench -P -g 100 opens about 4000 descriptors, and with busybox's
# limit of 1024 it hangs: the script's limit is raised first.
hackbench_run() {
	# shellcheck disable=SC3045 # busybox's ash has it
	ulimit -n 8192
	hackbench -P -g "$1" -l "$2" >/tmp/hackbench.out 2>&1 && return 0
	cat /tmp/hackbench.out
	fail "hackbench -P -g $1 -l $2 failed"
	finish
}

# hackbench_round RUN: hackbench_run once at each GROUPSxLOOPS of
# kit.hackbench= (bench_needs it first), each time a line for the host:
#   SCRIPT: hackbench groups=G loops=L run=RUN seconds=S
hackbench_round() {
	for config in $(hackbench_configs); do
		groups=${config%x*} loops=${config#*x}
		hackbench_run "$groups" "$loops"
		say "hackbench groups=$groups loops=$loops run=$1" \
			"seconds=$(awk '/^Time:/ { print $2 }' /tmp/hackbench.out)"
	done
}

# complaints: the kernel's complaints so far, the lines of its log that
# say BUG, WARNING or Oops; status 1 if there are none.
complaints() {
	dmesg | grep -wE 'BUG|WARNING|Oops'
}

# queue_limits: set fits and max, the longest cpu queue that fits in a
# per-CPU area and the longest queue, as the kernel said at boot
# (/kit/run/queue-limits; stages with resizable queues).  On a kernel that
# did not say, the verdict will be FAILED, and the status is 1.
queue_limits() {
	# shellcheck disable=SC2046 # two numbers, or none
	set -- $(/kit/run/queue-limits)
	fits=${1:-} max=${2:-}
	if [ -z "$max" ]; then
		fail "the kernel did not say how long a queue may be"
		return 1
	fi
}

# shellcheck shell=bash
# tests/lib/boots.sh, sourced by tests/run.sh: booting the stage kernels:
# guest scripts, checkers shown able to fail, the gdb helpers on a vmlinux,
# make lab and make boot, a class's shared kit.

# boot_run STAGE SCRIPT [KERNEL ARGS]: boot_console, and fail unless the
# console passes (console_passed, scripts/console.sh).
boot_run() {
	local console
	console=$(boot_console "$@")
	console_passed "$console" "$1" "$2"
}

# proof_run STAGE: boot the stage's proof kernel (config/variants/proof.config:
# lockdep, sleeping-in-atomic checks, KASAN, two NUMA nodes) with the guest
# script proof, as boot_run does.
proof_run() {
	KIT_VARIANT=proof boot_run "$1" proof
}

# boot_fails STAGE SCRIPT ARGS PATTERN: the boot with the fault that ARGS
# plants shows PATTERN on its console, and SCRIPT's verdict is FAILED.
boot_fails() {
	local console
	console=$(boot_console "$1" "$2" "$3")
	grep -E "^(BUG: KASAN|(slubq_)?torture: |$2: FAILED)" "$console" || true
	grep -q -- "$4" "$console" && [[ $(verdict "$console" "$2") == FAILED:* ]]
}

# The proof boot can fail: KASAN reports a use after free that the torture
# module plants, one the module's own checks cannot see.
kasan_catches_use_after_free() {
	KIT_VARIANT=proof boot_fails "$1" proof kit.torture=inject_use_after_free=1 \
		'^BUG: KASAN: use-after-free in slubq_torture'
}

# The torture test can fail: it catches an object it did not leave as it was.
torture_catches_corruption() {
	boot_fails "$1" torture kit.torture=inject_fault=1 \
		'^slubq_torture: FAILED: 1 corrupt object'
}

# The torture test can fail: it catches an object of another node than the
# one it wanted (planted with two nodes with memory, numa=fake=2).
torture_catches_off_node() {
	boot_fails "$1" torture "kit.torture=inject_off_node=1 numa=fake=2" \
		'^slubq_torture: FAILED: 1 object(s) of another node than the one asked for'
}

# slabinfo's check can fail: a count that stays wrong in every listing
# (planted by guest/run/slabinfo-tool itself) fails it.
slabinfo_catches_miscount() {
	boot_fails "$1" slabinfo-tool kit.slabinfo_miscount=kmalloc-64 \
		'^slabinfo-tool: FAILED: each of 5 listings in a row found something; the last: .*kmalloc-64: Slabs/Part/Cpu 1/9/[0-9]'
}

# helpers_load STAGE: the gdb helpers load on the stage's vmlinux with the
# kernel's own gdb scripts (as make gdb loads them), and each helper runs
# once, as tests/helper-uses.txt uses it.  No kernel runs: a helper may
# find no registers or memory there, or say what it cannot do on that
# stage, but any other Python exception (a field the stage's types lack,
# say) is a bug of the helper.
helpers_load() {
	local dir name command
	local -a args=()
	local -A use=()
	while IFS=$'\t' read -r name command; do
		command=${command//CACHE/kmalloc_caches[0][6]}
		use[$name]=${command//OBJECT/0xffff888000100000}
	done < <(grep -v '^#' tests/helper-uses.txt)
	while IFS= read -r name; do
		[ -n "${use[$name]:-}" ] || { echo "tests/helper-uses.txt does not use $name: add it"; return 1; }
		args+=(-ex "echo == $name\n" -ex "${use[$name]}")
	done < <(sed -n 's/^    name = "\(kit[-_a-z]*\)"$/\1/p' gdb/slubq.py)
	dir=$(realpath "$KIT_BUILD/$1")
	(cd "$dir" && gdb -q -nx -batch -iex "add-auto-load-safe-path $dir" \
		-ex "python import sys; sys.path.insert(0, '$KIT_ROOT/gdb'); import slubq" \
		"${args[@]}" vmlinux) >"$out/helpers" 2>&1 || true
	cat "$out/helpers"
	[ "$(grep -c '^== ' "$out/helpers")" -eq "${#use[@]}" ] || { echo "not every helper ran"; return 1; }
	! grep -E '^Traceback|Undefined command|Invalid data type' "$out/helpers" &&
		! grep -P "^Python Exception <class '(?!gdb\.MemoryError'|gdb\.error'>: No registers\.$)" \
			"$out/helpers"
}

# make lab: QEMU halted at the reset vector, gdb attached and taking commands.
lab_reaches_prompt() {
	printf 'info registers rip\nquit\n' | scripts/lab.sh "$1" >"$out/lab" 2>&1
	cat "$out/lab"
	grep -qE '\(gdb\) rip +0xfff0 ' "$out/lab"
}

port_in_use() {
	local port=$(($(kit_gdb_port) + 1)) pid rc=0
	python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(); time.sleep(30)' "$port" &
	pid=$!
	sleep 1
	fails_with "gdb port $port is in use" env GDB_PORT="$port" scripts/qemu.sh "$1" || rc=$?
	kill "$pid"
	return "$rc"
}

# page_mode_stages: the stages that the handouts and answers boot with
# percpu_alloc=page (make lab STAGE=N APPEND=percpu_alloc=page), one a line.
page_mode_stages() {
	cat labs/*/README.md solutions/*.md |
		sed -nE 's/.*make (lab|boot) STAGE=([0-9]+) APPEND=percpu_alloc=page.*/\2/p' | sort -un
}

# percpu_early_size STAGE: PERCPU_DYNAMIC_EARLY_SIZE in the stage's kernel,
# in bytes: the stage patch's, or else the pristine tree's.
percpu_early_size() {
	local def
	def=$(sed -n 's/^+#define PERCPU_DYNAMIC_EARLY_SIZE//p' "stages/$1/stage.patch")
	[ -n "$def" ] || def=$(git -C "$KIT_KERNEL_TREE" show pristine:include/linux/percpu.h |
		sed -n 's/^#define PERCPU_DYNAMIC_EARLY_SIZE//p')
	[[ $def =~ \(([0-9]+)\ \<\<\ 10\) ]] || { echo "cannot read PERCPU_DYNAMIC_EARLY_SIZE: $def" >&2; return 1; }
	echo $((BASH_REMATCH[1] << 10))
}

# page_first_chunk STAGE: with percpu_alloc=page (labs 01 and 02), the
# kernel boots, its SLUB boot caches included, and the first chunk is
# whole pages: static, reserved and dynamic sizes add up to its pages, and
# the dynamic area is PERCPU_DYNAMIC_EARLY_SIZE plus less than a page.
page_first_chunk() {
	local stage=$1 console floor pages static reserved dyn
	floor=$(percpu_early_size "$stage")
	console=$(boot_console "$stage" smoke percpu_alloc=page)
	console_passed "$console" "$stage" smoke
	grep 'percpu: ' "$console"
	read -r pages static reserved dyn < <(sed -nE \
		's/.*percpu: ([0-9]+) 4K pages\/cpu s([0-9]+) r([0-9]+) d([0-9]+)$/\1 \2 \3 \4/p' "$console") ||
		{ echo "no line \"percpu: N 4K pages/cpu ...\": not in page mode"; return 1; }
	[ $((pages * 4096)) -eq $((static + reserved + dyn)) ] ||
		{ echo "$pages pages are not s + r + d = $((static + reserved + dyn)) bytes"; return 1; }
	if [ "$dyn" -lt "$floor" ] || [ "$dyn" -ge $((floor + 4096)) ]; then
		echo "d$dyn is not PERCPU_DYNAMIC_EARLY_SIZE ($floor) plus less than a page"
		return 1
	fi
	echo "$pages pages a CPU; the dynamic area: $floor bytes and $((dyn - floor)) of rounding"
}

# The two-terminal flow of labs 04 and 07-10, as a handout that the
# handout runner types (scripts/handout.py, on
# tests/fixtures/handouts/two-terminals.md): make boot gives a shell on the
# serial console; make gdb attaches to that running kernel and breaks
# where a command typed in the guest while gdb waits leads; gdb detaches,
# the guest goes on and powers off at exit.  While it runs, make gdb of
# another stage and a second boot say which guest runs.
two_terminals() {
	local stage=$1 other=$2 port number=${1%%-*}
	port=$(kit_gdb_port)
	scripts/handout.py run "$(handout_fixture two-terminals STAGE="$number" OTHER="$other" PORT="$port")" \
		"$out/two-terminals.log"
	cat "$out/two-terminals.log"
	grep -qF 'Breakpoint 1, get_slabinfo ' "$out/two-terminals.log" ||
		{ echo "gdb did not stop in get_slabinfo"; return 1; }
	grep -qE '[$]1 = 0x[0-9a-f]+ "[a-z]' "$out/two-terminals.log" || { echo "gdb printed no cache name"; return 1; }
	grep -qF '[Inferior 1 (process 1) detached]' "$out/two-terminals.log" || { echo "gdb did not detach"; return 1; }
	# $((6*7)) tells what the guest's shell ran from the terminal's echo.
	tr -d '\r' <"$out/two-terminals.log.console" | grep -x 'done-42' >/dev/null ||
		{ echo "the guest did not go on after gdb detached"; tail -n 5 "$out/two-terminals.log.console"; return 1; }
	fails_with "no QEMU gdb stub on port $port" make --no-print-directory gdb STAGE="$number"
}

# shared_class STAGE: a class on one host.  make share makes the suite's
# work directory a shared kit with STAGE; then two students, each with a
# HOME and a gdb port of their own, work from it at the same time with
# KIT_SHARED: one types the lab's handout (make walkthrough), the other
# debugs (make lab, a breakpoint, gdb's source).  Both pass, neither builds
# anything, nothing shared changes, and gdb reads the stage's source from
# the shared copy, whatever the instructor's tree holds next.
shared_class() {
	local stage=$1 port rc=0 work changed file pid1 pid2
	local -a counts
	scripts/share.sh "$stage"
	# The shared copy has the files the stage's patch changes, as patched.
	git -C "$KIT_KERNEL_TREE" diff --name-only pristine >"$out/changed"
	while IFS= read -r file; do
		cmp "$KIT_KERNEL_TREE/$file" "$KIT_WORK/source/$stage/$file" || return 1
	done <"$out/changed"
	touch "$out/shared.stamp"
	port=$(kit_gdb_port)
	read -ra counts < <(handout_counts "$stage")
	mkdir -p "$out/student1" "$out/student2"
	student() {
		env -u KIT_WORK -u XDG_CACHE_HOME -u CCACHE_DIR HOME="$out/student$1" \
			KIT_SHARED="$KIT_WORK" GDB_PORT=$((port + 100 + $1)) "${@:2}" >"$out/student$1.log" 2>&1
	}
	student 1 scripts/walkthrough.sh "$stage" &
	pid1=$!
	student 2 scripts/handout.py run "$(handout_fixture student-debugs STAGE="${stage%%-*}")" "$out/debug.log" &
	pid2=$!
	wait "$pid1" || { echo "student 1, make walkthrough:"; tail -n 25 "$out/student1.log"; rc=1; }
	wait "$pid2" || { echo "student 2, make lab:"; cat "$out/student2.log" "$out/debug.log"; rc=1; }
	[ "$rc" -eq 0 ] || return 1
	work=$out/student1/.cache/slubq-kit
	matches_all "labs/$stage/walkthrough.expect" "$work/logs/$stage/walkthrough.txt"
	grep -qx "handout steps executed: ${counts[0]} of ${counts[1]}" "$work/logs/$stage/walkthrough.txt" ||
		{ echo "student 1's transcript does not end with all the handout's steps run"; return 1; }
	cat "$out/debug.log"
	grep -qx "Located in $KIT_WORK/source/$stage/mm/slub.c" "$out/debug.log" ||
		{ echo "student 2's gdb did not read the shared copy of the stage's mm/slub.c"; return 1; }
	for work in "$out"/student[12]/.cache/slubq-kit; do
		if [ -e "$work/linux" ] || [ -e "$work/build" ]; then
			echo "a student unpacked or built a kernel: $(ls "$work")"
			return 1
		fi
	done
	changed=$(find "$KIT_WORK/build" "$KIT_WORK/build/$(readlink "$KIT_BUILD/$stage")/" \
		"$KIT_WORK/source" "$KIT_WORK/kit-shared" "$KIT_KERNEL_TREE/scripts/gdb" \
		-maxdepth 1 -newer "$out/shared.stamp" -print -quit)
	[ -z "$changed" ] || { echo "a student changed the shared kit: $changed"; return 1; }
}

# initramfs_holds STAGE: the stage's initramfs (scripts/initramfs.sh) holds a
# /dev/console for init, init, every guest script and their library, the
# kit's modules and the stage's slabinfo, all root's, made without root.
initramfs_holds() {
	local archive want
	archive=$(scripts/initramfs.sh "$1")
	echo "$archive"
	cpio -itv --quiet <"$archive" >"$out/cpio" 2>&1
	grep -E 'console|init$|kit/|modules/kit/|slabinfo' "$out/cpio"
	grep -qE '^crw------- +1 root +root +5, +1 .* dev/console$' "$out/cpio" ||
		{ echo "no /dev/console, a character device 5,1 of root's"; return 1; }
	local -a wants=(init kit/lib.sh usr/bin/slabinfo usr/bin/hackbench bin/busybox)
	for want in guest/run/*; do wants+=("kit/run/${want##*/}"); done
	for want in modules/*/Kbuild; do
		want=${want%/Kbuild}
		wants+=("lib/modules/kit/${want##*/}.ko")
	done
	for want in "${wants[@]}"; do
		grep -qE " $want\$" "$out/cpio" || { echo "no $want"; return 1; }
	done
	! grep -vE '^[-dc]r[-w][-x][-r][-w-][-x][-r][-w-][-x] +[0-9]+ root +root ' "$out/cpio" ||
		{ echo "an entry above is not root's"; return 1; }
}

# QEMU that exits at once (here: an accelerator it does not know) is
# reported by make lab in QEMU's own words.
qemu_failure_reported() {
	fails_with "QEMU did not start:" env KIT_ACCEL=kit-no-such-accel scripts/lab.sh "$1" </dev/null
	grep -qF kit-no-such-accel "$out/fail" || { echo "QEMU's own error is not shown"; return 1; }
}

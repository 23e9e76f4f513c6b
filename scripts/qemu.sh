#!/usr/bin/env bash
# qemu.sh [--halted] [--run SCRIPT] [--append ARGS] [--cpus N] [--memory MIB]
#         [--icount] STAGE
# Boot the stage's kernel with its initramfs (scripts/initramfs.sh) under QEMU,
# serial console on standard input and output, gdb stub on the user's port.
#   --halted       stop at the first instruction until gdb says continue
#   --run SCRIPT   have the guest's init run /kit/run/SCRIPT, then power off
#   --append ARGS  more kernel command line (for example slub_debug=FZPU)
#   --cpus N       N CPUs (default 2)
#   --memory MIB   MIB MiB of memory (default 512)
#   --icount       deterministic virtual time: the guest's clock counts the
#                  instructions it ran, a nanosecond each (-icount shift=0),
#                  and its idle time passes at once (sleep=off); one host
#                  thread runs all its CPUs
# QEMU uses TCG unless KIT_ACCEL names another accelerator: KVM does not
# work on the machines the kit was made on.  KIT_APPEND (make's APPEND=)
# adds kernel parameters too.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

halt=() icount=() run='' append=${KIT_APPEND:+ $KIT_APPEND} cpus=2 memory=512
while [ $# -gt 0 ]; do
	case "$1" in
	--halted) halt=(-S) ;;
	--run) run=${2:?--run needs a script name}; shift ;;
	--append) append+=" ${2:?--append needs arguments}"; shift ;;
	--cpus) cpus=${2:?--cpus needs a number}; shift ;;
	--memory) memory=${2:?--memory needs a size in MiB}; shift ;;
	--icount) icount=(-icount 'shift=0,sleep=off') ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
stage=$(stage_resolve "${1:-}")
out=$KIT_BUILD/$(stage_label "$stage")
[ -f "$out/arch/x86/boot/bzImage" ] || die "stage $stage is not built; run: make build STAGE=$stage"
initramfs=$("$KIT_ROOT/scripts/initramfs.sh" "$stage")

port=$(kit_gdb_port)
if port_listening "$port"; then
	running=$(guest_on_port "$port")
	[ -z "$running" ] ||
		die "gdb port $port is in use by a guest of yours," \
			"$(build_settings "$running");" \
			"end it (exit in its shell, or Ctrl-A X in its console), or pick another port: make ... GDB_PORT=N"
	die "gdb port $port is in use (another QEMU of yours still running?);" \
		"stop it, or pick another port: make ... GDB_PORT=N"
fi

cmdline="console=ttyS0 nokaslr panic=-1 kit.stage=$stage"
[ -n "$run" ] && cmdline+=" kit.run=$run"
cmdline+=$append

# A socket per CPU: the kernel has no ACPI, and SeaBIOS's MP table lists
# one CPU per socket, so "-smp 2" alone (two cores) boots with one.
exec qemu-system-x86_64 \
	-accel "${KIT_ACCEL:-tcg}" "${icount[@]}" \
	-smp "$cpus,sockets=$cpus,cores=1,threads=1" -m "$memory" \
	-kernel "$out/arch/x86/boot/bzImage" -initrd "$initramfs" \
	-append "$cmdline" \
	-nographic -no-reboot \
	-gdb "tcp:127.0.0.1:$port" "${halt[@]}"

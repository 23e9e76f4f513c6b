#!/usr/bin/env bash
# qemu.sh [--halted] [--run SCRIPT] [--append ARGS] STAGE
# Boot the stage's kernel with its initramfs (scripts/initramfs.sh) under QEMU,
# serial console on standard input and output, gdb stub on the user's port.
#   --halted       stop at the first instruction until gdb says continue
#   --run SCRIPT   have the guest's init run /kit/run/SCRIPT, then power off
#   --append ARGS  more kernel command line (for example slub_debug=FZPU)
# QEMU uses TCG unless KIT_ACCEL names another accelerator: KVM does not
# work on the machines the kit was made on.  KIT_APPEND (make's APPEND=)
# adds kernel parameters too.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

halt=() run='' append=${KIT_APPEND:+ $KIT_APPEND}
while [ $# -gt 0 ]; do
	case "$1" in
	--halted) halt=(-S) ;;
	--run) run=${2:?--run needs a script name}; shift ;;
	--append) append+=" ${2:?--append needs arguments}"; shift ;;
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

# A kernel built with NUMA (the proof variant) makes itself two nodes
# (vm/config/variants/proof.config).
if grep -q '^CONFIG_NUMA_EMU=y' "$out/.config"; then
	cmdline+=" numa=fake=2"
fi

# Two sockets of one core: the kernel has no ACPI, and SeaBIOS's MP table
# lists one CPU per socket, so "-smp 2" alone (two cores) boots with one.
exec qemu-system-x86_64 \
	-accel "${KIT_ACCEL:-tcg}" -smp 2,sockets=2,cores=1,threads=1 -m 512 \
	-kernel "$out/arch/x86/boot/bzImage" -initrd "$initramfs" \
	-append "$cmdline" \
	-nographic -no-reboot \
	-gdb "tcp:127.0.0.1:$port" "${halt[@]}"

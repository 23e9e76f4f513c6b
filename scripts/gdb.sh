#!/usr/bin/env bash
# gdb.sh STAGE [GDB-ARGS...]: gdb on the stage's vmlinux with the kernel's
# lx- scripts and the kit's helpers (gdb/slubq.py) loaded, connected to
# the QEMU gdb stub on the user's port.  GDB-ARGS go to gdb as they are.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
shift || true
out=$KIT_BUILD/$(stage_label "$stage")
port=$(kit_gdb_port)

# gdb reads the guest's memory by this vmlinux's symbols: attached to
# another build's kernel it shows wrong values, not an error.  Stages
# that share a kernel share its build folder (a link to it).
running=$(guest_on_port "$port")
if [ -n "$running" ] && [ "$(realpath -m "$running")" != "$(realpath -m "$out")" ]; then
	theirs=$(build_settings "$running")
	ours=$(build_settings "$out")
	die "the guest on port $port runs another kernel ($theirs) than the one asked for ($ours);" \
		"attach to it with: make gdb $theirs, or end it (exit in its shell) and run: make boot $ours"
fi
[ -f "$out/vmlinux" ] || die "stage $stage is not built; run: make build STAGE=$stage"
out=$(realpath "$out")
port_listening "$port" ||
	die "no QEMU gdb stub on port $port; start one with: make boot STAGE=$stage (or use make lab)"

# The student's kernel is built from the kit's tree with the student's
# files copied over it (scripts/build-kernel.sh): gdb shows the student's tree,
# where they are, whatever stage the kit's tree holds by now.
# A class's shared kit keeps each stage's source apart (make share): gdb
# shows the stage's, whatever stage the instructor's tree holds.
# Every object names its build folder /kit-build (scripts/compiler/ccache-gcc):
# the generated headers are in this one.
source_args=(-iex "set substitute-path /kit-build $out")
if [ "$KIT_TREE" = exercise ]; then
	source_args+=(-iex "set substitute-path $KIT_KERNEL_TREE $(exercise_tree "$stage")")
elif shared_build; then
	source_args+=(-iex "set substitute-path $(shared_tree) $(shared_source "$stage")")
fi

# Where kit-draw puts its pictures: with the stage's logs.
KIT_PICTURES=$KIT_LOGS/$(stage_label "$stage")/pictures
export KIT_PICTURES

# -nx: the kit's commands must not depend on a personal ~/.gdbinit.  The
# kit's commands are a module (slubq), on the readers of kernel memory
# (readers) that the grader's checks import too.  The
# frame gdb shows when it attaches to a running kernel is a caller's, whose
# arguments -O2 did not keep: frame lines without arguments, from the start.
exec gdb -q -nx \
	-iex "set pagination off" \
	-iex "set confirm off" \
	-iex "set print frame-arguments none" \
	-iex "add-auto-load-safe-path $out" \
	"${source_args[@]}" \
	-ex "python import sys; sys.path.insert(0, '$KIT_ROOT/gdb'); import slubq" \
	-ex "target remote 127.0.0.1:$port" \
	"$@" "$out/vmlinux"

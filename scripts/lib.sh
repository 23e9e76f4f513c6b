# shellcheck shell=bash disable=SC2034
# Shared definitions for the kit's scripts: where things live, how a stage is
# named, and how a long step reports itself.  Sourced, never run.

KIT_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KIT_WORK=${KIT_WORK:-${XDG_CACHE_HOME:-$HOME/.cache}/slubq-kit}
LINUX_TARBALL=${LINUX_TARBALL:-/usr/src/linux-source-6.1.tar.xz}
# The kernel tree of the stages: a git repository whose first commit, tagged
# "pristine", is the packaged source.  Each stage builds in its own O=
# folder.  A variant's kernels build from a worktree of it of their own
# (KIT_KERNEL_TREE, set below).
KIT_STAGE_TREE=$KIT_WORK/linux
KIT_KERNEL_TREE=$KIT_STAGE_TREE
KIT_BUILD=$KIT_WORK/build
KIT_LOGS=$KIT_WORK/logs
export CCACHE_DIR=${CCACHE_DIR:-$KIT_WORK/ccache}
# Each stage builds in its own O= folder; without this, ccache would hash
# that folder into every object with debug info and share nothing between
# stages.  Sources are named by absolute path, and the folder itself as
# /kit-build in every object (scripts/compiler/ccache-gcc), so an object from
# the cache records no other stage's folder.
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
# Every kernel build's compiler is ccache-gcc (scripts/compiler/ccache-gcc:
# which of ccache's modes compiles which file), named without its folder:
# kbuild saves each command line, and two checkouts of the kit that share a
# work directory would otherwise recompile each other's every file.
PATH=$KIT_ROOT/scripts/compiler:$PATH

die() {
	printf 'error: %s\n' "$*" >&2
	exit 1
}

note() {
	printf '%s\n' "$*" >&2
}

# package_names LIST...: the packages of Debian package lists (one a line,
# # comments); the kit's own when no list is named.
package_names() {
	[ $# -gt 0 ] || set -- "$KIT_ROOT/scripts/packages.txt"
	cat "$@" | grep -v -e '^#' -e '^$'
}

# The Debian version of linux-source-6.1 the stage patches were made against.
kit_recorded_version() {
	cat "$KIT_ROOT/scripts/linux-source.version"
}

# All stage folder names (NN-name), in order.
kit_stages() {
	local d
	for d in "$KIT_ROOT"/stages/[0-9][0-9]-*/; do
		[ -d "$d" ] && basename "$d"
	done
}

# stage_resolve SPEC: print the folder name of the stage that SPEC names.
# SPEC may be a number (0, 00, 7), a full name (07-queues) or empty (last).
stage_resolve() {
	local spec=${1:-} s all
	all=$(kit_stages)
	[ -n "$all" ] || die "no stages found under $KIT_ROOT/stages"
	if [ -z "$spec" ]; then
		printf '%s\n' "$all" | tail -n 1
		return
	fi
	for s in $all; do
		if [ "$spec" = "$s" ] ||
			{ [[ $spec =~ ^[0-9]+$ ]] && [ "$((10#$spec))" -eq "$((10#${s%%-*}))" ]; }; then
			printf '%s\n' "$s"
			return
		fi
	done
	die "unknown STAGE '$spec'; valid stages: $(printf '%s\n' "$all" | paste -sd ' ')"
}

# KIT_VARIANT names another configuration of the stage kernels: the config
# fragment config/variants/$KIT_VARIANT.config, merged last.  make test builds
# the variant "proof" (lockdep, KASAN, two NUMA nodes) of some stages.
KIT_VARIANT=${KIT_VARIANT:-}

# kit_variants: the variants, one a line, the default ("") first.
kit_variants() {
	local f
	echo
	for f in "$KIT_ROOT"/config/variants/*.config; do
		[ -f "$f" ] && basename "$f" .config
	done
}

# (Not grep -q: it stops reading at the first match, and under pipefail the
# writer's SIGPIPE would fail the pipeline.)
if [ -n "$KIT_VARIANT" ] && ! kit_variants | grep -xF -- "$KIT_VARIANT" >/dev/null; then
	printf "error: unknown KIT_VARIANT '%s'; variants:%s\n" "$KIT_VARIANT" \
		"$(kit_variants | paste -sd ' ')" >&2
	exit 1
fi
# A variant's tree, so that building it never moves the stages' tree to
# another stage: make bench builds stages 00 and 10, and a lab's tree at
# stage 07 would then have its slub_def.h rewritten twice, which recompiles
# most of the lab's kernel.  A variant's build neither waits for a stage's.
[ -z "$KIT_VARIANT" ] || KIT_KERNEL_TREE=$KIT_STAGE_TREE+$KIT_VARIANT

# tree_git_dir: the git folder of KIT_KERNEL_TREE's worktree, where the kit keeps
# what the tree holds (scripts/unpack-source.sh, scripts/prepare-stage.sh).
tree_git_dir() {
	git -C "$KIT_KERNEL_TREE" rev-parse --absolute-git-dir
}

# lock_tree: wait for, then hold until the script ends, the lock of
# KIT_KERNEL_TREE: one build at a time from a tree, since each first brings the
# tree to its stage.
lock_tree() {
	mkdir -p "$KIT_WORK"
	exec 9>"$KIT_KERNEL_TREE.lock"
	flock -n 9 || { note "waiting for another build from $KIT_KERNEL_TREE to finish"; flock 9; }
}

# variant_fragments VARIANT: the variant's config fragment, after those of
# the variant it names on a line "# base: NAME", if it names one.
variant_fragments() {
	local f=$KIT_ROOT/config/variants/$1.config base
	base=$(sed -n 's/^# base: //p' "$f")
	[ -z "$base" ] || variant_fragments "$base"
	printf '%s\n' "$f"
}

# stage_fragments STAGE: the config fragments of the stage's kernel, in the
# order they are merged: the kit's, the stage's own, the variant's.
stage_fragments() {
	local f
	for f in "$KIT_ROOT/config/kit.config" "$KIT_ROOT/stages/$1/kit.config"; do
		if [ -f "$f" ]; then printf '%s\n' "$f"; fi
	done
	[ -z "$KIT_VARIANT" ] || variant_fragments "$KIT_VARIANT"
}

# stage_has STAGE FEATURE: whether the stage's allocator has FEATURE, a
# word of stages/STAGE/features, a word a line (make test checks each
# against the stage's patch; a stage of stock SLUB lists none):
#   cpu-queues        SLUB+Q's per-CPU queues of object pointers and its
#                     slabs' free-object bitmaps
#   resizable-queues  cpu_queue_size and cpu_batch_size can be written
#   big-slabs         no limit of 32767 objects per slab
#   sheaves           the per-CPU layer is sheaves and barns (stage 11),
#                     not one queue a CPU
stage_has() {
	grep -qx -- "$2" "$KIT_ROOT/stages/$1/features"
}

# stages_with FEATURE [WITHOUT]: the stages that have FEATURE (and not
# WITHOUT), in order, one a line.
stages_with() {
	local stage
	for stage in $(kit_stages); do
		if stage_has "$stage" "$1" && { [ -z "${2:-}" ] || ! stage_has "$stage" "$2"; }; then
			echo "$stage"
		fi
	done
}

# last_queue_stage: the last stage of the 2010 design, whose per-CPU
# layer is one queue a CPU (stage 10); stage 11's sheaves replace it.
# make bench's SLUB+Q and make irqsoff's default.
last_queue_stage() {
	stages_with cpu-queues sheaves | tail -n 1
}

# KIT_TREE (make's TREE=) says whose source a kernel is built from: the
# stage's own (empty, the default), or "exercise", the student's tree of
# that lab (grading/exercise.sh), built from the kit's tree with the files the
# student changed copied over it (scripts/build-kernel.sh).
KIT_TREE=${KIT_TREE:-}
case "$KIT_TREE" in
'' | exercise) ;;
*) die "unknown TREE '$KIT_TREE'; leave it out (the stage's source) or say TREE=exercise" ;;
esac
# Where make exercise puts the students' trees, one per lab.
KIT_EXERCISES=${KIT_EXERCISES:-$KIT_WORK/exercises}

# KIT_SHARED names a class's shared kit: a work directory in which an
# instructor built every stage (make share), for the students on the same
# host.  The stages' kernels and their sources are then read
# from there and never built; logs, answers and a student's own kernels
# (TREE=exercise, a VARIANT, built in KIT_WORK) stay the student's.
KIT_SHARED=${KIT_SHARED:-}
if [ -n "$KIT_SHARED" ]; then
	[ -r "$KIT_SHARED/kit-shared" ] || [ ! -e "$KIT_SHARED/kit-shared" ] ||
		die "KIT_SHARED=$KIT_SHARED cannot be read by you; its owner makes it readable with: make share"
	[ -f "$KIT_SHARED/kit-shared" ] ||
		die "KIT_SHARED=$KIT_SHARED is not a class's shared kit (it has no kit-shared file);" \
			"an instructor makes one with: make share KIT_WORK=$KIT_SHARED"
	[ "$(realpath "$KIT_SHARED")" != "$(realpath -m "$KIT_WORK")" ] ||
		die "KIT_SHARED and KIT_WORK are the same folder, $KIT_WORK; a student's KIT_WORK is their own"
	if [ -z "$KIT_TREE" ] && [ -z "$KIT_VARIANT" ]; then
		KIT_BUILD=$KIT_SHARED/build
	fi
fi

# shared_build: whether the stages' kernels come from a class's shared kit.
shared_build() {
	[ -n "$KIT_SHARED" ] && [ "$KIT_BUILD" = "$KIT_SHARED/build" ]
}

# shared_tree: the path of the tree the shared kit's kernels were built
# from, which their debug information names (make share records it).
shared_tree() {
	sed -n 's/^tree //p' "$KIT_SHARED/kit-shared"
}

# shared_source STAGE: the stage's source as the shared kit keeps it.
shared_source() {
	printf '%s\n' "$KIT_SHARED/source/$1"
}

# exercise_tree STAGE: the student's tree of the stage's lab.
exercise_tree() {
	printf '%s\n' "$KIT_EXERCISES/$1"
}

# exercise_ref STAGE [stage|skeleton]: the branch of the student's tree in
# the kit's kernel repository, or the ref of its first commit (the stage's
# source, the solution) or second (the skeleton).  Named for the folder of
# the trees, so that make test's trees never meet the student's.
exercise_ref() {
	local ns
	ns=$(basename "$KIT_EXERCISES")
	if [ -n "${2:-}" ]; then
		printf 'refs/%s/%s/%s\n' "$ns" "$1" "$2"
	else
		printf '%s/%s\n' "$ns" "$1"
	fi
}

# stage_label STAGE: the stage's name, with the variant and the source if
# they are not the default (07-cpu-queues+proof, 07-cpu-queues+exercise):
# what its build folder and logs are named.
stage_label() {
	printf '%s\n' "$1${KIT_VARIANT:++$KIT_VARIANT}${KIT_TREE:++$KIT_TREE}"
}

# stage_key STAGE: a digest of what the stage's kernel is built from, its
# cumulative patch and config fragments.  Stages with equal keys (a stage
# that changes nothing in 6.1) share one build folder.
stage_key() {
	local f
	{
		cat "$KIT_ROOT/stages/$1/stage.patch"
		# How every object is compiled (what it records of its folder).
		cat "$KIT_ROOT/scripts/compiler/ccache-gcc"
		stage_fragments "$1" | while IFS= read -r f; do cat "$f"; done
	} | sha256sum | cut -c1-12
}

# run_logged LOG COMMAND...: run COMMAND with errexit in a subshell, its
# output in LOG, and leave its exit status in run_status.  Bash ignores
# errexit inside a condition, down into subshells and functions, so the
# status is not returned for the caller to test: a shell function given as
# COMMAND must stop at its first failing command, not only at its last.
run_logged() {
	local log=$1
	shift
	set +e
	(
		set -e
		"$@"
	) >"$log" 2>&1
	run_status=$?
	set -e
}

# How often a long step says how far it got: on a terminal a line
# rewritten every few seconds, elsewhere (a log) a line a minute.  With
# step_files set, a kernel build's line says of about how many files.
step_every=${step_every:-}
step_files=${step_files:-}

# step_progress LOG START: while a step runs, say how long it has run and,
# for a kernel build, how many files it has compiled (kbuild's CC and AS
# lines in LOG).
step_progress() {
	local log=$1 start=$2 every=${step_every:-60} files line nap=''
	[ ! -t 2 ] || every=${step_every:-3}
	# Its sleep must end with it: it would hold the build lock (fd 9) and
	# the caller's pipes open.
	trap 'kill "$nap" 2>/dev/null; exit 0' TERM
	while :; do
		sleep "$every" &
		nap=$!
		wait "$nap"
		files=$(grep -c '^  \(CC\|AS\) ' "$log" 2>/dev/null || true)
		line="    $(elapsed $((SECONDS - start)))"
		if [ "${files:-0}" -gt 0 ]; then
			line+=", $files files compiled${step_files:+ of about $step_files}"
		fi
		if [ -t 2 ]; then
			printf '\r%s\033[K' "$line" >&2
		else
			printf '%s\n' "$line" >&2
		fi
	done
}

# step LOG DESCRIPTION COMMAND...: run COMMAND with its output in LOG, and
# show one line when it starts and one when it ends, with the elapsed time,
# and how far it got while it runs (step_progress).
step() {
	local log=$1 what=$2 start rc ticker
	shift 2
	mkdir -p "$(dirname "$log")"
	printf '==> %s (log: %s)\n' "$what" "$log" >&2
	start=$SECONDS
	: >"$log"
	step_progress "$log" "$start" &
	ticker=$!
	run_logged "$log" "$@"
	rc=$run_status
	kill "$ticker" 2>/dev/null || true
	wait "$ticker" 2>/dev/null || true
	[ ! -t 2 ] || printf '\r\033[K' >&2
	if [ "$rc" -eq 0 ]; then
		printf '    done in %s\n' "$(elapsed $((SECONDS - start)))" >&2
	else
		printf '    FAILED after %s; last lines of %s:\n' \
			"$(elapsed $((SECONDS - start)))" "$log" >&2
		tail -n 25 "$log" | sed 's/^/    | /' >&2
		return "$rc"
	fi
}

elapsed() {
	printf '%dm%02ds' "$(($1 / 60))" "$(($1 % 60))"
}

# kernel_banner IMAGE: the kernel's banner ("Linux version ... #N SMP
# DATE") in an uncompressed kernel image, as the kernel prints it at boot.
kernel_banner() {
	LC_ALL=C grep -a -o -m 1 'Linux version [ -~]* #[0-9][ -~]*' "$1" | head -n 1
}

# bzimage_holds BZIMAGE VMLINUX: the kernel that BZIMAGE boots is VMLINUX,
# the one gdb reads: their banners, which name the build's number and
# time, are the same.  The tree's own scripts/extract-vmlinux unpacks it.
bzimage_holds() {
	local booted built
	booted=$("$KIT_KERNEL_TREE/scripts/extract-vmlinux" "$1" | kernel_banner /dev/stdin) || true
	built=$(kernel_banner "$2") || true
	[ -n "$built" ] || { echo "no kernel banner in $2"; return 1; }
	[ "$booted" = "$built" ] || {
		printf '%s\n' "$1 does not hold the kernel of $2:" "  it boots: ${booted:-(no banner found)}" \
			"  gdb reads: $built"
		return 1
	}
}

# kernel_make OUT TARGET...: the kernel's make in the kit's tree, building
# into OUT, with the compiler and architecture every build and config uses.
kernel_make() {
	local out=$1
	shift
	make -C "$KIT_KERNEL_TREE" O="$out" ARCH=x86_64 CC=ccache-gcc "$@"
}

# port_listening PORT: whether something (a QEMU gdb stub) listens there.
port_listening() {
	(: <"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# build_settings BUILD: the make settings that name the build folder BUILD
# ($KIT_BUILD/LABEL, LABEL as stage_label makes it):
# 07-cpu-queues+proof+exercise gives "STAGE=07 VARIANT=proof TREE=exercise".
build_settings() {
	local label=${1##*/} part settings
	local -a parts=()
	settings="STAGE=${label%%-*}"
	case "$label" in *+*) IFS=+ read -ra parts <<<"${label#*+}" ;; esac
	for part in "${parts[@]}"; do
		if [ "$part" = exercise ]; then
			settings+=" TREE=exercise"
		else
			settings+=" VARIANT=$part"
		fi
	done
	printf '%s\n' "$settings"
}

# guest_on_port PORT: the build folder whose kernel the kit's QEMU with its
# gdb stub on PORT (qemu.sh's -gdb tcp:127.0.0.1:PORT), run by this user,
# booted, read from its command line in /proc; nothing if none runs.
guest_on_port() {
	local f i kernel gdb
	local -a args
	for f in /proc/[0-9]*/cmdline; do
		[ -O "$f" ] || continue
		mapfile -d '' -t args 2>/dev/null <"$f" || continue
		# A kernel thread's command line is empty.
		if [ "${#args[@]}" -eq 0 ] || [ "${args[0]##*/}" != qemu-system-x86_64 ]; then
			continue
		fi
		kernel='' gdb=''
		for ((i = 1; i < ${#args[@]} - 1; i++)); do
			case "${args[i]}" in
			-kernel) kernel=${args[i + 1]} ;;
			-gdb) gdb=${args[i + 1]} ;;
			esac
		done
		if [ "$gdb" = "tcp:127.0.0.1:$1" ] && [ -n "$kernel" ]; then
			printf '%s\n' "${kernel%/arch/x86/boot/bzImage}"
			return 0
		fi
	done
}

# The gdb stub's TCP port: one per user, so that two students on one host do
# not collide (as in MIT's xv6 labs).  GDB_PORT overrides it.
kit_gdb_port() {
	printf '%s\n' "${GDB_PORT:-$((20000 + $(id -u) % 10000))}"
}

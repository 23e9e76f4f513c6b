#!/usr/bin/env bash
# walkthrough.sh [--excerpts] STAGE: type the steps of the stage's lab
# handout (labs/STAGE/README.md) as a student would, with the kit's checks
# between them (scripts/handout.py), print the transcript and keep it in
# KIT_LOGS/STAGE/walkthrough.txt (gdb's side; the guest's console, when the
# handout boots one with make boot, in walkthrough.txt.console).
#   --excerpts   go on past the output excerpts that no longer match, and
#                print each with what the terminal printed instead, to
#                refresh the handout from (make excerpts)
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

mode=run
if [ "${1:-}" = --excerpts ]; then
	mode=excerpts
	shift
fi
stage=$(stage_resolve "${1:-}")
handout=$KIT_ROOT/labs/$stage/README.md
logs=$KIT_LOGS/$(stage_label "$stage")
mkdir -p "$logs"
transcript=$logs/walkthrough.txt
note "==> typing the steps of labs/$stage/README.md (transcript: $transcript)"
rc=0
"$KIT_ROOT/scripts/handout.py" "$mode" "$handout" "$transcript" || rc=$?
if [ "$mode" = excerpts ]; then
	if [ -s "$transcript.excerpts" ]; then
		cat "$transcript.excerpts"
		die "the excerpts above no longer match what the terminal printed; refresh them in" \
			"labs/$stage/README.md from what it printed, marking what varies (<n>, <0x>, <...>)"
	fi
	[ "$rc" -eq 0 ] || die "a step of labs/$stage/README.md failed; see $transcript"
	note "==> every excerpt of labs/$stage/README.md matches"
	exit 0
fi
cat "$transcript"
[ "$rc" -eq 0 ] || die "a step of labs/$stage/README.md failed (above); the guest's console: $transcript.console"

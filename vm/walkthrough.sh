#!/usr/bin/env bash
# walkthrough.sh STAGE: type the steps of the stage's lab handout
# (labs/STAGE/README.md) as a student would, with the kit's checks between
# them (vm/handout.py), print the transcript and keep it in
# KIT_LOGS/STAGE/walkthrough.txt (gdb's side; the guest's console, when the
# handout boots one with make boot, in walkthrough.txt.console).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

stage=$(stage_resolve "${1:-}")
handout=$KIT_ROOT/labs/$stage/README.md
logs=$KIT_LOGS/$(stage_label "$stage")
mkdir -p "$logs"
transcript=$logs/walkthrough.txt
note "==> typing the steps of labs/$stage/README.md (transcript: $transcript)"
rc=0
"$KIT_ROOT/vm/handout.py" run "$handout" "$transcript" || rc=$?
cat "$transcript"
[ "$rc" -eq 0 ] || die "a step of labs/$stage/README.md failed (above); the guest's console: $transcript.console"

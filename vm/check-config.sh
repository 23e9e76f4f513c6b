#!/usr/bin/env bash
# check-config.sh CONFIG FRAGMENT...: fail, naming each option, when an
# option that a FRAGMENT sets (or unsets) does not have that value in CONFIG.
# olddefconfig silently drops options whose dependencies are missing.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

[ $# -ge 2 ] || die "usage: check-config.sh CONFIG FRAGMENT..."
config=$1
shift

lost=$(awk '
	# Remember what the final .config says of each option.
	FNR == NR {
		if (match($0, /^CONFIG_[A-Za-z0-9_]+=/))
			have[substr($0, 1, RLENGTH - 1)] = substr($0, RLENGTH + 1)
		else if (match($0, /^# CONFIG_[A-Za-z0-9_]+ is not set$/))
			have[$2] = "n"
		next
	}
	# Then compare what the fragment asks for.
	/^CONFIG_[A-Za-z0-9_]+=/ {
		opt = $0; sub(/=.*/, "", opt); want = substr($0, length(opt) + 2)
	}
	/^# CONFIG_[A-Za-z0-9_]+ is not set$/ { opt = $2; want = "n" }
	opt != "" {
		got = (opt in have) ? have[opt] : "n"
		if (got != want)
			printf "%s (asked %s, got %s)\n", opt, want, got
		opt = ""
	}' "$config" "$@")

if [ -n "$lost" ]; then
	die "$config lacks options that $* ask for (a missing" \
		"dependency?):"$'\n'"$lost"
fi

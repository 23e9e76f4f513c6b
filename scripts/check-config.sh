#!/usr/bin/env bash
# check-config.sh CONFIG FRAGMENT...: fail, naming each option, when an
# option that the FRAGMENTs set (or unset; the last one to name an option
# has its way) does not have that value in CONFIG.
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
	# Then what the fragments ask for: a later one overrides an earlier
	# one, as in merge_config.sh.
	/^CONFIG_[A-Za-z0-9_]+=/ {
		opt = $0; sub(/=.*/, "", opt)
		if (!(opt in want)) order[++n] = opt
		want[opt] = substr($0, length(opt) + 2)
	}
	/^# CONFIG_[A-Za-z0-9_]+ is not set$/ {
		if (!($2 in want)) order[++n] = $2
		want[$2] = "n"
	}
	END {
		for (i = 1; i <= n; i++) {
			opt = order[i]
			got = (opt in have) ? have[opt] : "n"
			if (got != want[opt])
				printf "%s (asked %s, got %s)\n", opt, want[opt], got
		}
	}' "$config" "$@")

if [ -n "$lost" ]; then
	die "$config lacks options that $* ask for (a missing" \
		"dependency?):"$'\n'"$lost"
fi

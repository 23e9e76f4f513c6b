#!/usr/bin/env bash
# check-deps.sh [LIST...]: check that every package in the lists (default:
# scripts/packages.txt) is installed; name the missing ones and the command
# that installs them.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

mapfile -t wanted < <(package_names "$@")
# One dpkg-query for all: it names each package it knows with its status
# (and complains on standard error of those it does not).
installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${wanted[@]}" 2>/dev/null |
	awk '$2 == "installed" { print $1 }' || true)
missing=()
for pkg in "${wanted[@]}"; do
	grep -qxF -- "$pkg" <<<"$installed" || missing+=("$pkg")
done

if [ "${#missing[@]}" -gt 0 ]; then
	if [ $# -eq 0 ] || [ "$*" = "$KIT_ROOT/scripts/packages.txt" ]; then
		die "missing packages: ${missing[*]}; run: make deps"
	fi
	die "missing packages: ${missing[*]} (from $*); run: scripts/deps.sh $*"
fi

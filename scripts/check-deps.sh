#!/usr/bin/env bash
# Check that every package in scripts/packages.txt is installed; name the missing
# ones and the command that installs them.  KIT_PACKAGES overrides the list.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

list=${KIT_PACKAGES:-$KIT_ROOT/scripts/packages.txt}
mapfile -t wanted < <(grep -v -e '^#' -e '^$' "$list")
# One dpkg-query for all: it names each package it knows with its status
# (and complains on standard error of those it does not).
installed=$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${wanted[@]}" 2>/dev/null |
	awk '$2 == "installed" { print $1 }' || true)
missing=()
for pkg in "${wanted[@]}"; do
	grep -qxF -- "$pkg" <<<"$installed" || missing+=("$pkg")
done

if [ "${#missing[@]}" -gt 0 ]; then
	die "missing packages: ${missing[*]}; run: make deps"
fi

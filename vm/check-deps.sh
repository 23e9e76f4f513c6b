#!/usr/bin/env bash
# Check that every package in vm/packages.txt is installed; name the missing
# ones and the command that installs them.  KIT_PACKAGES overrides the list.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

list=${KIT_PACKAGES:-$KIT_ROOT/vm/packages.txt}
missing=()
while read -r pkg; do
	status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
	[ "$status" = installed ] || missing+=("$pkg")
done < <(grep -v -e '^#' -e '^$' "$list")

if [ "${#missing[@]}" -gt 0 ]; then
	die "missing packages: ${missing[*]}; run: make deps"
fi

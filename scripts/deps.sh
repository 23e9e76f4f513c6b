#!/usr/bin/env bash
# deps.sh [--quiet]: install the Debian packages in scripts/packages.txt.  Quick
# when all are there: apt-get only runs for what is missing.  --quiet: say
# nothing then (make build runs it first, so that a first make lab on a
# fresh machine installs what it needs).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

if "$KIT_ROOT/scripts/check-deps.sh" 2>/dev/null; then
	[ "${1:-}" = --quiet ] || note "all packages the kit needs are installed"
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || die "not root and no sudo: install the packages in scripts/packages.txt as root"
	sudo=(sudo)
fi
mapfile -t pkgs < <(grep -v -e '^#' -e '^$' "$KIT_ROOT/scripts/packages.txt")
export DEBIAN_FRONTEND=noninteractive
step "$KIT_LOGS/apt-update.log" "apt-get update" "${sudo[@]}" apt-get update
step "$KIT_LOGS/apt-install.log" "apt-get install ${#pkgs[@]} packages" \
	"${sudo[@]}" apt-get install -y --no-install-recommends "${pkgs[@]}"
"$KIT_ROOT/scripts/check-deps.sh"

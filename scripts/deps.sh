#!/usr/bin/env bash
# deps.sh [--quiet] [LIST...]: install the Debian packages in the lists
# (default: scripts/packages.txt; make test adds tests/packages.txt).  Quick
# when all are there: apt-get only runs for what is missing.  --quiet: say
# nothing then (make build runs it first, so that a first make lab on a
# fresh machine installs what it needs).
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

quiet=''
[ "${1:-}" != --quiet ] || { quiet=1; shift; }
if "$KIT_ROOT/scripts/check-deps.sh" "$@" 2>/dev/null; then
	[ -n "$quiet" ] || note "all packages the kit needs are installed"
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || die "not root and no sudo: install the packages in ${*:-scripts/packages.txt} as root"
	sudo=(sudo)
fi
mapfile -t pkgs < <(package_names "$@")
export DEBIAN_FRONTEND=noninteractive
step "$KIT_LOGS/apt-update.log" "apt-get update" "${sudo[@]}" apt-get update
step "$KIT_LOGS/apt-install.log" "apt-get install ${#pkgs[@]} packages" \
	"${sudo[@]}" apt-get install -y --no-install-recommends "${pkgs[@]}"
"$KIT_ROOT/scripts/check-deps.sh" "$@"

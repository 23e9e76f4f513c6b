#!/usr/bin/env bash
# clean.sh: remove the stage builds, the boot archives and the logs from the
# work directory, and what make share made of it.  The unpacked source and
# the ccache stay: they are what makes the next build quick.  A class's
# shared kit (KIT_SHARED) is never touched: only KIT_WORK is cleaned.
set -euo pipefail
# shellcheck source=lib.sh
. "$(dirname "$0")/lib.sh"

rm -rf "${KIT_WORK:?}/build" "$KIT_LOGS" "${KIT_WORK:?}/boot" \
	"${KIT_WORK:?}/source" "$KIT_WORK/kit-shared"
note "removed the builds and logs under $KIT_WORK"

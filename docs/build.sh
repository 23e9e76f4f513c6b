#!/usr/bin/env bash
# build.sh: render the kit's handouts (README, stage and lab READMEs, docs)
# to HTML with pandoc and the diagrams to SVG with graphviz, in docs/html.
set -euo pipefail
# shellcheck source=../vm/lib.sh
. "$(dirname "$0")/../vm/lib.sh"
cd "$KIT_ROOT"

html=docs/html
mkdir -p "$html"
for dot in diagrams/*.dot; do
	dot -Tsvg "$dot" -o "$html/$(basename "${dot%.dot}").svg"
done
for md in README.md docs/*.md stages/*/README.md labs/*/README.md solutions/*.md; do
	[ -f "$md" ] || continue
	name=$(printf '%s' "${md%.md}" | tr '/' '-')
	pandoc --standalone --shift-heading-level-by=-1 \
		--resource-path=".:$(dirname "$md")" -o "$html/$name.html" "$md"
done
note "==> documents in $KIT_ROOT/$html"

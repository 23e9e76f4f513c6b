#!/usr/bin/env bash
# build.sh: render the kit's handouts (README, stage and lab READMEs, docs)
# to HTML with pandoc and the diagrams to SVG with graphviz, in docs/html;
# with KIT_DOCS_EDITION=instructor (make docs EDITION=instructor), the
# answers in solutions/ too, in docs/html-instructor.
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
cd "$KIT_ROOT"

# Two editions: the students' (docs/html) has no answers; the
# instructors' (EDITION=instructor, docs/html-instructor) has solutions/.
edition=${KIT_DOCS_EDITION:-student}
sources=(README.md docs/*.md stages/*/README.md labs/*/README.md)
case "$edition" in
student) html=docs/html ;;
instructor) html=docs/html-instructor sources+=(solutions/*.md) ;;
*) die "unknown EDITION '$edition'; say EDITION=student (the default) or EDITION=instructor" ;;
esac
rm -rf "$html"
mkdir -p "$html"
for dot in diagrams/*.dot; do
	dot -Tsvg "$dot" -o "$html/$(basename "${dot%.dot}").svg"
done
for md in "${sources[@]}"; do
	[ -f "$md" ] || continue
	name=$(printf '%s' "${md%.md}" | tr '/' '-')
	pandoc --standalone --shift-heading-level-by=-1 --include-in-header=docs/blocks.html \
		--resource-path=".:$(dirname "$md")" -o "$html/$name.html" "$md"
done
note "==> the $edition edition in $KIT_ROOT/$html"

#!/usr/bin/env bash
# build.sh: render the kit's documents as one book, in docs/html: a
# contents page (index.html), then each chapter (a markdown file of the
# repository, rendered by pandoc to a page named after its path) with
# links to the contents and to the chapters before and after it; the
# diagrams rendered by graphviz to SVG beside them, with the committed
# benchmark run's plots (docs/*.svg).  With KIT_DOCS_EDITION=instructor
# (make docs EDITION=instructor) the book has the answers in solutions/
# too, in docs/html-instructor.  A warning of pandoc or graphviz fails the
# build.
set -euo pipefail
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
cd "$KIT_ROOT"

edition=${KIT_DOCS_EDITION:-student}
case "$edition" in
student) html=docs/html ;;
instructor) html=docs/html-instructor ;;
*) die "unknown EDITION '$edition'; say EDITION=student (the default) or EDITION=instructor" ;;
esac

# The book's parts and chapters, in reading order.
chapters=() parts=()
part() {
	local name=$1 md
	shift
	for md in "$@"; do
		[ -f "$md" ] || continue
		chapters+=("$md")
		parts+=("$name")
	done
}
part "The kit" README.md docs/story.md
part "The stages" stages/*/README.md
part "The labs" labs/*/README.md
part "Beyond the labs" docs/porting.md docs/errata.md docs/sheaves.md docs/benchmark.md
part "Running a class" docs/instructors.md docs/timings.md
[ "$edition" = student ] || part "Answers" solutions/*.md

page() { printf '%s.html' "$(printf '%s' "${1%.md}" | tr '/' '-')"; }
title() { sed -n '1s/^# //p' "$1"; }
# nav_title MD: the chapter's title as HTML, its `code` in <code>.
# shellcheck disable=SC2016 # backquotes of markdown, not of the shell
nav_title() {
	title "$1" | sed 's/&/\&amp;/g; s/</\&lt;/g; s/>/\&gt;/g; s|`\([^`]*\)`|<code>\1</code>|g'
}

# quietly CMD...: run CMD; fail, showing what it printed, if it warned.
quietly() {
	local said
	said=$("$@" 2>&1) || die "$* failed: $said"
	[ -z "$said" ] || die "$* warned: $said"
}

rm -rf "$html"
mkdir -p "$html"
for dot in diagrams/*.dot; do
	quietly dot -Tsvg "$dot" -o "$html/$(basename "${dot%.dot}").svg"
done
# The committed benchmark run's plots (docs/benchmark.md shows them).
cp docs/*.svg "$html/"

book_title="SLUB+Q: a teaching kit for the Linux slab allocator"
[ "$edition" = student ] || book_title+=" (instructors' edition)"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# The contents page.
{
	printf '%% %s\n\n' "$book_title"
	printf 'SLUB with per-CPU queues of object pointers and slabs that track\n'
	printf 'their free objects in a bitmap (Christoph Lameter, 2010), built stage\n'
	printf 'by stage on Linux 6.1.\n'
	previous=''
	for i in "${!chapters[@]}"; do
		if [ "${parts[i]}" != "$previous" ]; then
			printf '\n## %s\n\n' "${parts[i]}"
			previous=${parts[i]}
		fi
		printf '%d. [%s](%s)\n' $((i + 1)) "$(title "${chapters[i]}")" "$(page "${chapters[i]}")"
	done
} >"$scratch/index.md"
quietly pandoc --fail-if-warnings --standalone --include-in-header=docs/blocks.html \
	--metadata=pagetitle:"$book_title" -o "$html/index.html" "$scratch/index.md"

# Each chapter, between two copies of its navigation bar.
last=$((${#chapters[@]} - 1))
for i in "${!chapters[@]}"; do
	md=${chapters[i]}
	{
		printf '<nav class="book"><a href="index.html">Contents</a>'
		if [ "$i" -gt 0 ]; then
			printf ' <a rel="prev" href="%s">&larr; %s</a>' "$(page "${chapters[i - 1]}")" \
				"$(nav_title "${chapters[i - 1]}")"
		fi
		if [ "$i" -lt "$last" ]; then
			printf ' <a rel="next" href="%s">%s &rarr;</a>' "$(page "${chapters[i + 1]}")" \
				"$(nav_title "${chapters[i + 1]}")"
		fi
		printf '</nav>\n'
	} >"$scratch/nav.html"
	quietly pandoc --fail-if-warnings --standalone --shift-heading-level-by=-1 \
		--include-in-header=docs/blocks.html \
		--include-before-body="$scratch/nav.html" --include-after-body="$scratch/nav.html" \
		--resource-path=".:$(dirname "$md"):$html" -o "$html/$(page "$md")" "$md"
done
note "==> the $edition edition in $KIT_ROOT/$html/index.html (${#chapters[@]} chapters)"

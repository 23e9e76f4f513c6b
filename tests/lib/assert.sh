# shellcheck shell=bash
# tests/lib/assert.sh, sourced by tests/run.sh: what a check asserts: a
# failure that says a text, patterns matched in a transcript.

# fails_with TEXT COMMAND...: COMMAND must exit non-zero and say TEXT.
fails_with() {
	local text=$1 rc=0
	shift
	"$@" >"$out/fail" 2>&1 || rc=$?
	cat "$out/fail"
	[ "$rc" -ne 0 ] || { echo "exited 0; expected a failure saying: $text"; return 1; }
	grep -qF -- "$text" "$out/fail" || { echo "the error does not say: $text"; return 1; }
}

# matches_all PATTERNS FILE: every extended regular expression in PATTERNS
# (one a line; # starts a comment) matches some line of FILE, and every
# one written !PATTERN matches none.
matches_all() {
	local patterns=$1 file=$2 pat bad=0
	while IFS= read -r pat; do
		case "$pat" in
		'' | '#'*) continue ;;
		'!'*)
			if grep -qE -- "${pat#!}" "$file"; then
				echo "matched, but must not: ${pat#!}"
				grep -nE -- "${pat#!}" "$file" | sed -n 1,3p
				bad=1
			fi
			;;
		*)
			if ! grep -qE -- "$pat" "$file"; then
				echo "no line matches: $pat"
				near "$pat" "$file"
				bad=1
			fi
			;;
		esac
	done <"$patterns"
	return "$bad"
}

# near PATTERN FILE: where in FILE a line for PATTERN was expected: the
# lines around the first one that has the pattern's longest word.
near() {
	local word line
	word=$(grep -oE '[A-Za-z_][A-Za-z0-9_-]{3,}' <<<"$1" | awk '{ print length, $0 }' |
		sort -rn | sed -n 1p | cut -d' ' -f2-)
	line=$(grep -nF -m 1 -- "${word:-@@none@@}" "$2" | cut -d: -f1)
	if [ -n "$line" ]; then
		echo "  the transcript near its first \"$word\" (line $line):"
		sed -n "$((line > 3 ? line - 3 : 1)),$((line + 3))p" "$2" | sed 's/^/  | /'
	else
		echo "  the transcript has no \"${word:-}\"; its last lines:"
		tail -n 5 "$2" | sed 's/^/  | /'
	fi
}

# shellcheck shell=bash
# tests/lib/handouts.sh, sourced by tests/run.sh: the handouts: breakpoints
# that resolve, steps that run, the runner's own failures.

# break_conditions STAGE: the conditional breakpoints (break FUNC if COND)
# of the stage's handout and answers, one a line; FUNC or *FUNC, its
# first instruction.
break_conditions() {
	cat "labs/$1/README.md" "solutions/$1.md" | sed -nE 's/^[[:space:]]*(\(gdb\) )?(t?break \*?[A-Za-z_][A-Za-z0-9_]* if .*)$/\2/p'
}

# conditions_parse STAGE BREAK...: gdb takes each BREAK (a conditional
# breakpoint) on the stage's vmlinux.  A condition names the function's
# arguments, which gdb finds only if the breakpoint's address lies in the
# function's own scope: where the compiler put inlined code first, gdb says
# "No symbol ... in current context" and the breakpoint never stops.
conditions_parse() {
	local vmlinux=$KIT_BUILD/$1/vmlinux line
	local -a gdb_args=()
	shift
	for line in "$@"; do
		gdb_args+=(-ex "echo == $line\n" -ex "$line")
	done
	gdb -q -nx -batch -iex 'set auto-load no' "${gdb_args[@]}" "$vmlinux" >"$out/conditions" 2>&1
	cat "$out/conditions"
	if grep -E '^No symbol|[Ee]rror' "$out/conditions"; then
		echo "gdb refused a condition (above)"
		return 1
	fi
}

# break_targets STAGE...: the functions that the stages' handouts and
# answers (in code blocks and in `inline code`) break on (break, tbreak),
# one a line.
break_targets() {
	local stage
	for stage in "$@"; do
		grep -hE '^(    |\t|\(gdb\) )' "labs/$stage/README.md" "solutions/$stage.md" || true
		grep -hoE '`t?break +\*?[A-Za-z_][A-Za-z0-9_]*' \
			"labs/$stage/README.md" "solutions/$stage.md" || true
	done | grep -oE '(^|[ "`])t?break +\*?[A-Za-z_][A-Za-z0-9_]*' |
		awk '{ sub(/^\*/, "", $NF); print $NF }' | sort -u
}

# breaks_resolve_once STAGE NAME...: each NAME is one real function in
# STAGE's kernel: one symbol of that name in vmlinux and no compiler clone
# of it (NAME.isra.0, NAME.constprop.0: gdb would stop in those with
# arguments optimized out), and gdb's `break NAME` finds one location.
breaks_resolve_once() {
	local vmlinux=$KIT_BUILD/$1/vmlinux name bad=0 symbols
	local -a gdb_args=()
	shift
	[ $# -gt 0 ] || { echo "no functions to break on"; return 1; }
	symbols=$(nm "$vmlinux" | awk '{ print $3 }')
	for name in "$@"; do
		if [ "$(grep -cxF -- "$name" <<<"$symbols")" -ne 1 ]; then
			echo "$name: $(grep -cxF -- "$name" <<<"$symbols") symbols of that name in vmlinux, not 1"
			bad=1
		fi
		if grep -E -- "^$name\.(isra|constprop|part)" <<<"$symbols"; then
			echo "$name: the compiler made clones of it (above)"
			bad=1
		fi
		gdb_args+=(-ex "echo == $name\\n" -ex "break $name")
	done
	gdb -q -nx -batch -iex 'set auto-load no' "${gdb_args[@]}" "$vmlinux" >"$out/breaks" 2>&1
	cat "$out/breaks"
	# Each "== NAME" line is followed by what gdb said of `break NAME`:
	# one location is "Breakpoint N at ADDR: file F, line L."
	awk '/^== / { name = $2; next }
		name != "" {
			if ($0 !~ /^Breakpoint [0-9]+ at 0x[0-9a-f]+: file .*, line [0-9]+\.$/)
				{ print name ": not one location"; bad = 1 }
			name = ""
		}
		END { exit bad }' "$out/breaks" || bad=1
	return "$bad"
}

# handout_counts STAGE: "N M": of the M steps that the lab's handout
# shows, the N that are to run (the others say why not).
handout_counts() {
	scripts/handout.py steps "labs/$1/README.md" |
		awk -F '\t' '$2 != "check" && $2 != "output" { m++; if ($3 == "run") n++ } END { print n + 0, m + 0 }'
}

# handout_runs STAGE N M: every step of the lab's handout that is to run
# ran (make walkthrough types them), and the transcript has what the
# lab's walkthrough.expect asks, and no sign of a broken step.
handout_runs() {
	local transcript=$KIT_LOGS/$1/walkthrough.txt
	scripts/walkthrough.sh "$1" >/dev/null || { tail -n 25 "$transcript"; return 1; }
	matches_all "labs/$1/walkthrough.expect" "$transcript"
	matches_all tests/walkthrough-common.expect "$transcript"
	grep -qx "handout steps executed: $2 of $3" "$transcript" ||
		{ echo "the transcript does not end with: handout steps executed: $2 of $3"; return 1; }
}

# handout_fixture NAME KEY=VALUE...: tests/fixtures/handouts/NAME.md with
# each @KEY@ in it replaced by VALUE, as $out/NAME.md; prints that path.
handout_fixture() {
	local name=$1 pair script=''
	shift
	for pair in "$@"; do
		script+="s|@${pair%%=*}@|${pair#*=}|g;"
	done
	sed "$script" "$fixtures/handouts/$name.md" >"$out/$name.md"
	echo "$out/$name.md"
}

# handout_step_fails STAGE STEP TEXT: a handout of one gdb step, STEP,
# after make lab STAGE, fails and says TEXT.
handout_step_fails() {
	printf '%s\n' '```host' "make lab STAGE=$1" '```' '' '```gdb' "(gdb) $2" '```' >"$out/handout.md"
	fails_with "$3" scripts/handout.py run "$out/handout.md" "$out/handout.log"
	cat "$out/handout.log"
	grep -qx 'handout steps executed: 1 of 2' "$out/handout.log" ||
		{ echo "the failed step is counted as executed"; return 1; }
}

# handout_hang_ended STAGE: a step whose prompt never comes (continue past
# a breakpoint that does not hit) fails the handout once
# KIT_WALKTHROUGH_TIMEOUT runs out, and the runner ends make lab's QEMU
# with it: one left running held the gdb port, and every boot after it
# failed.
handout_hang_ended() {
	local port handout
	port=$(kit_gdb_port)
	handout=$(handout_fixture prompt-never-comes STAGE="$1")
	KIT_WALKTHROUGH_TIMEOUT=15 fails_with "no gdb prompt after 15 s" \
		scripts/handout.py run "$handout" "$out/handout.log" || return 1
	if port_listening "$port"; then
		echo "something still listens on the gdb port $port after the handout ended:"
		pgrep -af qemu-system || true
		return 1
	fi
}

# handout_excerpt_checked STAGE: a handout's output excerpt passes when the
# output has its lines (<n> marks a number) and fails the handout when not.
# (tests/fixtures/handouts/stale-excerpt.md: three prints, each with its
# excerpt; the first marks the number <n>, the second is stale, 6*8 is not
# 41, the third is right.)
# shellcheck disable=SC2016 # $2 is gdb's value, not the shell's
handout_excerpt_checked() {
	fails_with 'stale-excerpt.md:14: the handout shows a line that was not printed: $2 = 41' \
		scripts/handout.py run "$(handout_fixture stale-excerpt STAGE="$1")" "$out/handout.log"
	cat "$out/handout.log"
	grep -qx 'output excerpts matched: 1 of 3' "$out/handout.log" ||
		{ echo "the first excerpt did not match, or the second did"; return 1; }
}

# freelist_corruption_reported STAGE (a stock SLUB stage): kit-cpu-slab
# says so when a free pointer makes the CPU freelist loop, or leave the
# slab's objects, as the kernel's on_freelist() would, instead of listing
# objects up to a limit.  gdb writes the free pointer (encoded as the
# kernel does with CONFIG_SLAB_FREELIST_HARDENED); the guest never runs
# again (tests/fixtures/handouts/freelist-corruption.md).
freelist_corruption_reported() {
	scripts/handout.py run "$(handout_fixture freelist-corruption STAGE="${1%%-*}")" "$out/corrupt.log"
	cat "$out/corrupt.log"
	grep -qE '^CORRUPTED freelist: 0x[0-9a-f]+ comes again after 1 objects: a cycle$' "$out/corrupt.log" ||
		{ echo "a freelist whose head points to itself is not reported as a cycle"; return 1; }
	grep -qE '^CORRUPTED freelist: 0x[0-9a-f]+ is not one of the 64 objects of the slab at 0x[0-9a-f]+$' "$out/corrupt.log" ||
		{ echo "a free pointer between two objects is not reported"; return 1; }
}

# excerpts_refreshed STAGE: make excerpts goes on past a stale excerpt,
# runs every step, and reports it with what the terminal printed instead.
# shellcheck disable=SC2016 # $2 is gdb's value, not the shell's
excerpts_refreshed() {
	fails_with "1 excerpt(s) no longer match" \
		scripts/handout.py excerpts "$(handout_fixture stale-excerpt STAGE="$1")" "$out/handout.log"
	cat "$out/handout.log.excerpts"
	grep -qx 'stale-excerpt.md:14: the excerpt.s line "$2 = 41" was not printed' \
		<(sed 's/^.*stale-excerpt.md/stale-excerpt.md/' "$out/handout.log.excerpts") ||
		{ echo "the stale excerpt is not reported with its line"; return 1; }
	sed -n '/^--- the terminal printed:$/,$p' "$out/handout.log.excerpts" | grep -x '$2 = 48' >/dev/null ||
		{ echo "the report does not show what gdb printed instead"; return 1; }
	grep -qx 'handout steps executed: 4 of 4' "$out/handout.log" || { echo "the run stopped at the stale excerpt"; return 1; }
	grep -qx 'output excerpts matched: 2 of 3' "$out/handout.log" || { echo "the later excerpt was not matched"; return 1; }
}

# handout_optimized_out_shown STAGE: a step that prints "<optimized out>"
# passes when the excerpt after it shows that, as a handout does to show
# what inlining costs, and only as many times as it shows it.
handout_optimized_out_shown() {
	scripts/handout.py run "$(handout_fixture optimized-out-shown STAGE="$1")" "$out/handout.log"
	cat "$out/handout.log"
	grep -qx 'output excerpts matched: 1 of 1' "$out/handout.log"
	# One shown, two printed: the second is not what the handout shows.
	fails_with "the output says <optimized out>" \
		scripts/handout.py run "$(handout_fixture optimized-out-twice STAGE="$1")" "$out/handout.log"
}

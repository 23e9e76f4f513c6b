#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run a lab's handout: every step its README shows, in order.

  handout.py steps README        the steps, one a line:
                                 LINE<TAB>KIND<TAB>RUN<TAB>TEXT, RUN being
                                 "run" or the reason it is not
  handout.py run README LOG      run them, as a student would type them,
                                 with gdb's terminal (the commands and what
                                 gdb answered) in LOG and the guest's
                                 console in LOG.console; LOG ends with the
                                 steps not run and "handout steps
                                 executed: N of M"
  handout.py excerpts README LOG the same, but an output excerpt that no
                                 longer matches does not stop the run: it
                                 goes into LOG.excerpts with what the
                                 terminal printed instead, to refresh the
                                 handout from (exit status 1 if any)

A step is a line of a fenced code block whose info string says where it
is typed: ```gdb (lines "(gdb) COMMAND"; a line without the prompt
continues a command of several lines, such as if ... end), ```guest (the
guest's shell, on the serial console that make boot gives) or ```host (a
shell in the kit's folder).  A block right after the comment
<!-- not run: REASON --> is shown and counted, but not run: REASON says
why (a step that needs a person).  The comment <!-- check ... --> holds
gdb commands that the rendered handout does not show: the kit's checks of
what the steps before it showed, which print "UNEXPECTED: ..." when what
they check does not hold.  A block ```output shows what the steps since
the last such block print, in the terminal they were typed in: its lines
must come in that order, each right after the one before, but where a
line "..." stands for lines left out; in a line, <n> stands for a number,
<0x> for a hexadecimal one and <...> for any text, the fields that vary
from run to run, and two spaces or more for any number of them.

The host steps "make lab ...", "make boot ..." and "make gdb ..." start
what the student would have in a terminal: gdb (make lab, make gdb) or
the guest's console (make boot).  Other host steps run to their end and
must succeed.  A gdb step waits for gdb's next prompt, unless the step
after it is typed in the guest (a "continue" that waits for what the
guest command makes the kernel do).  A step fails when gdb reports an
error (anything on its standard error but warnings, and the warning that a
source file is newer than the vmlinux: what gdb lists may not be what
runs), when its output says "<optimized out>" or "UNEXPECTED", or when gdb
does not answer in time.
A value that a handout means to show optimised out is shown so in the
excerpt that follows the step: each "<optimized out>" in an excerpt lets
the gdb steps since the excerpt before print it once.
"""

import os
import re
import select
import signal
import subprocess
import sys
import time

KINDS = ("gdb", "guest", "host")
PROMPT = "(gdb) "
# What gdb may print on its standard error without a step failing.
HARMLESS = re.compile(r"^(warning: (?!Source file is more recent)|==> |make\[\d+\]: (Entering|Leaving) )")
OPTIMIZED_OUT = "<optimized out>"
UNEXPECTED = "UNEXPECTED"
# gdb commands that open a block closed by "end" ("python CODE" is one line).
OPENS_BLOCK = re.compile(r"^((if|while|define|document|commands)\b|(python|py)\s*$)")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMIT = int(os.environ.get("KIT_WALKTHROUGH_TIMEOUT", "600"))
# The student's terminal: not inside the make that may run this script
# (make walkthrough, make test), whose settings would reach the handout's
# own make commands.
TERMINAL_ENV = {k: v for k, v in os.environ.items()
                if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES")}


class HandoutError(Exception):
    """A handout that cannot be run as written, or a step that failed."""


class Step:
    def __init__(self, line, kind, text, reason=None):
        self.line = line        # line number in the README
        self.kind = kind        # gdb, guest, host, check, output
        self.text = text
        self.reason = reason    # why it is not run; None: it is run
        self.shown = None       # gdb: the output step that shows its output


def parse(path):
    """The handout's steps, in order."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    steps = []
    reason = None
    i = 0
    while i < len(lines):
        line = lines[i]
        m = re.match(r"^<!-- not run: (.+?) -->$", line)
        if m:
            reason = m.group(1)
        elif line.startswith("<!-- check"):
            first = i + 2
            body = []
            i += 1
            while i < len(lines) and lines[i].strip() != "-->":
                body.append(lines[i])
                i += 1
            steps.append(Step(first, "check", "\n".join(body).strip()))
        elif line.startswith("```output"):
            first = i + 2
            body = []
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            steps.append(Step(first, "output", "\n".join(body)))
        elif line.startswith("```"):
            kind = line[3:].strip()
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                text = lines[i]
                if kind in KINDS and text.strip():
                    if kind == "gdb" and text.startswith(PROMPT):
                        text = text[len(PROMPT):]
                    elif kind == "gdb" and text == "^C":
                        pass            # Ctrl-C, typed while the guest runs
                    elif kind == "gdb" and steps_continue(steps):
                        # gdb prompts a block's lines with ">".
                        text = re.sub(r"^\s*>", "", text)
                    elif kind == "gdb":
                        raise HandoutError(
                            f"{path}:{i + 1}: a gdb line without the prompt "
                            "(gdb) that continues no command")
                    if kind == "guest" and Guest.PROMPT.search(text):
                        raise HandoutError(
                            f"{path}:{i + 1}: a guest step with \" # \" after a path, which "
                            "would look like the shell's prompt when the guest echoes it")
                    # A shell line ending in a backslash goes on.
                    first = i + 1
                    while kind != "gdb" and text.endswith("\\") and i + 1 < len(lines):
                        i += 1
                        text += "\n" + lines[i]
                    steps.append(Step(first, kind, text.strip(), reason))
                i += 1
            reason = None
        elif reason is not None and line.strip():
            raise HandoutError(
                f"{path}:{i + 1}: <!-- not run: ... --> is not followed by a code block")
        i += 1
    # Each gdb step knows the excerpt that shows its output, if any.
    shown = None
    for step in reversed(steps):
        if step.kind == "output":
            shown = step
        elif step.kind in ("guest", "host"):
            shown = None
        elif step.kind == "gdb":
            step.shown = shown
    return steps


def excerpt_pattern(line):
    """The regular expression of a line of an output excerpt: the text
    as it is, but for the fields that vary from run to run, marked <n> (a
    decimal number), <0x> (a hexadecimal one) and <...> (any text)."""
    parts = re.split(r"(<n>|<0x>|<\.\.\.>| {2,})", line.rstrip())
    marks = {"<n>": "-?[0-9]+", "<0x>": "0x[0-9a-f]+", "<...>": ".*"}
    # Columns aligned with runs of spaces stay aligned whatever the width
    # of the numbers in them.
    return "".join(marks.get(p, " +" if p.startswith("  ") else re.escape(p))
                   for p in parts) + r"\s*"


def printed_lines(text):
    """A terminal's output as the lines an excerpt shows.  gdb's prompts
    stand before its output, the typed commands are not in it: "(gdb)
    (gdb) $1 = 0"."""
    return [re.sub(r"^(\(gdb\) )+", "", l.rstrip("\r")) for l in text.split("\n")]


def match_excerpt(excerpt, text):
    """None if the lines of excerpt appear in text in the same order (a
    line "..." stands for any number of lines, and lines must otherwise
    follow each other); else the first line of excerpt that does not."""
    lines = printed_lines(text)
    want = [(True, None) if l == "..." else (False, re.compile(excerpt_pattern(l)))
            for l in excerpt.split("\n")]
    names = excerpt.split("\n")
    deepest = [0]

    def match(k, pos, gap):
        """Whether want[k:] matches from line pos (anywhere after it if
        gap); deepest keeps the furthest excerpt line reached."""
        if k == len(want):
            return True
        deepest[0] = max(deepest[0], k)
        skip, pattern = want[k]
        if skip:
            return match(k + 1, pos, True)
        for n in range(pos, len(lines) if gap else min(pos + 1, len(lines))):
            if pattern.fullmatch(lines[n]) and match(k + 1, n + 1, False):
                return True
        return False

    # Before the first line, any lines may come.
    if match(0, 0, True):
        return None
    return names[deepest[0]]


def steps_continue(steps):
    """Whether the gdb steps so far leave a block open."""
    return block_depth([s.text for s in steps if s.kind == "gdb"]) > 0


def block_depth(commands):
    depth = 0
    for text in commands:
        if text == "end":
            depth -= 1
        elif OPENS_BLOCK.match(text):
            depth += 1
    return depth


class Log:
    """A transcript file that knows whether its last line is complete."""

    def __init__(self, path):
        self.file = open(path, "w", encoding="utf-8")
        self.last = "\n"

    def write(self, text):
        if text:
            self.file.write(text)
            self.file.flush()
            self.last = text[-1]

    def line(self, text):
        """Write text on a line of its own."""
        self.write(("" if self.last == "\n" else "\n") + text + "\n")

    def close(self):
        self.file.close()


class Terminal:
    """A program the student would run in a terminal.  The output of every
    terminal is read while any of them is waited for, so that no program
    blocks on a full pipe (a guest printing while gdb is waited for)."""

    live = {}                   # file descriptor: (terminal, "out" or "err")

    def __init__(self, command, log):
        self.log = log
        self.out = ""
        self.err = ""
        self.proc = subprocess.Popen(
            command, shell=True, cwd=ROOT, start_new_session=True, env=TERMINAL_ENV,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        Terminal.live[self.proc.stdout.fileno()] = (self, "out")
        Terminal.live[self.proc.stderr.fileno()] = (self, "err")

    def type(self, text, logged=None):
        """Type a line; the log shows logged (by default the line)."""
        self.log.write((text if logged is None else logged) + "\n")
        try:
            self.proc.stdin.write((text + "\n").encode())
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise HandoutError(f"the program ended before \"{text}\" could be typed")

    def group_alive(self):
        """Whether a process of the program's group still runs (the
        program is reaped first, so that it does not count)."""
        self.proc.poll()
        try:
            os.killpg(self.proc.pid, 0)
            return True
        except ProcessLookupError:
            return False

    def reading(self):
        return any(t is self for t, _ in Terminal.live.values())

    @staticmethod
    def read(timeout):
        """Read what any terminal printed within timeout seconds."""
        if not Terminal.live:
            time.sleep(timeout)
            return
        ready, _, _ = select.select(list(Terminal.live), [], [], timeout)
        for fd in ready:
            term, stream = Terminal.live[fd]
            data = os.read(fd, 65536).decode(errors="replace")
            if not data:
                del Terminal.live[fd]
            elif stream == "out":
                term.out += data
            else:
                term.err += data
            term.log.write(data)

    def wait_for(self, done, what, limit=LIMIT):
        """Read until done() holds; fail after limit seconds, or when this
        program's output ends first."""
        deadline = time.monotonic() + limit
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                raise HandoutError(f"no {what} after {limit} s")
            if not self.reading():
                raise HandoutError(f"the program ended before {what}")
            Terminal.read(min(left, 1.0))

    def end(self, last_words, limit=60):
        """Type last_words (if any) if the program still runs, and let it
        end by itself within limit seconds, or kill it."""
        if last_words and self.proc.poll() is None:
            try:
                self.type(last_words)
            except HandoutError:
                pass
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        # The program's process group is gone only when make lab's script
        # has ended the QEMU it started in a session of its own (its exit
        # trap; a SIGTERM runs it, a SIGKILL does not): a QEMU left
        # running holds the gdb port, and every later boot fails.
        for sig, grace in ((None, limit), (signal.SIGTERM, 10), (signal.SIGKILL, 5)):
            if not self.group_alive():
                break
            if sig is not None:
                try:
                    os.killpg(self.proc.pid, sig)
                except ProcessLookupError:
                    break
            deadline = time.monotonic() + grace
            while self.group_alive() and time.monotonic() < deadline:
                Terminal.read(0.2)
        self.proc.wait()
        for fd in [fd for fd, (t, _) in Terminal.live.items() if t is self]:
            del Terminal.live[fd]


class Guest(Terminal):
    """The guest's shell on the serial console (make boot), whose prompt
    ends in " # " after the working directory.  A prompt need not start
    a line: what was typed ahead while the guest was stopped is echoed
    by the tty as it arrives, and can come before the prompt on its line.
    """

    PROMPT = re.compile(r"(/[^ \r\n]*|~) # ")

    def __init__(self, command, log):
        super().__init__(command, log)
        self.wait_for(lambda: "kit-init: no kit.run= given" in self.out,
                      "shell on the guest's console")
        self.wait_for(lambda: self.prompts() >= 1, "guest shell prompt")
        self.expected = self.prompts()

    def prompts(self):
        return len(self.PROMPT.findall(self.out))

    def command(self, text, gdb):
        """Type a command at the shell's prompt, as a student would, and
        wait for its next prompt; unless gdb holds the guest stopped, or
        stops it before that prompt comes (a command that runs into a
        breakpoint).  While gdb holds the guest, the command is typed
        ahead: the shell reads it once the guest runs again."""
        self.idle(gdb)
        self.type(text)
        self.expected += 1
        self.idle(gdb)

    def idle(self, gdb):
        """Wait for the prompt of the command before, which a breakpoint
        may have held back until a continue; unless gdb holds the guest
        stopped.  What is typed before that prompt comes is echoed into
        the command's output, as it would be for a student."""
        def held():
            return gdb is not None and gdb.attached and not gdb.owes()

        self.wait_for(lambda: self.prompts() >= self.expected or held(),
                      "guest shell prompt")


class Gdb(Terminal):
    """gdb, which prints its prompt once a command is done."""

    def __init__(self, command, log):
        super().__init__(command, log)
        self.expected = 1       # prompts gdb owes: the first one
        self.checked = (0, 0)   # what of out and err has been checked
        self.where = "startup"  # the step typed last
        self.commands = []      # the gdb steps typed
        self.attached = True    # to the guest (until detach)
        # The "<optimized out>" that the excerpt of the steps being typed
        # shows (self.excerpt), and whether the last step may print them.
        self.excerpt = None
        self.optimized_out = 0
        self.may_print_optimized_out = False
        self.wait_prompts(check=False)

    def owes(self):
        return self.out.count(PROMPT) < self.expected

    def wait_prompts(self, check=True):
        """Wait for the prompts owed; then fail if what gdb printed since
        the last check reports an error or a failed check."""
        self.wait_for(lambda: not self.owes(), "gdb prompt")
        out, err = self.out[self.checked[0]:], self.err[self.checked[1]:]
        self.checked = (len(self.out), len(self.err))
        if not check:
            return
        errors = [l for l in err.splitlines() if l.strip() and not HARMLESS.match(l)]
        if errors:
            raise HandoutError(f"{self.where}: gdb said: {errors[0]}")
        if UNEXPECTED in out:
            raise HandoutError(f"{self.where}: the output says {UNEXPECTED}")
        printed = out.count(OPTIMIZED_OUT)
        if printed > (self.optimized_out if self.may_print_optimized_out else 0):
            raise HandoutError(f"{self.where}: the output says {OPTIMIZED_OUT}")
        self.optimized_out -= printed

    def command(self, text, where, shown=None):
        """Type a gdb step; one that leaves a block open (if, commands)
        brings no prompt until its "end".  shown is the output step that
        shows its output."""
        self.wait_prompts()
        if self.log.last == "\n" and not block_depth(self.commands):
            self.log.write(PROMPT)      # the prompt scrolled past a host step
        self.where = where
        if shown is not self.excerpt:
            self.excerpt = shown
            self.optimized_out = shown.text.count(OPTIMIZED_OUT) if shown else 0
        self.may_print_optimized_out = True
        self.commands.append(text)
        self.type(text)
        if block_depth(self.commands) == 0:
            self.expected += 1

    def interrupt(self, where):
        """Ctrl-C: SIGINT to gdb (not to make, which runs it), which
        stops the guest and prompts."""
        self.where = where
        self.may_print_optimized_out = False
        self.log.line("^C")
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
                    comm, rest = f.read().split(" (", 1)[1].rsplit(") ", 1)
            except (OSError, ValueError, IndexError):
                continue
            # After the name: state, ppid, pgrp, session.
            if comm == "gdb" and int(rest.split()[3]) == self.proc.pid:
                os.kill(int(pid), signal.SIGINT)
                return
        raise HandoutError(f"{where}: no gdb process to send Ctrl-C to")

    def check(self, text, where, scratch):
        """Run the kit's hidden check text (gdb commands): from a file, so
        that gdb prints no prompt for each line of a block."""
        self.wait_prompts()
        with open(scratch, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        self.where = where
        self.may_print_optimized_out = False
        self.type(f"source {scratch}", logged=f"[the kit checks, {where}]")
        self.expected += 1


class Captured:
    """The output of a host command that ran to its end."""

    def __init__(self, out):
        self.out = out


def host_command(text, log, where):
    """Run a host step to its end; it must succeed."""
    done = subprocess.run(text, shell=True, cwd=ROOT, text=True, env=TERMINAL_ENV,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=LIMIT, check=False)
    log.write(done.stdout)
    if done.returncode != 0:
        raise HandoutError(f"{where}: exit status {done.returncode}")
    return Captured(done.stdout)


def gdb_step(gdb, step, where, following, scratch):
    """Type a gdb step: a command, Ctrl-C (^C), quit, or a hidden check."""
    if step.kind == "check":
        gdb.check(step.text, where, scratch)
        gdb.wait_prompts()
    elif step.text == "^C":
        gdb.interrupt(where)
        gdb.wait_prompts()
    elif step.text in ("quit", "q"):
        # gdb ends, and with make lab the guest.
        gdb.wait_prompts()
        gdb.end(step.text)
    else:
        if step.text == "detach":
            gdb.attached = False
        gdb.command(step.text, where, step.shown)
        # A continue followed by a guest step waits for what the guest's
        # command makes the kernel do.
        if following != "guest":
            gdb.wait_prompts()


def stale_excerpt(report, where, step, printed, missing):
    """Write to report an excerpt that no longer matches, and what the
    terminal printed in its place, addresses marked <0x> already."""
    lines = [re.sub(r"\b0x[0-9a-f]{8,}\b", "<0x>", l) for l in printed_lines(printed)]
    report.write(f"{where}: the excerpt's line \"{missing}\" was not printed\n"
                 "--- the handout shows:\n" + step.text + "\n"
                 "--- the terminal printed:\n" + "\n".join(lines).strip("\n") + "\n\n")


def run(path, log_path, refresh=False):
    """Type the handout's steps; with refresh, report stale excerpts in
    log_path.excerpts instead of stopping at the first."""
    steps = parse(path)
    stale = 0
    report = Log(log_path + ".excerpts") if refresh else None
    shown = [s for s in steps if s.kind not in ("check", "output")]
    ran = matched = 0
    gdb = guest = None
    source = None               # the terminal of the last step
    since = {}                  # terminal: where its next excerpt starts
    log = Log(log_path)
    console = Log(log_path + ".console")
    try:
        for n, step in enumerate(steps):
            where = f"{os.path.relpath(path, ROOT)}:{step.line}"
            if step.reason is not None:
                log.line(f"# not run ({step.reason}): {step.text}")
                continue
            following = steps[n + 1].kind if n + 1 < len(steps) else None
            if step.kind == "output":
                # What the handout shows: the output of the steps since the
                # last excerpt, in the terminal they were typed in.
                if source is None:
                    raise HandoutError(f"{where}: an output excerpt with nothing before it")
                if source is gdb:
                    gdb.wait_prompts()
                printed = source.out[since.get(id(source), 0):]
                missing = match_excerpt(step.text, printed)
                since[id(source)] = len(source.out)
                if missing is None:
                    matched += 1
                elif report is not None:
                    stale_excerpt(report, where, step, printed, missing)
                    stale += 1
                else:
                    raise HandoutError(
                        f"{where}: the handout shows a line that was not printed: {missing}")
                continue
            if step.kind == "host":
                log.line(f"$ {step.text}")
                if re.match(r"make (lab|gdb)\b", step.text):
                    gdb = source = Gdb(step.text, log)
                elif re.match(r"make boot\b", step.text):
                    guest = source = Guest(step.text, console)
                else:
                    source = host_command(step.text, log, where)
            elif step.kind == "guest":
                if guest is None:
                    raise HandoutError(f"{where}: a guest step, but no make boot before it")
                source = guest
                if step.text in ("exit", "poweroff"):
                    # The guest powers off; the next boot needs its port.
                    guest.idle(gdb)
                    guest.end(step.text, limit=60)
                    guest = None
                else:
                    guest.command(step.text, gdb)
            elif gdb is None:
                raise HandoutError(f"{where}: a gdb step, but no make lab or make gdb before it")
            else:
                source = gdb
                gdb_step(gdb, step, where, following, log_path + ".check")
                if step.text in ("quit", "q"):
                    gdb = None
            if step.kind != "check":
                ran += 1
        if gdb is not None:
            gdb.wait_prompts()
        if guest is not None:
            # A command typed ahead while gdb held the guest ends once gdb
            # lets it go: its output, before the exit below.
            guest.idle(gdb)
        status = 1 if stale else 0
        if stale:
            print(f"handout: {stale} excerpt(s) no longer match: {log_path}.excerpts",
                  file=sys.stderr)
    except HandoutError as e:
        log.line(f"handout: {e}")
        print(f"handout: {e}", file=sys.stderr)
        status = 1
    if gdb is not None:
        # After a failure gdb may wait on a running kernel and never read
        # the quit: a short wait, then the signals.
        gdb.end("quit", limit=60 if status == 0 else 10)
    if guest is not None:
        guest.end("exit")
    log.line("")
    for step in steps:
        if step.reason is not None:
            log.line(f"not run: line {step.line} ({step.reason}): {step.text}")
    log.line(f"output excerpts matched: {matched} of "
             f"{sum(1 for s in steps if s.kind == 'output')}")
    log.line(f"handout steps executed: {ran} of {len(shown)}")
    log.close()
    console.close()
    if report is not None:
        report.close()
    if os.path.exists(log_path + ".check"):
        os.remove(log_path + ".check")
    return status


def main(argv):
    try:
        if len(argv) == 3 and argv[1] == "steps":
            for s in parse(argv[2]):
                text = s.text.replace("\n", "; ")
                print(f"{s.line}\t{s.kind}\t{s.reason or 'run'}\t{text}")
            return 0
        if len(argv) == 4 and argv[1] in ("run", "excerpts"):
            return run(argv[2], argv[3], refresh=argv[1] == "excerpts")
    except HandoutError as e:
        print(f"handout: {e}", file=sys.stderr)
        return 1
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))

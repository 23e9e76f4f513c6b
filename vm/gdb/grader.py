# SPDX-License-Identifier: GPL-2.0
#
# The live half of `make grade`: run a lab's checks on the kernel that QEMU
# boots, stopped and read in gdb, and write one result per test.
#
# scripts/grade.sh runs it as gdb's batch script (scripts/lab.sh --script), with the
# kit's helpers (slubq) loaded, and says what to do in the environment:
#   KIT_GRADE_SPEC     the lab's exercise.toml: its TESTS; and gdb_checks()
#                      of its checks.py, which calls the Session below
#   KIT_GRADE_TESTS    the ids of the tests to run, comma separated
#   KIT_GRADE_RESULTS  where to write "ID<TAB>ok" or "ID<TAB>fail<TAB>WHY"
#   KIT_GRADE_UNTIL_POWEROFF  non-empty: once the checks are done, let the
#                      guest run to the end of its script (its console is
#                      graded too); else stop it
#   KIT_GRADE_ANSWERS  the student's answers file, for the questions
#
# A test passes if gdb_checks() ran it and found nothing wrong.  A question
# (a test of kind "answer") passes if the student's answer is the value of
# its "value" (a gdb expression) or its "function" (of checks.py) when the
# kernel first reaches its "at" (a function; kernel_execve by default,
# that is, once booted): read in the live kernel, never typed in.  Student
# code may loop for ever, oops, or panic the kernel: every wait for the
# kernel has a time limit, breakpoints on panic() and oops_end() turn a
# crash into a failure that says so (the kernel's log, read with the
# kernel's lx-dmesg, goes to KIT_GRADE_RESULTS.log), and the tests not yet
# run fail with the reason the session ended.

import os
import signal
import sys
import threading

import gdb

# scripts/exercise.py reads the lab's spec, for the shell and for this script.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
import exercise  # noqa: E402

# How long a boot may take to reach its first program under gdb.  A good
# one takes 1 to 4 s under TCG (2 cores, 4 December 2026); a boot that
# hangs is reported after this, and waiting longer would only keep a
# student (and make test's untouched skeletons) waiting.
BOOT_SECONDS = 20


# The task a CPU runs, in a gdb expression of that CPU's registers: its
# per-CPU area starts at %gs (x86-64), and current_task is a per-CPU
# variable.  A breakpoint condition sees the registers of the CPU that hit
# it; $lx_current() reads gdb's selected CPU, which then need not be it.
CURRENT = "*(unsigned long *)($gs_base + (unsigned long)&current_task)"


class KernelLost(Exception):
    """The kernel crashed, hung in student code, or gdb lost QEMU."""


class Session:
    """What a lab's gdb_checks() is given: waits with time limits, and
    failures recorded per test."""

    def __init__(self, selected):
        self.selected = selected
        self.failures = {}
        self.ran = set()
        self.stop_event = None
        gdb.events.stop.connect(self._on_stop)
        # At oops_end() the oops is in the kernel's log, and at panic()
        # what led to it: lx-dmesg reads it there, before a reboot.
        self.crash_breaks = [gdb.Breakpoint(name, internal=True)
                             for name in ("panic", "oops_end")]
        self.kernel_log = None

    def _on_stop(self, event):
        self.stop_event = event

    # --- Results ---------------------------------------------------------
    def wants(self, *ids):
        """Whether any of the tests IDS is selected."""
        return any(i in self.selected for i in ids)

    def check(self, test, ok, why):
        """Record that TEST ran, and failed with WHY unless OK."""
        self.ran.add(test)
        if not ok and test in self.selected:
            self.failures.setdefault(test, [])
            if why not in self.failures[test]:
                self.failures[test].append(why)

    # --- Running the kernel ----------------------------------------------
    def _run(self, command, seconds, what):
        """Run COMMAND (continue, finish), interrupted after SECONDS; return
        the breakpoints it stopped at."""
        self.stop_event = None
        timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            gdb.execute(command, to_string=True)
        except gdb.error as e:
            raise KernelLost("gdb lost the kernel while waiting for %s (%s): "
                             "did QEMU stop? See the console below" % (what, e))
        finally:
            timer.cancel()
        event = self.stop_event
        if isinstance(event, gdb.BreakpointEvent):
            hit = event.breakpoints
            for crash in self.crash_breaks:
                if crash in hit:
                    self.kernel_log = gdb.execute("lx-dmesg", to_string=True)
                    raise KernelLost("the kernel %s while waiting for %s; its "
                                     "log says:" % (
                                         "panicked" if crash.location == "panic"
                                         else "oopsed (a BUG or a bad access)",
                                         what))
            return hit
        raise KernelLost("%s did not come within %d s: an endless loop? The "
                         "CPUs were in %s" % (what, seconds, where_cpus_are()))

    def wait_for_boot(self):
        """Let the kernel boot to its first program (kernel_execve()); a
        kernel that hangs while booting (an untouched skeleton does) fails
        after BOOT_SECONDS."""
        return self.wait_for_call("kernel_execve", seconds=BOOT_SECONDS)

    def wait_for_call(self, function, condition=None, seconds=60):
        """Let the kernel run until FUNCTION is called (and CONDITION, a gdb
        expression on its arguments, holds); stop there, in its frame."""
        bp = gdb.Breakpoint(function, internal=True)
        if condition:
            bp.condition = condition
        what = "a call of %s()%s" % (function, " with " + condition if condition else "")
        try:
            while bp not in self._run("continue", seconds, what):
                pass
        finally:
            bp.delete()
        return gdb.selected_frame()

    def run_to_return(self, on_calls=None, seconds=15):
        """From the entry of a function, run the calling task until the
        function returns; ON_CALLS maps names of functions it may call to
        what to do (a callable) when this task calls one.  Returns the value
        in %rax at the return (the function's, if it returns one).  The
        task, not the CPU: one that sleeps may wake up on another CPU."""
        frame = gdb.selected_frame()
        function = frame.name()
        task = "%s == %d" % (CURRENT, int(gdb.parse_and_eval(CURRENT)))
        entry_sp = int(gdb.parse_and_eval("(unsigned long)$sp"))
        back = gdb.Breakpoint("*0x%x" % frame.older().pc(), internal=True)
        # The same address, reached by a deeper call: not this return.
        back.condition = "%s && (unsigned long)$sp > %d" % (task, entry_sp)
        calls = {}
        for name, action in (on_calls or {}).items():
            bp = gdb.Breakpoint(name, internal=True)
            bp.condition = task
            calls[bp] = action
        last = None
        try:
            while True:
                hit = self._run("continue", seconds, "%s() to return" % function)
                if back in hit:
                    return int(gdb.parse_and_eval("(unsigned long)$rax"))
                # With two CPUs, gdb now and then reports one stop at a
                # breakpoint twice (QEMU stepping one CPU over it while the
                # other stops): a stop with every register as the one
                # before is that stop again, not a second call.
                now = registers()
                if now == last:
                    continue
                last = now
                for bp in hit:
                    if bp in calls:
                        calls[bp]()
        finally:
            back.delete()
            for bp in calls:
                bp.delete()

    @staticmethod
    def signed(value):
        """An int a function returned in %eax, from %rax."""
        value &= 0xffffffff
        return value - (1 << 32) if value & 0x80000000 else value

    def to_the_end(self, seconds):
        """Let the guest finish its script and power off."""
        for bp in self.crash_breaks:
            bp.enabled = False
        try:
            self._run("continue", seconds, "the guest to power off")
        except KernelLost:
            pass


GENERAL_REGISTERS = ("rip", "rsp", "rbp", "rax", "rbx", "rcx", "rdx", "rsi", "rdi",
                     "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")


def registers():
    """The selected CPU's number and general registers: what tells one stop
    from another."""
    frame = gdb.newest_frame()
    return (gdb.selected_thread().num,) + tuple(
        int(frame.read_register(r)) for r in GENERAL_REGISTERS)


def where_cpus_are():
    """Where each CPU is: its innermost functions, the innermost first."""
    said = []
    for thread in sorted(gdb.selected_inferior().threads(), key=lambda t: t.num):
        thread.switch()
        names, frame = [], gdb.newest_frame()
        while frame is not None and len(names) < 4:
            names.append("%s()" % (frame.name() or "??"))
            frame = frame.older()
        if names[0] == "??()":
            continue  # not in the kernel yet (a CPU not brought up)
        said.append("CPU %d: %s" % (thread.num - 1, " <- ".join(names)))
    return "; ".join(said)


def read_answers(path):
    """The student's answers: {question id: answer}, from lines "ID: ANSWER"
    ("#" starts a comment)."""
    answers = {}
    with open(path) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if ":" in line:
                key, value = line.split(":", 1)
                answers[key.strip()] = value.strip()
    return answers


def same(answer, value):
    """Whether a student's ANSWER says VALUE (an int, or a name)."""
    if isinstance(value, int):
        try:
            return int(answer.replace(" ", "").replace("_", ""), 0) == value
        except ValueError:
            return False
    return answer.strip().lower() == str(value).strip().lower()


def live_value(lab, question):
    """What the kernel says the answer to QUESTION is, now."""
    if "function" in question:
        return question["function"]()
    v = gdb.parse_and_eval(question["value"])
    if v.type.strip_typedefs().code == gdb.TYPE_CODE_ENUM:
        return str(v)
    return int(v)


def check_answers(session, lab, questions, path):
    """Stop where each question is asked, and compare."""
    try:
        answers = read_answers(path)
    except OSError:
        for q in questions:
            session.check(q["id"], False, "no answers file at %s" % path)
        return
    at = None
    for q in questions:
        if q.get("at", "kernel_execve") != at:
            at = q.get("at", "kernel_execve")
            if at == "kernel_execve":
                session.wait_for_boot()
            else:
                session.wait_for_call(at)
        if not answers.get(q["id"]):
            session.check(q["id"], False, "no answer in %s" % path)
            continue
        session.check(q["id"], same(answers[q["id"]], live_value(lab, q)),
                      "you answered %s; the running kernel says otherwise" %
                      answers[q["id"]])


def main():
    lab = exercise.load(os.environ["KIT_GRADE_SPEC"])
    selected = set(filter(None, os.environ.get("KIT_GRADE_TESTS", "").split(",")))
    live_tests = [t["id"] for t in lab.TESTS if t["kind"] in ("gdb", "answer")]
    questions = [t for t in lab.TESTS if t["kind"] == "answer" and t["id"] in selected]
    session = Session(selected)
    lost = None
    try:
        if any(t["kind"] == "gdb" and t["id"] in selected for t in lab.TESTS):
            lab.gdb_checks(session)
        if questions:
            check_answers(session, lab, questions, os.environ.get("KIT_GRADE_ANSWERS", ""))
    except KernelLost as e:
        lost = str(e)
    with open(os.environ["KIT_GRADE_RESULTS"], "w") as results:
        for test in live_tests:
            if test not in selected:
                continue
            if test in session.failures:
                why = "; ".join(session.failures[test])
                results.write("%s\tfail\t%s\n" % (test, why))
            elif test in session.ran:
                results.write("%s\tok\n" % test)
            else:
                results.write("%s\tfail\t%s\n" % (
                    test, lost or "the check did not run (a bug in the grader)"))
    if session.kernel_log is not None:
        with open(os.environ["KIT_GRADE_RESULTS"] + ".log", "w") as log:
            log.write(session.kernel_log)
    if lost is None and os.environ.get("KIT_GRADE_UNTIL_POWEROFF"):
        session.to_the_end(300)


gdb.execute("set pagination off")
main()

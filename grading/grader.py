# SPDX-License-Identifier: GPL-2.0
#
# The live half of `make grade`: run a lab's checks on the kernel that QEMU
# boots, stopped and read in gdb, and write one result per test.
#
# grading/grade.sh runs it as gdb's batch script (scripts/lab.sh
# --script), with the kit's helpers (gdb: slubq, readers) loaded, and
# says what to do in the environment:
#   KIT_GRADE_SPEC     the lab's graded.toml: its TESTS; and gdb_checks()
#                      of its checks.py, which calls the Session below
#   KIT_GRADE_TESTS    the ids of the tests to run, comma separated
#   KIT_GRADE_RESULTS  where to write "ID<TAB>ok", "ID<TAB>fail<TAB>WHY", or
#                      "ID<TAB>error<TAB>WHAT": the grader failed (below)
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
#
# A check stops a student's function at its first instruction and reads its
# arguments where the x86-64 calling convention puts them (Entry below),
# with conditions in Python: nothing it reads depends on how gcc compiled
# the body, so any correct body is graded alike.  The stages declare the
# functions students write __noclone: gcc would make a body that leaves an
# argument unused (a stub, a partial answer) a clone with other arguments
# (.isra, .constprop), and make test checks that they are.  Whatever else goes wrong
# in a check (a Python exception, a gdb error, a breakpoint that cannot be
# set) is the grader's fault: the tests not yet decided are reported as not
# graded, with one line that says what failed and where, and the guest runs
# on so that the console tests still read its console.

import os
import signal
import subprocess
import sys
import threading
import time
import traceback

import gdb
import readers  # the kit's readers of kernel memory (gdb, on the path by scripts/gdb.sh)

HERE = os.path.dirname(os.path.abspath(__file__))
KIT_ROOT = os.path.dirname(HERE)
# exercise.py, beside this script, reads the lab's spec, for the shell and
# for this script.
sys.path.insert(0, HERE)
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


class GraderError(Exception):
    """The grader could not set or read what a check needs: the kit's
    fault, never the student's."""


class NoFunction(GraderError):
    """The kernel has no out-of-line copy of a function."""


# Where the x86-64 calling convention puts a function's first six
# arguments at its first instruction, whatever its body.
ARGUMENT_REGISTERS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")


class Arguments:
    """A call's arguments, by the names a check gives them, read from the
    calling convention's registers at the function's first instruction and
    cast to the types of the function's DWARF: never from the variables
    that gcc places after the prologue, whose location depends on how the
    body is written."""

    def __init__(self, names, values):
        self._values = dict(zip(names, values))

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise GraderError("the grader asked for an argument %s, not one of %s" % (
                name, ", ".join(self._values))) from None


class Entry:
    """A function as the grader stops it: its first instruction, and the
    types of the arguments that NAMES name, in order (none read if NAMES
    is empty)."""

    def __init__(self, function, names=()):
        self.function = function
        self.names = names
        symbol = (gdb.lookup_static_symbol(function) or
                  gdb.lookup_global_symbol(function))
        addresses = elf_functions().get(function, [])
        if symbol is None or symbol.type.code != gdb.TYPE_CODE_FUNC or not addresses:
            clones = sorted(name for name in elf_functions()
                            if name.startswith(function + "."))
            if clones:
                # An IPA clone (.isra, .constprop) has other arguments
                # than the source says: its registers would be read wrong.
                raise GraderError("gcc compiled %s() only as %s, with other arguments "
                                  "than its source's: the grader cannot read them" % (
                                      function, ", ".join(clones)))
            raise NoFunction("no function %s() in the kernel (inlined everywhere, "
                             "or called by nothing)" % function)
        # The address of the ELF symbol: where every call enters.  Debug
        # information may name the out-of-line part of a function that gcc
        # split (synchronize_rcu.part.0) instead.
        if len(addresses) > 1:
            raise GraderError("the kernel has %d functions named %s()" % (
                len(addresses), function))
        self.address = addresses[0]
        self.types = [f.type for f in symbol.type.fields()][:len(names) or 0]
        if names and (len(symbol.type.fields()) != len(names) or
                      len(names) > len(ARGUMENT_REGISTERS)):
            raise GraderError("%s() has %d arguments in the kernel, the grader "
                              "expects %d (%s)" % (function, len(symbol.type.fields()), len(names),
                                                    ", ".join(names)))

    def arguments(self):
        """The arguments, read at the first instruction of the function,
        where the selected CPU is stopped."""
        frame = gdb.newest_frame()
        if int(frame.pc()) != self.address:
            raise GraderError("the kernel is not at the first instruction of %s()" %
                              self.function)
        return Arguments(self.names, [frame.read_register(r).cast(t) for r, t in
                                      zip(ARGUMENT_REGISTERS, self.types)])


# Every breakpoint the checks placed: once they are done, or have failed,
# none may stop the guest on its way to the end.
PLACED = []

# While the kernel runs toward a stop the checks wait for: when (by
# time.monotonic()) the wait's time limit runs out.
DEADLINE = []


class EntryBreakpoint(gdb.Breakpoint):
    """A breakpoint at a function's first instruction that stops when WHEN
    (a Python function of its Arguments) says so: a condition that gdb
    cannot fail to parse, whatever the body's code."""

    def __init__(self, entry, when=None, task=None):
        # (Not "task": gdb.Breakpoint has one, an Ada task's number.)  TASK
        # is (the task, its interrupt level): calls made by that task at
        # that level, not by an interrupt that came meanwhile.
        self.entry = entry
        self.when = when
        self.only_task = task
        self.error = None
        self.interrupted = False
        super().__init__("*0x%x" % entry.address, internal=True)
        PLACED.append(self)

    def stop(self):
        # A breakpoint hit thousands of times a second, its condition
        # false, may swallow the time limit's SIGINT (gdb can clear it
        # while it resumes the kernel): past the deadline, stop anyway.
        if DEADLINE and time.monotonic() > DEADLINE[0]:
            self.interrupted = True
            return True
        try:
            if self.only_task is not None and (current_task(),
                                               interrupt_level()) != self.only_task:
                return False
            return self.when is None or bool(self.when(self.entry.arguments()))
        except KeyboardInterrupt:
            # The time limit's SIGINT came while this ran: a stop for it.
            self.interrupted = True
            return True
        except Exception as e:  # noqa: BLE001 - reported by Session._run
            self.error = e
            return True


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
        self.entries = {}

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
    def has_function(self, function):
        """Whether the kernel has an out-of-line FUNCTION to stop at (gcc
        drops a static function that nothing calls)."""
        try:
            self.entry(function)
            return True
        except NoFunction:
            return False

    def entry(self, function, names=()):
        """FUNCTION's Entry, its arguments named NAMES."""
        key = (function, tuple(names))
        if key not in self.entries:
            self.entries[key] = Entry(function, names)
        return self.entries[key]

    def _run(self, command, seconds, what):
        """Run COMMAND (continue, finish), interrupted after SECONDS; return
        the breakpoints it stopped at."""
        self.stop_event = None
        DEADLINE[:] = [time.monotonic() + seconds]
        timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        try:
            gdb.execute(command, to_string=True)
        except gdb.error as e:
            raise KernelLost("gdb lost the kernel while waiting for %s (%s): "
                             "did QEMU stop? See the console below" % (what, e))
        finally:
            timer.cancel()
            DEADLINE.clear()
        event = self.stop_event
        if isinstance(event, gdb.BreakpointEvent):
            hit = event.breakpoints
            for bp in hit:
                if getattr(bp, "interrupted", False):
                    bp.interrupted = False
                    raise KernelLost("%s did not come within %d s: an endless loop? The "
                                     "CPUs were in %s" % (what, seconds, where_cpus_are()))
                if getattr(bp, "error", None) is not None:
                    error, bp.error = bp.error, None
                    raise GraderError("at a call of %s(): %s" % (
                        bp.entry.function, error)) from error
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
        self.wait_for_call("kernel_execve", seconds=BOOT_SECONDS)

    def wait_for_call(self, function, names=(), when=None, seconds=60, kind=None):
        """Let the kernel run until FUNCTION is called (and WHEN, a Python
        function of its Arguments, says yes); stop at its first
        instruction and return its Arguments, named NAMES.  KIND says in
        words which calls WHEN picks (and what brings them about): a
        student whose kernel never makes one reads it in the failure."""
        entry = self.entry(function, names)
        bp = EntryBreakpoint(entry, when)
        what = "a call of %s()%s" % (function, " " + kind if kind else
                                     " of the kind the check waits for" if when else "")
        try:
            while bp not in self._run("continue", seconds, what):
                pass
        finally:
            bp.delete()
        return entry.arguments()

    def run_to_return(self, on_calls=None, seconds=15):
        """From the first instruction of a function (where wait_for_call()
        stops), run the calling task until the function returns; ON_CALLS
        maps names of functions it may call to (NAMES, ACTION): when this
        task calls one, ACTION gets its Arguments, named NAMES.  Returns
        the value in %rax at the return (the function's, if it returns
        one).  The task, not the CPU: one that sleeps may wake up on
        another CPU."""
        function = gdb.newest_frame().name()
        task = current_task()
        level = interrupt_level()
        # At the first instruction, the return address is on top of the
        # stack: the calling convention's, not the unwinder's.
        entry_sp = int(gdb.parse_and_eval("(unsigned long)$sp"))
        back = gdb.Breakpoint("*0x%x" % readers.read_ulong(entry_sp), internal=True)
        PLACED.append(back)
        # The same address, reached by a deeper call: not this return.
        back.condition = "%s == %d && (unsigned long)$sp > %d" % (CURRENT, task, entry_sp)
        calls = {}
        for name, (names, action) in (on_calls or {}).items():
            bp = EntryBreakpoint(self.entry(name, names), task=(task, level))
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
                        calls[bp](bp.entry.arguments())
        finally:
            back.delete()
            for bp in calls:
                bp.delete()

    @staticmethod
    def return_now(value):
        """At the first instruction of a function, return VALUE from it at
        once, as if its body had: what a check uses to make an allocation
        fail or to keep a report off the console."""
        sp = int(gdb.parse_and_eval("(unsigned long)$sp"))
        gdb.execute("set $rax = %d" % value)
        gdb.execute("set $pc = 0x%x" % readers.read_ulong(sp))
        gdb.execute("set $sp = 0x%x" % (sp + 8))

    @staticmethod
    def signed(value):
        """An int a function returned in %eax, from %rax."""
        value &= 0xffffffff
        return value - (1 << 32) if value & 0x80000000 else value

    def to_the_end(self, seconds):
        """Let the guest finish its script and power off."""
        for bp in self.crash_breaks + PLACED:
            if bp.is_valid():
                bp.enabled = False
        try:
            self._run("continue", seconds, "the guest to power off")
        except KernelLost:
            pass


ELF_FUNCTIONS = {}


def elf_functions():
    """The functions of the kernel's ELF symbol table: {name: [address]}.
    nm reads it in a fraction of a second, once."""
    if not ELF_FUNCTIONS:
        listing = subprocess.run(["nm", "--defined-only", gdb.current_progspace().filename],
                                 check=True, capture_output=True, text=True).stdout
        for line in listing.splitlines():
            address, kind, name = line.split(None, 2)
            if kind in "tTwW":
                ELF_FUNCTIONS.setdefault(name, []).append(int(address, 16))
    return ELF_FUNCTIONS


def current_task():
    """The task that the selected CPU runs."""
    return int(gdb.parse_and_eval(CURRENT))


# The selected CPU's preempt count (x86-64, Linux 6.1: a per-CPU variable),
# and its bits that count the interrupts being served: NMIs, hardirqs, and
# a softirq being served (not only disabled).
PREEMPT_COUNT = "*(int *)($gs_base + (unsigned long)&__preempt_count)"
INTERRUPT_BITS = 0xf00000 | 0x0f0000 | 0x000100


def interrupt_level():
    """How deep in interrupts the selected CPU is: the same for the calls a
    function makes as for the function (which may itself run in a
    softirq), deeper for an interrupt that came on its stack meanwhile,
    whose work is not the function's."""
    return int(gdb.parse_and_eval(PREEMPT_COUNT)) & INTERRUPT_BITS


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


def grader_fault(error):
    """What the grader could not do, in one line: the error, the line of the
    check that met it, and where the kernel was stopped."""
    # A fault met in a breakpoint's stop() is raised again where gdb
    # stopped: the frames of both, outer first.
    frames = traceback.extract_tb(error.__traceback__)
    if error.__cause__ is not None:
        frames += traceback.extract_tb(error.__cause__.__traceback__)
    labs = [f for f in frames if os.path.basename(f.filename) == "checks.py"]
    said = str(error) if isinstance(error, (GraderError, gdb.error)) else "%s: %s" % (
        type(error).__name__, error)
    # Where: the deepest line of Python, and the line of the lab's check
    # that led there, if that is another.
    where = frames[-1:]
    if labs and frames and labs[-1] is not frames[-1]:
        where.append(labs[-1])
    if where:
        said += " (%s)" % ", from ".join("%s:%d, in %s()" % (
            os.path.relpath(f.filename, KIT_ROOT), f.lineno, f.name) for f in where)
    try:
        said += "; the kernel was stopped in %s()" % gdb.newest_frame().name()
    except gdb.error:
        pass
    return said.replace("\t", " ").replace("\n", " ")


def main():
    lab = exercise.load(os.environ["KIT_GRADE_SPEC"])
    selected = set(filter(None, os.environ.get("KIT_GRADE_TESTS", "").split(",")))
    live_tests = [t["id"] for t in lab.TESTS if t["kind"] in ("gdb", "answer")]
    questions = [t for t in lab.TESTS if t["kind"] == "answer" and t["id"] in selected]
    session = Session(selected)
    lost = fault = None
    try:
        if any(t["kind"] == "gdb" and t["id"] in selected for t in lab.TESTS):
            lab.gdb_checks(session)
        if questions:
            check_answers(session, lab, questions, os.environ.get("KIT_GRADE_ANSWERS", ""))
    except KernelLost as e:
        lost = str(e)
    except Exception as e:  # noqa: BLE001 - any fault of the grader is its own
        fault = grader_fault(e)
    with open(os.environ["KIT_GRADE_RESULTS"], "w") as results:
        for test in live_tests:
            if test not in selected:
                continue
            if test in session.failures:
                why = "; ".join(session.failures[test])
                results.write("%s\tfail\t%s\n" % (test, why))
            elif test in session.ran:
                results.write("%s\tok\n" % test)
            elif fault:
                results.write("%s\terror\t%s\n" % (test, fault))
            else:
                results.write("%s\tfail\t%s\n" % (
                    test, lost or "the check did not run (a bug in the grader)"))
    if session.kernel_log is not None:
        with open(os.environ["KIT_GRADE_RESULTS"] + ".log", "w") as log:
            log.write(session.kernel_log)
    # After a fault of the grader the kernel is still the student's to
    # grade: the console tests read the rest of its run.
    if lost is None and os.environ.get("KIT_GRADE_UNTIL_POWEROFF"):
        session.to_the_end(300)


gdb.execute("set pagination off")
main()

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read a lab's exercise, SPEC: labs/LAB/exercise.toml (its data) and the
lab's checks.py beside it, if it has one (its code), for the shell and for
grading/grader.py.

  exercise.py skeleton SPEC TREE   blank the functions SPEC names in TREE
                                   (the stage's source, the solution): each
                                   body becomes a TODO and a stub that
                                   compiles
  exercise.py functions SPEC       FILE<TAB>FUNCTION<TAB>TODO, one a line
  exercise.py where SPEC TREE      FILE<TAB>FUNCTION<TAB>FIRST<TAB>LAST: the
                                   lines of each function's definition in
                                   TREE, from its name to its closing "}"
  exercise.py tests SPEC           ID<TAB>POINTS<TAB>KIND<TAB>BOOT<TAB>NAME
  exercise.py hint SPEC ID         the hint of test ID
  exercise.py boot SPEC BOOT KEY   one setting of boot BOOT, by name: run
                                   (the guest script), append (the kernel
                                   parameters), gdb ("yes" if gdb watches,
                                   else "no"), kernel (whose kernel boots:
                                   "exercise", the student's, or "stage",
                                   the stage's own)
  exercise.py answers SPEC         the template of the student's answers
                                   file: a line "ID: " per question

The skeleton is made from the solution each time, so the solution stays
the one source of truth: a function's body is the lines from the "{" that
opens it at the start of a line to the "}" that closes it, as kernel style
writes every function.
"""

import importlib.util
import os
import re
import sys
import textwrap
import tomllib
import types

# What an exercise.toml may hold (labs/00-baseline's and labs/07-cpu-queues'
# say what each is).
KEYS = ("answers_append", "functions", "boots", "tests", "questions")


def load(path):
    """A lab's exercise.toml, with what a lab may leave out filled in:
    FUNCTIONS (none: questions only), TESTS (none: questions only), and
    the questions, which become tests of kind "answer" of the boot
    "answers": the stage's own kernel, the guest running churn and gdb
    stopping it where each question is asked (answers_append: kernel
    parameters).  The lab's code, checks.py beside it if it has one, gives
    gdb_checks() (its live tests) and the functions that the questions'
    "function" names: each becomes the callable itself."""
    try:
        with open(path, "rb") as f:
            spec = tomllib.load(f)
    except tomllib.TOMLDecodeError as e:
        sys.exit("exercise.py: %s: %s" % (path, e))
    unknown = [key for key in spec if key not in KEYS]
    if unknown:
        sys.exit("exercise.py: %s: unknown key %s (a lab's exercise.toml has %s)" % (
            path, ", ".join(unknown), ", ".join(KEYS)))
    checks = None
    code = os.path.join(os.path.dirname(path), "checks.py")
    if os.path.exists(code):
        module = importlib.util.spec_from_file_location("lab_checks", code)
        checks = importlib.util.module_from_spec(module)
        module.loader.exec_module(checks)
    questions = []
    for q in spec.get("questions", []):
        if ("value" in q) == ("function" in q):
            sys.exit("exercise.py: %s: question %s needs a value (a gdb expression) "
                     "or a function (of checks.py), one of the two" % (path, q.get("id")))
        if "function" in q:
            function = getattr(checks, q["function"], None)
            if not callable(function):
                sys.exit("exercise.py: %s: question %s: no function %s() in %s" % (
                    path, q.get("id"), q["function"], code))
            q = dict(q, function=function)
        questions.append(dict(q, kind="answer", boot="answers"))
    tests = spec.get("tests", [])
    if any(t.get("kind") == "gdb" for t in tests) and not hasattr(checks, "gdb_checks"):
        sys.exit("exercise.py: %s: tests of kind gdb, and no gdb_checks() in %s" % (path, code))
    return types.SimpleNamespace(
        FUNCTIONS=spec.get("functions", []),
        TESTS=tests + questions,
        BOOTS=dict({"answers": {"run": "churn", "gdb": True, "kernel": "stage",
                                "append": spec.get("answers_append", "")}},
                   **spec.get("boots", {})),
        gdb_checks=getattr(checks, "gdb_checks", None))


def definition(lines, name, path):
    """Where function NAME is defined in LINES (the text of PATH): the
    indices of its first line (the one with its name), of the "{" that
    opens its body and of the "}" that closes it."""
    head = re.compile(r"^[a-z].*\b%s\(" % re.escape(name))
    for i, line in enumerate(lines):
        if not head.match(line) or line.rstrip().endswith(";"):
            continue
        # The signature may go on for a few lines; the body opens with "{".
        for j in range(i, min(i + 8, len(lines))):
            if lines[j].rstrip().endswith(";"):
                break
            if lines[j] == "{\n":
                for k in range(j + 1, len(lines)):
                    if lines[k] == "}\n":
                        return i, j, k
                break
    sys.exit("exercise.py: no definition of %s() with its body in %s" % (name, path))


def skeleton(spec, tree):
    lab = load(spec)
    for number, f in enumerate(lab.FUNCTIONS, 1):
        path = "%s/%s" % (tree, f["file"])
        with open(path) as src:
            lines = src.readlines()
        _, start, end = definition(lines, f["name"], path)
        todo = textwrap.wrap("TODO %d: %s" % (number, f["todo"]), 68)
        body = ["{\n", "\t/*\n"] + ["\t * %s\n" % t for t in todo] + ["\t */\n"]
        if f["stub"]:
            body.append("\t%s\n" % f["stub"])
        lines[start:end + 1] = body + ["}\n"]
        with open(path, "w") as dst:
            dst.writelines(lines)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    command, spec = argv[1], argv[2]
    if command == "skeleton" and len(argv) == 4:
        skeleton(spec, argv[3])
        return
    lab = load(spec)
    if command == "functions":
        for f in lab.FUNCTIONS:
            print("%s\t%s\t%s" % (f["file"], f["name"], f["todo"]))
    elif command == "where" and len(argv) == 4:
        for f in lab.FUNCTIONS:
            path = "%s/%s" % (argv[3], f["file"])
            with open(path) as src:
                first, _, last = definition(src.readlines(), f["name"], path)
            print("%s\t%s\t%d\t%d" % (f["file"], f["name"], first + 1, last + 1))
    elif command == "tests":
        for t in lab.TESTS:
            print("%s\t%d\t%s\t%s\t%s" % (t["id"], t["points"], t["kind"], t["boot"], t["name"]))
    elif command == "hint" and len(argv) == 4:
        print(next(t["hint"] for t in lab.TESTS if t["id"] == argv[3]))
    elif command == "boot" and len(argv) == 5:
        b = lab.BOOTS[argv[3]]
        settings = {"run": b["run"], "append": b["append"],
                    "gdb": "yes" if b["gdb"] else "no",
                    "kernel": b.get("kernel", "exercise")}
        if argv[4] not in settings:
            sys.exit("exercise.py boot: no setting %r; the settings: %s" % (
                argv[4], " ".join(settings)))
        print(settings[argv[4]])
    elif command == "answers":
        print("# %s: your answers, one line each: the question's id, a colon, "
              "the answer." % spec.split("/")[-2])
        print("# make grade checks each against the running kernel.")
        for t in lab.TESTS:
            if t["kind"] == "answer":
                print("\n# %s" % t["name"])
                print("%s: " % t["id"])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)

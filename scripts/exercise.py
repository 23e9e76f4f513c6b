#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read a lab's coding exercise (labs/LAB/exercise.py) for the shell.

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
  exercise.py boot SPEC BOOT       four lines: the guest script, the
                                   kernel parameters, 1 if gdb watches,
                                   and whose kernel boots: "exercise" (the
                                   student's) or "stage" (the stage's own)
  exercise.py answers SPEC         the template of the student's answers
                                   file: a line "ID: " per question

The skeleton is made from the solution each time, so the solution stays
the one source of truth: a function's body is the lines from the "{" that
opens it at the start of a line to the "}" that closes it, as kernel style
writes every function.
"""

import importlib.util
import re
import sys
import textwrap


def load(path):
    """A lab's exercise.py, with what a lab may leave out filled in:
    FUNCTIONS (none: questions only), TESTS (none: questions only), and
    QUESTIONS, which become tests of kind "answer" of the boot "answers":
    the stage's own kernel, the guest running churn and gdb stopping it
    where each question is asked (ANSWERS_APPEND: kernel parameters)."""
    spec = importlib.util.spec_from_file_location("lab_exercise", path)
    lab = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lab)
    lab.FUNCTIONS = getattr(lab, "FUNCTIONS", [])
    lab.TESTS = getattr(lab, "TESTS", []) + [
        dict(q, kind="answer", boot="answers") for q in getattr(lab, "QUESTIONS", [])]
    lab.BOOTS = dict({"answers": {"run": "churn", "gdb": True, "kernel": "stage",
                                  "append": getattr(lab, "ANSWERS_APPEND", "")}},
                     **getattr(lab, "BOOTS", {}))
    return lab


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
    elif command == "boot" and len(argv) == 4:
        b = lab.BOOTS[argv[3]]
        print("%s\n%s\n%d\n%s" % (b["run"], b["append"], 1 if b["gdb"] else 0,
                                   b.get("kernel", "exercise")))
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

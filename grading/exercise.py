#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read a lab's exercise, SPEC: labs/LAB/graded.toml (its data) and the
lab's checks.py beside it, if it has one (its code), for the shell and for
grading/grader.py.

  exercise.py skeleton SPEC TREE   blank the functions SPEC names in TREE
                                   (the stage's source, the solution): each
                                   body becomes a TODO and a stub that
                                   compiles
  exercise.py functions SPEC KEY...
                                   for each function to write, the values
                                   of the keys KEY... (SCHEMA's: file, name,
                                   stub, todo), tab-separated, in that order
  exercise.py where SPEC TREE      FILE<TAB>FUNCTION<TAB>FIRST<TAB>LAST: the
                                   lines of each function's definition in
                                   TREE, from its name to its closing "}"
  exercise.py tests SPEC KEY...    for each test, questions included, the
                                   values of the keys KEY... (id, points,
                                   kind, boot, name, hint), tab-separated,
                                   in that order
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

# The schema of a lab's graded.toml (labs/LAB/graded.toml), written down
# here and nowhere else: for each kind of table, its keys, each with
# whether a table must have it, its type, and what it means.  load()
# refuses a key that is not here, a missing one, and a value of another
# type, naming the table.
SCHEMA = {
    "lab": {
        "functions": (False, list, "the functions the student writes, "
                      "[[functions]] tables (none: the lab has questions only)"),
        "boots": (False, dict, "the boots that the tests read, [boots.NAME] tables"),
        "tests": (False, list, "the tests of the student's code, [[tests]] tables"),
        "questions": (False, list, "the handout's graded questions, [[questions]] tables"),
        "answers_append": (False, str, "kernel parameters of the boot that asks "
                           "the questions"),
    },
    "functions": {
        "file": (True, str, "the source file that defines it, in the kernel tree"),
        "name": (True, str, "its name: the skeleton blanks its body (the stage's code)"),
        "stub": (True, str, 'the statement the blanked body keeps, so that it '
                 'compiles ("" for none)'),
        "todo": (True, str, "the TODO comment that says what to write there"),
    },
    "boots": {
        "run": (True, str, "the guest script it runs (guest/run/)"),
        "append": (True, str, 'kernel parameters ("" for none)'),
        "gdb": (True, bool, 'whether gdb watches it: its tests of kind "gdb" run then'),
        "kernel": (False, str, 'whose kernel boots: "exercise", the student\'s '
                   '(if left out), or "stage", the stage\'s own'),
    },
    "tests": {
        "id": (True, str, 'its name (make grade\'s FILTER matches "ID: NAME")'),
        "boot": (True, str, "the boot it reads"),
        "kind": (True, str, '"gdb": gdb_checks() of checks.py checks it in the '
                 'live kernel; "console": it passes if the boot\'s console says '
                 "that the guest's script passed (scripts/console.sh)"),
        "points": (True, int, "what it is worth"),
        "name": (True, str, "what it checks"),
        "hint": (True, str, "what make grade says when it fails"),
    },
    "questions": {
        "id": (True, str, 'its name: the answers file has a line "ID: ANSWER" for it'),
        "points": (True, int, "what it is worth"),
        "name": (True, str, "its text (the answers file shows it as a comment)"),
        "hint": (True, str, "what make grade says when the answer is wrong"),
        "value": (False, str, "what the answer must be: a gdb expression, read in "
                  "the live kernel; or, instead of value,"),
        "function": (False, str, "the name of a function of the lab's checks.py "
                     "that gdb calls for the value"),
        "at": (False, str, "the function at whose call the value is read; "
               "kernel_execve (that is, once booted) if left out"),
    },
}
# The values some keys may take.
CHOICES = {("tests", "kind"): ("gdb", "console"), ("boots", "kernel"): ("exercise", "stage")}


def check_table(path, kind, where, table):
    """Exit, naming WHERE in PATH, unless TABLE holds the keys of a table of
    KIND (SCHEMA), each of its type, and every key it must."""
    schema = SCHEMA[kind]
    for key, value in table.items():
        if key not in schema:
            sys.exit("exercise.py: %s: %s: unknown key %s (a %s table has %s)" % (
                path, where, key, kind, ", ".join(schema)))
        _, kind_of_value, _ = schema[key]
        # (bool is an int to Python; a count is no bool.)
        if not isinstance(value, kind_of_value) or (kind_of_value is int and
                                                    isinstance(value, bool)):
            sys.exit("exercise.py: %s: %s: %s is %r, not a %s" % (
                path, where, key, value, kind_of_value.__name__))
        if (kind, key) in CHOICES and value not in CHOICES[(kind, key)]:
            sys.exit("exercise.py: %s: %s: %s is %r, not one of %s" % (
                path, where, key, value, ", ".join(CHOICES[(kind, key)])))
    missing = [key for key, (needed, _, _) in schema.items() if needed and key not in table]
    if missing:
        sys.exit("exercise.py: %s: %s has no %s" % (path, where, ", ".join(missing)))


def check_spec(path, spec):
    """Every table of a lab's graded.toml as SCHEMA says, nested ones too."""
    check_table(path, "lab", "the file", spec)
    for i, f in enumerate(spec.get("functions", []), 1):
        check_table(path, "functions", "[[functions]] %d (%s)" % (i, f.get("name")), f)
    for name, boot in spec.get("boots", {}).items():
        check_table(path, "boots", "[boots.%s]" % name, boot)
    for i, t in enumerate(spec.get("tests", []), 1):
        check_table(path, "tests", "[[tests]] %d (%s)" % (i, t.get("id")), t)
        if t["boot"] not in spec.get("boots", {}):
            sys.exit("exercise.py: %s: [[tests]] %d (%s): no boot %s (the boots: %s)" % (
                path, i, t["id"], t["boot"], ", ".join(spec.get("boots", {})) or "none"))
    for i, q in enumerate(spec.get("questions", []), 1):
        check_table(path, "questions", "[[questions]] %d (%s)" % (i, q.get("id")), q)


def load(path):
    """A lab's graded.toml, with what a lab may leave out filled in:
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
    check_spec(path, spec)
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
    # The name starts the line, or follows the return type on it.
    head = re.compile(r"^(?:[a-z].*\b)?%s\(" % re.escape(name))
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


def fields(table, keys, schema):
    """The values of KEYS in TABLE, tab-separated, in that order; exit if a
    key is not one of SCHEMA's (the caller names what it reads, so that no
    column means something by its place alone)."""
    unknown = [key for key in keys if key not in schema]
    if unknown:
        sys.exit("exercise.py: no key %s (the keys: %s)" % (", ".join(unknown), ", ".join(schema)))
    return "\t".join(str(table[key]) for key in keys)


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    command, spec = argv[1], argv[2]
    if command == "skeleton" and len(argv) == 4:
        skeleton(spec, argv[3])
        return
    lab = load(spec)
    if command == "functions" and len(argv) > 3:
        for f in lab.FUNCTIONS:
            print(fields(f, argv[3:], SCHEMA["functions"]))
    elif command == "where" and len(argv) == 4:
        for f in lab.FUNCTIONS:
            path = "%s/%s" % (argv[3], f["file"])
            with open(path) as src:
                first, _, last = definition(src.readlines(), f["name"], path)
            print("%s\t%s\t%d\t%d" % (f["file"], f["name"], first + 1, last + 1))
    elif command == "tests" and len(argv) > 3:
        for t in lab.TESTS:
            print(fields(t, argv[3:], SCHEMA["tests"]))
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

# SPDX-License-Identifier: GPL-2.0
"""Lab 00's graded questions: `make grade LAB=0` reads the answers from the
student's answers file (make exercise writes it) and checks each against
the running stage kernel (vm/gdb/grader.py).  A question has an id, its
points, its text (name), a hint, and its "value": a gdb expression, or a
function of the lab's, read when the kernel first reaches "at"
(kernel_execve if left out).  scripts/exercise.py's load() makes each a test of
kind "answer" on the boot "answers"; lab 07's exercise.py says what the
other tests are."""

QUESTIONS = [
    {
        "id": "q1-slab-state", "points": 10,
        "name": "Question 1: the value of slab_state when /init runs (a name)",
        "at": "kernel_execve", "value": "slab_state",
        "hint": "print slab_state at the kernel_execve breakpoint of section 2",
    },
]

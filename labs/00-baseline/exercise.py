# SPDX-License-Identifier: GPL-2.0
"""Lab 00's graded questions: `make grade LAB=0` reads the answers from the
student's answers file (make exercise writes it) and checks each against
the running stage kernel (vm/gdb/grader.py).  The format is lab 07's (see
labs/07-cpu-queues/exercise.py); a question is a test of kind "answer" of
the boot "answers" (vm/exercise.py's load() says what it is): its "value"
is a gdb expression, or a function, read when the kernel first reaches
"at" (kernel_execve if left out)."""

TESTS = [
    {
        "id": "q1-slab-state", "boot": "answers", "kind": "answer", "points": 10,
        "name": "Question 1: the value of slab_state when /init runs (a name)",
        "at": "kernel_execve", "value": "slab_state",
        "hint": "print slab_state at the kernel_execve breakpoint of section 2",
    },
]

# SPDX-License-Identifier: GPL-2.0
"""The live checks of lab 03's graded.toml: the function that gives a
question's value (its "function"), which grading/grader.py runs in gdb."""

CMPXCHG_DOUBLE = 0x40000000


def without_cmpxchg_double():
    """Which of kmalloc-64 and kmalloc-128 has no __CMPXCHG_DOUBLE."""
    import readers

    names = [name for name in ("kmalloc-64", "kmalloc-128")
             if not int(readers.find_cache(name)["flags"]) & CMPXCHG_DOUBLE]
    return " and ".join(names) or "neither"

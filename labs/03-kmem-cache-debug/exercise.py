# SPDX-License-Identifier: GPL-2.0
"""Lab 03's graded questions (see labs/00-baseline/exercise.py), asked of
the kernel booted as the lab boots it, with slub_debug=FZPU,kmalloc-64."""

ANSWERS_APPEND = "slub_debug=FZPU,kmalloc-64"

CMPXCHG_DOUBLE = 0x40000000


def without_cmpxchg_double():
    """Which of kmalloc-64 and kmalloc-128 has no __CMPXCHG_DOUBLE."""
    import slubq

    names = [name for name in ("kmalloc-64", "kmalloc-128")
             if not int(slubq.find_cache(name)["flags"]) & CMPXCHG_DOUBLE]
    return " and ".join(names) or "neither"


QUESTIONS = [
    {
        "id": "q1-no-cmpxchg-double", "points": 10,
        "name": "Question 1: which of kmalloc-64 and kmalloc-128 lacks "
                "__CMPXCHG_DOUBLE (a cache name)",
        "value": without_cmpxchg_double,
        "hint": "kmem_cache_open() grants it only without SLAB_NO_CMPXCHG; "
                "kit-cache-flags shows both",
    },
    {
        "id": "q1-debug-flags", "points": 10,
        "name": "Question 1: kmalloc-64's flags & 0x210d00 (SLAB_DEBUG_FLAGS), "
                "in hexadecimal",
        "value": "$kit_cache(\"kmalloc-64\")->flags & 0x210d00",
        "hint": "F, Z, P and U are 0x100, 0x400, 0x800 and 0x10000",
    },
]

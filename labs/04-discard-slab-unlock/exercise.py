# SPDX-License-Identifier: GPL-2.0
"""Lab 04's graded questions (see labs/00-baseline/exercise.py)."""

QUESTIONS = [
    {
        "id": "q3-min-partial-kmalloc-64", "points": 10,
        "name": "Question 3, for kmalloc-64: its min_partial",
        "value": "$kit_cache(\"kmalloc-64\")->min_partial",
        "hint": "kmem_cache_open(): ilog2(s->size) / 2, kept between "
                "MIN_PARTIAL and MAX_PARTIAL",
    },
]

# SPDX-License-Identifier: GPL-2.0
"""Lab 02's graded questions (see labs/00-baseline/exercise.py)."""

QUESTIONS = [
    {
        "id": "q1-first-chunk-free", "points": 10,
        "name": "Question 1: the bytes the first chunk has free for dynamic "
                "allocations when SLUB starts",
        "at": "pcpu_setup_first_chunk", "value": "ai->dyn_size",
        "hint": "lab 01's arithmetic with PERCPU_DYNAMIC_RESERVE at 80 KiB: "
                "whole pages, the rest to the dynamic area",
    },
]

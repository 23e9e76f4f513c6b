# SPDX-License-Identifier: GPL-2.0
"""Lab 01's graded questions (see labs/00-baseline/exercise.py)."""

QUESTIONS = [
    {
        "id": "q1-dyn-size-asked", "points": 10,
        "name": "Question 1: the dyn_size x86 asks pcpu_embed_first_chunk() for, in bytes",
        "at": "pcpu_embed_first_chunk", "value": "dyn_size",
        "hint": "the printf of section 1, at the pcpu_embed_first_chunk breakpoint",
    },
    {
        "id": "q1-dyn-size-got", "points": 10,
        "name": "Question 1: the dyn_size the first chunk gets, in bytes",
        "at": "pcpu_setup_first_chunk", "value": "ai->dyn_size",
        "hint": "pcpu_build_alloc_info() rounds the three areas up to whole "
                "pages and gives the rest to the dynamic one; ai->dyn_size "
                "at pcpu_setup_first_chunk",
    },
]

# SPDX-License-Identifier: GPL-2.0
"""Lab 10's graded questions (see labs/00-baseline/exercise.py), asked of
the kernel booted as the lab boots it, with slub_min_order=7."""

ANSWERS_APPEND = "slub_min_order=7"

# s->oo: the order above OO_SHIFT (20 from this stage on), the objects below.
OBJECTS = "($kit_cache(\"%s\")->oo.x & 0xfffff)"

QUESTIONS = [
    {
        "id": "q2-objects-kmalloc-8", "points": 10,
        "name": "Question 2: objects in a kmalloc-8 slab",
        "value": OBJECTS % "kmalloc-8",
        "hint": "order_objects(7, 8): the slab's bytes, less its bitmap, over "
                "the slot size; kit-caches kmalloc-8 shows it",
    },
    {
        "id": "q2-objects-kmalloc-64", "points": 10,
        "name": "Question 2: objects in a kmalloc-64 slab",
        "value": OBJECTS % "kmalloc-64",
        "hint": "order_objects(7, 64); kit-caches kmalloc-64 shows it",
    },
    {
        "id": "q2-oo-kmalloc-8", "points": 10,
        "name": "Question 2: kmalloc-8's oo.x, in hexadecimal",
        "value": "$kit_cache(\"kmalloc-8\")->oo.x",
        "hint": "the order shifted left by OO_SHIFT, plus the objects",
    },
    {
        "id": "q2-min-kmalloc-8", "points": 10,
        "name": "Question 2: kmalloc-8's min.x",
        "value": "$kit_cache(\"kmalloc-8\")->min.x",
        "hint": "the layout of an order-0 slab, which allocate_slab() falls "
                "back to",
    },
]

# SPDX-License-Identifier: GPL-2.0
"""Lab 06's graded questions (see labs/00-baseline/exercise.py)."""

QUESTIONS = [
    {
        "id": "q1-slab-state", "points": 10,
        "name": "Question 1: slab_state at the first call of bootstrap() (a name)",
        "at": "bootstrap", "value": "slab_state",
        "hint": "print slab_state at the breakpoint of section 1",
    },
    {
        "id": "q1-object-size", "points": 10,
        "name": "Question 1: the object size of the kmem_cache cache, in bytes",
        "at": "bootstrap", "value": "static_cache->object_size",
        "hint": "offsetof(struct kmem_cache, node) + nr_node_ids * sizeof(struct "
                "kmem_cache_node *); print static_cache->object_size",
    },
    {
        "id": "q1-slot-size", "points": 10,
        "name": "Question 1: the slot size of the kmem_cache cache, in bytes",
        "at": "bootstrap", "value": "static_cache->size",
        "hint": "SLAB_HWCACHE_ALIGN rounds the object size up to a cache line "
                "(the boot log's HWalign); print static_cache->size",
    },
]

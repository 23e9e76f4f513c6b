# SPDX-License-Identifier: GPL-2.0
"""Lab 05's graded questions (see labs/00-baseline/exercise.py)."""

QUESTIONS = [
    {
        "id": "q1-slab-state", "points": 10,
        "name": "Question 1: slab_state when create_kmalloc_caches() starts (a name)",
        "at": "create_kmalloc_caches", "value": "slab_state",
        "hint": "print slab_state at the breakpoint of section 1",
    },
    {
        "id": "q1-kmalloc-dma", "points": 10,
        "name": "Question 1: the value of KMALLOC_DMA (a number)",
        "at": "create_kmalloc_caches", "value": "(int)KMALLOC_DMA",
        "hint": "enum kmalloc_cache_type in include/linux/slab.h, with the "
                "kit's config; print (int)KMALLOC_DMA",
    },
    {
        "id": "q1-nr-kmalloc-types", "points": 10,
        "name": "Question 1: the value of NR_KMALLOC_TYPES (a number)",
        "at": "create_kmalloc_caches", "value": "(int)NR_KMALLOC_TYPES",
        "hint": "the last of enum kmalloc_cache_type; print (int)NR_KMALLOC_TYPES",
    },
    {
        "id": "q2-dma-caches", "points": 10,
        "name": "Question 2: how many dma- caches there are (a number)",
        "at": "kernel_execve", "value": lambda: dma_caches(),
        "hint": "kit-caches dma- lists them",
    },
]


def dma_caches():
    """The caches whose names start with dma-, counted in the kernel's list."""
    import slubq

    return sum(1 for s in slubq.caches() if s["name"].string().startswith("dma-"))

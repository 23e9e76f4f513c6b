# SPDX-License-Identifier: GPL-2.0
"""Lab 09's coding exercise: available(), and the tests that
`make grade LAB=9` runs on it.  The format is lab 07's (see
labs/07-cpu-queues/exercise.py)."""

FUNCTIONS = [
    {
        "file": "mm/slub.c",
        "name": "available",
        "stub": "return 0;",
        "todo": "return the number of free objects of the slab: the bits "
                "set in its bitmap, map(slab), which has one bit for each "
                "of its slab->objects objects.",
    },
]

# "live": gdb stops the kernel at available() while the guest reads
# /proc/slabinfo and sysfs in a loop (count_partial() calls it).
BOOTS = {
    "live": {"run": "churn", "append": "", "gdb": True},
}

TESTS = [
    {
        "id": "available-small", "boot": "live", "kind": "gdb", "points": 50,
        "name": "available() counts the free objects of slabs of up to 64 "
                "objects (bitmap in struct slab)",
        "hint": "count set bits, not clear ones: bitmap_weight(map(slab), "
                "slab->objects)",
    },
    {
        "id": "available-large", "boot": "live", "kind": "gdb", "points": 50,
        "name": "available() counts the free objects of slabs of more than "
                "64 objects (bitmap at the end of the slab)",
        "hint": "the bitmap of a slab of more than 64 objects is several "
                "words long: count slab->objects bits (not a word, not "
                "map_size(), which is in bytes)",
    },
]

# Question 3: the words of bitmap available() reads on a slab of the cache
# (s->oo: objects below OO_SHIFT, 16 in this stage).
WORDS = "((($kit_cache(\"%s\")->oo.x & 0xffff) + 63) / 64)"
QUESTIONS = [
    {
        "id": "q3-words-kmalloc-%d" % size, "points": 5,
        "name": "Question 3: words of bitmap available() reads on a kmalloc-%d slab" % size,
        "value": WORDS % ("kmalloc-%d" % size),
        "hint": "BITS_TO_LONGS() of the slab's objects; kit-caches gives those",
    }
    for size in (8, 16, 32)
]

CALLS = 4


def gdb_checks(g):
    """The live tests: run in gdb by vm/gdb/grader.py, G its Session."""
    g.wait_for_boot()
    for test, condition in (("available-small", "slab->objects <= 64"),
                            ("available-large", "slab->objects > 64")):
        if g.wants(test):
            check_available(g, test, [watch_available(g, condition)
                                      for _ in range(CALLS)])


def watch_available(g, condition):
    """One call of available(): the slab's bitmap, and what it returned."""
    import gdb
    import slubq

    g.wait_for_call("available", condition)
    slab = gdb.parse_and_eval("slab")
    bits, where = slubq.slab_map(slab)
    call = {
        "cache": slab["slab_cache"]["name"].string(),
        "objects": int(slab["objects"]),
        "inuse": int(slab["inuse"]),
        "free": bin(bits).count("1"),
        "where": where,
    }
    call["returned"] = g.signed(g.run_to_return())
    return call


def check_available(g, test, calls):
    for c in calls:
        g.check(test, c["returned"] == c["free"],
                "available() on a %s slab of %d objects, %d in use, whose "
                "bitmap (%s) has %d bits set, returned %d" % (
                    c["cache"], c["objects"], c["inuse"], c["where"],
                    c["free"], c["returned"]))

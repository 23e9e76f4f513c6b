# SPDX-License-Identifier: GPL-2.0
"""The live checks of lab 09's exercise.toml: gdb_checks() runs its tests
of kind "gdb"; vm/gdb/grader.py runs it in gdb, on the boot "live"."""

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

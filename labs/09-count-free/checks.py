# SPDX-License-Identifier: GPL-2.0
"""The live checks of lab 09's graded.toml: gdb_checks() runs its tests
of kind "gdb"; grading/grader.py runs it in gdb, on the boot "live"."""

CALLS = 4
# available()'s argument (read at the first instruction: see
# grading/grader.py).
AVAILABLE = ("slab",)


def gdb_checks(g):
    """The live tests: run in gdb by grading/grader.py, G its Session."""
    g.wait_for_boot()
    for test, small in (("available-small", True), ("available-large", False)):
        if g.wants(test):
            check_available(g, test, [watch_available(g, small) for _ in range(CALLS)])
    if g.wants("available-bitmap"):
        check_available(g, "available-bitmap", [watch_available(g, True, skew=True)])


def watch_available(g, small, skew=False):
    """One call of available() on a slab of up to 64 objects (SMALL) or of
    more: the slab's bitmap, and what it returned.  SKEW: for the call,
    slab->inuse says one object more or less than the bitmap does (a
    corrupted counter, which verify_slab() calls available() to find), and
    is put back before the caller reads it."""
    import gdb
    import readers

    a = g.wait_for_call("available", AVAILABLE,
                        lambda a: (int(a.slab["objects"]) <= 64) == small)
    slab = a.slab
    bits, where = readers.slab_map(slab)
    call = {
        "cache": slab["slab_cache"]["name"].string(),
        "objects": int(slab["objects"]),
        "inuse": int(slab["inuse"]),
        "free": bin(bits).count("1"),
        "where": where,
        "skewed": None,
    }
    if skew:
        call["skewed"] = call["inuse"] + 1 if call["inuse"] < call["objects"] else call["inuse"] - 1
        set_inuse(slab, call["skewed"])
    try:
        call["returned"] = g.signed(g.run_to_return())
    finally:
        if skew:
            try:
                set_inuse(slab, call["inuse"])
            except gdb.error:
                pass  # the kernel is lost: what ended the call says so
    return call


def set_inuse(slab, value):
    import gdb

    gdb.execute("set var ((struct slab *)0x%x)->inuse = %d" % (int(slab), value))


def check_available(g, test, calls):
    for c in calls:
        g.check(test, c["returned"] == c["free"],
                "available() on a %s slab of %d objects, %d in use%s, whose "
                "bitmap (%s) has %d bits set, returned %d" % (
                    c["cache"], c["objects"], c["inuse"],
                    "" if c["skewed"] is None else
                    " (slab->inuse made to say %d for the call)" % c["skewed"],
                    c["where"], c["free"], c["returned"]))

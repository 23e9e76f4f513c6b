# SPDX-License-Identifier: GPL-2.0
"""The live checks of lab 07's exercise.toml: gdb_checks() runs its tests
of kind "gdb"; vm/gdb/grader.py runs it in gdb, on the boot "live"."""

RETRIEVE_TESTS = ("retrieve-count", "retrieve-bits", "retrieve-addresses", "retrieve-inuse")
DRAIN_TESTS = ("drain-each", "drain-lock")
# How many calls of each function are watched.
CALLS = 6


def gdb_checks(g):
    """The live tests: run in gdb by vm/gdb/grader.py, G its Session."""
    # The kernel boots to its first program: a skeleton stops before.
    g.wait_for_boot()
    if g.wants(*RETRIEVE_TESTS):
        check_retrieve(g, [watch_retrieve(g) for _ in range(CALLS)])
    if g.wants(*DRAIN_TESTS):
        check_drain(g, [watch_drain(g) for _ in range(CALLS)])


def free_indices(bits):
    return [i for i in range(bits.bit_length()) if bits >> i & 1]


def watch_retrieve(g):
    """One refill's call of retrieve_objects(): the slab before and after."""
    import gdb
    import slubq

    g.wait_for_call("retrieve_objects", "nr > 1")
    s = gdb.parse_and_eval("s")
    slab = gdb.parse_and_eval("slab")
    call = {
        "cache": s["name"].string(),
        "nr": int(gdb.parse_and_eval("nr")),
        "objects": int(slab["objects"]),
        "size": int(s["size"]),
        "first": slubq.slab_address(slab) + int(s["red_left_pad"]),
        "before": slubq.slab_map(slab)[0],
        "inuse_before": int(slab["inuse"]),
    }
    where = int(gdb.parse_and_eval("(unsigned long)object"))
    call["returned"] = g.signed(g.run_to_return())
    call["after"] = slubq.slab_map(slab)[0]
    call["inuse_after"] = int(slab["inuse"])
    call["taken"] = slubq.read_pointers(where, min(max(call["returned"], 0), call["nr"]))
    return call


def check_retrieve(g, calls):
    for c in calls:
        said = "retrieve_objects(%s, nr=%d) on a slab with %d free of %d" % (
            c["cache"], c["nr"], bin(c["before"]).count("1"), c["objects"])
        want = min(c["nr"], bin(c["before"]).count("1"))
        g.check("retrieve-count", c["returned"] == want,
                "%s returned %d, not %d" % (said, c["returned"], want))

        expect = free_indices(c["before"])[:max(c["returned"], 0)]
        cleared = c["before"] & ~c["after"]
        g.check("retrieve-bits", cleared == sum(1 << i for i in expect),
                "%s took %d objects; the bitmap lost %d bits%s" % (
                    said, c["returned"], bin(cleared).count("1"),
                    "" if cleared else " (none cleared)"))
        g.check("retrieve-bits", c["after"] & ~c["before"] == 0,
                "%s set bits that were clear" % said)

        for k, (got, i) in enumerate(zip(c["taken"], expect)):
            want = c["first"] + i * c["size"]
            g.check("retrieve-addresses", got == want,
                    "%s: object[%d] is 0x%x; the slab's lowest free object "
                    "after those before it is object %d, at 0x%x" % (
                        said, k, got, i, want))
            if got != want:
                break
        else:
            g.check("retrieve-addresses", True, "")

        g.check("retrieve-inuse", c["inuse_after"] - c["inuse_before"] == c["returned"],
                "%s took %d objects; slab->inuse went from %d to %d" % (
                    said, c["returned"], c["inuse_before"], c["inuse_after"]))


def watch_drain(g):
    """One call of drain_objects() with a batch: the objects, and each call
    of free_object_to_slab() it makes, with the lock and interrupt state."""
    import gdb
    import slubq

    g.wait_for_call("drain_objects", "nr > 1")
    s = gdb.parse_and_eval("s")
    nr = int(gdb.parse_and_eval("nr"))
    objects = slubq.read_pointers(int(gdb.parse_and_eval("(unsigned long)object")), nr)
    call = {
        "cache": s["name"].string(),
        "objects": objects,
        "slabs": [int(slubq.virt_to_slab(o)) for o in objects],
        "if_on": bool(int(gdb.parse_and_eval("$eflags")) & 0x200),
        "frees": [],
    }

    def at_free():
        n = gdb.parse_and_eval("n")
        lock = n["list_lock"]["rlock"]["raw_lock"]["val"]["counter"]
        free = {
            "object": int(gdb.parse_and_eval("(unsigned long)object")),
            "slab": int(gdb.parse_and_eval("(unsigned long)slab")),
            "locked": int(lock) & 0xff != 0,
            "if_on": bool(int(gdb.parse_and_eval("$eflags")) & 0x200),
        }
        call["frees"].append(free)

    g.run_to_return({"free_object_to_slab": at_free})
    call["if_on_after"] = bool(int(gdb.parse_and_eval("$eflags")) & 0x200)
    return call


def check_drain(g, calls):
    for c in calls:
        said = "drain_objects(%s, nr=%d)" % (c["cache"], len(c["objects"]))
        got = [f["object"] for f in c["frees"]]
        if got != c["objects"]:
            k = next((k for k, (a, b) in enumerate(zip(got, c["objects"])) if a != b),
                     min(len(got), len(c["objects"])))
            if k >= len(got):
                what = "never for object[%d] (of %d)" % (k, len(c["objects"]))
            elif k >= len(c["objects"]):
                what = "%d times for %d objects, the last for 0x%x" % (
                    len(got), len(c["objects"]), got[k])
            else:
                what = "with 0x%x where object[%d] is 0x%x%s" % (
                    got[k], k, c["objects"][k],
                    " (object[%d])" % c["objects"].index(got[k])
                    if got[k] in c["objects"] else "")
            g.check("drain-each", False,
                    "%s called free_object_to_slab() %s" % (said, what))
        else:
            wrong = [k for k, f in enumerate(c["frees"]) if f["slab"] != c["slabs"][k]]
            g.check("drain-each", not wrong,
                    "%s passed object[%d] with another slab than its own" % (
                        said, wrong[0] if wrong else 0))
        for k, f in enumerate(c["frees"]):
            if not f["locked"]:
                g.check("drain-lock", False, "%s: free_object_to_slab() ran for "
                        "its object %d with n->list_lock not held" % (said, k))
                break
            if f["if_on"]:
                g.check("drain-lock", False, "%s: free_object_to_slab() ran for "
                        "its object %d with interrupts on" % (said, k))
                break
        g.check("drain-lock", c["if_on_after"] == c["if_on"],
                "%s was called with interrupts %s and returned with them %s" % (
                    said, "on" if c["if_on"] else "off",
                    "on" if c["if_on_after"] else "off"))
        g.check("drain-lock", bool(c["frees"]),
                "%s never called free_object_to_slab()" % said)

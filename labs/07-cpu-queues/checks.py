# SPDX-License-Identifier: GPL-2.0
"""The live checks of lab 07's graded.toml: gdb_checks() runs its tests
of kind "gdb"; grading/grader.py runs it in gdb, on the boot "live"."""

RETRIEVE_TESTS = ("retrieve-count", "retrieve-bits", "retrieve-addresses", "retrieve-inuse")
DRAIN_TESTS = ("drain-each", "drain-lock", "drain-node")
# How many calls of each function are watched.
CALLS = 6
# The arguments of the functions the checks stop, in the order of their
# declarations (read at the first instruction: see grading/grader.py).
RETRIEVE = ("s", "slab", "object", "nr")
DRAIN = ("s", "object", "nr", "discard")
FREE = ("s", "n", "slab", "object", "discard")
REPORT = ("s", "object")


def gdb_checks(g):
    """The live tests: run in gdb by grading/grader.py, G its Session."""
    # The kernel boots to its first program: a skeleton stops before.
    g.wait_for_boot()
    if g.wants(*RETRIEVE_TESTS):
        # One refill from a slab with more free objects than it asks for
        # (only there does taking too many show), then any refills.
        check_retrieve(g, [watch_retrieve(g, more_free_than_nr=(k == 0))
                           for k in range(CALLS)])
    if g.wants(*DRAIN_TESTS):
        # One drain of objects of two slabs or more (only there does
        # freeing to the wrong slab show), then any drains.
        check_drain(g, [watch_drain(g, across_slabs=(k == 0)) for k in range(CALLS)])
    if g.wants("drain-foreign"):
        check_foreign(g, watch_drain(g, plant="foreign"))
    if g.wants("drain-node"):
        check_nodes(g, watch_drain(g, plant="node"))


def free_indices(bits):
    return [i for i in range(bits.bit_length()) if bits >> i & 1]


def watch_retrieve(g, more_free_than_nr=False):
    """One refill's call of retrieve_objects(): the slab before and after.
    MORE_FREE_THAN_NR: wait for a call whose slab has more free objects
    than the call asks for."""
    import gdb
    import readers

    def when(a):
        if a.nr <= 1:
            return False
        return not more_free_than_nr or bin(readers.slab_map(a.slab)[0]).count("1") > a.nr

    a = g.wait_for_call("retrieve_objects", RETRIEVE, when)
    s, slab = a.s, a.slab
    call = {
        "cache": s["name"].string(),
        "nr": int(a.nr),
        "objects": int(slab["objects"]),
        "size": int(s["size"]),
        "first": readers.slab_address(slab) + int(s["red_left_pad"]),
        "before": readers.slab_map(slab)[0],
        "inuse_before": int(slab["inuse"]),
    }
    where = int(a.object)
    call["returned"] = g.signed(g.run_to_return())
    call["after"] = readers.slab_map(slab)[0]
    call["inuse_after"] = int(slab["inuse"])
    call["taken"] = readers.read_pointers(where, min(max(call["returned"], 0), call["nr"]))
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


def is_kmalloc(s):
    return s["name"].string().startswith("kmalloc-")


def watch_drain(g, plant=None, across_slabs=False):
    """One call of drain_objects() with a batch: the objects, and each call
    of free_object_to_slab() it makes, with the lock and interrupt state.
    ACROSS_SLABS: wait for a batch whose objects lie in two slabs or more.
    PLANT, if given, replaces the batch's second object at the call, in a
    kmalloc cache's batch of more than two (the object replaced is lost to
    its cache, one kmalloc object):
      "foreign"  by the address of a page that is no slab (a double free
                 whose slab was freed looks so), in a batch whose first and
                 third objects share a slab, to see what the drain does
                 with the rest of the batch;
      "node"     by a free object of the same cache that the grader takes
                 out of a partial slab of another node, to see which lock
                 each object is freed under."""
    import gdb
    import readers

    other = {}
    if plant is None:
        def when(a):
            if a.nr <= 1:
                return False
            if not across_slabs:
                return True
            objects = readers.read_pointers(int(a.object), int(a.nr))
            return len({int(readers.virt_to_slab(o)) for o in objects}) > 1
    elif plant == "foreign":
        # The objects on either side of the planted one in one slab: a
        # drain that keeps a slab for a run of objects must not keep the
        # failed lookup of the planted one.
        def when(a):
            if a.nr <= 2 or not is_kmalloc(a.s):
                return False
            around = readers.read_pointers(int(a.object), 3)
            return int(readers.virt_to_slab(around[0])) == int(readers.virt_to_slab(around[2]))
    else:
        def when(a):
            if a.nr <= 2 or not is_kmalloc(a.s):
                return False
            first = readers.read_pointers(int(a.object), 1)[0]
            other["slab"] = slab_of_other_node(a.s, node_of(first))
            return other["slab"] is not None
    a = g.wait_for_call("drain_objects", DRAIN, when)
    s = a.s
    nr = int(a.nr)
    objects = readers.read_pointers(int(a.object), nr)
    planted = None
    if plant:
        if nr <= 2:
            raise RuntimeError("the drain to plant in holds %d objects, not more than 2" % nr)
        planted = 1
        if plant == "foreign":
            objects[planted] = foreign_address()
        else:
            objects[planted] = take_object(s, other["slab"])
        gdb.selected_inferior().write_memory(int(a.object) + 8 * planted,
                                             objects[planted].to_bytes(8, "little"))
    # The objects of the cache, which the drain must free.
    mine = [k for k in range(nr) if k != planted or plant == "node"]
    call = {
        "cache": s["name"].string(),
        "objects": objects,
        "planted": planted,
        # What each object of the cache must be freed with: its slab, and
        # the node that slab's memory is on.
        "slabs": {k: int(readers.virt_to_slab(objects[k])) for k in mine},
        "nodes": {k: int(s["node"][node_of(objects[k])]) for k in mine},
        "node_ids": {int(s["node"][i]): i
                     for i in range(readers.symbol_value("nr_node_ids", 1))},
        "if_on": bool(int(gdb.parse_and_eval("$eflags")) & 0x200),
        "frees": [],
        "reported": [],
    }

    def at_free(f):
        # n comes from the student's code: it may point anywhere.
        try:
            lock = int(f.n["list_lock"]["rlock"]["raw_lock"]["val"]["counter"])
        except gdb.MemoryError:
            lock = 0
        call["frees"].append({
            "object": int(f.object),
            "slab": int(f.slab),
            "node": int(f.n),
            "locked": lock & 0xff != 0,
            "if_on": bool(int(gdb.parse_and_eval("$eflags")) & 0x200),
        })

    def at_report(r):
        call["reported"].append(int(r.object))
        # The kernel's report would fail the console tests: skip it.
        g.return_now(0)

    watched = {"free_object_to_slab": (FREE, at_free)}
    # gcc drops report_foreign_object() if nothing calls it: then it is
    # never called, which check_foreign() says.
    if plant == "foreign" and g.has_function("report_foreign_object"):
        watched["report_foreign_object"] = (REPORT, at_report)
    g.run_to_return(watched)
    call["if_on_after"] = bool(int(gdb.parse_and_eval("$eflags")) & 0x200)
    return call


def node_of(address):
    """The node whose memory holds ADDRESS: the one whose pages span its
    page frame (node_data[], with NUMA), else node 0."""
    import gdb
    import readers

    pfn = (address - readers.page_offset()) >> readers.PAGE_SHIFT
    if readers.symbol_value("nr_node_ids", 1) == 1:
        return 0
    for nid in range(readers.symbol_value("nr_node_ids", 1)):
        pgdat = gdb.parse_and_eval("node_data[%d]" % nid)
        start = int(pgdat["node_start_pfn"])
        if start <= pfn < start + int(pgdat["node_spanned_pages"]):
            return nid
    return 0


def list_lock_held(n):
    return int(n["list_lock"]["rlock"]["raw_lock"]["val"]["counter"]) & 0xff != 0


def slab_of_other_node(s, nid):
    """A partial slab of S whose memory is on a node other than NID, with
    two free objects or more, on a partial list whose node's list_lock is
    free: no CPU is changing those slabs, so the grader can take an object
    out of one and leave it partial.  None if there is none.

    Which list a slab is on is no proof of its node: a drain that frees to
    the wrong node's kmem_cache_node puts slabs on that node's list.  So
    every node's list is searched, and the slab's own memory says its node."""
    import gdb
    import readers
    from linux import lists

    slab_type = gdb.lookup_type("struct slab")
    for listed in range(readers.symbol_value("nr_node_ids", 1)):
        n = s["node"][listed]
        if not int(n) or list_lock_held(n):
            continue
        for slab in lists.list_for_each_entry(n["partial"], slab_type.pointer(), "slab_list"):
            # (take_object() writes bitmaps kept in struct slab alone.)
            if (int(slab["objects"]) <= 64
                    and node_of(readers.slab_address(slab)) != nid
                    and bin(readers.slab_map(slab)[0]).count("1") >= 2):
                return slab
    return None


def take_object(s, slab):
    """Take SLAB's lowest free object out of it, as retrieve_objects()
    would (its bit cleared, slab->inuse one more); return its address.
    SLAB has at most 64 objects: its bitmap is slab->free_map."""
    import gdb
    import readers

    bits = readers.slab_map(slab)[0]
    i = (bits & -bits).bit_length() - 1
    gdb.execute("set var ((struct slab *)0x%x)->free_map = 0x%x" % (int(slab), bits & ~(1 << i)))
    gdb.execute("set var ((struct slab *)0x%x)->inuse = %d" % (int(slab), int(slab["inuse"]) + 1))
    return readers.slab_address(slab) + int(s["red_left_pad"]) + i * int(s["size"])


def foreign_address():
    """An address in the direct map whose page is no slab: the kernel
    image's zero page, seen through the direct map."""
    import gdb
    import readers

    image = int(gdb.parse_and_eval("(unsigned long)&empty_zero_page"))
    physical = image - 0xffffffff80000000 + int(gdb.parse_and_eval("phys_base"))
    return readers.page_offset() + physical


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
            k = object_with_wrong_slab(c)
            g.check("drain-each", k is None,
                    "%s passed object[%s] with another slab than its own" % (said, k))
        check_node_of_each(g, said, c)
        k = first_free(c, lambda f: not f["locked"] or f["if_on"])
        g.check("drain-lock", k is None, "%s: free_object_to_slab() ran for its "
                "object %s with %s" % (said, k, "interrupts on" if k is not None and
                                       c["frees"][k]["locked"] else "n->list_lock not held"))
        g.check("drain-lock", c["if_on_after"] == c["if_on"],
                "%s was called with interrupts %s and returned with them %s" % (
                    said, "on" if c["if_on"] else "off",
                    "on" if c["if_on_after"] else "off"))
        g.check("drain-lock", bool(c["frees"]),
                "%s never called free_object_to_slab()" % said)


def check_foreign(g, c):
    """The batch with an object planted that is in no slab: reported, and
    the others, before it and after it, freed each to its slab."""
    said = "drain_objects(%s, nr=%d) with object[%d] at 0x%x, a page that is no slab" % (
        c["cache"], len(c["objects"]), c["planted"], c["objects"][c["planted"]])
    want = [o for k, o in enumerate(c["objects"]) if k != c["planted"]]
    got = [f["object"] for f in c["frees"]]
    g.check("drain-foreign", c["objects"][c["planted"]] not in got,
            "%s called free_object_to_slab() for it" % said)
    g.check("drain-foreign", c["reported"] == [c["objects"][c["planted"]]],
            "%s reported %s with report_foreign_object()" % (
                said, "it %d times" % len(c["reported"]) if c["reported"] else "nothing"))
    g.check("drain-foreign", got == want or c["objects"][c["planted"]] in got,
            "%s gave back %d of the other %d objects%s" % (
                said, len(set(got) & set(want)), len(want),
                ", none of those after it" if not set(got) & set(want[c["planted"]:])
                else ""))
    k = object_with_wrong_slab(c)
    g.check("drain-foreign", k is None,
            "%s passed object[%s] with another slab than its own" % (said, k))


def object_with_wrong_slab(c):
    """The index in the batch of drain C of the first object of the cache
    that free_object_to_slab() got with another slab than its own, or
    None.  (Frees of addresses not in the batch are other checks'.)"""
    index = {o: k for k, o in enumerate(c["objects"]) if k in c["slabs"]}
    return next((index[f["object"]] for f in c["frees"]
                 if f["object"] in index and f["slab"] != c["slabs"][index[f["object"]]]),
                None)


def first_free(c, wrong):
    """The index of the first call of free_object_to_slab() of drain C
    that WRONG (a function of the call) says is wrong, or None."""
    return next((k for k, f in enumerate(c["frees"]) if wrong(f)), None)


def check_node_of_each(g, said, c):
    """Each free_object_to_slab() of a batch's objects, with the
    kmem_cache_node of the object's own node."""
    for k, f in enumerate(c["frees"]):
        if k in c["nodes"] and f["node"] != c["nodes"][k]:
            g.check("drain-node", False, "%s: free_object_to_slab() ran for its "
                    "object[%d] with %s, not its node's, %s" % (
                        said, k, name_node(c, f["node"]), name_node(c, c["nodes"][k])))
            return
    g.check("drain-node", True, "")


def name_node(c, n):
    """What the kmem_cache_node at N is: node K's of the cache, or not one."""
    if n in c["node_ids"]:
        return "node %d's kmem_cache_node (0x%x)" % (c["node_ids"][n], n)
    return "0x%x, which is no kmem_cache_node of the cache" % n


def check_nodes(g, c):
    """The batch with an object of another node planted: each object freed,
    in order, under its own node's list_lock."""
    nodes = [node_of(o) for o in c["objects"]]
    said = "drain_objects(%s, nr=%d) with objects of node %d and object[%d] of node %d" % (
        c["cache"], len(c["objects"]), nodes[0], c["planted"], nodes[c["planted"]])
    got = [f["object"] for f in c["frees"]]
    g.check("drain-node", got == c["objects"],
            "%s freed %s" % (said, "object[%d] never" % c["planted"]
                             if c["objects"][c["planted"]] not in got
                             else "other objects than those of the batch, in order"))
    check_node_of_each(g, said, c)
    k = first_free(c, lambda f: not f["locked"])
    g.check("drain-node", k is None, "%s: free_object_to_slab() ran for its "
            "object[%s] with its node's list_lock not held" % (said, k))

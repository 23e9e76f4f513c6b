# SPDX-License-Identifier: GPL-2.0
"""Lab 07's coding exercise: the functions the student writes, and the
tests that `make grade LAB=7` runs on them.

scripts/exercise.py makes the skeleton from FUNCTIONS (the stage's own code is
the solution); scripts/grade.sh runs TESTS: each reads one of the BOOTS, either
through gdb_checks() below, which stops the live kernel in gdb
(vm/gdb/grader.py), or through the console of that boot."""

FUNCTIONS = [
    {
        "file": "mm/slub.c",
        "name": "retrieve_objects",
        "stub": "return 0;",
        "todo": "take up to nr free objects out of the slab, the lowest "
                "free ones first: store their addresses in object[], "
                "clear their bits in the bitmap, count them in "
                "slab->inuse, and return how many you took.",
    },
    {
        "file": "mm/slub.c",
        "name": "drain_objects",
        "stub": "",
        "todo": "give each of the nr objects back to its slab with "
                "free_object_to_slab(), holding the list_lock of the "
                "slab's node (spin_lock_irqsave()), taken once for each "
                "run of objects of one node; an object that is not in a "
                "slab of s is reported (report_foreign_object()) and "
                "skipped.",
    },
]

# "live": gdb stops the kernel while the guest runs the torture module;
# "debug": every cache is a debug cache (red zones, poisoning, checks);
# and "answers" (scripts/exercise.py's default): the questions, asked of the stage's kernel.
BOOTS = {
    "live": {"run": "torture", "append": "", "gdb": True},
    "debug": {"run": "validate", "append": "slub_debug=FZPU", "gdb": False},
}

TESTS = [
    {
        "id": "retrieve-count", "boot": "live", "kind": "gdb", "points": 15,
        "name": "retrieve_objects() takes nr objects, or all the slab has",
        "hint": "return min(nr, free objects in the slab): stop when you "
                "have nr, or when find_next_bit() finds no more (it "
                "returns slab->objects then)",
    },
    {
        "id": "retrieve-bits", "boot": "live", "kind": "gdb", "points": 15,
        "name": "retrieve_objects() clears the bits of the objects it takes, and no others",
        "hint": "an object taken is allocated from the slab's point of "
                "view: __clear_bit(i, map(slab)) for each one, or the next "
                "refill hands it out a second time",
    },
    {
        "id": "retrieve-addresses", "boot": "live", "kind": "gdb", "points": 10,
        "name": "retrieve_objects() stores the objects' addresses, lowest free object first",
        "hint": "object i of a slab is at slab_address(slab) + i * s->size "
                "(through fixup_red_left()); walk the bitmap upwards with "
                "find_first_bit() and find_next_bit()",
    },
    {
        "id": "retrieve-inuse", "boot": "live", "kind": "gdb", "points": 10,
        "name": "retrieve_objects() counts the objects it takes in slab->inuse",
        "hint": "slab->inuse counts the clear bits (all_objects_used() and "
                "all_objects_available() read it): add what you took",
    },
    {
        "id": "drain-each", "boot": "live", "kind": "gdb", "points": 15,
        "name": "drain_objects() gives each object back to its own slab, once",
        "hint": "call free_object_to_slab(s, n, slab, object[i], discard) "
                "once for each i from 0 to nr - 1, with slab = "
                "virt_to_slab(object[i])",
    },
    {
        "id": "drain-lock", "boot": "live", "kind": "gdb", "points": 15,
        "name": "drain_objects() holds the node's list_lock, interrupts off, "
                "and restores them",
        "hint": "the bitmap and the slab lists change only under "
                "n->list_lock: spin_lock_irqsave(&n->list_lock, flags) "
                "before free_object_to_slab(), spin_unlock_irqrestore() "
                "when the node changes and at the end",
    },
    {
        "id": "torture", "boot": "live", "kind": "console", "points": 10,
        "name": "the torture module, hackbench and the SLUB KUnit suite pass",
        "hint": "the console lines above say what failed; a corrupt "
                "object or a double allocation usually comes from a bit "
                "left set in retrieve_objects()",
    },
    {
        "id": "debug", "boot": "debug", "kind": "console", "points": 10,
        "name": "with slub_debug=FZPU (red zones, poison), torture and validate pass",
        "hint": "with red zones, an object starts s->red_left_pad bytes "
                "into its slot: the address is fixup_red_left(s, "
                "slab_address(slab)) + i * s->size",
    },
]

# Questions of the handout, checked in the stage's own kernel.
QUESTIONS = [
    {
        "id": "q1-queue-kmalloc-512", "points": 5,
        "name": "Question 1: kmalloc-512's queue",
        "value": "$kit_cache(\"kmalloc-512\")->queue",
        "hint": "set_cpu_queue() chooses the queue from s->size",
    },
    {
        "id": "q1-batch-kmalloc-2k", "points": 5,
        "name": "Question 1: kmalloc-2k's batch",
        "value": "$kit_cache(\"kmalloc-2k\")->batch",
        "hint": "the batch is (queue + 1) / 2",
    },
    {
        "id": "q1-queue-kmalloc-8k", "points": 5,
        "name": "Question 1: kmalloc-8k's queue",
        "value": "$kit_cache(\"kmalloc-8k\")->queue",
        "hint": "set_cpu_queue(): a slot larger than a page",
    },
    {
        "id": "q1-percpu-bytes", "points": 5,
        "name": "Question 1: bytes of per-CPU memory of kmalloc-64's queue, on each CPU",
        "value": "sizeof(struct kmem_cache_cpu) + "
                 "$kit_cache(\"kmalloc-64\")->queue * sizeof(void *)",
        "hint": "alloc_kmem_cache_cpus() allocates struct_size(c, object, s->queue)",
    },
]

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

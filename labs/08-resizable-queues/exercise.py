# SPDX-License-Identifier: GPL-2.0
"""Lab 08's coding exercise: resize_cpu_queue(), and the tests that
`make grade LAB=8` runs on it.  The format is lab 07's (see
labs/07-cpu-queues/exercise.py)."""

FUNCTIONS = [
    {
        "file": "mm/slub.c",
        "name": "resize_cpu_queue",
        "stub": "return -ENOMEM;",
        "todo": "give s new per cpu queues of queue objects, moving batch "
                "at a time: allocate them (alloc_cpu_queues()), publish "
                "them in s->cpu_slab (smp_store_release()) and record the "
                "sizes in s->queue and s->batch, wait until no cpu can "
                "hold an old queue (synchronize_rcu()), empty the old "
                "queues into the slabs (drain_old_queues()) and free them "
                "(free_cpu_queues()). Return 0, or -ENOMEM.",
    },
]

# "live": gdb watches resizes while the guest resizes queues in a loop
# under the torture module; "sysfs": the table of good and bad values
# written to cpu_queue_size and cpu_batch_size.
BOOTS = {
    "live": {"run": "resize-stress", "append": "", "gdb": True},
    "sysfs": {"run": "queue-sizes", "append": "", "gdb": False},
}

TESTS = [
    {
        "id": "resize-sizes", "boot": "live", "kind": "gdb", "points": 20,
        "name": "resize_cpu_queue() returns 0, and the cache and every CPU's "
                "new queue have the sizes asked for",
        "hint": "alloc_cpu_queues(queue, batch) makes queues of that size; "
                "s->queue and s->batch are what sysfs shows and what the "
                "refills and drains read: set them too",
    },
    {
        "id": "resize-order", "boot": "live", "kind": "gdb", "points": 20,
        "name": "resize_cpu_queue() publishes the new queues, then waits for "
                "a grace period, then drains the old ones",
        "hint": "a CPU may hold an old queue until it leaves its critical "
                "section (lock_cpu_queue()): smp_store_release(&s->cpu_slab, "
                "new) first, then synchronize_rcu(), and only then "
                "drain_old_queues(s, old)",
    },
    {
        "id": "resize-drained", "boot": "live", "kind": "gdb", "points": 20,
        "name": "resize_cpu_queue() frees the old queues only once they are empty",
        "hint": "the objects in the old queues belong to the slabs: "
                "drain_old_queues(s, old) before free_cpu_queues(old), or "
                "they are lost with the memory that held the pointers",
    },
    {
        "id": "stress", "boot": "live", "kind": "console", "points": 20,
        "name": "queues resized in a loop under the torture module: no object "
                "lost or corrupted, KUnit passes",
        "hint": "the console lines above say what failed; objects left in a "
                "cache after shrink are objects lost with an old queue",
    },
    {
        "id": "sysfs", "boot": "sysfs", "kind": "console", "points": 20,
        "name": "cpu_queue_size and cpu_batch_size take good values and refuse bad ones",
        "hint": "the sysfs handlers parse and check the values; "
                "resize_cpu_queue() must make a queue of exactly the "
                "length asked, and return 0 when it did",
    },
]

# Questions of the handout, checked in the stage's own kernel.
QUESTIONS = [
    {
        "id": "q1-header-bytes", "points": 5,
        "name": "Question 1: sizeof(struct kmem_cache_cpu), in bytes",
        "value": "sizeof(struct kmem_cache_cpu)",
        "hint": "ptype /o struct kmem_cache_cpu",
    },
    {
        "id": "q1-queue-bytes-kmalloc-64", "points": 5,
        "name": "Question 1: bytes of kmalloc-64's queue on each CPU, header included",
        "value": "sizeof(struct kmem_cache_cpu) + "
                 "$kit_cache(\"kmalloc-64\")->queue * sizeof(void *)",
        "hint": "the header, and a pointer for each object the queue holds",
    },
    {
        "id": "q1-stats-bytes", "points": 5,
        "name": "Question 1: bytes of a cache's counters on each CPU",
        "value": "sizeof(struct kmem_cache_stats)",
        "hint": "the statistics counters have a per-CPU area of their own",
    },
]

CALLS = 4


def gdb_checks(g):
    """The live tests: run in gdb by vm/gdb/grader.py, G its Session."""
    g.wait_for_boot()
    if g.wants("resize-sizes", "resize-order", "resize-drained"):
        check_resizes(g, [watch_resize(g) for _ in range(CALLS)])


def queues_of(cpu_slab, cpus):
    """The queues of a per-CPU pointer: (objects, queue, batch) per CPU."""
    import slubq

    said = []
    for cpu in cpus:
        c = slubq.per_cpu_ptr(cpu_slab, cpu)
        said.append((int(c["objects"]), int(c["queue"]), int(c["batch"])))
    return said


def watch_resize(g):
    """One resize: the order of the steps that matter, seen from the
    resizing task, and the queues at each."""
    import gdb
    import slubq

    g.wait_for_call("resize_cpu_queue")
    s = gdb.parse_and_eval("s")
    cpus = [int(cpu) for cpu in slubq.cpus.each_online_cpu()]
    call = {
        "cache": s["name"].string(),
        "queue": int(gdb.parse_and_eval("queue")),
        "batch": int(gdb.parse_and_eval("batch")),
        "old": int(s["cpu_slab"]),
        "steps": [],
    }

    def published():
        return int(s["cpu_slab"]) != call["old"]

    def at_synchronize():
        call["steps"].append(("synchronize_rcu", published()))

    def at_drain():
        if int(gdb.parse_and_eval("(unsigned long)old")) == call["old"]:
            call["steps"].append(("drain_old_queues", published()))

    def at_free_percpu():
        if int(gdb.parse_and_eval("(unsigned long)ptr")) == call["old"]:
            left = sum(q[0] for q in queues_of(gdb.parse_and_eval("ptr").cast(
                s["cpu_slab"].type), cpus))
            call["steps"].append(("free", left))

    call["returned"] = g.signed(g.run_to_return({
        "synchronize_rcu": at_synchronize,
        "drain_old_queues": at_drain,
        "free_percpu": at_free_percpu,
    }))
    call["sizes"] = (int(s["queue"]), int(s["batch"]))
    call["published"] = published()
    call["new"] = queues_of(s["cpu_slab"], cpus) if published() else []
    return call


def check_resizes(g, calls):
    for c in calls:
        said = "resize_cpu_queue(%s, queue=%d, batch=%d)" % (
            c["cache"], c["queue"], c["batch"])
        g.check("resize-sizes", c["returned"] == 0,
                "%s returned %d" % (said, c["returned"]))
        g.check("resize-sizes", c["published"],
                "%s left s->cpu_slab as it was" % said)
        g.check("resize-sizes", c["sizes"] == (c["queue"], c["batch"]),
                "%s left s->queue %d, s->batch %d" % ((said,) + c["sizes"]))
        for cpu, (_, queue, batch) in enumerate(c["new"]):
            g.check("resize-sizes", (queue, batch) == (c["queue"], c["batch"]),
                    "%s: CPU %d's new queue has queue %d, batch %d" % (
                        said, cpu, queue, batch))

        names = [step[0] for step in c["steps"]]
        sync = names.index("synchronize_rcu") if "synchronize_rcu" in names else None
        drain = names.index("drain_old_queues") if "drain_old_queues" in names else None
        g.check("resize-order", sync is not None,
                "%s never called synchronize_rcu()" % said)
        g.check("resize-order", drain is not None,
                "%s never called drain_old_queues() on the old queues" % said)
        if sync is not None:
            g.check("resize-order", c["steps"][sync][1],
                    "%s called synchronize_rcu() before it published the "
                    "new queues in s->cpu_slab" % said)
        if sync is not None and drain is not None:
            g.check("resize-order", sync < drain,
                    "%s drained the old queues before synchronize_rcu(): a "
                    "CPU may still be putting objects in them" % said)

        frees = [step for step in c["steps"] if step[0] == "free"]
        g.check("resize-drained", bool(frees),
                "%s never freed the old queues (free_cpu_queues())" % said)
        for _, left in frees:
            g.check("resize-drained", left == 0,
                    "%s freed the old queues with %d objects still in them" % (
                        said, left))

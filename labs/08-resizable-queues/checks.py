# SPDX-License-Identifier: GPL-2.0
"""The live checks of lab 08's graded.toml: gdb_checks() runs its tests
of kind "gdb"; grading/grader.py runs it in gdb, on the boot "live"."""

CALLS = 4
# The arguments of the functions the checks stop, in the order of their
# declarations (read at the first instruction: see grading/grader.py).
RESIZE = ("s", "queue", "batch")
DRAIN = ("s", "object", "nr", "discard")
FREE_PERCPU = ("ptr",)
ALLOC_PERCPU = ("size", "align")
# The calls that wait for a grace period: either will do.
GRACE_PERIODS = ("synchronize_rcu", "synchronize_rcu_expedited")
ENOMEM = 12


def gdb_checks(g):
    """The live tests: run in gdb by grading/grader.py, G its Session."""
    g.wait_for_boot()
    if g.wants("resize-sizes", "resize-order", "resize-drained"):
        check_resizes(g, [watch_resize(g) for _ in range(CALLS)])
    if g.wants("resize-enomem"):
        check_enomem(g, watch_resize(g, fail=True))


def queues_of(cpu_slab, cpus):
    """The queues of a per-CPU pointer: (objects, queue, batch) per CPU."""
    import readers

    said = []
    for cpu in cpus:
        c = readers.per_cpu_ptr(cpu_slab, cpu)
        said.append((int(c["objects"]), int(c["queue"]), int(c["batch"])))
    return said


def watch_resize(g, fail=False):
    """One resize: the order of the steps that matter, seen from the
    resizing task, and the queues at each.  FAIL: the per-CPU allocation
    it makes fails, as it may when memory is short."""
    import gdb
    import readers
    from linux import cpus as kernel_cpus

    # One that changes a size, else leaving them as they were proves
    # nothing.
    a = g.wait_for_call("resize_cpu_queue", RESIZE, (lambda a: (
        int(a.queue), int(a.batch)) != (int(a.s["queue"]), int(a.s["batch"]))) if fail else None)
    s = a.s
    cpus = [int(cpu) for cpu in kernel_cpus.each_online_cpu()]
    old = s["cpu_slab"]
    call = {
        "cache": s["name"].string(),
        "queue": int(a.queue),
        "batch": int(a.batch),
        "old": int(old),
        "sizes_before": (int(s["queue"]), int(s["batch"])),
        # Where each CPU's old queue is: a drain of objects in there is a
        # drain of the old queues, by drain_old_queues() or a loop of the
        # student's own.
        "old_queues": [old_queue_span(readers.per_cpu_ptr(old, cpu)) for cpu in cpus],
        "allocations": 0,
        "steps": [],
    }

    def published():
        return int(s["cpu_slab"]) != call["old"]

    def at_grace_period(_):
        call["steps"].append(("grace period", published()))

    def at_drain(d):
        where = int(d.object)
        if int(d.nr) > 0 and any(lo <= where < hi for lo, hi in call["old_queues"]):
            call["steps"].append(("drain", published()))

    def at_free_percpu(f):
        if int(f.ptr) == call["old"]:
            left = sum(q[0] for q in queues_of(old, cpus))
            call["steps"].append(("free", left))

    def at_alloc_percpu(_):
        call["allocations"] += 1
        if fail:
            g.return_now(0)

    watched = {name: ((), at_grace_period) for name in GRACE_PERIODS}
    watched.update({
        "drain_objects": (DRAIN, at_drain),
        "free_percpu": (FREE_PERCPU, at_free_percpu),
        "__alloc_percpu": (ALLOC_PERCPU, at_alloc_percpu),
    })
    call["returned"] = g.signed(g.run_to_return(watched))
    call["sizes"] = (int(s["queue"]), int(s["batch"]))
    call["published"] = published()
    call["new"] = queues_of(s["cpu_slab"], cpus) if published() else []
    return call


def old_queue_span(c):
    """The addresses of the object pointers of the queue C."""
    return int(c["object"]), int(c["object"]) + 8 * int(c["queue"])


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
        sync = names.index("grace period") if "grace period" in names else None
        drain = names.index("drain") if "drain" in names else None
        g.check("resize-order", sync is not None,
                "%s never waited for a grace period (synchronize_rcu())" % said)
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


def check_enomem(g, c):
    """A resize whose allocation failed: -ENOMEM, and the cache as it was."""
    said = "resize_cpu_queue(%s, queue=%d, batch=%d), its allocation failing" % (
        c["cache"], c["queue"], c["batch"])
    g.check("resize-enomem", c["allocations"] > 0,
            "%s never allocated new queues (alloc_cpu_queues())" % said)
    g.check("resize-enomem", c["returned"] == -ENOMEM,
            "%s returned %d, not -ENOMEM (%d)" % (said, c["returned"], -ENOMEM))
    g.check("resize-enomem", not c["published"],
            "%s changed s->cpu_slab" % said)
    g.check("resize-enomem", c["sizes"] == c["sizes_before"],
            "%s left s->queue %d, s->batch %d; they were %d and %d" % (
                (said,) + c["sizes"] + c["sizes_before"]))
    g.check("resize-enomem", not c["steps"],
            "%s went on after the failure: %s" % (
                said, ", ".join(step[0] for step in c["steps"])))

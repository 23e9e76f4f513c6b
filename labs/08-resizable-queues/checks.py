# SPDX-License-Identifier: GPL-2.0
"""The live checks of lab 08's exercise.toml: gdb_checks() runs its tests
of kind "gdb"; vm/gdb/grader.py runs it in gdb, on the boot "live"."""

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

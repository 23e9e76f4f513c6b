# SPDX-License-Identifier: GPL-2.0
"""The live checks of lab 11's graded.toml: gdb_checks() runs its tests
of kind "gdb"; grading/grader.py runs it in gdb, on the boot "live".

The guest sends messages between processes (hackbench) on two NUMA nodes,
CPU 0 on node 0 and CPU 1 on node 1 (numa=fake=2): each barn then serves
one CPU, and while that CPU is in a call with its sheaves taken nothing
else changes its barn, so a check can say exactly what the call did to it.
Some checks set up the case they test (a bootstrap main, a barn at its
limit, a barn without empty sheaves) for one call, and put everything back
before the kernel goes on."""

import os
import re

CALLS = 3
# The arguments of the functions the checks stop, in the order of their
# declarations (read at the first instruction: see grading/grader.py).
REPLACE_EMPTY_MAIN = ("s", "pcs", "gfp")
BARN_REPLACE_FULL_SHEAF = ("s", "barn", "full")
# The calls that take a spinlock out of line, and the one that gives it
# back with the interrupts restored (spin_unlock() is inline here).
LOCKS = ("_raw_spin_lock_irqsave", "_raw_spin_lock", "_raw_spin_lock_irq")
UNLOCK = "_raw_spin_unlock_irqrestore"
E2BIG = 7
# The longest list of a barn the checks walk: a barn trades up to
# MAX_FULL_SHEAVES full sheaves, and a longer list is a broken one, or one
# that grew without its limit (barn_put_sheaf()).
LONGEST_LIST = 256


def gdb_checks(g):
    """The live tests: run in gdb by grading/grader.py, G its Session."""
    g.wait_for_boot()
    # First what needs no help from replace_empty_main(): the barn's empty
    # sheaves come from its trades.
    if g.wants("full-refused"):
        check_refused(g, watch_barn_trade(g, force="limit"), "limit")
        check_refused(g, watch_barn_trade(g, force="none"), "none")
    if g.wants("empty-swap"):
        for _ in range(CALLS):
            check_swap(g, watch_replace_empty(g, "swap"))
    if g.wants("empty-trade"):
        for _ in range(CALLS):
            check_trade(g, watch_replace_empty(g, "trade"))
    if g.wants("empty-refill"):
        check_refills(g, [watch_replace_empty(g, "refill") for _ in range(CALLS)])
        check_bootstrap(g, watch_replace_empty(g, "refill", bootstrap=True))
    if g.wants("full-trade", "full-locked"):
        for _ in range(CALLS):
            check_barn_trade(g, watch_barn_trade(g))


# --- Reading sheaves and barns ------------------------------------------

def this_node():
    """The node of the CPU that gdb stopped: numa_mem_id(), a per-CPU
    variable on x86-64 (read at %gs, as grading/grader.py reads
    current_task)."""
    import gdb

    return int(gdb.parse_and_eval("*(int *)($gs_base + (unsigned long)&numa_node)"))


def this_barn(s):
    """The barn of cache S on the node of the CPU that gdb stopped."""
    return s["node"][this_node()]["barn"]


def sheaves_on(head):
    """The sheaves on a barn's list whose struct list_head is at HEAD, in
    list order; None if the list is broken: a next whose prev does not
    point back, memory gdb cannot read, or no end in sight."""
    import gdb
    import readers

    offset = int(gdb.parse_and_eval("(unsigned long)&((struct slab_sheaf *)0)->barn_list"))
    sheaves, prev = [], head
    try:
        node = readers.read_ulong(head)
        while node != head:
            if len(sheaves) > LONGEST_LIST or readers.read_ulong(node + 8) != prev:
                return None
            sheaves.append(node - offset)
            prev, node = node, readers.read_ulong(node)
        if readers.read_ulong(head + 8) != prev:
            return None
    except gdb.MemoryError:
        return None
    return sheaves


def barn_state(barn):
    """What BARN holds: its counts, and its full and empty sheaves (lists
    of addresses, or None for a broken list)."""
    return {
        "nr_full": int(barn["nr_full"]),
        "nr_empty": int(barn["nr_empty"]),
        "full": sheaves_on(int(barn["sheaves_full"].address)),
        "empty": sheaves_on(int(barn["sheaves_empty"].address)),
    }


def full_sheaves(n):
    return "%d full sheaf" % n if n == 1 else "%d full sheaves" % n


def describe_barn(state):
    """A barn's state in words, for a failure."""
    def said(sheaves):
        return ("a list broken or over %d long" % LONGEST_LIST if sheaves is None
                else "%d on its list" % len(sheaves))
    return "nr_full %d (%s), nr_empty %d (%s)" % (
        state["nr_full"], said(state["full"]), state["nr_empty"], said(state["empty"]))


def barn_consistent(state):
    """Whether a barn's lists are whole and its counts their lengths."""
    return (state["full"] is not None and state["empty"] is not None and
            state["nr_full"] == len(state["full"]) and
            state["nr_empty"] == len(state["empty"]))


def lock_held(barn):
    """Whether BARN's spinlock is held (the locked byte of its qspinlock)."""
    return int(barn["lock"]["rlock"]["raw_lock"]["val"]["counter"]) & 0xff != 0


def sheaf_size(address):
    import gdb

    return int(gdb.parse_and_eval("((struct slab_sheaf *)0x%x)->size" % address))


def max_full_sheaves():
    """MAX_FULL_SHEAVES as the kernel being graded defines it: gcc keeps
    no macros in the debug information, so from the source file beside
    its build (the build directory's "source" link)."""
    import gdb

    build = os.path.dirname(os.path.abspath(gdb.current_progspace().filename))
    path = os.path.join(build, "source", "mm", "slub.c")
    with open(path) as f:
        found = re.search(r"^#define\s+MAX_FULL_SHEAVES\s+(\d+)\s*$", f.read(), re.M)
    if not found:
        raise RuntimeError("no #define MAX_FULL_SHEAVES in %s" % path)
    return int(found.group(1))


def set_var(expression, value):
    import gdb

    gdb.execute("set var %s = %d" % (expression, value))


# --- replace_empty_main() -------------------------------------------------

def situation(a):
    """What replace_empty_main() must do for the call whose Arguments are A:
    "bootstrap" (main is the bootstrap sheaf), "swap" (the spare has
    objects), "trade" (the barn has a full sheaf) or "refill" (nothing has
    objects but the slabs)."""
    main, spare = a.pcs["main"], a.pcs["spare"]
    if int(main["capacity"]) == 0:
        return "bootstrap"
    if int(spare) and int(spare["size"]):
        return "swap"
    if int(this_barn(a.s)["nr_full"]):
        return "trade"
    return "refill"


def trade_tells(a):
    """Whether a call that must trade, whose Arguments are A, tells a right
    answer from wrong ones: its spare is a sheaf, empty (an answer that
    swaps with any spare swaps that one in, where without a spare it would
    trade as a right one does), and this node has partial slabs, where
    refill_sheaf() looks first (an answer that refills main from the slabs
    before it asks the barn finds objects there, where without them it
    would go on to the barn)."""
    return (int(a.pcs["spare"]) != 0 and
            int(a.s["node"][this_node()]["nr_partial"]) > 0)


WAITS_FOR = {
    "swap": "whose spare has objects (a CPU's allocations empty main after "
            "its frees filled it: slab_free() and replace_full_main() make "
            "the spare)",
    "trade": "whose spare is an empty sheaf, whose barn has a full sheaf "
             "(barn_replace_full_sheaf() puts them there) and whose node "
             "has a partial slab",
    "refill": "whose spare is empty and whose barn has no full sheaf",
}


def watch_replace_empty(g, want, bootstrap=False):
    """One call of replace_empty_main() of the situation WANT: the sheaves
    and the barn before it and after.  BOOTSTRAP: for the call, the CPU's
    main is the bootstrap sheaf and it has no spare (as before its first
    free), and its own sheaves are put back once the call has returned;
    the slabs it allocates meanwhile are counted."""
    import gdb

    a = g.wait_for_call("replace_empty_main", REPLACE_EMPTY_MAIN,
                        lambda a: situation(a) == want and (
                            want != "trade" or trade_tells(a)),
                        kind=WAITS_FOR[want])
    pcs = a.pcs
    barn = this_barn(a.s)
    call = {
        "cache": a.s["name"].string(),
        "pcs": int(pcs),
        "main": int(pcs["main"]),
        "spare": int(pcs["spare"]),
        "spare_size": sheaf_size(int(pcs["spare"])) if int(pcs["spare"]) else 0,
        "before": barn_state(barn),
        "slabs": 0,
    }
    on_calls = {}
    if bootstrap:
        bootstrap_sheaf = int(gdb.parse_and_eval("&bootstrap_sheaf"))
        set_var("((struct slub_percpu_sheaves *)0x%x)->main" % call["pcs"], bootstrap_sheaf)
        set_var("((struct slub_percpu_sheaves *)0x%x)->spare" % call["pcs"], 0)

        def at_allocate_slab(_):
            call["slabs"] += 1
        on_calls["allocate_slab"] = ((), at_allocate_slab)
    try:
        call["returned"] = g.run_to_return(on_calls)
    finally:
        if bootstrap:
            try:
                call["locked"] = int(pcs["locked"])
                call["bootstrap_size"] = int(gdb.parse_and_eval("bootstrap_sheaf.size"))
                set_var("((struct slub_percpu_sheaves *)0x%x)->main" % call["pcs"],
                        call["main"])
                set_var("((struct slub_percpu_sheaves *)0x%x)->spare" % call["pcs"],
                        call["spare"])
            except gdb.error:
                pass  # the kernel is lost: what ended the call says so
    if not bootstrap:
        returned = call["returned"]
        # The sheaves returned: this CPU's, or another's if the task moved
        # while a new slab was allocated (refill_from_new_slab()).
        got = gdb.parse_and_eval("(struct slub_percpu_sheaves *)0x%x" % (returned or call["pcs"]))
        call["locked"] = int(got["locked"])
        call["new_main"] = int(got["main"])
        call["new_spare"] = int(got["spare"])
        call["new_main_size"] = sheaf_size(call["new_main"])
        call["new_main_capacity"] = int(got["main"]["capacity"])
        call["after"] = barn_state(barn)
    return call


def call_said(c):
    return "replace_empty_main(%s) (main 0x%x, spare 0x%x with %d objects)" % (
        c["cache"], c["main"], c["spare"], c["spare_size"])


def check_returned_sheaves(g, test, c):
    """What every call that returns sheaves owes its caller: sheaves still
    taken, with objects in main."""
    said = call_said(c)
    g.check(test, c["locked"] == 1,
            "%s returned the sheaves given back (locked %d): the caller takes "
            "an object from main as if they were still taken" % (said, c["locked"]))
    g.check(test, 0 < c["new_main_size"] <= c["new_main_capacity"],
            "%s returned with %d objects in main (capacity %d)" % (
                said, c["new_main_size"], c["new_main_capacity"]))


def check_swap(g, c):
    said = call_said(c)
    g.check("empty-swap", c["returned"] == c["pcs"],
            "%s returned 0x%x, not its sheaves (0x%x)" % (said, c["returned"], c["pcs"]))
    if c["returned"] != c["pcs"]:
        return
    check_returned_sheaves(g, "empty-swap", c)
    g.check("empty-swap", (c["new_main"], c["new_spare"]) == (c["spare"], c["main"]),
            "%s left main 0x%x and spare 0x%x: it did not swap them" % (
                said, c["new_main"], c["new_spare"]))
    g.check("empty-swap", c["after"] == c["before"],
            "%s changed the barn (before: %s; after: %s) where a swap was enough" % (
                said, describe_barn(c["before"]), describe_barn(c["after"])))


def check_trade(g, c):
    said = call_said(c)
    before, after = c["before"], c["after"]
    g.check("empty-trade", c["returned"] == c["pcs"],
            "%s, the barn holding %s, returned 0x%x, not its sheaves (0x%x)" % (
                said, full_sheaves(before["nr_full"]), c["returned"], c["pcs"]))
    if c["returned"] != c["pcs"]:
        return
    check_returned_sheaves(g, "empty-trade", c)
    g.check("empty-trade", c["new_main"] in (before["full"] or []),
            "%s, the barn holding %s, left main 0x%x, not one of the barn's" % (
                said, full_sheaves(before["nr_full"]), c["new_main"]))
    g.check("empty-trade", barn_consistent(after),
            "%s left the barn with %s" % (said, describe_barn(after)))
    if not barn_consistent(after):
        return
    g.check("empty-trade", after["nr_full"] == before["nr_full"] - 1,
            "%s: the barn had %s, and %d after" % (
                said, full_sheaves(before["nr_full"]), after["nr_full"]))
    held = set(after["full"]) | set(after["empty"]) | {c["new_main"], c["new_spare"]}
    lost = [s for s in (c["main"], c["spare"]) if s and s not in held]
    g.check("empty-trade", not lost,
            "%s lost sheaf %s: neither the CPU nor the barn holds it" % (
                said, ", ".join("0x%x" % s for s in lost)))


def check_refills(g, calls):
    filled = [c for c in calls if c["returned"]]
    g.check("empty-refill", bool(filled),
            "%s, with no objects in the spare or the barn, returned NULL each "
            "time: refill main from the slabs" % call_said(calls[0]))
    # (The barn is not compared: refill_from_new_slab() gives the sheaves
    # back while it allocates a slab, and an interrupt may trade then.)
    for c in filled:
        check_returned_sheaves(g, "empty-refill", c)


def check_bootstrap(g, c):
    said = ("replace_empty_main(%s) with the bootstrap sheaf as main and no "
            "spare, the barn holding no full sheaf" % c["cache"])
    g.check("empty-refill", c["returned"] == 0 and not c["locked"],
            "%s returned 0x%x with the sheaves %s: it should give them back "
            "and return NULL" % (said, c["returned"],
                                 "taken" if c["locked"] else "given back"))
    g.check("empty-refill", c["slabs"] == 0 and c["bootstrap_size"] == 0,
            "%s allocated %d slabs, and left %d objects in the bootstrap sheaf: "
            "a sheaf of capacity 0 takes none" % (said, c["slabs"], c["bootstrap_size"]))


# --- barn_replace_full_sheaf() ----------------------------------------------

def watch_barn_trade(g, force=None):
    """One call of barn_replace_full_sheaf() whose barn has room for a full
    sheaf, and an empty one unless FORCE says otherwise: the barn before,
    after, and at each time the calling task took or gave back its lock.
    FORCE, for the call: "limit", the barn's nr_full says it holds
    MAX_FULL_SHEAVES; "none", its list of empty sheaves is empty (and
    nr_empty 0).  The barn is put back once the call has returned."""
    import gdb

    most = max_full_sheaves()
    if force:
        a = g.wait_for_call("barn_replace_full_sheaf", BARN_REPLACE_FULL_SHEAF,
                            lambda a: int(a.barn["nr_full"]) < most,
                            kind="whose barn has room for a full sheaf")
    else:
        a = g.wait_for_call(
            "barn_replace_full_sheaf", BARN_REPLACE_FULL_SHEAF,
            lambda a: int(a.barn["nr_empty"]) > 0 and int(a.barn["nr_full"]) < most,
            kind="whose barn has an empty sheaf and room for a full one "
                 "(replace_empty_main() gives the barn its empty sheaves)")
    barn = a.barn.dereference()
    lock = int(barn["lock"].address)
    call = {
        "cache": a.s["name"].string(),
        "full": int(a.full),
        "force": force,
        "most": most,
        "locks": [],
        "unlocks": [],
    }
    if force == "limit":
        set_var("((struct node_barn *)0x%x)->nr_full" % int(a.barn), most)
    saved = None
    if force == "none":
        head = int(barn["sheaves_empty"].address)
        empty = sheaves_on(head)
        if empty:
            saved = (int(barn["sheaves_empty"]["next"]), int(barn["sheaves_empty"]["prev"]),
                     len(empty))
            set_var("((struct list_head *)0x%x)->next" % head, head)
            set_var("((struct list_head *)0x%x)->prev" % head, head)
        set_var("((struct node_barn *)0x%x)->nr_empty" % int(a.barn), 0)
    call["before"] = barn_state(barn)

    def at_lock(l):
        if int(l.lock) == lock:
            call["locks"].append(barn_state(barn))

    def at_unlock(l):
        if int(l.lock) == lock:
            call["unlocks"].append(barn_state(barn))

    on_calls = {name: (("lock",), at_lock) for name in LOCKS if g.has_function(name)}
    on_calls[UNLOCK] = (("lock", "flags"), at_unlock)
    try:
        call["returned"] = g.run_to_return(on_calls)
        call["after"] = barn_state(barn)
        call["held"] = lock_held(barn)
    finally:
        try:
            put_back(barn, int(a.barn), saved)
        except gdb.error:
            pass  # the kernel is lost: what ended the call says so
    return call


def put_back(barn, address, saved):
    """Make BARN's counts its lists' lengths again after a call made with
    one of them forced, and give it back the empty sheaves SAVED (the
    list's first, last and count) took away."""
    if saved is not None and sheaves_on(int(barn["sheaves_empty"].address)) == []:
        head = int(barn["sheaves_empty"].address)
        set_var("((struct list_head *)0x%x)->next" % head, saved[0])
        set_var("((struct list_head *)0x%x)->prev" % head, saved[1])
        set_var("((struct node_barn *)0x%x)->nr_empty" % address, saved[2])
    for which in ("full", "empty"):
        sheaves = sheaves_on(int(barn["sheaves_" + which].address))
        if sheaves is not None:
            set_var("((struct node_barn *)0x%x)->nr_%s" % (address, which), len(sheaves))


def trade_said(c):
    return "barn_replace_full_sheaf(%s, full 0x%x) (the barn: %s)" % (
        c["cache"], c["full"], describe_barn(c["before"]))


def check_barn_trade(g, c):
    said = trade_said(c)
    before, after, got = c["before"], c["after"], c["returned"]
    g.check("full-trade", got in (before["empty"] or []),
            "%s returned 0x%x, not one of the barn's empty sheaves" % (said, got))
    g.check("full-trade", barn_consistent(after),
            "%s left the barn with %s" % (said, describe_barn(after)))
    if barn_consistent(after):
        g.check("full-trade", c["full"] in after["full"],
                "%s did not put the full sheaf on the barn's list of full ones" % said)
        g.check("full-trade", got not in after["full"] + after["empty"],
                "%s returned sheaf 0x%x and left it in the barn" % (said, got))
        g.check("full-trade", (after["nr_full"], after["nr_empty"]) ==
                (before["nr_full"] + 1, before["nr_empty"] - 1),
                "%s left the barn with %s: one full sheaf more and one empty "
                "one fewer was right" % (said, describe_barn(after)))

    g.check("full-locked", bool(c["locks"]),
            "%s changed the barn without taking its lock (spin_lock_irqsave())" % said)
    g.check("full-locked", all(s == before for s in c["locks"]),
            "%s changed the barn before it took the barn's lock (there: %s)" % (
                said, "; ".join(describe_barn(s) for s in c["locks"])))
    g.check("full-locked", all(s == after for s in c["unlocks"]),
            "%s changed the barn after it gave back the barn's lock (there: %s; "
            "at the return: %s)" % (said, "; ".join(describe_barn(s) for s in c["unlocks"]),
                                     describe_barn(after)))
    g.check("full-locked", not c["held"],
            "%s returned with the barn's lock held" % said)


def check_refused(g, c, force):
    said = trade_said(c)
    want = -E2BIG if force == "limit" else 0
    # A pointer, or an ERR_PTR(): a negative errno in all 64 bits.
    got = c["returned"] - (1 << 64) if c["returned"] >= (1 << 63) else c["returned"]
    what = ("ERR_PTR(-E2BIG): the barn holds MAX_FULL_SHEAVES (%d) full sheaves" % c["most"]
            if force == "limit" else "NULL: the barn has no empty sheaf")
    g.check("full-refused", got == want,
            "%s returned %s, not %s" % (said, "NULL" if got == 0 else
                                         "%d" % got if got < 0 else "0x%x" % got, what))
    g.check("full-refused", c["after"] == c["before"],
            "%s changed the barn: it has %s after" % (said, describe_barn(c["after"])))
    g.check("full-refused", not c["held"], "%s returned with the barn's lock held" % said)

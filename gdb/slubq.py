# SPDX-License-Identifier: GPL-2.0
#
# gdb commands of the SLUB+Q teaching kit, in the manner of the kernel's own
# scripts/gdb/linux: convenience functions and commands that show the slab
# allocator's state in a kernel stopped under QEMU's gdb stub, as the
# readers beside them (readers.py) read it.
#
# They stand on the kernel's own gdb library (scripts/gdb/linux: cpus for
# per-CPU data and the current CPU, lists for list walks, utils for field
# offsets); Linux 6.1 has no lx-slabinfo, so the slab commands are the
# kit's.  They look at the types they find in vmlinux, so one file serves
# every stage of the kit: where a stage changes struct kmem_cache_cpu or
# struct slab, the commands show what that stage has.
#
# From stage 07 on (SLUB+Q), struct kmem_cache_cpu is a queue of object
# pointers and a slab records its free objects in a bitmap: kit-queue shows
# the queues, kit-slab the bitmap.  In stage 11 each CPU has two sheaves
# (struct slub_percpu_sheaves) and each node a barn of them: kit-queue
# shows those.
#
# Loaded by scripts/gdb.sh after vmlinux-gdb.py, which puts scripts/gdb on
# Python's path.

import os
import subprocess
import tempfile

import gdb
from linux import cpus, lists, utils
from readers import (
    SLAB_DEBUG_FLAGS, barn_sheaves, cache_nodes, caches, cpu_sheaves,
    describe_slab, find_cache, first_object, flag_names, free_pointer,
    freelist, has_field, has_sheaves, is_slubq, oo_objects, oo_order,
    per_cpu_ptr, queue, queue_room, queued_objects, slab_address, slab_map,
    slab_marks, symbol_value, ulong_type, virt_to_slab,)


# What a kit-draw picture shows at most: the newest objects of each queue,
# the objects of a slab (in rows), the slabs of each partial list.
DRAW_QUEUED = 8
DRAW_OBJECTS = 128
DRAW_ROW = 32
DRAW_PARTIAL = 4
# The SVG files kit-draw wrote, in order (make test's handout checks read
# them).
PICTURES = []


class KitFunction(gdb.Function):
    """A convenience function, $NAME in gdb, where NAME is the subclass's name."""

    def __init__(self):
        super().__init__(self.name)


class KitCommand(gdb.Command):
    """A command that reads kernel data, named by the subclass's name."""

    def __init__(self):
        super().__init__(self.name, gdb.COMMAND_DATA)


def no_cpu_slabs(name):
    """Stop helper NAME, which reads stock SLUB's cpu slabs, on a SLUB+Q
    kernel, which has none, saying what it has instead."""
    if is_slubq():
        raise gdb.GdbError("$%s: SLUB+Q has no cpu slabs; kit-queue shows its per-CPU %s" % (
            name, "sheaves" if has_sheaves() else "queues"))


class PerCpuPtr(KitFunction):
    """Return a per-CPU pointer for one CPU.

$kit_per_cpu_ptr(PTR [, CPU]): PTR is a __percpu pointer such as
s->cpu_slab; CPU defaults to the CPU gdb has selected.  Example:
  print *$kit_per_cpu_ptr($kit_cache("kmalloc-64")->cpu_slab, 1)"""

    name = "kit_per_cpu_ptr"

    def invoke(self, ptr, cpu=-1):
        return per_cpu_ptr(ptr, int(cpu))


class Cpu(KitFunction):
    """Return the number of the CPU that gdb has selected.

$kit_cpu(): QEMU shows each virtual CPU as a thread; CPU n is thread n+1."""

    name = "kit_cpu"

    def invoke(self):
        return cpus.get_current_cpu()


class CpuFreelist(KitFunction):
    """Return the head of a cache's lockless freelist on one CPU.

$kit_cpu_freelist(S [, CPU]): S is a struct kmem_cache *; CPU defaults to
the one gdb has selected.  The same as $kit_per_cpu_ptr(S->cpu_slab)->freelist,
but usable on the right of && in a breakpoint condition: gdb evaluates that
side without calling Python when the left side is false, and a member of
the placeholder it gets would be an error."""

    name = "kit_cpu_freelist"

    def invoke(self, s, cpu=-1):
        no_cpu_slabs(self.name)
        return per_cpu_ptr(s["cpu_slab"], int(cpu))["freelist"]


class CpuSlabOf(KitFunction):
    """Return the struct slab * of a cache's CPU slab on one CPU.

$kit_cpu_slab(S [, CPU]): as $kit_cpu_freelist, for c->slab."""

    name = "kit_cpu_slab"

    def invoke(self, s, cpu=-1):
        no_cpu_slabs(self.name)
        return per_cpu_ptr(s["cpu_slab"], int(cpu))["slab"]


class NrCaches(KitFunction):
    """Return how many caches are on the slab_caches list.

$kit_nr_caches(): each has its own struct kmem_cache_cpu on every CPU."""

    name = "kit_nr_caches"

    def invoke(self):
        return sum(1 for _ in caches())


class Cache(KitFunction):
    """Return the struct kmem_cache * of the cache with this name.

$kit_cache(NAME): for example print $kit_cache("kmalloc-64")->size"""

    name = "kit_cache"

    def invoke(self, name):
        return find_cache(name.string())


class VirtToSlab(KitFunction):
    """Return the struct slab * of the slab holding an address.

$kit_virt_to_slab(ADDR): for example, in a breakpoint condition,
  $kit_virt_to_slab(x) == $kit_per_cpu_ptr(s->cpu_slab)->slab"""

    name = "kit_virt_to_slab"

    def invoke(self, addr):
        return virt_to_slab(int(addr.cast(ulong_type())))


class SlabCache(KitFunction):
    """Return the cache that owns the slab holding an address.

$kit_slab_cache(ADDR): $kit_virt_to_slab(ADDR)->slab_cache, usable on the
right of && in a condition (see $kit_cpu_freelist)."""

    name = "kit_slab_cache"

    def invoke(self, addr):
        return virt_to_slab(int(addr.cast(ulong_type())))["slab_cache"]


class FreePointer(KitFunction):
    """Return the free pointer stored in a free object.

$kit_free_pointer(S, OBJ): the next object on the freelist after OBJ in
cache S, as stock SLUB's get_freepointer() reads it."""

    name = "kit_free_pointer"

    def invoke(self, s, obj):
        if is_slubq():
            raise gdb.GdbError(
                "$kit_free_pointer: SLUB+Q keeps no free pointer in objects; "
                "a slab's bitmap says which are free ($kit_object_free)")
        value = free_pointer(s, int(obj.cast(ulong_type())))
        return gdb.Value(value).cast(gdb.lookup_type("void").pointer())


class QueueLength(KitFunction):
    """Return how many objects wait in a cache's queue on one CPU (SLUB+Q).

$kit_queue_len(S [, CPU]): S is a struct kmem_cache *; CPU defaults to the
one gdb has selected.  Usable on the right of && in a breakpoint condition
(see $kit_cpu_freelist)."""

    name = "kit_queue_len"

    def invoke(self, s, cpu=-1):
        if has_sheaves():
            raise gdb.GdbError("$kit_queue_len: stage 11 has sheaves, not queues: "
                               "$kit_per_cpu_ptr(S->cpu_sheaves)->main->size")
        return per_cpu_ptr(s["cpu_slab"], int(cpu))["objects"]


class ObjectFree(KitFunction):
    """Return 1 if an object's bit is set in its slab's bitmap (SLUB+Q).

$kit_object_free(ADDR): 1 when the slab holding ADDR records the object as
free, 0 when it counts as allocated (in use, or waiting in a CPU queue)."""

    name = "kit_object_free"

    def invoke(self, addr):
        addr = int(addr.cast(ulong_type()))
        slab = virt_to_slab(addr)
        bits, _ = slab_map(slab)
        index = (addr - slab_address(slab)) // int(slab["slab_cache"]["size"])
        return (bits >> index) & 1


class SlabAvailable(KitFunction):
    """Return how many objects a slab's bitmap records as free (SLUB+Q).

$kit_slab_available(SLAB): SLAB is a struct slab *; what the kernel's
available() computes."""

    name = "kit_slab_available"

    def invoke(self, slab):
        bits, _ = slab_map(slab)
        return bin(bits).count("1")


class CacheDebug(KitFunction):
    """Return whether a cache is in debug mode, as kmem_cache_debug() says.

$kit_cache_debug(S): S->flags & SLAB_DEBUG_FLAGS, non-zero when any of
slub_debug's F, Z, P, U or T is on for cache S.  kmem_cache_debug() is an
inline function: gdb cannot call it."""

    name = "kit_cache_debug"

    def invoke(self, s):
        return int(s["flags"]) & SLAB_DEBUG_FLAGS


class CacheFlags(KitCommand):
    """Show a cache's flags by name.

kit-cache-flags CACHE: CACHE is a name or a struct kmem_cache * expression."""

    name = "kit-cache-flags"

    def invoke(self, arg, from_tty):
        s = find_cache(arg)
        flags = int(s["flags"])
        gdb.write("cache %s: flags 0x%x = %s\n" % (
            s["name"].string(), flags, flag_names(flags)))
        gdb.write("cache %s: kmem_cache_debug() is %s\n" % (
            s["name"].string(), "true" if flags & SLAB_DEBUG_FLAGS else "false"))


class Caches(KitCommand):
    """List the slab caches: name, object size, slot size, objects per slab, order.

kit-caches [SUBSTRING]: only the caches whose name contains SUBSTRING."""

    name = "kit-caches"

    def invoke(self, arg, from_tty):
        # object_size is what the cache's users asked for; size, the slot
        # with its metadata, is what /proc/slabinfo calls objsize.
        gdb.write("%-24s %11s %8s %8s %6s\n" % ("cache", "object_size", "size",
                                                "objects", "order"))
        for s in caches():
            name = s["name"].string()
            if arg.strip() in name:
                gdb.write("%-24s %11d %8d %8d %6d\n" % (
                    name, int(s["object_size"]), int(s["size"]), oo_objects(s), oo_order(s)))


class CpuSlab(KitCommand):
    """Show one cache's per-CPU state.

kit-cpu-slab CACHE [CPU]: CACHE is a name (kmalloc-64) or an expression
for a struct kmem_cache *; CPU defaults to the one gdb has selected.
Prints the CPU's slab and its lockless freelist, object by object."""

    name = "kit-cpu-slab"

    def invoke(self, arg, from_tty):
        argv = gdb.string_to_argv(arg)
        if not argv:
            raise gdb.GdbError("usage: kit-cpu-slab CACHE [CPU]")
        s = find_cache(argv[0])
        cpu = int(gdb.parse_and_eval(argv[1])) if len(argv) > 1 else cpus.get_current_cpu()
        if is_slubq():
            raise gdb.GdbError("SLUB+Q has no cpu slabs: kit-queue %s shows "
                               "the per-CPU %s" % (
                                   argv[0], "sheaves" if has_sheaves() else "queues"))
        c = per_cpu_ptr(s["cpu_slab"], cpu)
        gdb.write("cache %s: object size %d, slot size %d, free pointer at +%d,"
                  " %d objects per slab\n" % (
                      s["name"].string(), int(s["object_size"]), int(s["size"]),
                      int(s["offset"]), oo_objects(s)))
        gdb.write("cpu %d: kmem_cache_cpu at 0x%x, tid %d\n" % (
            cpu, int(c), int(c["tid"])))
        slab = c["slab"]
        if int(slab) == 0:
            gdb.write("cpu %d: no cpu slab\n" % cpu)
        else:
            gdb.write("cpu %d: %s\n" % (cpu, describe_slab(slab)))
        objects, broken = [], None
        if int(slab):
            objects, broken = freelist(s, c["freelist"], slab)
        gdb.write("cpu %d freelist: %d free objects%s\n" % (
            cpu, len(objects), ":" if objects else ""))
        for i, obj in enumerate(objects[:8]):
            gdb.write("  [%d] 0x%x\n" % (i, obj))
        if len(objects) > 8:
            gdb.write("  ... %d more\n" % (len(objects) - 8))
        if broken:
            gdb.write("CORRUPTED freelist: %s\n" % broken)


def slubq_command_args(arg, usage, elsewhere):
    """The words of a command that needs SLUB+Q, and the cache the first one
    names; USAGE and ELSEWHERE (what to use on this stage) say why not."""
    argv = gdb.string_to_argv(arg)
    if not argv:
        raise gdb.GdbError("usage: " + usage)
    if not is_slubq():
        raise gdb.GdbError(elsewhere)
    return find_cache(argv[0]), argv


class Queue(KitCommand):
    """Show a cache's per-CPU queues (SLUB+Q), or sheaves and barns (stage 11).

kit-queue CACHE [CPU]: CACHE is a name (kmalloc-64) or an expression for a
struct kmem_cache *.  For every CPU (or only CPU), how many objects wait in
the queue, of how many it holds, and the last ones, which go out first.
In stage 11, the same for each CPU's main and spare sheaves, and each
node's barn: its full and empty sheaves."""

    name = "kit-queue"

    def invoke(self, arg, from_tty):
        s, argv = slubq_command_args(
            arg, "kit-queue CACHE [CPU]",
            "this kernel has no per-CPU queues (stage 07 adds them); "
            "kit-cpu-slab shows its cpu slab")
        which = ([int(gdb.parse_and_eval(argv[1]))] if len(argv) > 1
                 else cpus.each_possible_cpu())
        if has_sheaves():
            self.show_sheaves(s, which)
            return
        gdb.write("cache %s: object size %d, slot size %d, queue %d, batch %d\n" % (
            s["name"].string(), int(s["object_size"]), int(s["size"]),
            int(s["queue"]), int(s["batch"])))
        for cpu in which:
            c, objects = queue(s, cpu)
            gdb.write("cpu %d: queue %d of %d objects, node %d, kmem_cache_cpu at 0x%x\n" % (
                cpu, len(objects), queue_room(s, c), int(c["node"]), int(c)))
            shown = objects[-4:]
            for i, obj in enumerate(shown, len(objects) - len(shown)):
                gdb.write("  object[%d] 0x%x%s\n" % (
                    i, obj, "  <- next to go" if i == len(objects) - 1 else ""))

    @staticmethod
    def show_sheaves(s, which):
        """Stage 11: each CPU's main and spare, each node's barn."""
        gdb.write("cache %s: object size %d, slot size %d, sheaf capacity %d\n" % (
            s["name"].string(), int(s["object_size"]), int(s["size"]),
            int(s["sheaf_capacity"])))
        for cpu in which:
            pcs, main, spare = cpu_sheaves(s, cpu)
            gdb.write("cpu %d: sheaves at 0x%x%s\n" % (
                cpu, int(pcs), ", taken" if int(pcs["locked"]) else ""))
            for role, (ptr, objects) in (("main", main), ("spare", spare)):
                if ptr is None:
                    gdb.write("  %-5s none\n" % role)
                    continue
                gdb.write("  %-5s 0x%x: %d of %d objects%s\n" % (
                    role, int(ptr), len(objects), int(ptr["capacity"]),
                    " (the bootstrap sheaf)" if not int(ptr["capacity"]) else ""))
                shown = objects[-4:] if role == "main" else []
                for i, obj in enumerate(shown, len(objects) - len(shown)):
                    gdb.write("    objects[%d] 0x%x%s\n" % (
                        i, obj, "  <- next to go" if i == len(objects) - 1 else ""))
        for nid in cache_nodes(s):
            full, empty = barn_sheaves(s, nid)
            gdb.write("node %d barn: %d full sheaves (%d objects), %d empty\n" % (
                nid, len(full), sum(len(objects) for _, objects in full), len(empty)))


class Slab(KitCommand):
    """Show the slab that holds an object, and which of its objects are free.

kit-slab ADDRESS: ADDRESS is any address inside a slab's memory, or a
struct slab * (or struct page *) expression.  Prints
one letter per object, F for free and U for used, as far as the slab's
own freelist and the freelist of the CPU that owns it say."""

    name = "kit-slab"

    def invoke(self, arg, from_tty):
        if not arg.strip():
            raise gdb.GdbError("usage: kit-slab ADDRESS")
        value = gdb.parse_and_eval(arg)
        target = value.type.strip_typedefs()
        if (target.code == gdb.TYPE_CODE_PTR and
                str(target.target().strip_typedefs()) in ("struct slab", "struct page")):
            slab = value.cast(gdb.lookup_type("struct slab").pointer())
            addr = slab_address(slab)
        else:
            addr = int(value.cast(ulong_type()))
            slab = virt_to_slab(addr)
        s = slab["slab_cache"]
        base = slab_address(slab)
        size = int(s["size"])
        nr = oo_objects(s)
        if has_field(slab.dereference().type, "objects"):
            nr = int(slab["objects"])
        gdb.write("%s\n" % describe_slab(slab))
        gdb.write("cache %s, object 0x%x is index %d\n" % (
            s["name"].string(), addr, (addr - base) // size))
        if is_slubq():
            self.show_bitmap(s, slab, nr)
            return
        objects, broken = freelist(s, slab["freelist"], slab)
        free = set(objects)
        if broken:
            gdb.write("CORRUPTED freelist of the slab: %s\n" % broken)
        for cpu in cpus.each_possible_cpu():
            c = per_cpu_ptr(s["cpu_slab"], cpu)
            if int(c["slab"]) == int(slab):
                gdb.write("the cpu slab of cpu %d\n" % cpu)
                objects, broken = freelist(s, c["freelist"], slab)
                free |= set(objects)
                if broken:
                    gdb.write("CORRUPTED freelist of cpu %d: %s\n" % (cpu, broken))
        first = first_object(s, base)
        marks = "".join("F" if first + i * size in free else "U" for i in range(nr))
        gdb.write("objects (F free, U used): %d free of %d\n" % (len(free), nr))
        if marks.count("F") != len(free):
            gdb.write("INCONSISTENT: %d of the free objects are at no object's address\n" % (
                len(free) - marks.count("F")))
        for i in range(0, nr, 64):
            gdb.write("  %4d: %s\n" % (i, marks[i:i + 64]))

    @staticmethod
    def show_bitmap(s, slab, nr):
        """SLUB+Q: the slab's bitmap; objects that wait in a CPU queue are
        allocated for the slab, and marked Q."""
        bits, where = slab_map(slab)
        marks = slab_marks(s, slab, queued_objects(s))
        free = bin(bits).count("1")
        gdb.write("bitmap %s: 0x%x\n" % (where, bits))
        gdb.write("objects (F free, Q in a cpu queue, U used): %d free, %d queued,"
                  " %d used, of %d\n" % (free, marks.count("Q"), marks.count("U"), nr))
        if has_field(slab.dereference().type, "inuse") and int(slab["inuse"]) != nr - free:
            gdb.write("INCONSISTENT: inuse %d but the bitmap has %d free of %d\n" % (
                int(slab["inuse"]), free, nr))
        for i in range(0, nr, 64):
            gdb.write("  %4d: %s\n" % (i, marks[i:i + 64]))


def draw_slab_label(s, slab, queued):
    """A slab's record in a kit-draw picture: where it is, its counts, and a
    letter per object (F free in the bitmap, Q in a CPU queue, U used)."""
    nr = int(slab["objects"])
    marks = slab_marks(s, slab, queued)
    rows = [marks[i:i + DRAW_ROW] for i in range(0, min(nr, DRAW_OBJECTS), DRAW_ROW)]
    if nr > DRAW_OBJECTS:
        rows.append("... %d objects more" % (nr - DRAW_OBJECTS))
    return "slab 0x%x (objects at 0x%x)|%d free, %d queued, %d used, of %d|%s\\l" % (
        int(slab), slab_address(slab), marks.count("F"), marks.count("Q"),
        marks.count("U"), nr, "\\l".join(rows))


def array_cells(title, objects, last=""):
    """The fields of a queue's or a sheaf's record in a kit-draw picture: a
    title, then its newest objects, the last of which goes out first and
    gets LAST after its address."""
    shown = objects[-DRAW_QUEUED:]
    cells = [title]
    if len(objects) > len(shown):
        cells.append("... %d older" % (len(objects) - len(shown)))
    for i, obj in enumerate(shown, len(objects) - len(shown)):
        cells.append("[%d] 0x%x%s" % (i, obj, last if i == len(objects) - 1 else ""))
    return "|".join(cells)


def link_slabs(lines, source, objects, slabs, verb):
    """An arrow in a kit-draw picture from record SOURCE to each slab its
    OBJECTS come from, labelled with how many and VERB; each slab added to
    SLABS (the slabs to draw) if new."""
    per_slab = {}
    for obj in objects:
        slab = int(virt_to_slab(obj))
        per_slab[slab] = per_slab.get(slab, 0) + 1
    for slab, n in per_slab.items():
        if slab not in slabs:
            slabs.append(slab)
        lines.append('  %s -> slab%x [label="%d %s"];' % (source, slab, n, verb))


def draw_partial(lines, s, nid, slabs, slab_type):
    """Node NID's partial list in a kit-draw picture: its first slabs, each
    added to SLABS (the slabs to draw) if new."""
    n = s["node"][nid]
    lines.append('  node%d [shape=box, label="node %d: %d partial slabs"];' % (
        nid, nid, int(n["nr_partial"])))
    prev = "node%d" % nid
    for i, slab in enumerate(lists.list_for_each_entry(n["partial"], slab_type.pointer(),
                                                       "slab_list")):
        if i == DRAW_PARTIAL:
            lines.append('  %s -> more%d; more%d [shape=plaintext, label="..."];' % (
                prev, nid, nid))
            break
        if int(slab) not in slabs:
            slabs.append(int(slab))
        lines.append("  %s -> slab%x;" % (prev, int(slab)))
        prev = "slab%x" % int(slab)


def draw_slabs(lines, s, slabs, slab_type, queued):
    """The records of SLABS in a kit-draw picture, and the picture's end."""
    for slab in slabs:
        label = draw_slab_label(s, gdb.Value(slab).cast(slab_type.pointer()), queued)
        lines.append('  slab%x [label="%s"];' % (slab, label))
    lines.append("}")
    return "\n".join(lines) + "\n"


def draw(s):
    """The graphviz source of kit-draw's picture of cache S."""
    slab_type = gdb.lookup_type("struct slab")
    lines = ["digraph kit_draw {", "  rankdir=LR;",
             '  node [shape=record, fontname="monospace", fontsize=10];',
             '  labelloc=t; label="%s: per-CPU queues, their slabs, partial lists";' %
             s["name"].string()]
    if has_sheaves():
        return draw_sheaves(s, lines, slab_type)
    queued, slabs = set(), []
    for cpu in cpus.each_possible_cpu():
        c, objects = queue(s, cpu)
        queued |= set(objects)
        # (left to right, a record's fields stack from top to bottom)
        lines.append('  cpu%d [label="%s"];' % (cpu, array_cells(
            "cpu %d queue: %d of %d" % (cpu, len(objects), queue_room(s, c)),
            objects, " (next to go)")))
        link_slabs(lines, "cpu%d" % cpu, objects, slabs, "queued")
    for nid in cache_nodes(s):
        draw_partial(lines, s, nid, slabs, slab_type)
    return draw_slabs(lines, s, slabs, slab_type, queued)




def draw_sheaves(s, lines, slab_type):
    """kit-draw's picture in stage 11: each CPU's main and spare sheaves,
    each node's barn, the slabs their objects come from, the partial lists."""
    lines[-1] = '  labelloc=t; label="%s: per-CPU sheaves, barns, their slabs, partial lists";' % (
        s["name"].string())
    queued, slabs = queued_objects(s), []

    for cpu in cpus.each_possible_cpu():
        pcs, main, spare = cpu_sheaves(s, cpu)
        for role, (ptr, objects) in (("main", main), ("spare", spare)):
            name = "cpu%d_%s" % (cpu, role)
            if ptr is None:
                lines.append('  %s [label="cpu %d %s: none"];' % (name, cpu, role))
                continue
            lines.append('  %s [label="%s"];' % (name, array_cells(
                "cpu %d %s: %d of %d" % (cpu, role, len(objects), int(ptr["capacity"])),
                objects, " (next to go)" if role == "main" else "")))
            link_slabs(lines, name, objects, slabs, "held")
        lines.append("  cpu%d_main -> cpu%d_spare [style=dashed, arrowhead=none];" % (cpu, cpu))
    for nid in cache_nodes(s):
        full, empty = barn_sheaves(s, nid)
        lines.append('  barn%d [shape=box, label="node %d barn: %d full, %d empty"];' % (
            nid, nid, len(full), len(empty)))
        for i, (ptr, objects) in enumerate(full[:DRAW_PARTIAL]):
            name = "barn%d_full%d" % (nid, i)
            lines.append('  %s [label="%s"];' % (name, array_cells(
                "full sheaf 0x%x: %d" % (int(ptr), len(objects)), objects)))
            lines.append("  barn%d -> %s;" % (nid, name))
            link_slabs(lines, name, objects, slabs, "held")
        draw_partial(lines, s, nid, slabs, slab_type)
    return draw_slabs(lines, s, slabs, slab_type, queued)


class Draw(KitCommand):
    """Draw a cache's per-CPU queues and their slabs, as the kernel has them now (SLUB+Q).

kit-draw CACHE [FILE]: CACHE is a name or a struct kmem_cache * expression.
Writes an SVG picture (FILE, or the next kit-draw-CACHE-N.svg of this gdb
session in $KIT_PICTURES, which make gdb and make lab set to the stage's
logs) of each CPU's queue (its newest objects: the last goes out first),
the slabs its objects come from and the first slabs of each node's partial
list, each slab with a letter per object: F free in its bitmap, Q waiting
in a CPU queue, U used.  Its graphviz source is kept beside it (.dot).
Stop, draw, step, draw again: the two pictures show what the step did."""

    name = "kit-draw"

    def __init__(self):
        super().__init__()
        self.drawn = 0

    def invoke(self, arg, from_tty):
        s, argv = slubq_command_args(
            arg, "kit-draw CACHE [FILE]",
            "kit-draw draws SLUB+Q's queues and bitmaps (stage 07 on); "
            "kit-cpu-slab and kit-slab show this kernel's")
        if len(argv) > 1:
            svg = argv[1]
        else:
            self.drawn += 1
            folder = os.environ.get("KIT_PICTURES") or tempfile.gettempdir()
            os.makedirs(folder, exist_ok=True)
            svg = os.path.join(folder, "kit-draw-%s-%d.svg" % (s["name"].string(), self.drawn))
        source = os.path.splitext(svg)[0] + ".dot"
        with open(source, "w") as f:
            f.write(draw(s))
        done = subprocess.run(["dot", "-Tsvg", "-o", svg, source],
                              capture_output=True, text=True)
        if done.returncode != 0 or done.stderr:
            raise gdb.GdbError("graphviz's dot on %s: %s" % (source, done.stderr.strip()))
        PICTURES.append(svg)
        gdb.write("kit-draw: %s (graphviz source: %s)\n" % (svg, source))


class Kit(gdb.Command):
    """List the kit's gdb helpers, each with the first line of its help.

kit: the commands (help kit-NAME says more) and the convenience functions
(help function kit_NAME says more) that gdb/slubq.py adds."""

    name = "kit"

    def __init__(self, helpers):
        super().__init__(self.name, gdb.COMMAND_USER)
        self.helpers = helpers

    def invoke(self, arg, from_tty):
        for helper in self.helpers:
            name = helper.name
            if isinstance(helper, gdb.Function):
                name = "$%s()" % name
            summary = (type(helper).__doc__ or "").strip().splitlines()[0]
            gdb.write("%-22s %s\n" % (name, summary))


Kit([helper() for helper in (
    Caches, CacheFlags, CpuSlab, Queue, Slab, Draw,
    Cache, NrCaches, Cpu, PerCpuPtr, CpuSlabOf, CpuFreelist, QueueLength,
    VirtToSlab, SlabCache, FreePointer, ObjectFree, SlabAvailable, CacheDebug)])

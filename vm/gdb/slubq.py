# SPDX-License-Identifier: GPL-2.0
#
# gdb helpers of the SLUB+Q teaching kit, in the manner of the kernel's own
# scripts/gdb/linux: convenience functions and commands that read the slab
# allocator's state out of a kernel stopped under QEMU's gdb stub.
#
# They stand on the kernel's own gdb library (scripts/gdb/linux: cpus for
# per-CPU data and the current CPU, lists for list walks, utils for field
# offsets); Linux 6.1 has no lx-slabinfo, so the slab commands are the
# kit's.  They look at the types
# they find in vmlinux, so one file serves every stage of the kit: where a
# stage changes struct kmem_cache_cpu or struct slab, the commands show what
# that stage has.
#
# From stage 07 on (SLUB+Q), struct kmem_cache_cpu is a queue of object
# pointers and a slab records its free objects in a bitmap: kit-queue shows
# the queues, kit-slab the bitmap.
#
# Loaded by scripts/gdb.sh after vmlinux-gdb.py, which puts scripts/gdb on
# Python's path.

import os
import subprocess
import tempfile

import gdb
from linux import cpus, lists, utils

# x86_64 with 4-level paging and no KASLR (the kit's config): where the
# direct map and the struct page array start, unless the kernel says.
PAGE_OFFSET_L4 = 0xFFFF888000000000
VMEMMAP_START_L4 = 0xFFFFEA0000000000
PAGE_SHIFT = 12
# Cache flags of Linux 6.1 (include/linux/slab.h, mm/slab.h, mm/slub.c).
# They are #defines, which DWARF does not carry, hence this table.
SLAB_FLAGS = [
    (0x00000100, "SLAB_CONSISTENCY_CHECKS"),
    (0x00000400, "SLAB_RED_ZONE"),
    (0x00000800, "SLAB_POISON"),
    (0x00001000, "SLAB_KMALLOC"),
    (0x00002000, "SLAB_HWCACHE_ALIGN"),
    (0x00004000, "SLAB_CACHE_DMA"),
    (0x00008000, "SLAB_CACHE_DMA32"),
    (0x00010000, "SLAB_STORE_USER"),
    (0x00020000, "SLAB_RECLAIM_ACCOUNT"),
    (0x00040000, "SLAB_PANIC"),
    (0x00080000, "SLAB_TYPESAFE_BY_RCU"),
    (0x00100000, "SLAB_MEM_SPREAD"),
    (0x00200000, "SLAB_TRACE"),
    (0x00400000, "SLAB_DEBUG_OBJECTS"),
    (0x00800000, "SLAB_NOLEAKTRACE"),
    (0x02000000, "SLAB_FAILSLAB"),
    (0x04000000, "SLAB_ACCOUNT"),
    (0x08000000, "SLAB_KASAN"),
    (0x10000000, "SLAB_NO_USER_FLAGS"),
    (0x20000000, "SLAB_SKIP_KFENCE"),
    (0x40000000, "__CMPXCHG_DOUBLE"),
    (0x80000000, "__OBJECT_POISON"),
]
# SLAB_DEBUG_FLAGS with CONFIG_SLUB_DEBUG: what kmem_cache_debug() tests.
SLAB_DEBUG_FLAGS = 0x00000100 | 0x00000400 | 0x00000800 | 0x00010000 | 0x00200000

# What a kit-draw picture shows at most: the newest objects of each queue,
# the objects of a slab (in rows), the slabs of each partial list.
DRAW_QUEUED = 8
DRAW_OBJECTS = 128
DRAW_ROW = 32
DRAW_PARTIAL = 4
# The SVG files kit-draw wrote, in order (make test's handout checks read
# them).
PICTURES = []
# How many free objects a listing follows before it stops: more than any
# slab of stock SLUB holds (MAX_OBJS_PER_PAGE, 32767).
FREELIST_LIMIT = 32768


def ulong_type():
    return gdb.lookup_type("unsigned long")


def read_ulong(addr):
    data = gdb.selected_inferior().read_memory(addr, 8)
    return int.from_bytes(bytes(data), "little")


def read_pointers(addr, count):
    """COUNT pointers from kernel memory at ADDR, in one read: over the gdb
    stub, a read a pointer takes seconds for a queue of thousands."""
    if count <= 0:
        return []
    data = bytes(gdb.selected_inferior().read_memory(addr, count * 8))
    return [int.from_bytes(data[i * 8:i * 8 + 8], "little") for i in range(count)]


def find_field(gdb_type, name):
    """The gdb.Field of a struct's member NAME, also inside anonymous unions
    and structs (as struct slab's counters bit fields are), or None."""
    for f in gdb_type.strip_typedefs().fields():
        if f.name == name:
            return f
        if f.name is None:
            inner = find_field(f.type, name)
            if inner is not None:
                return inner
    return None


def has_field(gdb_type, name):
    """Whether a struct has a member NAME (see find_field)."""
    return find_field(gdb_type, name) is not None


def symbol_value(name, default):
    """The value of a kernel variable, or DEFAULT when vmlinux has none."""
    try:
        return int(gdb.parse_and_eval(name))
    except gdb.error:
        return default


def nr_cpu_ids():
    return symbol_value("nr_cpu_ids", 1)


def per_cpu_ptr(ptr, cpu):
    """The address of CPU's copy of the per-CPU variable that PTR points to,
    with PTR's type: what per_cpu_ptr() computes in the kernel."""
    if cpu < 0:
        cpu = cpus.get_current_cpu()
    if cpu >= nr_cpu_ids():
        raise gdb.GdbError("no CPU %d: this kernel has %d" % (cpu, nr_cpu_ids()))
    return cpus.per_cpu(ptr, cpu).address


class KitFunction(gdb.Function):
    """A convenience function, $NAME in gdb, where NAME is the subclass's name."""

    def __init__(self):
        super().__init__(self.name)


class KitCommand(gdb.Command):
    """A command that reads kernel data, named by the subclass's name."""

    def __init__(self):
        super().__init__(self.name, gdb.COMMAND_DATA)


class PerCpuPtr(KitFunction):
    """Return a per-CPU pointer for one CPU.

$kit_per_cpu_ptr(PTR [, CPU]): PTR is a __percpu pointer such as
s->cpu_slab; CPU defaults to the CPU gdb has selected.  Example:
  print *$kit_per_cpu_ptr($kit_cache("kmalloc-64")->cpu_slab, 1)"""

    name = "kit_per_cpu_ptr"

    def invoke(self, ptr, cpu=-1):
        return per_cpu_ptr(ptr, int(cpu))


def caches():
    """Every struct kmem_cache * on the slab_caches list."""
    return lists.list_for_each_entry(gdb.parse_and_eval("slab_caches"),
                                     gdb.lookup_type("struct kmem_cache").pointer(),
                                     "list")


def find_cache(spec):
    """A cache by name, or by the address of its struct kmem_cache."""
    spec = spec.strip()
    for s in caches():
        if s["name"].string() == spec:
            return s
    try:
        return gdb.parse_and_eval(spec).cast(
            gdb.lookup_type("struct kmem_cache").pointer())
    except gdb.error:
        raise gdb.GdbError("no cache named '%s' (kit-caches lists them)" % spec)


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
        return per_cpu_ptr(s["cpu_slab"], int(cpu))["freelist"]


class CpuSlabOf(KitFunction):
    """Return the struct slab * of a cache's CPU slab on one CPU.

$kit_cpu_slab(S [, CPU]): as $kit_cpu_freelist, for c->slab."""

    name = "kit_cpu_slab"

    def invoke(self, s, cpu=-1):
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


def oo_shift():
    """Where kmem_cache_order_objects splits order from objects: bit 16
    while struct slab counts objects in a bitfield (objects:15), bit 20
    from stage 10 on, where objects is a whole unsigned int."""
    objects = find_field(gdb.lookup_type("struct slab"), "objects")
    if objects is None:
        raise gdb.GdbError("struct slab has no member objects")
    return 16 if objects.bitsize else 20


def oo_objects(s):
    return int(s["oo"]["x"]) & ((1 << oo_shift()) - 1)


def oo_order(s):
    return int(s["oo"]["x"]) >> oo_shift()


def free_pointer(s, obj):
    """The next free object after OBJ on a SLUB freelist: the pointer that
    stock SLUB keeps inside the free object, at s->offset (decoded when the
    kernel hardens its freelists)."""
    ptr_addr = obj + int(s["offset"])
    value = read_ulong(ptr_addr)
    if has_field(s.dereference().type, "random"):
        swapped = int.from_bytes(ptr_addr.to_bytes(8, "little"), "big")
        value ^= int(s["random"]) ^ swapped
    return value & 0xFFFFFFFFFFFFFFFF


def freelist(s, head, slab):
    """The objects on the freelist of SLAB that starts at HEAD, in order,
    and why the list ended before a NULL (None if it did not): a pointer
    that is not one of the slab's objects, or an object that comes again
    (a cycle), which is what the kernel's on_freelist() reports as
    corruption."""
    base = slab_address(slab)
    first, size = first_object(s, base), int(s["size"])
    nr = int(slab["objects"]) if has_field(slab.dereference().type, "objects") else oo_objects(s)
    objects, seen = [], set()
    obj = int(head)
    while obj:
        if obj in seen:
            return objects, "0x%x comes again after %d objects: a cycle" % (obj, len(objects))
        if not (first <= obj < first + nr * size and (obj - first) % size == 0):
            return objects, "0x%x is not one of the %d objects of the slab at 0x%x" % (
                obj, nr, base)
        if len(objects) == FREELIST_LIMIT:
            return objects, "more than %d objects" % FREELIST_LIMIT
        seen.add(obj)
        objects.append(obj)
        obj = free_pointer(s, obj)
    return objects, None


def page_offset():
    return symbol_value("page_offset_base", PAGE_OFFSET_L4)


def vmemmap():
    return symbol_value("vmemmap_base", VMEMMAP_START_L4)


def virt_to_slab(addr):
    """The struct slab * of the slab that holds the object at ADDR (the
    kernel's virt_to_slab() for the direct map)."""
    page_type = gdb.lookup_type("struct page")
    pfn = (addr - page_offset()) >> PAGE_SHIFT
    page = vmemmap() + pfn * page_type.sizeof
    # page->compound_head, bit 0 set: a tail page, and the head's address
    head = read_ulong(page + utils.offset_of(page_type.pointer(), "compound_head"))
    if head & 1:
        page = head - 1
    return gdb.Value(page).cast(gdb.lookup_type("struct slab").pointer())


def slab_address(slab):
    page_type = gdb.lookup_type("struct page")
    pfn = (int(slab) - vmemmap()) // page_type.sizeof
    return page_offset() + (pfn << PAGE_SHIFT)


def is_slubq():
    """Whether this kernel is SLUB+Q: per-CPU queues, slab bitmaps."""
    return has_field(gdb.lookup_type("struct kmem_cache_cpu"), "object")


def slab_order(slab):
    """The page order of a slab: a compound page keeps it in its first
    tail page."""
    page_type = gdb.lookup_type("struct page")
    page = slab.cast(page_type.pointer())
    if int(page["flags"]) & (1 << int(gdb.parse_and_eval("PG_head"))):
        return int(page[1]["compound_order"])
    return 0


def slab_map(slab):
    """The SLUB+Q bitmap of a slab's free objects, as a Python int (bit i
    set: object i is free), and where it is: in struct slab when the slab
    has at most 64 objects, else in the last words of the slab (map())."""
    nr = int(slab["objects"])
    if nr <= 64:
        return int(slab["free_map"]), "in struct slab"
    words = (nr + 63) // 64
    addr = slab_address(slab) + (4096 << slab_order(slab)) - words * 8
    data = bytes(gdb.selected_inferior().read_memory(addr, words * 8))
    return int.from_bytes(data, "little") & ((1 << nr) - 1), "at 0x%x" % addr


def queue_room(s, c):
    """How many objects a SLUB+Q queue has room for: its own count from
    stage 08 on, where queues are resized; the cache's before."""
    if has_field(c.dereference().type, "queue"):
        return int(c["queue"])
    return int(s["queue"])


def queued_objects(s):
    """The objects waiting in any CPU's queue of cache S (SLUB+Q)."""
    queued = set()
    for cpu in cpus.each_possible_cpu():
        queued |= set(queue(s, cpu)[1])
    return queued


def slab_marks(s, slab, queued):
    """A letter per object of a SLUB+Q slab: F free in its bitmap, Q
    allocated to a CPU queue (in QUEUED), U used."""
    bits, _ = slab_map(slab)
    first, size = first_object(s, slab_address(slab)), int(s["size"])
    return "".join("F" if (bits >> i) & 1 else
                   "Q" if first + i * size in queued else "U"
                   for i in range(int(slab["objects"])))


def queue(s, cpu):
    """A SLUB+Q per-CPU queue: (its kmem_cache_cpu, the objects in it)."""
    c = per_cpu_ptr(s["cpu_slab"], cpu)
    n = int(c["objects"])
    if n < 0 or n > queue_room(s, c):
        raise gdb.GdbError("cpu %d: queue count %d is not in 0..%d" % (
            cpu, n, queue_room(s, c)))
    # (c->object is an array in stage 07, a pointer from stage 08 on.)
    if n == 0:
        return c, []
    return c, read_pointers(int(c["object"][0].address), n)


def first_object(s, base):
    """Where the first object of a slab at BASE starts: red_left_pad bytes
    in when the cache has red zones (fixup_red_left()), else at BASE."""
    return base + int(s["red_left_pad"])


def describe_slab(slab):
    """One line on a slab: where it is, whose it is, how full."""
    fields = ["slab 0x%x" % int(slab), "memory 0x%x" % slab_address(slab)]
    for name in ("objects", "inuse", "frozen"):
        if has_field(slab.dereference().type, name):
            fields.append("%s %d" % (name, int(slab[name])))
    return ", ".join(fields)


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


def flag_names(flags):
    names = [name for bit, name in SLAB_FLAGS if flags & bit]
    rest = flags & ~sum(bit for bit, _ in SLAB_FLAGS)
    if rest:
        names.append("0x%x" % rest)
    return " | ".join(names) or "0"


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
                               "the per-CPU queues" % argv[0])
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
    """Show a cache's per-CPU queues (SLUB+Q).

kit-queue CACHE [CPU]: CACHE is a name (kmalloc-64) or an expression for a
struct kmem_cache *.  For every CPU (or only CPU), how many objects wait in
the queue, of how many it holds, and the last ones, which go out first."""

    name = "kit-queue"

    def invoke(self, arg, from_tty):
        s, argv = slubq_command_args(
            arg, "kit-queue CACHE [CPU]",
            "this kernel has no per-CPU queues (stage 07 adds them); "
            "kit-cpu-slab shows its cpu slab")
        which = ([int(gdb.parse_and_eval(argv[1]))] if len(argv) > 1
                 else cpus.each_possible_cpu())
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


def draw(s):
    """The graphviz source of kit-draw's picture of cache S."""
    slab_type = gdb.lookup_type("struct slab")
    lines = ["digraph kit_draw {", "  rankdir=LR;",
             '  node [shape=record, fontname="monospace", fontsize=10];',
             '  labelloc=t; label="%s: per-CPU queues, their slabs, partial lists";' %
             s["name"].string()]
    queued, slabs = set(), []
    for cpu in cpus.each_possible_cpu():
        c, objects = queue(s, cpu)
        queued |= set(objects)
        shown = objects[-DRAW_QUEUED:]
        cells = ["cpu %d queue: %d of %d" % (cpu, len(objects), queue_room(s, c))]
        if len(objects) > len(shown):
            cells.append("... %d older" % (len(objects) - len(shown)))
        for i, obj in enumerate(shown, len(objects) - len(shown)):
            cells.append("[%d] 0x%x%s" % (i, obj, " (next to go)" if i == len(objects) - 1 else ""))
        # (left to right, a record's fields stack from top to bottom)
        lines.append('  cpu%d [label="%s"];' % (cpu, "|".join(cells)))
        per_slab = {}
        for obj in objects:
            slab = int(virt_to_slab(obj))
            per_slab[slab] = per_slab.get(slab, 0) + 1
        for slab, n in per_slab.items():
            if slab not in slabs:
                slabs.append(slab)
            lines.append('  cpu%d -> slab%x [label="%d queued"];' % (cpu, slab, n))
    # (nr_node_ids is 1, a #define, without CONFIG_NUMA.)
    for nid in range(symbol_value("nr_node_ids", 1)):
        n = s["node"][nid]
        if not int(n):
            continue
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
    for slab in slabs:
        label = draw_slab_label(s, gdb.Value(slab).cast(slab_type.pointer()), queued)
        lines.append('  slab%x [label="%s"];' % (slab, label))
    lines.append("}")
    return "\n".join(lines) + "\n"


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
(help function kit_NAME says more) that vm/gdb/slubq.py adds."""

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

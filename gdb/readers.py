# SPDX-License-Identifier: GPL-2.0
#
# Readers of the slab allocator's state in a kernel stopped under QEMU's
# gdb stub: plain functions of kernel memory and types, for the kit's gdb
# commands (slubq.py) and for the graders' checks (labs/*/checks.py), which
# import this module without registering any command.
#
# They stand on the kernel's own gdb library (scripts/gdb/linux: cpus for
# per-CPU data, lists for list walks, utils for field offsets), and look
# at the types they find in vmlinux, so that one file serves every stage.

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
    """Whether this kernel is SLUB+Q: slab bitmaps, and per-CPU queues
    (stages 07 to 10) or sheaves (stage 11) in front of them."""
    return has_field(gdb.lookup_type("struct slab"), "free_map")


def has_sheaves():
    """Whether this kernel's per-CPU layer is sheaves and barns (stage 11)."""
    try:
        gdb.lookup_type("struct slub_percpu_sheaves")
    except gdb.error:
        return False
    return True


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
    """The objects waiting in any CPU's queue of cache S (SLUB+Q), or in
    any sheaf of a CPU or a barn (stage 11)."""
    queued = set()
    if has_sheaves():
        for cpu in cpus.each_possible_cpu():
            for _, objects in cpu_sheaves(s, cpu)[1:]:
                queued |= set(objects)
        for nid in cache_nodes(s):
            for _, objects in barn_sheaves(s, nid)[0]:
                queued |= set(objects)
        return queued
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


def sheaf(ptr):
    """A sheaf (stage 11): (its struct slab_sheaf *, the objects in it,
    oldest first), or (None, []) for a NULL pointer."""
    if not int(ptr):
        return None, []
    n, room = int(ptr["size"]), int(ptr["capacity"])
    if n < 0 or n > room:
        raise gdb.GdbError("sheaf 0x%x: size %d is not in 0..%d" % (int(ptr), n, room))
    if n == 0:
        return ptr, []
    return ptr, read_pointers(int(ptr["objects"][0].address), n)


def cpu_sheaves(s, cpu):
    """A CPU's sheaves of cache S (stage 11): its struct
    slub_percpu_sheaves *, then (sheaf, objects) for main and for spare."""
    pcs = per_cpu_ptr(s["cpu_sheaves"], cpu)
    return pcs, sheaf(pcs["main"]), sheaf(pcs["spare"])


def cache_nodes(s):
    """The nodes that cache S has a struct kmem_cache_node for."""
    # (nr_node_ids is 1, a #define, without CONFIG_NUMA.)
    return [nid for nid in range(symbol_value("nr_node_ids", 1)) if int(s["node"][nid])]


def barn_sheaves(s, nid):
    """The barn of cache S on node NID (stage 11): a list of (sheaf,
    objects) for its full sheaves, and a list of its empty sheaves."""
    barn = s["node"][nid]["barn"]
    sheaf_type = gdb.lookup_type("struct slab_sheaf").pointer()
    full = [sheaf(p) for p in lists.list_for_each_entry(
        barn["sheaves_full"], sheaf_type, "barn_list")]
    empty = list(lists.list_for_each_entry(barn["sheaves_empty"], sheaf_type, "barn_list"))
    return full, empty


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


def flag_names(flags):
    names = [name for bit, name in SLAB_FLAGS if flags & bit]
    rest = flags & ~sum(bit for bit, _ in SLAB_FLAGS)
    if rest:
        names.append("0x%x" % rest)
    return " | ".join(names) or "0"

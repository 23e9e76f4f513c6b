// SPDX-License-Identifier: GPL-2.0
/*
 * slubq_torture: a torture test of the slab allocator, the kit's own.
 *
 * On load it creates two caches, slubq_torture_ctor (with a constructor)
 * and slubq_torture_rcu (SLAB_TYPESAFE_BY_RCU), and starts a kernel thread
 * bound to each online CPU.  Each thread allocates and frees objects of
 * these caches and of kmalloc() with random sizes, singly and in bulk,
 * frees them in random order, and hands some of them to another CPU's
 * thread, which frees them there.  Some allocations of the caches ask for a
 * node: each node with memory in turn, and one without (not online, or
 * without normal memory), which any node may serve; an object asked of a
 * node with memory must come from that node.  Every object is stamped with a pattern
 * derived from its address and size when it is allocated, and the stamp is
 * checked before it is freed; objects of the constructor's cache must come
 * back from the allocator in the state the constructor left them.
 *
 * Loading waits until the threads are done, and prints one summary line:
 *
 *   slubq_torture: passed: N operations on M CPUs (...)
 *   slubq_torture: FAILED: reason
 *
 * The module loads either way, so that the caches stay in
 * /sys/kernel/slab until it is removed: a test can then shrink them and
 * see that no object is left.  An operation is one object allocated or
 * freed.
 *
 * Parameters: ops (the total number of operations), seed (of the threads'
 * random number generators), inject_fault (overwrite one byte of one live
 * object, to show that the checks catch it), inject_off_node (ask one
 * object of another node with memory than the one it is checked against,
 * given two such nodes: numa=fake=2), and inject_use_after_free
 * (read an object after freeing it, before the run: a fault that only
 * KASAN sees, to show that the proof kernel reports it).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/kfence.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/spinlock.h>
#include <linux/vmalloc.h>

static unsigned long ops = 1000000;
module_param(ops, ulong, 0444);
MODULE_PARM_DESC(ops, "operations (an object allocated or freed) in all (default 1000000)");

static unsigned long seed = 1;
module_param(seed, ulong, 0444);
MODULE_PARM_DESC(seed, "seed of the random choices; the thread of CPU c uses seed + c");

static int inject_fault;
module_param(inject_fault, int, 0444);
MODULE_PARM_DESC(inject_fault, "if not 0, overwrite one byte of one live object (the checks must fail)");

static bool inject_off_node;
module_param(inject_off_node, bool, 0444);
MODULE_PARM_DESC(inject_off_node, "if set, ask one object of another node than the one it is checked against (the checks must fail)");

static bool inject_use_after_free;
module_param(inject_use_after_free, bool, 0444);
MODULE_PARM_DESC(inject_use_after_free, "if set, read a kmalloc object after freeing it (KASAN must report it)");

#define CTOR_SIZE	184	/* not a power of two, nor a kmalloc size */
#define RCU_SIZE	264
#define CTOR_BYTE	0xc7	/* what the constructor writes */
#define POOL_SIZE	512	/* live objects a thread holds at most */
#define BULK_MAX	64
#define MAILBOX_SIZE	BULK_MAX	/* drained into the bulk arrays */
#define KMALLOC_BIG	(32 * 1024)	/* "larger" kmalloc sizes: 8 KiB + 1 .. this */
#define BIG_STRIDE	64	/* big objects: one stamped word a cache line */
#define MAX_REPORTS	10

enum kind { KIND_CTOR, KIND_RCU, KIND_KMALLOC, NR_KINDS };

static const char * const kind_name[NR_KINDS] = {
	[KIND_CTOR] = "slubq_torture_ctor",
	[KIND_RCU] = "slubq_torture_rcu",
	[KIND_KMALLOC] = "kmalloc",
};

struct obj {
	void *p;
	unsigned int size;
	unsigned short kind;
	unsigned short cpu;	/* where it was allocated */
};

struct mailbox {
	spinlock_t lock;
	unsigned int nr;
	struct obj objs[MAILBOX_SIZE];
};

struct worker {
	unsigned int index, cpu;
	bool filling;		/* the pool grows, or it shrinks */
	unsigned long share;	/* operations this thread must do */
	struct rnd_state rnd;
	struct task_struct *task;
	struct completion done;
	struct mailbox mailbox;
	unsigned int nr_live;
	struct obj live[POOL_SIZE];
	void *bulk[BULK_MAX];
	struct obj bulk_objs[BULK_MAX];
	unsigned long allocs, frees, cross_frees, bulk_calls, node_allocs;
};

static struct kmem_cache *ctor_cache, *rcu_cache;
static struct worker *workers;
static unsigned int nr_workers;
static atomic_t running;
static atomic_t corrupt;	/* stamps found wrong */
static atomic_t alloc_failures;
static atomic_t misplaced;	/* threads that ran on the wrong CPU */
static atomic_t off_node;	/* objects not of the node asked for */
static atomic_t off_node_injected;
/*
 * The nodes allocations ask for: NUMA_NO_NODE, the nodes with normal
 * memory, and the first node id without (with NUMA): the allocator must
 * take that as "any node".
 */
static int nodes[MAX_NUMNODES + 1];
static unsigned int nr_nodes;
static atomic_t fault_injected;

static struct kmem_cache *kind_cache(unsigned int kind)
{
	return kind == KIND_CTOR ? ctor_cache : rcu_cache;
}

static u32 rnd_below(struct worker *w, u32 n)
{
	return ((u64)prandom_u32_state(&w->rnd) * n) >> 32;
}

static void ctor(void *p)
{
	memset(p, CTOR_BYTE, CTOR_SIZE);
}

/* The stamp's word at offset @off of object @p of @size bytes. */
static unsigned long stamp_word(const void *p, unsigned int size, unsigned int off)
{
	unsigned long base = (unsigned long)p ^ ((unsigned long)size << 20);

	return (base + off) * 0x9e3779b97f4a7c15UL;
}

static unsigned int stamp_stride(unsigned int size)
{
	return size > KMALLOC_MAX_CACHE_SIZE ? BIG_STRIDE : sizeof(long);
}

static void stamp(const struct obj *o)
{
	unsigned int stride = stamp_stride(o->size);
	unsigned int words = o->size / sizeof(long) * sizeof(long);
	unsigned int off;
	u8 *b = o->p;

	for (off = 0; off < words; off += stride)
		*(unsigned long *)(b + off) = stamp_word(o->p, o->size, off);
	for (off = words; off < o->size; off++)
		b[off] = stamp_word(o->p, o->size, off);
	/* Big objects: the last word too. */
	if (words >= sizeof(long))
		*(unsigned long *)(b + words - sizeof(long)) =
			stamp_word(o->p, o->size, words - sizeof(long));
}

/*
 * Objects are named by their address, not hashed (%p): the kit's kernels
 * run without KASLR, and the address is what one gives gdb.
 */
static void report(const struct obj *o, const char *what, unsigned int off,
		   unsigned long expected, unsigned long found)
{
	if (atomic_inc_return(&corrupt) > MAX_REPORTS)
		return;
	pr_err("FAILED: %s in %s object %#lx (%u bytes, allocated on CPU %u) at offset %u: expected %#lx, found %#lx\n",
	       what, kind_name[o->kind], (unsigned long)o->p, o->size, o->cpu, off,
	       expected, found);
}

static void check_stamp(const struct obj *o)
{
	unsigned int stride = stamp_stride(o->size);
	unsigned int words = o->size / sizeof(long) * sizeof(long);
	unsigned long want, have;
	unsigned int off;
	const u8 *b = o->p;

	for (off = 0; off < words; off += stride) {
		want = stamp_word(o->p, o->size, off);
		have = *(const unsigned long *)(b + off);
		if (have != want)
			goto bad;
	}
	for (off = words; off < o->size; off++) {
		want = (u8)stamp_word(o->p, o->size, off);
		have = b[off];
		if (have != want)
			goto bad;
	}
	if (words >= sizeof(long)) {
		off = words - sizeof(long);
		want = stamp_word(o->p, o->size, off);
		have = *(const unsigned long *)(b + off);
		if (have != want)
			goto bad;
	}
	return;
bad:
	report(o, "stamp mismatch", off, want, have);
}

/* An object of the constructor's cache must be as the constructor left it. */
static void check_ctor(const struct obj *o)
{
	const u8 *b = o->p;
	unsigned int off;

	for (off = 0; off < CTOR_SIZE; off++) {
		if (b[off] != CTOR_BYTE) {
			report(o, "not in constructor state on allocation", off,
			       CTOR_BYTE, b[off]);
			return;
		}
	}
}

/* A new object @p: check it, stamp it, and keep it in the pool. */
static void got(struct worker *w, void *p, unsigned int kind, unsigned int size)
{
	struct obj *o = &w->live[w->nr_live++];

	o->p = p;
	o->kind = kind;
	o->size = size;
	o->cpu = w->cpu;
	if (kind == KIND_CTOR)
		check_ctor(o);
	stamp(o);
	if (inject_fault && !atomic_xchg(&fault_injected, 1)) {
		unsigned int off = round_down(size / 2, stamp_stride(size));

		pr_info("injecting a fault: one byte of %s object %#lx at offset %u\n",
			kind_name[kind], (unsigned long)p, off);
		((u8 *)p)[off] ^= 0xff;
	}
	w->allocs++;
}

/* Before freeing: check the stamp, and give back the constructor's state. */
static void put(struct worker *w, const struct obj *o)
{
	check_stamp(o);
	if (o->kind == KIND_CTOR)
		ctor(o->p);
	w->frees++;
	if (o->cpu != w->cpu)
		w->cross_frees++;
}

static void release(unsigned int kind, void *p)
{
	if (kind == KIND_KMALLOC)
		kfree(p);
	else
		kmem_cache_free(kind_cache(kind), p);
}

static void free_one(struct worker *w, const struct obj *o)
{
	put(w, o);
	release(o->kind, o->p);
}

static void alloc_failed(unsigned int kind, unsigned int size)
{
	if (atomic_inc_return(&alloc_failures) <= MAX_REPORTS)
		pr_err("FAILED: allocating %u objects of %s failed\n", size,
		       kind_name[kind]);
}

/*
 * 8 bytes to 8 KiB, each octave (8-16, 16-32, ... 4096-8192) as likely;
 * 1 in 32 is larger, up to 32 KiB, from the page allocator.
 */
static unsigned int kmalloc_size(struct worker *w)
{
	unsigned int order;

	if (!rnd_below(w, 32))
		return KMALLOC_MAX_CACHE_SIZE + 1 +
			rnd_below(w, KMALLOC_BIG - KMALLOC_MAX_CACHE_SIZE);
	order = 3 + rnd_below(w, ilog2(KMALLOC_MAX_CACHE_SIZE) - 3);
	return (1U << order) + rnd_below(w, (1U << order) + 1);
}

static void find_nodes(void)
{
	int nid;

	nodes[nr_nodes++] = NUMA_NO_NODE;
	for_each_node_state(nid, N_NORMAL_MEMORY)
		nodes[nr_nodes++] = nid;
	for (nid = 0; nid < MAX_NUMNODES; nid++) {
		if (!node_state(nid, N_NORMAL_MEMORY)) {
			nodes[nr_nodes++] = nid;
			break;
		}
	}
}

/*
 * One object of cache @s, for a node of nodes[]. An object asked of a node
 * with memory comes from that node, unless KFENCE, which knows no nodes,
 * took the allocation.
 */
static void *alloc_on_node(struct worker *w, struct kmem_cache *s, unsigned int kind)
{
	int node = nodes[rnd_below(w, nr_nodes)], asked = node;
	void *p;

	if (inject_off_node && node != NUMA_NO_NODE &&
	    node_state(node, N_NORMAL_MEMORY) &&
	    num_node_state(N_NORMAL_MEMORY) > 1 &&
	    !atomic_xchg(&off_node_injected, 1)) {
		asked = next_memory_node(node);
		if (asked == MAX_NUMNODES)
			asked = first_memory_node;
		pr_info("injecting a fault: asking node %d for an object checked against node %d\n",
			asked, node);
	}
	p = kmem_cache_alloc_node(s, GFP_KERNEL, asked);

	w->node_allocs++;
	if (p && node != NUMA_NO_NODE && node_state(node, N_NORMAL_MEMORY) &&
	    !is_kfence_address(p) && page_to_nid(virt_to_page(p)) != node &&
	    atomic_inc_return(&off_node) <= MAX_REPORTS)
		pr_err("FAILED: %s object %#lx is of node %d, where node %d was wanted\n",
		       kind_name[kind], (unsigned long)p,
		       page_to_nid(virt_to_page(p)), node);
	return p;
}

static void alloc_some(struct worker *w)
{
	unsigned int kind = rnd_below(w, 4), room = POOL_SIZE - w->nr_live;
	unsigned int i, n, size;
	struct kmem_cache *s;
	void *p;

	/* Half of the allocations are kmalloc()'s, a quarter each cache's. */
	if (kind >= KIND_KMALLOC) {
		size = kmalloc_size(w);
		p = kmalloc(size, GFP_KERNEL);
		if (!p)
			alloc_failed(KIND_KMALLOC, size);
		else
			got(w, p, KIND_KMALLOC, size);
		return;
	}
	s = kind_cache(kind);
	size = kind == KIND_CTOR ? CTOR_SIZE : RCU_SIZE;
	if (rnd_below(w, 4)) {
		p = rnd_below(w, 2) ? kmem_cache_alloc(s, GFP_KERNEL) :
				      alloc_on_node(w, s, kind);
		if (!p)
			alloc_failed(kind, 1);
		else
			got(w, p, kind, size);
		return;
	}
	n = 1 + rnd_below(w, min_t(unsigned int, room, BULK_MAX));
	w->bulk_calls++;
	if (kmem_cache_alloc_bulk(s, GFP_KERNEL, n, w->bulk) != n) {
		alloc_failed(kind, n);
		return;
	}
	for (i = 0; i < n; i++)
		got(w, w->bulk[i], kind, size);
}

static void take(struct worker *w, unsigned int i, struct obj *o)
{
	*o = w->live[i];
	w->live[i] = w->live[--w->nr_live];
}

/* Put @o in the mailbox of another CPU's thread, if it has room. */
static bool hand_over(struct worker *w, const struct obj *o)
{
	struct worker *to;
	unsigned int i;
	bool sent = false;

	i = rnd_below(w, nr_workers - 1);
	to = &workers[i + (i >= w->index)];
	spin_lock(&to->mailbox.lock);
	if (to->mailbox.nr < MAILBOX_SIZE) {
		to->mailbox.objs[to->mailbox.nr++] = *o;
		sent = true;
	}
	spin_unlock(&to->mailbox.lock);
	return sent;
}

/* Free the @n objects of @kind in w->bulk, checked already, in one call. */
static void free_bulk(struct worker *w, unsigned int kind, unsigned int n)
{
	w->bulk_calls++;
	if (kind == KIND_KMALLOC)
		kfree_bulk(n, w->bulk);
	else
		kmem_cache_free_bulk(kind_cache(kind), n, w->bulk);
}

/*
 * Free what the other threads handed over: the objects of a kind in one
 * bulk call when there are several, else one by one.
 */
static void drain_mailbox(struct worker *w)
{
	struct obj *objs = w->bulk_objs;
	unsigned int i, n, nr, kind;

	if (!READ_ONCE(w->mailbox.nr))
		return;
	spin_lock(&w->mailbox.lock);
	nr = w->mailbox.nr;
	memcpy(objs, w->mailbox.objs, nr * sizeof(objs[0]));
	w->mailbox.nr = 0;
	spin_unlock(&w->mailbox.lock);
	for (kind = 0; kind < NR_KINDS; kind++) {
		for (i = n = 0; i < nr; i++) {
			if (objs[i].kind == kind) {
				put(w, &objs[i]);
				w->bulk[n++] = objs[i].p;
			}
		}
		if (n == 1)
			release(kind, w->bulk[0]);
		else if (n)
			free_bulk(w, kind, n);
	}
}

static void free_some(struct worker *w)
{
	unsigned int i, j, n, kind;
	struct obj o;

	if (rnd_below(w, 4)) {
		take(w, rnd_below(w, w->nr_live), &o);
		if (nr_workers > 1 && !rnd_below(w, 4) && hand_over(w, &o))
			return;
		free_one(w, &o);
		return;
	}
	/* In bulk: up to 64 objects of the kind of a random one, from it on. */
	j = rnd_below(w, w->nr_live);
	kind = w->live[j].kind;
	n = 1 + rnd_below(w, BULK_MAX);
	for (i = 0; i < n && j < w->nr_live;) {
		if (w->live[j].kind != kind) {
			j++;
			continue;
		}
		take(w, j, &w->bulk_objs[i]);
		w->bulk[i] = w->bulk_objs[i].p;
		put(w, &w->bulk_objs[i]);
		i++;
	}
	free_bulk(w, kind, i);
}

static int worker_fn(void *data)
{
	struct worker *w = data;

	if (raw_smp_processor_id() != w->cpu) {
		atomic_inc(&misplaced);
		pr_err("FAILED: the thread of CPU %u runs on CPU %u\n", w->cpu,
		       raw_smp_processor_id());
	}
	while (w->allocs + w->frees < w->share) {
		/*
		 * The pool grows until it is full, then shrinks until it is
		 * empty, again and again: slabs fill up and empty out.
		 */
		if (w->nr_live == POOL_SIZE)
			w->filling = false;
		else if (!w->nr_live)
			w->filling = true;
		if (!w->nr_live ||
		    (w->nr_live < POOL_SIZE && rnd_below(w, 4) < (w->filling ? 3 : 1)))
			alloc_some(w);
		else
			free_some(w);
		drain_mailbox(w);
		cond_resched();
	}
	while (w->nr_live) {
		struct obj o;

		take(w, w->nr_live - 1, &o);
		free_one(w, &o);
	}
	/*
	 * The others may still hand objects over until they are all done;
	 * what they put in the mailbox before that, this thread sees.
	 */
	atomic_dec(&running);
	while (atomic_read_acquire(&running)) {
		drain_mailbox(w);
		schedule_timeout_uninterruptible(1);
	}
	drain_mailbox(w);
	kthread_complete_and_exit(&w->done, 0);
}

static int torture(void)
{
	unsigned long allocs = 0, frees = 0, cross = 0, bulk = 0, node = 0;
	unsigned int cpu, i = 0;
	struct worker *w;
	int ret = 0;

	nr_workers = num_online_cpus();
	workers = vzalloc(array_size(nr_workers, sizeof(*workers)));
	if (!workers)
		return -ENOMEM;
	atomic_set(&running, nr_workers);
	for_each_online_cpu(cpu) {
		if (i == nr_workers)
			break;
		w = &workers[i];
		w->index = i;
		w->cpu = cpu;
		w->share = ops / nr_workers + (i < ops % nr_workers);
		prandom_seed_state(&w->rnd, seed + cpu);
		init_completion(&w->done);
		spin_lock_init(&w->mailbox.lock);
		w->task = kthread_create_on_cpu(worker_fn, w, cpu, "slubq_torture/%u");
		if (IS_ERR(w->task)) {
			ret = PTR_ERR(w->task);
			break;
		}
		i++;
	}
	if (i < nr_workers) {
		pr_err("FAILED: could not start a thread on every CPU (%d)\n", ret);
		while (i--)
			kthread_stop(workers[i].task);
		vfree(workers);
		return ret ?: -EAGAIN;
	}
	for (i = 0; i < nr_workers; i++)
		wake_up_process(workers[i].task);
	for (i = 0; i < nr_workers; i++) {
		w = &workers[i];
		wait_for_completion(&w->done);
		allocs += w->allocs;
		frees += w->frees;
		cross += w->cross_frees;
		bulk += w->bulk_calls;
		node += w->node_allocs;
	}
	vfree(workers);
	kmem_cache_shrink(ctor_cache);
	kmem_cache_shrink(rcu_cache);

	if (atomic_read(&corrupt))
		pr_err("FAILED: %d corrupt object(s) in %lu operations on %u CPUs\n",
		       atomic_read(&corrupt), allocs + frees, nr_workers);
	else if (atomic_read(&alloc_failures))
		pr_err("FAILED: %d allocations failed\n", atomic_read(&alloc_failures));
	else if (atomic_read(&misplaced))
		pr_err("FAILED: %d threads ran on another CPU than theirs\n",
		       atomic_read(&misplaced));
	else if (atomic_read(&off_node))
		pr_err("FAILED: %d object(s) of another node than the one asked for\n",
		       atomic_read(&off_node));
	else if (allocs != frees)
		pr_err("FAILED: %lu allocations but %lu frees\n", allocs, frees);
	else if (allocs + frees < ops)
		pr_err("FAILED: %lu operations done of %lu\n", allocs + frees, ops);
	else
		pr_info("passed: %lu operations on %u CPUs (%lu allocs, %lu frees, %lu cross-CPU frees, %lu bulk calls, %lu asking for one of %u nodes)\n",
			allocs + frees, nr_workers, allocs, frees, cross, bulk, node, nr_nodes - 1);
	return 0;
}

/* A use after free that the module's own checks cannot see, for KASAN */
static void use_after_free(void)
{
	u8 *p = kmalloc(64, GFP_KERNEL);

	if (!p)
		return;
	kfree(p);
	OPTIMIZER_HIDE_VAR(p);
	pr_info("injecting a fault: reading a kmalloc-64 object after freeing it\n");
	pr_info("read %#x from the freed object\n", READ_ONCE(*p));
}

static int __init slubq_torture_init(void)
{
	int ret;

	if (inject_use_after_free)
		use_after_free();

	find_nodes();
	ctor_cache = kmem_cache_create("slubq_torture_ctor", CTOR_SIZE, 0, 0, ctor);
	rcu_cache = kmem_cache_create("slubq_torture_rcu", RCU_SIZE, 0,
				      SLAB_TYPESAFE_BY_RCU, NULL);
	if (!ctor_cache || !rcu_cache) {
		pr_err("FAILED: could not create the caches\n");
		ret = -ENOMEM;
		goto out;
	}
	ret = torture();
	if (!ret)
		return 0;
out:
	kmem_cache_destroy(rcu_cache);
	kmem_cache_destroy(ctor_cache);
	return ret;
}

static void __exit slubq_torture_exit(void)
{
	kmem_cache_destroy(rcu_cache);
	kmem_cache_destroy(ctor_cache);
}

module_init(slubq_torture_init);
module_exit(slubq_torture_exit);
MODULE_DESCRIPTION("Torture test of the slab allocator (the SLUB+Q kit's)");
MODULE_LICENSE("GPL");

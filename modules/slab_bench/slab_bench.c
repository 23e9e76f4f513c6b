// SPDX-License-Identifier: GPL-2.0
/*
 * slab_bench: the kit's microbenchmark of the slab allocator, for make
 * bench to compare SLAB, SLUB and SLUB+Q with (scripts/bench.sh).
 *
 * On load it times, for each object size in sizes, through the allocator's
 * public interface only (so that it builds against all three):
 *
 *   pair            kmalloc() then kfree() of the same object, again and
 *                   again: the fast paths, nothing else
 *   batch-N-alloc   N kmalloc()s in a row, then N kfree()s, for N of 1,
 *   batch-N-free    100 and 10000: past a per-CPU queue's or array's
 *                   size, the refills, drains and partial-list traffic
 *                   show
 *   remote-free     objects allocated on one CPU, freed on another
 *   remote-alloc    the allocations on the first CPU that follow
 *   bulk-alloc      kmem_cache_alloc_bulk() and kmem_cache_free_bulk() of
 *   bulk-free       64 objects a call, from a cache of that size
 *
 * and once, with size 0, the two ways the allocators' fast paths keep a
 * CPU's data consistent, each alone:
 *
 *   cmpxchg16b      cmpxchg_double(), the locked 16-byte compare-and-
 *                   exchange with which SLUB updates a slab's freelist
 *                   and counters together (its per-CPU fast path uses the
 *                   same instruction without the lock prefix, which 6.1
 *                   does not let a module use)
 *   irq-off         local_irq_save() then local_irq_restore(), with
 *                   which SLAB and SLUB+Q guard their per-CPU arrays
 *
 * An emulator may price them unlike hardware does.
 *
 * The timed loops run in kernel threads bound to a CPU, the second one on
 * another CPU for remote frees (skipped with one CPU online).  Each test
 * prints one line,
 *
 *   slab_bench: TEST size=S ops=N ns=T
 *
 * T the time of the N operations (an object allocated or freed) by
 * ktime_get_ns().  Under QEMU's -icount shift=0, a nanosecond of the
 * guest's clock is one instruction executed: T then counts instructions,
 * the same on every run whatever else the host does.  The last line is
 * "slab_bench: done", or "slab_bench: FAILED: reason".  The module stays
 * loaded until removed.
 *
 * Parameters: sizes (object sizes in bytes, up to 8 of them), objects (the
 * operations of each kind each test makes, a multiple of 10000).
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

static unsigned int sizes[8] = { 8, 32, 128, 512, 2048, 8192 };
static int nr_sizes = 6;
module_param_array(sizes, uint, &nr_sizes, 0444);
MODULE_PARM_DESC(sizes, "object sizes in bytes (default 8,32,128,512,2048,8192)");

static unsigned long objects = 10000;
module_param(objects, ulong, 0444);
MODULE_PARM_DESC(objects, "operations of each kind per test, a multiple of 10000 (default 10000)");

/* Objects a bulk call allocates or frees. */
#define BULK 64
/* Objects the allocating CPU hands to the freeing one at a time. */
#define REMOTE_BATCH 100

static void **table;

static void report(const char *test, unsigned int size, unsigned long ops, u64 ns)
{
	pr_info("%s size=%u ops=%lu ns=%llu\n", test, size, ops, ns);
}

/*
 * Fill the table's first n entries with kmalloc(size) objects, adding the
 * time it takes to *ns.  Returns the number allocated: n, or fewer if
 * the allocator ran out of memory.
 */
static unsigned long fill_table(unsigned int size, unsigned long n, u64 *ns)
{
	u64 start = ktime_get_ns();
	unsigned long got;

	for (got = 0; got < n; got++) {
		table[got] = kmalloc(size, GFP_KERNEL);
		if (!table[got])
			break;
	}
	*ns += ktime_get_ns() - start;
	return got;
}

/* Free the table's first n objects, adding the time it takes to *ns. */
static void empty_table(unsigned long n, u64 *ns)
{
	u64 start = ktime_get_ns();
	unsigned long i;

	for (i = 0; i < n; i++)
		kfree(table[i]);
	*ns += ktime_get_ns() - start;
}

/*
 * Each kind of test returns 0 or -ENOMEM.  Objects are freed before a
 * test returns either way.
 */
static int bench_pair(unsigned int size)
{
	unsigned long i;
	u64 start;
	void *p;

	start = ktime_get_ns();
	for (i = 0; i < objects; i++) {
		p = kmalloc(size, GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		kfree(p);
	}
	report("pair", size, 2 * objects, ktime_get_ns() - start);
	return 0;
}

static int bench_batch(unsigned int size, unsigned long n)
{
	u64 alloc_ns = 0, free_ns = 0;
	unsigned long round, got;
	char name[32];

	for (round = 0; round < objects / n; round++) {
		got = fill_table(size, n, &alloc_ns);
		empty_table(got, &free_ns);
		if (got < n)
			return -ENOMEM;
		cond_resched();
	}
	snprintf(name, sizeof(name), "batch-%lu-alloc", n);
	report(name, size, objects, alloc_ns);
	snprintf(name, sizeof(name), "batch-%lu-free", n);
	report(name, size, objects, free_ns);
	return 0;
}

static int bench_bulk(unsigned int size)
{
	u64 alloc_ns = 0, free_ns = 0, start;
	struct kmem_cache *cache;
	unsigned long round;
	int got, ret = 0;

	cache = kmem_cache_create("slab_bench", size, 0, 0, NULL);
	if (!cache)
		return -ENOMEM;
	for (round = 0; round < objects / BULK; round++) {
		start = ktime_get_ns();
		got = kmem_cache_alloc_bulk(cache, GFP_KERNEL, BULK, table);
		alloc_ns += ktime_get_ns() - start;
		if (!got) {
			ret = -ENOMEM;
			break;
		}
		start = ktime_get_ns();
		kmem_cache_free_bulk(cache, got, table);
		free_ns += ktime_get_ns() - start;
		cond_resched();
	}
	kmem_cache_destroy(cache);
	if (ret)
		return ret;
	report("bulk-alloc", size, round * BULK, alloc_ns);
	report("bulk-free", size, round * BULK, free_ns);
	return 0;
}

/*
 * Remote frees: the allocating thread fills the table with a batch and
 * hands it to the freeing thread on the other CPU, which frees it and
 * hands it back.
 */
struct remote {
	struct completion filled, emptied;
	u64 free_ns;
	bool stop;
};

static int remote_free_fn(void *arg)
{
	struct remote *r = arg;

	for (;;) {
		wait_for_completion(&r->filled);
		if (r->stop)
			break;
		empty_table(REMOTE_BATCH, &r->free_ns);
		complete(&r->emptied);
	}
	return 0;
}

static int bench_remote(unsigned int size, unsigned int cpu)
{
	struct remote r = { };
	unsigned int other = cpumask_next(cpu, cpu_online_mask);
	struct task_struct *freer;
	unsigned long round, got;
	u64 alloc_ns = 0, free_ns = 0;
	int ret = 0;

	if (other >= nr_cpu_ids)
		other = cpumask_first(cpu_online_mask);
	if (other == cpu) {
		pr_info("remote size=%u skipped: one CPU online\n", size);
		return 0;
	}
	init_completion(&r.filled);
	init_completion(&r.emptied);
	freer = kthread_create_on_cpu(remote_free_fn, &r, other, "slab_bench/%u");
	if (IS_ERR(freer))
		return PTR_ERR(freer);
	/* It may have ended by the time kthread_stop() looks at it. */
	get_task_struct(freer);
	wake_up_process(freer);
	for (round = 0; round < objects / REMOTE_BATCH; round++) {
		got = fill_table(size, REMOTE_BATCH, &alloc_ns);
		if (got < REMOTE_BATCH) {
			empty_table(got, &free_ns);
			ret = -ENOMEM;
			break;
		}
		complete(&r.filled);
		wait_for_completion(&r.emptied);
	}
	r.stop = true;
	complete(&r.filled);
	kthread_stop(freer);
	put_task_struct(freer);
	if (ret)
		return ret;
	report("remote-free", size, objects, r.free_ns);
	report("remote-alloc", size, objects, alloc_ns);
	return 0;
}

/* Two words that cmpxchg_double() changes together, like a slab's. */
static struct {
	unsigned long first;
	unsigned long second;
} cas_pair __aligned(2 * sizeof(unsigned long));

static void bench_primitives(void)
{
	unsigned long i, first, second, flags;
	u64 start;

	if (system_has_cmpxchg_double()) {
		start = ktime_get_ns();
		for (i = 0; i < objects; i++) {
			first = READ_ONCE(cas_pair.first);
			second = READ_ONCE(cas_pair.second);
			cmpxchg_double(&cas_pair.first, &cas_pair.second,
				       first, second, first + 1, second + 1);
		}
		report("cmpxchg16b", 0, objects, ktime_get_ns() - start);
	} else {
		pr_info("cmpxchg16b size=0 skipped: the CPU has no cmpxchg16b\n");
	}
	start = ktime_get_ns();
	for (i = 0; i < objects; i++) {
		local_irq_save(flags);
		local_irq_restore(flags);
	}
	report("irq-off", 0, objects, ktime_get_ns() - start);
}

struct run {
	struct completion done;
	unsigned int cpu;
	int ret;
};

static int run_fn(void *arg)
{
	static const unsigned long batches[] = { 1, 100, 10000 };
	struct run *run = arg;
	unsigned int b;
	int s, ret = 0;

	for (s = 0; s < nr_sizes && !ret; s++) {
		ret = bench_pair(sizes[s]);
		for (b = 0; b < ARRAY_SIZE(batches) && !ret; b++)
			ret = bench_batch(sizes[s], batches[b]);
		if (!ret)
			ret = bench_remote(sizes[s], run->cpu);
		if (!ret)
			ret = bench_bulk(sizes[s]);
	}
	if (!ret)
		bench_primitives();
	run->ret = ret;
	kthread_complete_and_exit(&run->done, 0);
}

/* Run the tests in a thread bound to the first online CPU. */
static int run_bound(void)
{
	struct task_struct *task;
	struct run run;

	init_completion(&run.done);
	run.cpu = cpumask_first(cpu_online_mask);
	run.ret = 0;
	task = kthread_create_on_cpu(run_fn, &run, run.cpu, "slab_bench/%u");
	if (IS_ERR(task))
		return PTR_ERR(task);
	wake_up_process(task);
	wait_for_completion(&run.done);
	return run.ret;
}

static int __init slab_bench_init(void)
{
	int ret = -EINVAL;

	if (objects && objects % 10000 == 0) {
		table = kvmalloc_array(10000, sizeof(*table), GFP_KERNEL);
		ret = table ? run_bound() : -ENOMEM;
	}
	if (ret)
		pr_info("FAILED: error %d (objects=%lu)\n", ret, objects);
	else
		pr_info("done\n");
	return 0;
}

static void __exit slab_bench_exit(void)
{
	kvfree(table);
}

module_init(slab_bench_init);
module_exit(slab_bench_exit);

MODULE_DESCRIPTION("Microbenchmark of the slab allocator (the SLUB+Q kit's)");
MODULE_LICENSE("GPL");

# Stage 00 walkthrough: stock Linux 6.1 SLUB.  One allocation from and one
# free into kmalloc-64, followed live through the per-CPU freelist.
#
# slab_alloc_node() and slab_free() are __always_inline in 6.1: at -O2
# their arguments print as <optimized out>.  So the breakpoints sit at the
# entry of the real functions around them, __kmem_cache_alloc_node() (every
# kmalloc) and __kmem_cache_free() (every kfree), where the arguments are
# still in their registers.
#
# kit-run: churn

# Frame lines would show the callers' arguments, which -O2 did not keep
# (after finish, kmalloc_trace's s is <optimized out>); the script prints
# every value it shows explicitly instead.
set print frame-arguments none

echo \n=== 1. QEMU is halted at the first instruction. Run to start_kernel.\n
break start_kernel
continue
echo slab_state, before kmem_cache_init() has run:\n
print slab_state
delete

echo \n=== 2. Run until the kernel executes /init: every boot cache exists.\n
break kernel_execve
continue
print slab_state
delete
kit-caches kmalloc-

echo \n=== 3. A kmalloc-64 allocation while this CPU's freelist has objects.\n
break __kmem_cache_alloc_node if $_streq(s->name, "kmalloc-64") && $kit_cpu_freelist(s) != 0
continue
printf "cpu %d allocates %lu bytes from %s\n", $kit_cpu(), orig_size, s->name
kit-cpu-slab kmalloc-64
set $s = s
set $head = $kit_cpu_freelist(s)
set $next = $kit_free_pointer(s, $head)
delete
finish
set $obj = $
printf "object returned: %p\n", $obj
if $obj == $head && $kit_cpu_freelist($s) == $next
  echo fast path: the object is the old head of the CPU freelist, and the new head is its free pointer\n
else
  echo UNEXPECTED: the object is not the old head, or the new head is not its free pointer\n
end
kit-cpu-slab kmalloc-64
kit-slab $obj

echo \n=== 4. A kfree into kmalloc-64 of an object in this CPU's slab.\n
break __kmem_cache_free if $_streq(s->name, "kmalloc-64") && $kit_virt_to_slab(x) == $kit_cpu_slab(s)
continue
printf "cpu %d frees %p into %s\n", $kit_cpu(), x, s->name
set $s = s
set $x = x
set $head = $kit_cpu_freelist(s)
printf "freelist head before the free: %p\n", $head
delete
finish
if $kit_cpu_freelist($s) == $x && $kit_free_pointer($s, $x) == $head
  echo fast path: the freed object is the new head of the CPU freelist, and its free pointer is the old head\n
else
  echo UNEXPECTED: the freed object is not the new head, or its free pointer is not the old head\n
end
kit-cpu-slab kmalloc-64
kit-slab $x

echo \n=== End of the walkthrough.\n

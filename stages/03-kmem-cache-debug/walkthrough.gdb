# Stage 03 walkthrough: debugging is a property of the cache.  Booted with
# slub_debug=FZPU for kmalloc-64 only, kmalloc-64 is in debug mode and
# kmalloc-128 is not; only debug caches reach the debug slow path.
#
# kmem_cache_debug() is inline, so gdb cannot call it: $kit_cache_debug(s)
# computes the same thing, s->flags & SLAB_DEBUG_FLAGS.
#
# kit-run: churn
# kit-append: slub_debug=FZPU,kmalloc-64

set print frame-arguments none

echo \n=== 1. The flags of a debugged and of an ordinary kmalloc cache.\n
break kernel_execve
continue
delete
kit-cache-flags kmalloc-64
kit-cache-flags kmalloc-128

echo \n=== 2. Who reaches alloc_debug_processing(), the debug slow path.\n
break alloc_debug_processing if slab->freelist != 0
continue
printf "cpu %d: alloc_debug_processing() for %s, object %p\n", $kit_cpu(), s->name, object
if $kit_cache_debug(s)
  echo kmem_cache_debug(s) is true: this cache's allocations take the debug path\n
else
  echo UNEXPECTED: a cache without debug flags reached the debug path\n
end
delete

echo \n=== 3. A debug slab: red zones move every object s->red_left_pad bytes in.\n
printf "slot size %d, red_left_pad %d\n", s->size, s->red_left_pad
kit-slab slab

echo \n=== End of the walkthrough.\n

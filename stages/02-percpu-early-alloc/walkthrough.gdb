# Stage 02 walkthrough: percpu allocations served before the slab
# allocator is up, from the first chunk's early dynamic area.
#
# kit-run: churn

set print frame-arguments none

echo \n=== 1. kmem_cache_init() is about to run.\n
break kmem_cache_init
continue
print slab_state
printf "first chunk: %d bytes free\n", pcpu_first_chunk->free_bytes
set $free0 = pcpu_first_chunk->free_bytes
delete

echo \n=== 2. SLUB asks for a per-CPU structure while slab_state < UP.\n
break pcpu_alloc if slab_state < UP
continue
printf "pcpu_alloc(size %lu, align %lu, reserved %d)\n", size, align, reserved
print slab_state
bt 8
set $before = pcpu_first_chunk->free_bytes
delete
finish
printf "returned the __percpu pointer %p\n", $
if pcpu_first_chunk->free_bytes < $before
  echo the first chunk served it: its free bytes went down\n
else
  echo UNEXPECTED: the first chunk did not serve it\n
end

echo \n=== 3. vmalloc_init(): from here the percpu allocator can add chunks.\n
break vmalloc_init
continue
print slab_state
printf "%d caches, %lu bytes of struct kmem_cache_cpu each; the first chunk gave %d bytes since kmem_cache_init()\n", $kit_nr_caches(), sizeof(struct kmem_cache_cpu), $free0 - pcpu_first_chunk->free_bytes
if $free0 - pcpu_first_chunk->free_bytes >= $kit_nr_caches() * sizeof(struct kmem_cache_cpu)
  echo every boot cache's per-CPU structure came from the first chunk\n
else
  echo UNEXPECTED: the first chunk gave less than the boot caches need\n
end

echo \n=== End of the walkthrough.\n

# Stage 06 walkthrough: cache descriptors come from the kmem_cache cache.
# SLUB boots with two static descriptors, boot_kmem_cache and
# boot_kmem_cache_node; bootstrap() copies each into an object of the
# kmem_cache cache, and every later cache is allocated the same way.
#
# kit-run: churn

set print frame-arguments none

echo \n=== 1. bootstrap() of the static kmem_cache descriptor.\n
break bootstrap
continue
print slab_state
printf "static descriptor %p (%s); kmem_cache points to it: %d\n", static_cache, static_cache->name, kmem_cache == static_cache
printf "object size %u, slot size %u\n", static_cache->object_size, static_cache->size
set $static = static_cache
delete
finish
set $new = $
printf "copied to %p\n", $new
if $kit_slab_cache($new) == $new
  echo the new kmem_cache descriptor lives in a slab of the kmem_cache cache itself\n
else
  echo UNEXPECTED: the new descriptor is not in a slab of its own cache\n
end

echo \n=== 2. After boot: every cache's descriptor is an object of kmem_cache.\n
break kernel_execve
continue
delete
printf "kmem_cache %p, kmem_cache_node %p, kmalloc-64 %p\n", kmem_cache, kmem_cache_node, $kit_cache("kmalloc-64")
if kmem_cache == $new && $kit_slab_cache(kmem_cache_node) == kmem_cache && $kit_slab_cache($kit_cache("kmalloc-64")) == kmem_cache
  echo kmem_cache_node and kmalloc-64 are described by objects of the kmem_cache cache\n
else
  echo UNEXPECTED: a descriptor outside the kmem_cache cache\n
end

echo \n=== End of the walkthrough.\n

# Stage 05 walkthrough: the DMA kmalloc caches exist from boot.  6.1
# creates every kmalloc type, DMA included, in create_kmalloc_caches();
# nothing is created on the first GFP_DMA request any more.
#
# kit-run: churn

set print frame-arguments none

echo \n=== 1. create_kmalloc_caches() is about to run.\n
break create_kmalloc_caches
continue
print slab_state
printf "dma-kmalloc-64 before: %p\n", kmalloc_caches[KMALLOC_DMA][6]
delete

echo \n=== 2. It has run: one row of caches per kmalloc type, DMA included.\n
finish
print slab_state
printf "dma-kmalloc-64 after: %p\n", kmalloc_caches[KMALLOC_DMA][6]
if kmalloc_caches[KMALLOC_DMA][6] != 0 && $_streq(kmalloc_caches[KMALLOC_DMA][6]->name, "dma-kmalloc-64")
  echo the DMA caches were created at boot, with the others\n
else
  echo UNEXPECTED: no dma-kmalloc-64 after create_kmalloc_caches()\n
end
kit-caches dma-
kit-cache-flags dma-kmalloc-64
printf "its pages come with gfp flags 0x%x (__GFP_DMA is 0x1)\n", kmalloc_caches[KMALLOC_DMA][6]->allocflags

echo \n=== End of the walkthrough.\n

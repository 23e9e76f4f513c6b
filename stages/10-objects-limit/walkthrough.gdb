# Stage 10 walkthrough: no limit on the objects of a slab.  The kernel
# boots with slub_min_order=7: every slab is 512 KiB, and kmalloc-8 puts
# more objects in one than the 32767 that 15 bits of struct slab allowed.
#
# kit-run: shrink
# kit-append: slub_min_order=7

set print frame-arguments none

echo \n=== 1. struct slab: objects and inuse are whole unsigned ints.\n
ptype struct slab

echo \n=== 2. Let the system boot with 512 KiB slabs.\n
break kernel_execve
continue
delete
kit-caches kmalloc-8

echo \n=== 3. A kmalloc cache of 8-byte objects takes objects out of one of its big slabs.\n
break retrieve_objects if slab->objects > 32767
continue
set $slab = slab
set $nr = nr
set $before = $kit_slab_available(slab)
set $inuse = slab->inuse
printf "retrieve_objects(nr %d) from a %s slab of %u objects, %d free\n", nr, s->name, slab->objects, $before
printf "its bitmap takes the last %lu bytes of the slab\n", (slab->objects + 63) / 64 * 8
delete
finish
set $taken = $
if $slab->objects > 32767 && $taken >= 1 && $taken <= $nr && $kit_slab_available($slab) == $before - $taken
  printf "the slab holds %u objects, beyond 32767, and its bitmap lost exactly the %d taken\n", $slab->objects, $taken
else
  echo UNEXPECTED: the slab is not beyond the old limit, or its bitmap does not show the objects taken\n
end
if $slab->inuse == $inuse + $taken && $slab->inuse == $slab->objects - $kit_slab_available($slab)
  printf "inuse went from %u to %u, the objects the bitmap has in use\n", $inuse, $slab->inuse
else
  echo UNEXPECTED: inuse does not count the objects the bitmap says are in use\n
end

echo \n=== End of the walkthrough.\n

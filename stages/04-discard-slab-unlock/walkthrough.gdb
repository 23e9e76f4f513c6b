# Stage 04 walkthrough: how 6.1 gives an empty slab back to the page
# allocator.  discard_slab() runs with no slab lock and no node list_lock
# held: its callers collect empty slabs under the lock and free them after
# unlocking, the job the 2010 discard_slab_unlock() did in its day.
#
# kit-run: shrink

set print frame-arguments none

echo \n=== 1. Let the system boot; the guest then fills and shrinks its caches.\n
break kernel_execve
continue
delete

echo \n=== 2. A slab is discarded.\n
break discard_slab
continue
printf "cpu %d discards slab %p of %s\n", $kit_cpu(), slab, s->name
kit-slab slab
bt 4
if slab->inuse == 0
  echo the slab is empty: no object in it is in use\n
else
  echo UNEXPECTED: a slab with objects in use is being discarded\n
end
printf "node 0 of %s keeps %lu partial slabs; min_partial is %lu\n", s->name, s->node[0]->nr_partial, s->min_partial
delete

echo \n=== End of the walkthrough.\n

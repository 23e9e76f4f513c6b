# Stage 09 walkthrough: count_free() is gone.  /proc/slabinfo's free
# objects of a cache are the sum, over its partial slabs, of available():
# the free bits in each slab's bitmap.
#
# kit-run: churn

set print frame-arguments none

echo \n=== 1. Let the system boot; the guest then reads /proc/slabinfo in a loop.\n
break kernel_execve
continue
delete

echo \n=== 2. /proc/slabinfo asks for kmalloc-64's numbers.\n
break get_slabinfo if $_streq(s->name, "kmalloc-64")
continue
set $s = s
set $thr = $_thread
set $sinfo = sinfo
printf "get_slabinfo(%s): %lu partial slabs on node 0\n", s->name, s->node[0]->nr_partial
delete

echo \n=== 3. count_partial() adds up available() over the partial slabs.\n
eval "break available thread %d", $thr
continue
bt 3
set $slab = slab
kit-slab slab
delete
finish
set $free = $
if $free == $kit_slab_available($slab) && $free > 0 && $free <= $slab->objects
  printf "available() = %d: the free bits in the slab's bitmap, counted under the node's list_lock\n", $free
else
  echo UNEXPECTED: available() does not count the slab's free bits\n
end

echo \n=== 4. get_slabinfo() returns what /proc/slabinfo prints.\n
frame function get_slabinfo
finish
if $sinfo->num_objs >= $sinfo->active_objs && $sinfo->num_objs - $sinfo->active_objs >= $free
  printf "get_slabinfo(): %lu objects, %lu active: %lu free, with the slab's %d among them\n", $sinfo->num_objs, $sinfo->active_objs, $sinfo->num_objs - $sinfo->active_objs, $free
else
  echo UNEXPECTED: get_slabinfo() counts fewer free objects than available() gave\n
end

echo \n=== End of the walkthrough.\n

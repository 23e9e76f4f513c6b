# Stage 07 walkthrough: SLUB+Q.  An allocation that finds this CPU's queue
# empty and refills it from a slab's bitmap (retrieve_objects), then a free
# that finds the queue full and gives a batch back (drain_objects).
#
# slab_alloc() and slab_free() are real functions in SLUB+Q (noinline), so
# their arguments are live at the breakpoints.  Breakpoint conditions use
# the kit's scalar helpers ($kit_queue_len, $kit_cache_debug): see
# $kit_cpu_freelist in vm/gdb/slubq.py for why.
#
# kit-run: messages

set print frame-arguments none

echo \n=== 1. Let the system boot; the guest then sends messages between processes.\n
break kernel_execve
continue
delete
kit-caches kmalloc-6

echo \n=== 2. An allocation that finds this CPU's queue empty.\n
break slab_alloc if $kit_cache_debug(s) == 0 && $kit_queue_len(s) == 0
continue
set $s = s
set $cpu = $kit_cpu()
set $thr = $_thread
printf "cpu %d allocates from %s, and its queue is empty\n", $cpu, s->name
kit-queue $s $cpu
# Where this call of slab_alloc() returns to, and the stack pointer then:
# a breakpoint there with that stack pointer is this call's return.
frame 1
set $ret = $pc
set $ret_sp = $sp
frame 0
delete

echo \n=== 3. The refill: retrieve_objects() takes a batch out of a slab's bitmap.\n
eval "break retrieve_objects thread %d if s == $s && nr > 1", $thr
continue
printf "retrieve_objects(slab %p, nr %d), called from:\n", slab, nr
bt 3
kit-slab slab
set $slab = slab
set $nr = nr
set $before = $kit_slab_available(slab)
delete
finish
set $taken = $
if $taken >= 1 && $taken <= $nr && $kit_slab_available($slab) == $before - $taken
  printf "retrieve_objects took %d of %d objects: the slab's bitmap lost exactly that many free bits\n", $taken, $nr
else
  echo UNEXPECTED: retrieve_objects took a number of objects its slab's bitmap does not show\n
end
kit-slab $slab
eval "tbreak *%lu if $sp == %lu", $ret, $ret_sp
continue
set $obj = (void *)$rax
printf "slab_alloc returned %p\n", $obj
if $obj != 0 && $kit_object_free($obj) == 0
  echo the allocated object is not free in its slab's bitmap\n
else
  echo UNEXPECTED: slab_alloc returned no object, or one its slab still marks free\n
end
kit-queue $s $cpu

echo \n=== 4. A free that finds this CPU's queue full.\n
break slab_free if $kit_cache_debug(s) == 0 && $kit_queue_len(s) == s->queue
continue
set $s = s
set $cpu = $kit_cpu()
set $thr = $_thread
set $x = object
printf "cpu %d frees %p into %s, and its queue is full\n", $cpu, object, s->name
kit-queue $s $cpu
delete

echo \n=== 5. drain_objects() gives the oldest batch back to the slabs.\n
eval "break drain_objects thread %d if s == $s", $thr
continue
printf "drain_objects(nr %d); the first object, %p, goes back to this slab:\n", nr, object[0]
kit-slab object[0]
if nr == $s->batch
  printf "drain_objects gives %d objects back: one batch\n", nr
else
  echo UNEXPECTED: drain_objects is not giving back one batch\n
end
delete
finish
finish
set $c = $kit_per_cpu_ptr($s->cpu_slab, $cpu)
if $c->objects == $s->queue - $s->batch + 1 && $c->object[$c->objects - 1] == $x
  echo the queue kept queue - batch objects and took the freed one last\n
else
  echo UNEXPECTED: the queue after the free is not what a drain of one batch leaves\n
end
kit-queue $s $cpu

echo \n=== End of the walkthrough.\n

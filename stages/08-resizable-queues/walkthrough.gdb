# Stage 08 walkthrough: a shell in the guest writes cpu_queue_size, and
# resize_cpu_queue() gives kmalloc-64 new per-CPU queues.  The old queues
# are emptied from an IPI on each CPU, then freed.
#
# kit-run: resize-loop

set print frame-arguments none

echo \n=== 1. Let the system boot; the guest then resizes kmalloc-64's queues.\n
break kernel_execve
continue
delete

echo \n=== 2. A write to /sys/kernel/slab/kmalloc-64/cpu_queue_size.\n
break resize_cpu_queue
continue
set $s = s
set $old = s->cpu_slab
set $queue = queue
set $batch = batch
printf "resize_cpu_queue(%s, queue %u, batch %u); the queues in use hold %u\n", s->name, queue, batch, s->queue
printf "old per-CPU queues: %p\n", $old
bt 5
kit-queue $s
# Where this call returns to, and the stack pointer then (see stage 07).
frame 1
set $ret = $pc
set $ret_sp = $sp
frame 0
delete

echo \n=== 3. The IPI: each CPU empties its old queue into the slabs.\n
break flush_old_queue
continue
set $oldc = $kit_per_cpu_ptr(((struct queue_resize *)info)->old)
printf "cpu %d runs flush_old_queue: its old queue holds %d objects\n", $kit_cpu(), $oldc->objects
printf "new per-CPU queues: %p, room for %u objects each\n", $s->cpu_slab, $kit_per_cpu_ptr($s->cpu_slab)->queue
if ((struct queue_resize *)info)->old == $old && $s->cpu_slab != $old
  echo the cache already allocates from the new queues while the old ones are emptied\n
else
  echo UNEXPECTED: the IPI is not emptying the queues the cache used before\n
end
delete
finish
if $oldc->objects == 0
  printf "the old queue of cpu %d is empty now\n", $kit_cpu()
else
  echo UNEXPECTED: the old queue still holds objects after flush_old_queue\n
end

echo \n=== 4. resize_cpu_queue() returns.\n
eval "tbreak *%lu if $sp == %lu", $ret, $ret_sp
continue
printf "resize_cpu_queue returned %d\n", (int)$rax
set $c0 = $kit_per_cpu_ptr($s->cpu_slab, 0)
set $c1 = $kit_per_cpu_ptr($s->cpu_slab, 1)
if (int)$rax == 0 && $s->cpu_slab != $old && $s->queue == $queue && $s->batch == $batch && $c0->queue == $queue && $c1->queue == $queue && $c0->batch == $batch
  printf "%s has new per-CPU queues of %u objects, batch %u\n", $s->name, $queue, $batch
else
  echo UNEXPECTED: the cache's queues are not the ones resize_cpu_queue was asked for\n
end
kit-queue $s

echo \n=== End of the walkthrough.\n

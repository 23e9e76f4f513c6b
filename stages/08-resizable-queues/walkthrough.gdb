# Stage 08 walkthrough: a shell in the guest writes cpu_queue_size, and
# resize_cpu_queue() gives kmalloc-64 new per-CPU queues.  After a grace
# period the resizing task empties the old queues, then frees them.
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

echo \n=== 3. A grace period later, the resizing task empties the old queues.\n
break drain_old_queues
continue
set $oc0 = $kit_per_cpu_ptr(old, 0)
set $oc1 = $kit_per_cpu_ptr(old, 1)
printf "drain_old_queues on cpu %d: the old queues hold %d and %d objects\n", $kit_cpu(), $oc0->objects, $oc1->objects
printf "new per-CPU queues: %p, room for %u objects each\n", $s->cpu_slab, $kit_per_cpu_ptr($s->cpu_slab)->queue
if old == $old && $s->cpu_slab != $old
  echo the cache already allocates from the new queues while the old ones are emptied\n
else
  echo UNEXPECTED: drain_old_queues is not emptying the queues the cache used before\n
end
# IF, bit 9 of RFLAGS: interrupts are on in the task that resizes.
if ($eflags & 0x200) != 0
  echo interrupts are on: the resizing task empties the queues, not an interrupt\n
else
  echo UNEXPECTED: drain_old_queues runs with interrupts off\n
end
delete
finish
if $oc0->objects == 0 && $oc1->objects == 0
  echo the old queues of both CPUs are empty now\n
else
  echo UNEXPECTED: an old queue still holds objects after drain_old_queues\n
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

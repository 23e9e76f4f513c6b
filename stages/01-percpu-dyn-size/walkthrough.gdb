# Stage 01 walkthrough: the dynamic area of the percpu allocator's first
# chunk is a minimum.  x86 asks pcpu_embed_first_chunk() for dyn_size
# bytes; the layout may give more (page rounding), never less.
#
# kit-run: churn

set print frame-arguments none

echo \n=== 1. x86's setup_per_cpu_areas() asks for the first chunk.\n
break pcpu_embed_first_chunk
continue
printf "asked: reserved_size %lu, dyn_size %lu, atom_size %lu\n", reserved_size, dyn_size, atom_size
set $asked = dyn_size
delete

echo \n=== 2. The layout the percpu allocator settled on.\n
break pcpu_setup_first_chunk
continue
printf "got: static_size %lu, reserved_size %lu, dyn_size %lu, unit_size %lu\n", ai->static_size, ai->reserved_size, ai->dyn_size, ai->unit_size
if ai->dyn_size >= $asked
  echo dyn_size is a minimum: the dynamic area is at least what was asked\n
else
  echo UNEXPECTED: the dynamic area is smaller than asked\n
end
delete

echo \n=== 3. After boot: every CPU has a unit of that size.\n
break kernel_execve
continue
printf "pcpu_unit_size %d, __per_cpu_offset[1] - __per_cpu_offset[0] = %lu\n", pcpu_unit_size, __per_cpu_offset[1] - __per_cpu_offset[0]
if __per_cpu_offset[1] - __per_cpu_offset[0] == pcpu_unit_size
  echo CPU 1's copy of every percpu variable lies one unit after CPU 0's\n
else
  echo UNEXPECTED: the CPUs' units are not one unit apart\n
end

echo \n=== End of the walkthrough.\n

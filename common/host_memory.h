// How this process's host memory allocator treats what is freed, for the programs that time host
// work (the CPU profile, the validator's ranks).
#pragma once

namespace gpuplan {

/// Makes this process's malloc keep the memory it frees for later requests instead of handing it
/// back to the operating system: no allocation gets a mapping of its own (glibc M_MMAP_MAX = 0)
/// and the heap is not trimmed (M_TRIM_THRESHOLD at its maximum), as a training framework's
/// caching allocator keeps its blocks. Buffers freed and allocated again every step (op
/// outputs, collective buffers, MPI's reduction temporaries) then reuse pages already mapped
/// instead of faulting fresh ones in. On a VM those faults are slow enough to change what is
/// measured: on the 2-core CI VM (2026-11-29) OpenMPI's MPI_Reduce_scatter_block of 28 MB took
/// 140 ms with glibc's defaults and 11 ms with this; the forward GEMMs of examples/cpu/pp2_vpp2
/// ran 1.6-2.5x slower than the profile's GEMMs of the same FLOPs. Call it before any large
/// allocation (before MPI_Init); on a C library other than glibc it does nothing.
void KeepFreedHostMemory();

}  // namespace gpuplan

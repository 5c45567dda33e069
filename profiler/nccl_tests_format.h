// Collective results printed the way nccl-tests prints them (NVIDIA/nccl-tests, src/common.cu
// and doc/PERFORMANCE.md): size, count, type, redop, root, time (us), algbw and busbw (GB/s,
// 1 GB = 1e9 B), and the closing "Avg bus bandwidth" line. gpuplan times out-of-place only.
#pragma once

#include <span>
#include <string>

#include "profiler/profile.h"

namespace gpuplan {

/// The element the collectives ran on: the profiler's NCCL runner bf16, the CPU backend's MPI
/// ranks 64-bit integers (the count column is size / bytes).
struct ElementType {
  const char* name = "bf16";
  double bytes = 2;
};

/// One nccl-tests table per (collective, ranks) found in `samples`, in order of first
/// appearance, each with its header and average bus bandwidth.
std::string FormatNcclTests(std::span<const CollectiveSample> samples,
                            const ElementType& type = {});

}  // namespace gpuplan

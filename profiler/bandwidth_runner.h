// BandwidthRunner over the CUDA runtime (built only with the CUDA toolkit).
#pragma once

#include <memory>

#include "profiler/backends.h"

namespace gpuplan {

/// A runner timing, on each call's device(s): a vectorised grid-stride copy kernel, pinned-host
/// cudaMemcpyAsync in both directions, and cudaMemcpyPeerAsync with peer access enabled.
/// `bytes` below 1 are kInvalidInput; failed allocations are kUnavailable naming the bytes.
std::unique_ptr<BandwidthRunner> MakeCudaBandwidthRunner();

}  // namespace gpuplan

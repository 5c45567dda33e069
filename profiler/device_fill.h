// Filling device buffers with small pseudo-random values, so that GEMM inputs are realistic
// (no zeros, no denormals, no overflow) without copying from the host.
#pragma once

#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstddef>
#include <cstdint>

#include "common/status.h"

namespace gpuplan {

/// Enqueues on `stream` a kernel writing `count` elements of `type` at `data` (device memory of
/// the current device), each uniform in [-1, 1) from a hash of its index and `seed`.
/// `type` is CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF or CUDA_R_8F_E4M3; others are kInvalidInput.
Status FillUniform(void* data, size_t count, cudaDataType_t type, uint32_t seed,
                   cudaStream_t stream);

}  // namespace gpuplan

// One macro family for CUDA runtime calls: a failure becomes a Status naming file and line.
#pragma once

#include <string>

#include <cuda_runtime_api.h>

#include "common/status.h"

namespace gpuplan {

inline Status CudaStatus(cudaError_t err, const char* expr, const char* file, int line) {
  if (err == cudaSuccess) return Status::Ok();
  return Status::Unavailable(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                             " failed: " + cudaGetErrorString(err));
}

}  // namespace gpuplan

/// Evaluates a CUDA runtime call; on failure returns a Status from the enclosing function.
#define GPUPLAN_CUDA_RETURN_IF_ERROR(call) \
  GPUPLAN_RETURN_IF_ERROR(::gpuplan::CudaStatus((call), #call, __FILE__, __LINE__))

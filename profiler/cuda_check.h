// One macro family for GPU library calls: a failure becomes a Status naming the call, file and
// line. This header covers the CUDA runtime; cublas_check.h and nccl_check.h add cuBLAS(Lt) and
// NCCL in the same form, so that including this one does not need their headers.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "common/status.h"

namespace gpuplan {

/// The Status of a failed library call: "file:line: expr failed: error" (kUnavailable: the
/// machine or library could not do it).
inline Status CallFailed(const char* expr, const char* file, int line, const char* error) {
  return Status::Unavailable(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                             " failed: " + error);
}

/// Ok, or CallFailed with cudaGetErrorString(err).
inline Status CudaStatus(cudaError_t err, const char* expr, const char* file, int line) {
  if (err == cudaSuccess) return Status::Ok();
  return CallFailed(expr, file, line, cudaGetErrorString(err));
}

}  // namespace gpuplan

/// Evaluates a CUDA runtime call; on failure returns a Status from the enclosing function.
#define GPUPLAN_CUDA_RETURN_IF_ERROR(call) \
  GPUPLAN_RETURN_IF_ERROR(::gpuplan::CudaStatus((call), #call, __FILE__, __LINE__))

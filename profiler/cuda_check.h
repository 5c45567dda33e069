// One macro family for library calls: a failure becomes a Status naming the call, file and line
// (CallFailed, common/call_status.h). This header covers the CUDA runtime; cublas_check.h and
// nccl_check.h add cuBLAS(Lt) and NCCL, validator/mpi_check.h MPI, in the same form, so that
// including one does not need the others' headers.
#pragma once

#include <cuda_runtime_api.h>

#include "common/call_status.h"

namespace gpuplan {

/// Ok, or CallFailed with cudaGetErrorString(err).
inline Status CudaStatus(cudaError_t err, const char* expr, const char* file, int line) {
  if (err == cudaSuccess) return Status::Ok();
  return CallFailed(expr, file, line, cudaGetErrorString(err));
}

}  // namespace gpuplan

/// Evaluates a CUDA runtime call; on failure returns a Status from the enclosing function.
#define GPUPLAN_CUDA_RETURN_IF_ERROR(call) \
  GPUPLAN_RETURN_IF_ERROR(::gpuplan::CudaStatus((call), #call, __FILE__, __LINE__))

// cuBLAS(Lt) member of the check macro family of cuda_check.h.
#pragma once

#include <cublasLt.h>

#include "profiler/cuda_check.h"

namespace gpuplan {

/// Ok, or CallFailed with cublasLtGetStatusString(status) (the cuBLASLt twin of
/// cublasGetStatusString, so that only libcublasLt is needed).
inline Status CublasStatus(cublasStatus_t status, const char* expr, const char* file, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return Status::Ok();
  return CallFailed(expr, file, line, cublasLtGetStatusString(status));
}

}  // namespace gpuplan

/// Evaluates a cuBLAS/cuBLASLt call; on failure returns a Status from the enclosing function.
#define GPUPLAN_CUBLAS_RETURN_IF_ERROR(call) \
  GPUPLAN_RETURN_IF_ERROR(::gpuplan::CublasStatus((call), #call, __FILE__, __LINE__))

// NCCL member of the check macro family of cuda_check.h.
#pragma once

#include <nccl.h>

#include "profiler/cuda_check.h"

namespace gpuplan {

/// Ok, or CallFailed with ncclGetErrorString(result).
inline Status NcclStatus(ncclResult_t result, const char* expr, const char* file, int line) {
  if (result == ncclSuccess) return Status::Ok();
  return CallFailed(expr, file, line, ncclGetErrorString(result));
}

}  // namespace gpuplan

/// Evaluates an NCCL call; on failure returns a Status from the enclosing function.
#define GPUPLAN_NCCL_RETURN_IF_ERROR(call) \
  GPUPLAN_RETURN_IF_ERROR(::gpuplan::NcclStatus((call), #call, __FILE__, __LINE__))

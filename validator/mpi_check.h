// MPI member of the check macro family (common/call_status.h): a failed MPI call becomes a Status
// naming the call, the file, the line and MPI's own error string.
#pragma once

#include <mpi.h>

#include <string>

#include "common/call_status.h"

namespace gpuplan {

/// Ok, or CallFailed with MPI_Error_string(code). The communicators this validator creates
/// return errors (MPI_ERRORS_RETURN) instead of aborting, so that a failure becomes a report.
inline Status MpiStatus(int code, const char* expr, const char* file, int line) {
  if (code == MPI_SUCCESS) return Status::Ok();
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return CallFailed(expr, file, line, std::string(text, static_cast<size_t>(length)));
}

}  // namespace gpuplan

/// Evaluates an MPI call; on failure returns a Status from the enclosing function.
#define GPUPLAN_MPI_RETURN_IF_ERROR(call) \
  GPUPLAN_RETURN_IF_ERROR(::gpuplan::MpiStatus((call), #call, __FILE__, __LINE__))

// The shared part of the check macro family for library calls (CUDA, cuBLAS, NCCL, MPI): a failed
// call becomes a Status naming the call, the file and the line.
#pragma once

#include <string>

#include "common/status.h"

namespace gpuplan {

/// The Status of a failed library call: "file:line: expr failed: error" (kUnavailable: the
/// machine or library could not do it).
inline Status CallFailed(const char* expr, const char* file, int line, const std::string& error) {
  return Status::Unavailable(std::string(file) + ":" + std::to_string(line) + ": " + expr +
                             " failed: " + error);
}

}  // namespace gpuplan

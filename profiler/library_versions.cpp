#include "profiler/library_versions.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

namespace gpuplan {
namespace {

std::string Dotted(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string Dotted(int major, int minor, int patch) {
  return Dotted(major, minor) + "." + std::to_string(patch);
}

// CUDART_VERSION encoding (cuda_runtime_api.h): 1000 * major + 10 * minor; 0 means unknown.
std::string CudaVersionCode(int code) {
  return code > 0 ? Dotted(code / 1000, (code % 1000) / 10) : "";
}

}  // namespace

std::string CudaRuntimeVersion() {
  int code = 0;
  if (cudaRuntimeGetVersion(&code) != cudaSuccess) return "";
  return CudaVersionCode(code);
}

std::string CudaDriverVersion() {
  int code = 0;
  if (cudaDriverGetVersion(&code) != cudaSuccess) return "";
  return CudaVersionCode(code);
}

std::string NcclVersion() {
  int code = 0;
  if (ncclGetVersion(&code) != ncclSuccess || code <= 0) return "";
  // NCCL_VERSION(X, Y, Z) in nccl.h: X*1000 + Y*100 + Z up to 2.8, X*10000 + Y*100 + Z after.
  if (code < 10000) return Dotted(code / 1000, (code % 1000) / 100, code % 100);
  return Dotted(code / 10000, (code % 10000) / 100, code % 100);
}

std::string CublasLtVersion() {
  // CUBLAS_VERSION in cublas_api.h (cuBLAS >= 12): major*10000 + minor*100 + patch.
  const int code = static_cast<int>(cublasLtGetVersion());
  return Dotted(code / 10000, (code % 10000) / 100, code % 100);
}

}  // namespace gpuplan

// Version strings of the GPU software gpuplan runs on (CUDA runtime and driver, NCCL, cuBLASLt),
// decoded from the libraries' integer version codes.
#pragma once

#include <string>

namespace gpuplan {

/// "13.0" from cudaRuntimeGetVersion, "" when the call fails.
std::string CudaRuntimeVersion();
/// The CUDA version the driver supports, "13.0" from cudaDriverGetVersion; "" without a driver.
std::string CudaDriverVersion();
/// "2.28.9" from ncclGetVersion of the linked NCCL, "" when the call fails.
std::string NcclVersion();
/// "13.1.0" from cublasLtGetVersion of the linked cuBLASLt.
std::string CublasLtVersion();

}  // namespace gpuplan

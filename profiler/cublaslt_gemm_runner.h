// GemmRunner over cuBLASLt (built only with the CUDA toolkit).
#pragma once

#include <memory>

#include "common/status.h"
#include "profiler/backends.h"

namespace gpuplan {

/// A runner timing cublasLtMatmul on `device`: fp32, tf32 (fp32 data,
/// CUBLAS_COMPUTE_32F_FAST_TF32), bf16 and fp16 with fp32 accumulation, fp8 (e4m3 inputs with unit
/// per-tensor scales, bf16 output) on compute capability >= 8.9. Every GEMM uses the "TN" layout
/// cuBLASLt requires for fp8 (A stored k x m and transposed, B stored k x n), so all precisions
/// time the same problem. kUnavailable when the device or cuBLASLt cannot be used.
Expected<std::unique_ptr<GemmRunner>> MakeCublasLtGemmRunner(int device);

}  // namespace gpuplan

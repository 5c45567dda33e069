// Fused AdamW optimizer step on the GPU over a flat fp32 parameter buffer.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/status.h"
#include "kernels/adamw_config.h"
#include "kernels/dtype.h"

namespace gpuplan::kernels {

/// Device buffers of AdamWStep, n elements each: the fp32 master parameters and both fp32
/// moments, updated in place and 16-byte aligned, and the gradient in `grad_dtype`, aligned to
/// 4 elements (8 bytes for bf16/fp16, 16 for fp32). No buffer may overlap another.
struct AdamWArgs {
  float* param = nullptr;
  float* exp_avg = nullptr;
  float* exp_avg_sq = nullptr;
  const void* grad = nullptr;
};

/// One AdamW step (Loshchilov & Hutter 2019, Algorithm 2; formulas in AdamWConfig), fp32
/// arithmetic with the bias corrections computed on the host in double: param -= lr wd param,
/// then param -= (lr / (1 - beta1^t)) m / (sqrt(v) / sqrt(1 - beta2^t) + eps) with the updated
/// moments (the same value as AdamWConfig's form, as PyTorch's AdamW evaluates it). One fused
/// kernel, a grid-stride loop over float4/4-gradient vectors plus a scalar tail. grad_dtype
/// fp32, bf16 or fp16; n > 0. Invalid (naming the argument) before any launch; a CUDA failure is
/// Unavailable.
Status AdamWStep(int64_t n, DType grad_dtype, const AdamWConfig& config, const AdamWArgs& args,
                 cudaStream_t stream);

}  // namespace gpuplan::kernels

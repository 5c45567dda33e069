// RMSNorm and LayerNorm over the rows of a matrix on the GPU, forward and backward.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/status.h"
#include "kernels/dtype.h"
#include "kernels/norm_kind.h"
#include "kernels/tensor_shapes.h"

namespace gpuplan::kernels {

/// Device buffers of NormForward. x, y: [rows, cols]; weight, bias: [cols]; all in the dtype
/// (bias LayerNorm only, null for RMSNorm). mean (LayerNorm only, null for RMSNorm) and rstd:
/// fp32 [rows], saved for the backward. y must not overlap x.
struct NormForwardArgs {
  const void* x = nullptr;
  const void* weight = nullptr;
  const void* bias = nullptr;
  void* y = nullptr;
  float* mean = nullptr;
  float* rstd = nullptr;
};

/// Device buffers of NormBackward. x, dy, dx: [rows, cols] and weight [cols] in the dtype; mean
/// (LayerNorm only, else null) and rstd as NormForward saved them. dweight and dbias (LayerNorm
/// only, else null): fp32 [cols], overwritten (not accumulated into). workspace: at least
/// NormBackwardWorkspaceBytes(kind, shape) bytes of device memory, 4-byte aligned, content
/// ignored. dx must not overlap the inputs.
struct NormBackwardArgs {
  const void* x = nullptr;
  const void* weight = nullptr;
  const void* dy = nullptr;
  const float* mean = nullptr;
  const float* rstd = nullptr;
  void* dx = nullptr;
  float* dweight = nullptr;
  float* dbias = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

/// Bytes of the fp32 per-block partial sums of dweight (and dbias):
/// min(rows, 512) x cols x 4 (x 2 for LayerNorm); 0 for an invalid shape.
size_t NormBackwardWorkspaceBytes(NormKind kind, const MatrixShape& shape);

/// y = norm(x) * weight (+ bias) per row (formulas in NormKind; Zhang & Sennrich 2019 for
/// RMSNorm, Ba et al. 2016 for LayerNorm), statistics in fp32: one thread block per row, the
/// LayerNorm variance in a second pass over (x - mean)^2. dtype fp32, bf16 or fp16; eps >= 0.
/// Invalid (naming the argument) before any launch; a CUDA failure is Unavailable.
Status NormForward(NormKind kind, const MatrixShape& shape, DType dtype, double eps,
                   const NormForwardArgs& args, cudaStream_t stream);

/// dx, dweight, dbias (formulas in ReferenceNormBackward, kernels/reference_norm.h). One kernel
/// computes dx row by row (a block per row, strided over min(rows, 512) blocks) and adds
/// dy * xhat (and dy) into that block's fp32 partial row in the workspace; a second kernel sums
/// the partial rows column by column into dweight (and dbias).
Status NormBackward(NormKind kind, const MatrixShape& shape, DType dtype,
                    const NormBackwardArgs& args, cudaStream_t stream);

}  // namespace gpuplan::kernels

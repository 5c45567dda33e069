// Causal flash attention on the GPU (FlashAttention-2 tiling, Dao 2023), forward and backward.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "common/status.h"
#include "kernels/dtype.h"
#include "kernels/tensor_shapes.h"

namespace gpuplan::kernels {

/// Device buffers of AttentionForward. q, k, v, o: [batch, seq, heads, head_dim] in the dtype
/// (see AttentionShape); q, k, v 16-byte aligned. lse: fp32 [batch, heads, seq], the natural
/// log-sum-exp of each row of scaled, masked scores. Outputs must not overlap inputs.
struct AttentionForwardArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;
};

/// Device buffers of AttentionBackward: the forward's inputs, its o and lse, the output gradient
/// d_o (same layout as o, 16-byte aligned), the gradients dq, dk, dv to write (layout of q), and
/// a caller-provided fp32 workspace of at least AttentionBackwardWorkspaceBytes(shape) bytes,
/// 16-byte aligned (cudaMalloc'ed memory is). The workspace holds D = rowsum(dO * O) and the fp32
/// accumulator of dq; its content on entry is ignored. Outputs must not overlap inputs.
struct AttentionBackwardArgs {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;
  const void* d_o = nullptr;
  const float* lse = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};

/// Ok when the kernels support `shape` and `dtype` (the limits of AttentionForward below; a
/// causal shape only), else Invalid naming the dimension. Launchers check it first; callers may
/// check before allocating.
Status AttentionSupported(const AttentionShape& shape, DType dtype);

/// Bytes of the workspace AttentionBackward needs: 4 x (batch heads seq, rounded up to 64) for D
/// plus 4 x batch seq heads head_dim for the dq accumulator; 0 for an invalid shape.
size_t AttentionBackwardWorkspaceBytes(const AttentionShape& shape);

/// O = softmax(scale Q K^T + causal mask) V and lse per row, scale = 1/sqrt(head_dim), key j
/// visible to query i iff j <= i. FlashAttention-2 forward (Dao 2023, Algorithm 1): one thread
/// block per (64-query tile, head, batch) streams 64-key tiles of K and V through shared memory
/// with an online softmax; no seq x seq matrix reaches global memory. Q K^T and P V run on tensor
/// cores (WMMA m16n16k16, 16-bit inputs, fp32 accumulation); P is rounded to the dtype before
/// P V as in FlashAttention-2. dtype bf16 or fp16; head_dim 64 or 128; heads and batch at most
/// 65535; seq below 2^30. Invalid (naming the argument) otherwise, before any launch. Dynamic
/// shared memory per block: 70.25 KiB at head_dim 64, 110.25 KiB at 128, which sm_80/sm_90
/// (A100, H100, H200) allow and sm_86/sm_89 (99 KiB) do not: a CUDA failure such as that is
/// Unavailable. Enqueues on `stream` and does not synchronise.
Status AttentionForward(const AttentionShape& shape, DType dtype, const AttentionForwardArgs& args,
                        cudaStream_t stream);

/// dQ, dK, dV of the causal attention above (FlashAttention-2 backward, Dao 2023, Algorithm 2),
/// as three kernels on `stream`: (1) D_i = rowsum(dO_i * O_i) in fp32 and zeroing of the dq
/// accumulator; (2) one thread block per (64-key tile, head, batch) recomputes
/// P = exp(scale Q K^T - lse) for every query tile at or below the diagonal, accumulates
/// dV = P^T dO and dK = scale dS^T Q in registers (dS = P * (dP - D), dP = dO V^T), and adds
/// scale dS K into the fp32 dq accumulator with atomicAdd (so dq's rounding is not deterministic
/// across runs); (3) dq = accumulator rounded to the dtype. Matrix products on tensor cores
/// (WMMA), P and dS rounded to the dtype before them. Same limits as AttentionForward, with
/// 88.5 KiB of shared memory at head_dim 64 and 120.5 KiB at 128; Invalid when the workspace is
/// missing or too small.
Status AttentionBackward(const AttentionShape& shape, DType dtype,
                         const AttentionBackwardArgs& args, cudaStream_t stream);

}  // namespace gpuplan::kernels

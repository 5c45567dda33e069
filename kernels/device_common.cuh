// Device-side helpers shared by the kernels of kernels/*.cu (internal header, CUDA only):
// storage-type conversions, dtype dispatch, warp/block reductions and grid sizing.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>

#include "common/status.h"
#include "kernels/dtype.h"

namespace gpuplan::kernels {

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__half x) { return __half2float(x); }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }

/// Round-to-nearest-even conversion of an fp32 value to the storage type T.
template <typename T>
__device__ __forceinline__ T FromFloat(float x);
template <>
__device__ __forceinline__ float FromFloat<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half FromFloat<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

/// Carries a type to a generic lambda: `[&](auto tag) { using T = typename decltype(tag)::type; }`.
template <typename T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<T>{}) for the storage type of `dtype` (fp32, bf16, fp16).
template <typename F>
Status DispatchDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFp32:
      return f(TypeTag<float>{});
    case DType::kBf16:
      return f(TypeTag<__nv_bfloat16>{});
    case DType::kFp16:
      return f(TypeTag<__half>{});
  }
  return Status::Invalid("unknown dtype");
}

/// As DispatchDType for kernels with only 16-bit variants (tensor-core inputs); fp32 is Invalid.
template <typename F>
Status Dispatch16BitDType(std::string_view kernel, DType dtype, F&& f) {
  switch (dtype) {
    case DType::kBf16:
      return f(TypeTag<__nv_bfloat16>{});
    case DType::kFp16:
      return f(TypeTag<__half>{});
    case DType::kFp32:
      break;
  }
  return Status::Invalid(std::string(kernel) + ": dtype " + std::string(DTypeName(dtype)) +
                         " is not supported (bf16 or fp16)");
}

/// Invalid "<name> is null" when a required device pointer is missing.
inline Status CheckNotNull(const char* name, const void* p) {
  return p == nullptr ? Status::Invalid(std::string(name) + " is null") : Status::Ok();
}

/// A device pointer with the argument name errors give for it.
struct NamedPointer {
  const char* name;
  const void* p;
};

/// CheckNotNull for each pointer in order; the first null one is reported.
inline Status CheckNotNull(std::initializer_list<NamedPointer> pointers) {
  for (const NamedPointer& n : pointers) GPUPLAN_RETURN_IF_ERROR(CheckNotNull(n.name, n.p));
  return Status::Ok();
}

/// Invalid unless `p` is a multiple of `bytes` (vector loads need their natural alignment).
inline Status CheckAligned(const char* name, const void* p, uintptr_t bytes) {
  if (reinterpret_cast<uintptr_t>(p) % bytes == 0) return Status::Ok();
  return Status::Invalid(std::string(name) + " must be " + std::to_string(bytes) + "-byte aligned");
}

/// CheckAligned for each pointer in order.
inline Status CheckAligned(std::initializer_list<NamedPointer> pointers, uintptr_t bytes) {
  for (const NamedPointer& n : pointers) GPUPLAN_RETURN_IF_ERROR(CheckAligned(n.name, n.p, bytes));
  return Status::Ok();
}

/// Blocks of `threads` for a grid-stride loop over `work` items: enough to cover the work once,
/// at most 8192 (beyond that the loop strides; 8192 x 256 threads fill any current GPU).
inline unsigned GridStrideBlocks(int64_t work, int threads) {
  const int64_t blocks = (work + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : (blocks > 8192 ? 8192 : blocks));
}

struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};

/// Lane `lane ^ offset`'s v within a full warp (other value types overload it, found by ADL).
__device__ __forceinline__ float ShuffleXor(float v, int offset) {
  return __shfl_xor_sync(0xffffffffu, v, offset);
}

/// Reduces `v` over the 32 lanes of a full warp; every lane gets the result.
template <typename V, typename Op>
__device__ __forceinline__ V WarpReduce(V v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) v = op(v, ShuffleXor(v, offset));
  return v;
}

/// Reduces `v` over the block (blockDim.x a multiple of 32, at most 1024); every thread gets the
/// result. `scratch` is shared memory of 32 V. Contains __syncthreads(): every thread of the
/// block must call it, and back-to-back calls may reuse the same scratch.
template <typename V, typename Op>
__device__ V BlockReduce(V v, V* scratch, Op op, V identity) {
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const int warp = static_cast<int>(threadIdx.x) >> 5;
  v = WarpReduce(v, op);
  __syncthreads();  // an earlier call may still be reading scratch
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < static_cast<int>(blockDim.x >> 5) ? scratch[lane] : identity;
  return WarpReduce(v, op);
}

/// Sum over the block; see BlockReduce.
__device__ __forceinline__ float BlockSum(float v, float* scratch) {
  return BlockReduce(v, scratch, SumOp{}, 0.0f);
}

}  // namespace gpuplan::kernels

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <algorithm>
#include <string>

#include "profiler/cuda_check.h"
#include "profiler/device_fill.h"

namespace gpuplan {
namespace {

// Chris Wellons' "lowbias32" integer hash (https://nullprogram.com/blog/2018/07/31/).
__device__ uint32_t Hash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Uniform in [-1, 1) from the top 24 bits of the hash (exact in float).
__device__ float Uniform(size_t i, uint32_t seed) {
  const uint32_t h = Hash(static_cast<uint32_t>(i) ^ Hash(static_cast<uint32_t>(i >> 32) ^ seed));
  return static_cast<float>(h >> 8) * (2.0f / 16777216.0f) - 1.0f;
}

template <typename T>
__global__ void FillKernel(T* data, size_t count, uint32_t seed) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    data[i] = T(Uniform(i, seed));
  }
}

template <typename T>
Status Launch(void* data, size_t count, uint32_t seed, cudaStream_t stream) {
  constexpr unsigned kThreads = 256;
  constexpr size_t kMaxBlocks = 4096;  // grid-stride: enough blocks to fill any GPU
  const auto blocks =
      static_cast<unsigned>(std::clamp<size_t>((count + kThreads - 1) / kThreads, 1, kMaxBlocks));
  FillKernel<T><<<blocks, kThreads, 0, stream>>>(static_cast<T*>(data), count, seed);
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::Ok();
}

}  // namespace

Status FillUniform(void* data, size_t count, cudaDataType_t type, uint32_t seed,
                   cudaStream_t stream) {
  switch (type) {
    case CUDA_R_32F:
      return Launch<float>(data, count, seed, stream);
    case CUDA_R_16F:
      return Launch<__half>(data, count, seed, stream);
    case CUDA_R_16BF:
      return Launch<__nv_bfloat16>(data, count, seed, stream);
    case CUDA_R_8F_E4M3:
      return Launch<__nv_fp8_e4m3>(data, count, seed, stream);
    default:
      return Status::Invalid("FillUniform: unsupported cudaDataType_t " +
                             std::to_string(static_cast<int>(type)));
  }
}

}  // namespace gpuplan

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "profiler/cuda_check.h"
#include "validator/gpu_compute_kernels.h"

namespace gpuplan {
namespace {

constexpr int kThreads = 256;

// Grid-stride loops: at most 4096 blocks of kThreads.
unsigned Blocks(int64_t n) {
  return static_cast<unsigned>(std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 4096));
}

Status CheckArgs(const char* what, int64_t n, const void* a, const void* b) {
  if (n <= 0) return Status::Invalid(std::string(what) + ": size must be positive");
  if (a == nullptr || b == nullptr) return Status::Invalid(std::string(what) + ": null buffer");
  return Status::Ok();
}

template <typename T>
__global__ void GatherKernel(const T* table, int64_t vocab, int64_t rows, int64_t cols, T* out) {
  const int64_t n = rows * cols;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = j / cols;
    out[j] = table[(i * 7919 % vocab) * cols + j % cols];
  }
}

template <typename T>
__global__ void ScatterAddKernel(const T* dy, int64_t vocab, int64_t rows, int64_t cols,
                                 float* grad) {
  const int64_t n = rows * cols;
  for (int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
       j += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t i = j / cols;
    atomicAdd(&grad[(i * 7919 % vocab) * cols + j % cols], static_cast<float>(dy[j]));
  }
}

__global__ void LabelsKernel(int64_t* labels, int64_t rows, int64_t vocab) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < rows;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    labels[i] = i * 7919 % vocab;
  }
}

template <typename T>
__global__ void CastKernel(const float* in, int64_t n, T* out) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    out[i] = T(in[i]);
  }
}

// Calls f(T{}) with the storage type of `dtype`.
template <typename F>
Status Dispatch(kernels::DType dtype, F f) {
  switch (dtype) {
    case kernels::DType::kFp32:
      f(float{});
      break;
    case kernels::DType::kBf16:
      f(__nv_bfloat16{});
      break;
    case kernels::DType::kFp16:
      f(__half{});
      break;
  }
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::Ok();
}

}  // namespace

Status EmbeddingGather(kernels::DType dtype, const void* table, int64_t vocab, int64_t rows,
                       int64_t cols, void* out, cudaStream_t stream) {
  GPUPLAN_RETURN_IF_ERROR(CheckArgs("embedding gather", std::min(vocab, rows * cols), table, out));
  return Dispatch(dtype, [&](auto t) {
    using T = decltype(t);
    GatherKernel<T><<<Blocks(rows * cols), kThreads, 0, stream>>>(
        static_cast<const T*>(table), vocab, rows, cols, static_cast<T*>(out));
  });
}

Status EmbeddingScatterAdd(kernels::DType dtype, const void* dy, int64_t vocab, int64_t rows,
                           int64_t cols, float* grad, cudaStream_t stream) {
  GPUPLAN_RETURN_IF_ERROR(
      CheckArgs("embedding scatter-add", std::min(vocab, rows * cols), dy, grad));
  return Dispatch(dtype, [&](auto t) {
    using T = decltype(t);
    ScatterAddKernel<T><<<Blocks(rows * cols), kThreads, 0, stream>>>(static_cast<const T*>(dy),
                                                                      vocab, rows, cols, grad);
  });
}

Status FillLabels(int64_t* labels, int64_t rows, int64_t vocab, cudaStream_t stream) {
  GPUPLAN_RETURN_IF_ERROR(CheckArgs("labels", std::min(rows, vocab), labels, labels));
  LabelsKernel<<<Blocks(rows), kThreads, 0, stream>>>(labels, rows, vocab);
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
  return Status::Ok();
}

Status CastFromFloat(kernels::DType dtype, const float* in, int64_t n, void* out,
                     cudaStream_t stream) {
  GPUPLAN_RETURN_IF_ERROR(CheckArgs("cast", n, in, out));
  return Dispatch(dtype, [&](auto t) {
    using T = decltype(t);
    CastKernel<T><<<Blocks(n), kThreads, 0, stream>>>(in, n, static_cast<T*>(out));
  });
}

}  // namespace gpuplan

#include <utility>

#include "kernels/activation.h"
#include "kernels/device_common.cuh"
#include "kernels/tensor_shapes.h"
#include "profiler/cuda_check.h"

namespace gpuplan::kernels {
namespace {

constexpr int kThreads = 256;

// Constants of the tanh approximation (Hendrycks & Gimpel 2016, Sec. 2).
constexpr float kSqrt2OverPi = 0.7978845608028654f;  // sqrt(2 / pi)
constexpr float kCubic = 0.044715f;

__device__ __forceinline__ float Sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

// The four elementwise maps; Apply(i, ...) reads the inputs at i and writes the outputs at i.
struct GeluForwardOp {
  template <typename T>
  __device__ void operator()(int64_t i, const T* x, T* y) const {
    const float v = ToFloat(x[i]);
    y[i] = FromFloat<T>(0.5f * v * (1.0f + tanhf(kSqrt2OverPi * (v + kCubic * v * v * v))));
  }
};

struct GeluBackwardOp {
  template <typename T>
  __device__ void operator()(int64_t i, const T* x, const T* dy, T* dx) const {
    const float v = ToFloat(x[i]);
    const float t = tanhf(kSqrt2OverPi * (v + kCubic * v * v * v));
    const float d = 0.5f * (1.0f + t) +
                    0.5f * v * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kCubic * v * v);
    dx[i] = FromFloat<T>(ToFloat(dy[i]) * d);
  }
};

struct SwiGluForwardOp {
  template <typename T>
  __device__ void operator()(int64_t i, const T* gate, const T* up, T* out) const {
    const float g = ToFloat(gate[i]);
    out[i] = FromFloat<T>(g * Sigmoid(g) * ToFloat(up[i]));
  }
};

struct SwiGluBackwardOp {
  template <typename T>
  __device__ void operator()(int64_t i, const T* gate, const T* up, const T* dy, T* dgate,
                             T* dup) const {
    const float g = ToFloat(gate[i]);
    const float u = ToFloat(up[i]);
    const float d = ToFloat(dy[i]);
    const float s = Sigmoid(g);
    dgate[i] = FromFloat<T>(d * u * s * (1.0f + g * (1.0f - s)));
    dup[i] = FromFloat<T>(d * g * s);
  }
};

// Grid-stride loop applying `op` to every index below n.
template <typename Op, typename... Ptrs>
__global__ void __launch_bounds__(kThreads) ElementwiseKernel(int64_t n, Op op, Ptrs... ptrs) {
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    op(i, ptrs...);
  }
}

// Checks n and the pointers, then launches ElementwiseKernel<Op> on the buffers cast to T
// (inputs const). `names` name the buffers in errors, inputs first.
template <typename Op, size_t kInputs, size_t kOutputs>
Status Launch(const char* kernel, int64_t n, DType dtype,
              const char* const (&names)[kInputs + kOutputs], const void* const (&inputs)[kInputs],
              void* const (&outputs)[kOutputs], cudaStream_t stream) {
  GPUPLAN_RETURN_IF_ERROR(CheckElementCount(kernel, n));
  for (size_t i = 0; i < kInputs; ++i) GPUPLAN_RETURN_IF_ERROR(CheckNotNull(names[i], inputs[i]));
  for (size_t i = 0; i < kOutputs; ++i) {
    GPUPLAN_RETURN_IF_ERROR(CheckNotNull(names[kInputs + i], outputs[i]));
  }
  return DispatchDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    [&]<size_t... I, size_t... O>(std::index_sequence<I...>, std::index_sequence<O...>) {
      ElementwiseKernel<<<GridStrideBlocks(n, kThreads), kThreads, 0, stream>>>(
          n, Op{}, static_cast<const T*>(inputs[I])..., static_cast<T*>(outputs[O])...);
    }
    (std::make_index_sequence<kInputs>{}, std::make_index_sequence<kOutputs>{});
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::Ok();
  });
}

}  // namespace

Status GeluForward(int64_t n, DType dtype, const void* x, void* y, cudaStream_t stream) {
  return Launch<GeluForwardOp, 1, 1>("gelu", n, dtype, {"gelu x", "gelu y"}, {x}, {y}, stream);
}

Status GeluBackward(int64_t n, DType dtype, const void* x, const void* dy, void* dx,
                    cudaStream_t stream) {
  return Launch<GeluBackwardOp, 2, 1>("gelu backward", n, dtype, {"gelu x", "gelu dy", "gelu dx"},
                                      {x, dy}, {dx}, stream);
}

Status SwiGluForward(int64_t n, DType dtype, const void* gate, const void* up, void* out,
                     cudaStream_t stream) {
  return Launch<SwiGluForwardOp, 2, 1>(
      "swiglu", n, dtype, {"swiglu gate", "swiglu up", "swiglu out"}, {gate, up}, {out}, stream);
}

Status SwiGluBackward(int64_t n, DType dtype, const void* gate, const void* up, const void* dy,
                      void* dgate, void* dup, cudaStream_t stream) {
  return Launch<SwiGluBackwardOp, 3, 2>(
      "swiglu backward", n, dtype,
      {"swiglu gate", "swiglu up", "swiglu dy", "swiglu dgate", "swiglu dup"}, {gate, up, dy},
      {dgate, dup}, stream);
}

}  // namespace gpuplan::kernels

#include <cmath>

#include "kernels/adam.h"
#include "kernels/device_common.cuh"
#include "kernels/tensor_shapes.h"
#include "profiler/cuda_check.h"

namespace gpuplan::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kVec = 4;  // elements per vector: one float4 of each fp32 buffer

// The step's constants in fp32; the bias corrections come from the host in double.
struct AdamWConstants {
  float lr;
  float beta1;
  float beta2;
  float eps;
  float weight_decay;
  float step_size;  // lr / (1 - beta1^step)
  float bc2_sqrt;   // sqrt(1 - beta2^step)
};

// kVec gradient elements, loaded as one 8- or 16-byte vector.
template <typename T>
struct alignas(kVec * sizeof(T)) GradVec {
  T v[kVec];
};

// One element (Loshchilov & Hutter 2019, Algorithm 2, lines 7-12): moments, then decoupled decay
// and the bias-corrected Adam update.
__device__ __forceinline__ void Update(float& p, float& m, float& v, float g,
                                       const AdamWConstants& c) {
  m = c.beta1 * m + (1.0f - c.beta1) * g;
  v = c.beta2 * v + (1.0f - c.beta2) * g * g;
  p -= c.lr * c.weight_decay * p;
  p -= c.step_size * m / (sqrtf(v) / c.bc2_sqrt + c.eps);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    AdamWKernel(float* __restrict__ param, float* __restrict__ exp_avg,
                float* __restrict__ exp_avg_sq, const T* __restrict__ grad, int64_t n,
                AdamWConstants c) {
  const int64_t first = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  const int64_t vectors = n / kVec;
  for (int64_t i = first; i < vectors; i += stride) {
    float4 p = reinterpret_cast<float4*>(param)[i];
    float4 m = reinterpret_cast<float4*>(exp_avg)[i];
    float4 v = reinterpret_cast<float4*>(exp_avg_sq)[i];
    const GradVec<T> g = reinterpret_cast<const GradVec<T>*>(grad)[i];
    Update(p.x, m.x, v.x, ToFloat(g.v[0]), c);
    Update(p.y, m.y, v.y, ToFloat(g.v[1]), c);
    Update(p.z, m.z, v.z, ToFloat(g.v[2]), c);
    Update(p.w, m.w, v.w, ToFloat(g.v[3]), c);
    reinterpret_cast<float4*>(param)[i] = p;
    reinterpret_cast<float4*>(exp_avg)[i] = m;
    reinterpret_cast<float4*>(exp_avg_sq)[i] = v;
  }
  // The last n % kVec elements, one thread each.
  const int64_t tail = vectors * kVec + first;
  if (tail < n) Update(param[tail], exp_avg[tail], exp_avg_sq[tail], ToFloat(grad[tail]), c);
}

}  // namespace

Status AdamWStep(int64_t n, DType grad_dtype, const AdamWConfig& config, const AdamWArgs& args,
                 cudaStream_t stream) {
  GPUPLAN_RETURN_IF_ERROR(CheckElementCount("adamw", n));
  GPUPLAN_RETURN_IF_ERROR(CheckAdamWConfig(config));
  GPUPLAN_RETURN_IF_ERROR(CheckNotNull({{"adamw param", args.param},
                                        {"adamw exp_avg", args.exp_avg},
                                        {"adamw exp_avg_sq", args.exp_avg_sq},
                                        {"adamw grad", args.grad}}));
  GPUPLAN_RETURN_IF_ERROR(CheckAligned({{"adamw param", args.param},
                                        {"adamw exp_avg", args.exp_avg},
                                        {"adamw exp_avg_sq", args.exp_avg_sq}},
                                       16));
  GPUPLAN_RETURN_IF_ERROR(CheckAligned("adamw grad", args.grad, kVec * DTypeBytes(grad_dtype)));
  const AdamWConstants c{
      static_cast<float>(config.lr),
      static_cast<float>(config.beta1),
      static_cast<float>(config.beta2),
      static_cast<float>(config.eps),
      static_cast<float>(config.weight_decay),
      static_cast<float>(config.lr / BiasCorrection(config.beta1, config.step)),
      static_cast<float>(std::sqrt(BiasCorrection(config.beta2, config.step))),
  };
  return DispatchDType(grad_dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    AdamWKernel<T><<<GridStrideBlocks(n / kVec, kThreads), kThreads, 0, stream>>>(
        args.param, args.exp_avg, args.exp_avg_sq, static_cast<const T*>(args.grad), n, c);
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::Ok();
  });
}

}  // namespace gpuplan::kernels

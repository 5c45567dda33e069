#include <string>

#include "kernels/cross_entropy.h"
#include "kernels/device_common.cuh"
#include "profiler/cuda_check.h"

namespace gpuplan::kernels {
namespace {

constexpr int kThreads = 512;

// A running softmax normaliser: max m and sum of exp(x - m) over the values seen.
struct MaxSum {
  float m;
  float s;
};

__device__ __forceinline__ MaxSum ShuffleXor(MaxSum v, int offset) {
  return {__shfl_xor_sync(0xffffffffu, v.m, offset), __shfl_xor_sync(0xffffffffu, v.s, offset)};
}

// Merge of two normalisers (Milakov & Gimelshein 2018, "Online normalizer calculation for
// softmax", Algorithm 3): m = max(m1, m2), s = s1 exp(m1 - m) + s2 exp(m2 - m).
struct MergeOp {
  __device__ __forceinline__ MaxSum operator()(MaxSum a, MaxSum b) const {
    const float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return {m, 0.0f};  // nothing but -inf seen: avoid exp(-inf - -inf)
    return {m, a.s * expf(a.m - m) + b.s * expf(b.m - m)};
  }
};

template <typename T>
__global__ void __launch_bounds__(kThreads)
    CrossEntropyKernel(const T* logits, const int64_t* __restrict__ labels,
                       float* __restrict__ loss, T* dlogits, int64_t vocab, float inv_rows) {
  __shared__ MaxSum scratch[32];
  const int64_t row = blockIdx.x;
  const T* z = logits + row * vocab;
  T* dz = dlogits + row * vocab;
  const int64_t label = labels[row];
  const bool label_ok = label >= 0 && label < vocab;
  // Read before the first barrier: with dlogits == logits, pass 2 overwrites z[label].
  const float z_label = (threadIdx.x == 0 && label_ok) ? ToFloat(z[label]) : 0.0f;

  // Pass 1, online softmax (Milakov & Gimelshein 2018, Algorithm 3, lines 1-6), per thread.
  MaxSum acc{-INFINITY, 0.0f};
  for (int64_t c = threadIdx.x; c < vocab; c += kThreads) {
    const float x = ToFloat(z[c]);
    if (x > acc.m) {
      acc.s = acc.s * expf(acc.m - x) + 1.0f;
      acc.m = x;
    } else if (x != -INFINITY) {
      acc.s += expf(x - acc.m);
    }
  }
  acc = BlockReduce(acc, scratch, MergeOp{}, MaxSum{-INFINITY, 0.0f});
  const float lse = acc.m + logf(acc.s);
  if (threadIdx.x == 0) loss[row] = label_ok ? lse - z_label : NAN;

  // Pass 2: d(mean loss)/dz_c = (exp(z_c - lse) - [c == label]) / rows.
  for (int64_t c = threadIdx.x; c < vocab; c += kThreads) {
    const float p = expf(ToFloat(z[c]) - lse);
    dz[c] = FromFloat<T>((p - (c == label ? 1.0f : 0.0f)) * inv_rows);
  }
}

}  // namespace

Status CrossEntropy(const MatrixShape& shape, DType dtype, const CrossEntropyArgs& args,
                    cudaStream_t stream) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  if (shape.rows > INT32_MAX) {
    return Status::Invalid("cross_entropy: rows must be below 2^31, got " +
                           std::to_string(shape.rows));
  }
  GPUPLAN_RETURN_IF_ERROR(CheckNotNull({{"cross_entropy logits", args.logits},
                                        {"cross_entropy labels", args.labels},
                                        {"cross_entropy loss", args.loss},
                                        {"cross_entropy dlogits", args.dlogits}}));
  const float inv_rows = static_cast<float>(1.0 / static_cast<double>(shape.rows));
  return DispatchDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    CrossEntropyKernel<T><<<static_cast<unsigned>(shape.rows), kThreads, 0, stream>>>(
        static_cast<const T*>(args.logits), args.labels, args.loss, static_cast<T*>(args.dlogits),
        shape.cols, inv_rows);
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
    return Status::Ok();
  });
}

}  // namespace gpuplan::kernels

#include <algorithm>
#include <cstdint>
#include <string>

#include "kernels/device_common.cuh"
#include "kernels/norm.h"
#include "profiler/cuda_check.h"

namespace gpuplan::kernels {
namespace {

// Blocks of the backward, hence partial rows of dweight/dbias: enough to fill a GPU
// (4 blocks x 512 threads on each of 132 SMs) while the partial rows stay mostly in L2.
constexpr int64_t kMaxPartialRows = 512;

// Threads for one row: a multiple of 32 giving each about 8 columns, from 32 to 1024.
int RowThreads(int64_t cols) {
  const int64_t threads = ((cols + 7) / 8 + 31) / 32 * 32;
  return static_cast<int>(std::clamp<int64_t>(threads, 32, 1024));
}

int64_t PartialRows(const MatrixShape& shape) { return std::min(shape.rows, kMaxPartialRows); }

// One block per row. RMSNorm: rstd = 1/sqrt(mean(x^2) + eps), y = x rstd w (Zhang & Sennrich
// 2019, Eq. 4). LayerNorm: mean, then rstd = 1/sqrt(mean((x - mean)^2) + eps) in a second pass
// (two-pass variance, no cancellation), y = (x - mean) rstd w + b (Ba et al. 2016, Eq. 3-4).
template <typename T, bool kLayerNorm>
__global__ void __launch_bounds__(1024)
    NormForwardKernel(const T* __restrict__ x, const T* __restrict__ weight,
                      const T* __restrict__ bias, T* __restrict__ y, float* __restrict__ mean_out,
                      float* __restrict__ rstd_out, int64_t cols, float eps) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  const T* xr = x + row * cols;
  T* yr = y + row * cols;
  const float inv_cols = 1.0f / static_cast<float>(cols);
  float mean = 0.0f;
  if constexpr (kLayerNorm) {
    float sum = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) sum += ToFloat(xr[c]);
    mean = BlockSum(sum, scratch) * inv_cols;
  }
  float sum_sq = 0.0f;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float d = ToFloat(xr[c]) - mean;
    sum_sq += d * d;
  }
  const float rstd = rsqrtf(BlockSum(sum_sq, scratch) * inv_cols + eps);
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    float out = (ToFloat(xr[c]) - mean) * rstd * ToFloat(weight[c]);
    if constexpr (kLayerNorm) out += ToFloat(bias[c]);
    yr[c] = FromFloat<T>(out);
  }
  if (threadIdx.x == 0) {
    rstd_out[row] = rstd;
    if constexpr (kLayerNorm) mean_out[row] = mean;
  }
}

// dx per row with xhat = (x - mean) rstd, g = dy w: RMSNorm dx = rstd (g - xhat mean(g xhat))
// (Zhang & Sennrich 2019), LayerNorm dx = rstd (g - mean(g) - xhat mean(g xhat)) (Ba et al.
// 2016). Block `blockIdx.x` handles rows blockIdx.x, + gridDim.x, ... and writes sum dy xhat
// (and sum dy) over them into its partial row; each thread owns the same columns in every row,
// so the partial rows need no atomics, and the first row overwrites (no zeroing pass).
template <typename T, bool kLayerNorm>
__global__ void __launch_bounds__(1024)
    NormBackwardKernel(const T* __restrict__ x, const T* __restrict__ weight,
                       const T* __restrict__ dy, const float* __restrict__ mean,
                       const float* __restrict__ rstd, T* __restrict__ dx,
                       float* __restrict__ partial_w, float* __restrict__ partial_b, int64_t rows,
                       int64_t cols) {
  __shared__ float scratch[32];
  float* pw = partial_w + blockIdx.x * cols;
  float* pb = kLayerNorm ? partial_b + blockIdx.x * cols : nullptr;
  const float inv_cols = 1.0f / static_cast<float>(cols);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const bool first = row == blockIdx.x;
    const int64_t offset = row * cols;
    const float mu = kLayerNorm ? mean[row] : 0.0f;
    const float rs = rstd[row];
    float sum_g = 0.0f;
    float sum_gx = 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float g = ToFloat(dy[offset + c]) * ToFloat(weight[c]);
      sum_g += g;
      sum_gx += g * (ToFloat(x[offset + c]) - mu) * rs;
    }
    const float mean_gx = BlockSum(sum_gx, scratch) * inv_cols;
    const float mean_g = kLayerNorm ? BlockSum(sum_g, scratch) * inv_cols : 0.0f;
    for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
      const float d = ToFloat(dy[offset + c]);
      const float xhat = (ToFloat(x[offset + c]) - mu) * rs;
      dx[offset + c] = FromFloat<T>(rs * (d * ToFloat(weight[c]) - mean_g - xhat * mean_gx));
      pw[c] = first ? d * xhat : pw[c] + d * xhat;
      if constexpr (kLayerNorm) pb[c] = first ? d : pb[c] + d;
    }
  }
}

// out[c] = sum over `parts` partial rows of partial[p][c]: one thread per column, coalesced.
__global__ void SumPartialRowsKernel(const float* __restrict__ partial, int64_t parts, int64_t cols,
                                     float* __restrict__ out) {
  for (int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; c < cols;
       c += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    float sum = 0.0f;
    for (int64_t p = 0; p < parts; ++p) sum += partial[p * cols + c];
    out[c] = sum;
  }
}

// The dimension checks both directions share; rows index the grid (x up to 2^31 - 1).
Status CheckNorm(NormKind kind, const MatrixShape& shape) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  if (shape.rows > INT32_MAX) {
    return Status::Invalid(std::string(NormKindName(kind)) + ": rows must be below 2^31, got " +
                           std::to_string(shape.rows));
  }
  return Status::Ok();
}

// Ok when a LayerNorm-only pointer is given for LayerNorm and null for RMSNorm.
Status CheckLayerNormOnly(NormKind kind, const char* name, const void* p) {
  if (kind == NormKind::kLayerNorm) return CheckNotNull(name, p);
  if (p != nullptr) return Status::Invalid(std::string(name) + " must be null for rmsnorm");
  return Status::Ok();
}

// Calls f(std::bool_constant<kind == LayerNorm>{}).
template <typename F>
Status DispatchKind(NormKind kind, F&& f) {
  if (kind == NormKind::kLayerNorm) return f(std::true_type{});
  return f(std::false_type{});
}

}  // namespace

size_t NormBackwardWorkspaceBytes(NormKind kind, const MatrixShape& shape) {
  if (!CheckShape(shape).ok()) return 0;
  const size_t per_kind = kind == NormKind::kLayerNorm ? 2 : 1;
  return per_kind * sizeof(float) * static_cast<size_t>(PartialRows(shape) * shape.cols);
}

Status NormForward(NormKind kind, const MatrixShape& shape, DType dtype, double eps,
                   const NormForwardArgs& args, cudaStream_t stream) {
  GPUPLAN_RETURN_IF_ERROR(CheckNorm(kind, shape));
  if (!(eps >= 0)) return Status::Invalid(std::string(NormKindName(kind)) + ": eps must be >= 0");
  GPUPLAN_RETURN_IF_ERROR(CheckNotNull({{"norm x", args.x},
                                        {"norm weight", args.weight},
                                        {"norm y", args.y},
                                        {"norm rstd", args.rstd}}));
  GPUPLAN_RETURN_IF_ERROR(CheckLayerNormOnly(kind, "norm bias", args.bias));
  GPUPLAN_RETURN_IF_ERROR(CheckLayerNormOnly(kind, "norm mean", args.mean));
  return DispatchDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return DispatchKind(kind, [&](auto layer) {
      NormForwardKernel<T, decltype(layer)::value>
          <<<static_cast<unsigned>(shape.rows), RowThreads(shape.cols), 0, stream>>>(
              static_cast<const T*>(args.x), static_cast<const T*>(args.weight),
              static_cast<const T*>(args.bias), static_cast<T*>(args.y), args.mean, args.rstd,
              shape.cols, static_cast<float>(eps));
      GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      return Status::Ok();
    });
  });
}

Status NormBackward(NormKind kind, const MatrixShape& shape, DType dtype,
                    const NormBackwardArgs& args, cudaStream_t stream) {
  GPUPLAN_RETURN_IF_ERROR(CheckNorm(kind, shape));
  GPUPLAN_RETURN_IF_ERROR(CheckNotNull({{"norm x", args.x},
                                        {"norm weight", args.weight},
                                        {"norm dy", args.dy},
                                        {"norm rstd", args.rstd},
                                        {"norm dx", args.dx},
                                        {"norm dweight", args.dweight},
                                        {"norm workspace", args.workspace}}));
  GPUPLAN_RETURN_IF_ERROR(CheckAligned("norm workspace", args.workspace, 4));
  GPUPLAN_RETURN_IF_ERROR(CheckLayerNormOnly(kind, "norm mean", args.mean));
  GPUPLAN_RETURN_IF_ERROR(CheckLayerNormOnly(kind, "norm dbias", args.dbias));
  const size_t needed = NormBackwardWorkspaceBytes(kind, shape);
  if (args.workspace_bytes < needed) {
    return Status::Invalid("norm workspace holds " + std::to_string(args.workspace_bytes) +
                           " bytes, needs " + std::to_string(needed));
  }
  const int64_t parts = PartialRows(shape);
  float* partial_w = static_cast<float*>(args.workspace);
  float* partial_b = kind == NormKind::kLayerNorm ? partial_w + parts * shape.cols : nullptr;
  return DispatchDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return DispatchKind(kind, [&](auto layer) {
      NormBackwardKernel<T, decltype(layer)::value>
          <<<static_cast<unsigned>(parts), RowThreads(shape.cols), 0, stream>>>(
              static_cast<const T*>(args.x), static_cast<const T*>(args.weight),
              static_cast<const T*>(args.dy), args.mean, args.rstd, static_cast<T*>(args.dx),
              partial_w, partial_b, shape.rows, shape.cols);
      GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      const unsigned blocks = GridStrideBlocks(shape.cols, 256);
      SumPartialRowsKernel<<<blocks, 256, 0, stream>>>(partial_w, parts, shape.cols, args.dweight);
      GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      if (partial_b != nullptr) {
        SumPartialRowsKernel<<<blocks, 256, 0, stream>>>(partial_b, parts, shape.cols, args.dbias);
        GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetLastError());
      }
      return Status::Ok();
    });
  });
}

}  // namespace gpuplan::kernels

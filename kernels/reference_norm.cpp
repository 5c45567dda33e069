#include "kernels/reference_norm.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuplan::kernels {
namespace {

template <typename T>
Status CheckCommon(NormKind kind, const MatrixShape& shape, std::span<const T> x,
                   std::span<const T> weight) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("x", x.size(), shape.Elements()));
  return CheckSize(std::string(NormKindName(kind)) + " weight", weight.size(), shape.cols);
}

}  // namespace

template <typename T>
Status ReferenceNormForwardInto(NormKind kind, const MatrixShape& shape, std::span<const T> x,
                                std::span<const T> weight, std::span<const T> bias, double eps,
                                std::span<T> y, std::span<T> mean, std::span<T> rstd) {
  GPUPLAN_RETURN_IF_ERROR(CheckCommon(kind, shape, x, weight));
  const bool layer = kind == NormKind::kLayerNorm;
  GPUPLAN_RETURN_IF_ERROR(CheckSize("bias", bias.size(), layer ? shape.cols : 0));
  if (!(eps >= 0)) return Status::Invalid("norm: eps must be >= 0");
  GPUPLAN_RETURN_IF_ERROR(CheckSize("y", y.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("mean", mean.size(), layer ? shape.rows : 0));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("rstd", rstd.size(), shape.rows));
  const int64_t n = shape.cols;
  for (int64_t row = 0; row < shape.rows; ++row) {
    const T* xr = x.data() + row * n;
    T mu = 0;
    if (layer) {
      for (int64_t c = 0; c < n; ++c) mu += xr[c];
      mu /= static_cast<T>(n);
      mean[row] = mu;
    }
    T ss = 0;
    for (int64_t c = 0; c < n; ++c) ss += (xr[c] - mu) * (xr[c] - mu);
    const T rs = T(1) / std::sqrt(ss / static_cast<T>(n) + static_cast<T>(eps));
    rstd[row] = rs;
    for (int64_t c = 0; c < n; ++c) {
      y[row * n + c] = (xr[c] - mu) * rs * weight[c] + (layer ? bias[c] : T(0));
    }
  }
  return Status::Ok();
}

template <typename T>
Status ReferenceNormBackwardInto(NormKind kind, const MatrixShape& shape, std::span<const T> x,
                                 std::span<const T> weight, std::span<const T> mean,
                                 std::span<const T> rstd, std::span<const T> dy, std::span<T> dx,
                                 std::span<T> dweight, std::span<T> dbias) {
  GPUPLAN_RETURN_IF_ERROR(CheckCommon(kind, shape, x, weight));
  const bool layer = kind == NormKind::kLayerNorm;
  GPUPLAN_RETURN_IF_ERROR(CheckSize("mean", mean.size(), layer ? shape.rows : 0));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("rstd", rstd.size(), shape.rows));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("dy", dy.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("dx", dx.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("dweight", dweight.size(), shape.cols));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("dbias", dbias.size(), layer ? shape.cols : 0));
  const int64_t n = shape.cols;
  std::fill(dweight.begin(), dweight.end(), T(0));
  std::fill(dbias.begin(), dbias.end(), T(0));
  for (int64_t row = 0; row < shape.rows; ++row) {
    const T mu = layer ? mean[row] : T(0);
    const T rs = rstd[row];
    const int64_t base = row * n;
    T mean_g = 0;
    T mean_gx = 0;
    for (int64_t c = 0; c < n; ++c) {
      const T xhat = (x[base + c] - mu) * rs;
      const T gc = dy[base + c] * weight[c];
      mean_g += gc;
      mean_gx += gc * xhat;
      dweight[c] += dy[base + c] * xhat;
      if (layer) dbias[c] += dy[base + c];
    }
    mean_g /= static_cast<T>(n);
    mean_gx /= static_cast<T>(n);
    for (int64_t c = 0; c < n; ++c) {
      const T xhat = (x[base + c] - mu) * rs;
      const T gc = dy[base + c] * weight[c];
      dx[base + c] = rs * (gc - (layer ? mean_g : T(0)) - xhat * mean_gx);
    }
  }
  return Status::Ok();
}

Expected<NormForwardResult> ReferenceNormForward(NormKind kind, const MatrixShape& shape,
                                                 std::span<const double> x,
                                                 std::span<const double> weight,
                                                 std::span<const double> bias, double eps) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  NormForwardResult r;
  r.y.resize(x.size());
  r.rstd.resize(static_cast<size_t>(shape.rows));
  if (kind == NormKind::kLayerNorm) r.mean.resize(static_cast<size_t>(shape.rows));
  GPUPLAN_RETURN_IF_ERROR(
      ReferenceNormForwardInto<double>(kind, shape, x, weight, bias, eps, r.y, r.mean, r.rstd));
  return r;
}

Expected<NormGradients> ReferenceNormBackward(NormKind kind, const MatrixShape& shape,
                                              std::span<const double> x,
                                              std::span<const double> weight,
                                              std::span<const double> mean,
                                              std::span<const double> rstd,
                                              std::span<const double> dy) {
  NormGradients g;
  g.dx.resize(x.size());
  g.dweight.resize(weight.size());
  if (kind == NormKind::kLayerNorm) g.dbias.resize(weight.size());
  GPUPLAN_RETURN_IF_ERROR(ReferenceNormBackwardInto<double>(kind, shape, x, weight, mean, rstd, dy,
                                                            g.dx, g.dweight, g.dbias));
  return g;
}

template Status ReferenceNormForwardInto<float>(NormKind, const MatrixShape&,
                                                std::span<const float>, std::span<const float>,
                                                std::span<const float>, double, std::span<float>,
                                                std::span<float>, std::span<float>);
template Status ReferenceNormBackwardInto<float>(NormKind, const MatrixShape&,
                                                 std::span<const float>, std::span<const float>,
                                                 std::span<const float>, std::span<const float>,
                                                 std::span<const float>, std::span<float>,
                                                 std::span<float>, std::span<float>);

}  // namespace gpuplan::kernels

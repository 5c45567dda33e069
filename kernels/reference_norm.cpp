#include "kernels/reference_norm.h"

#include <cmath>
#include <string>

namespace gpuplan::kernels {
namespace {

Status CheckCommon(NormKind kind, const MatrixShape& shape, std::span<const double> x,
                   std::span<const double> weight) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("x", x.size(), shape.Elements()));
  return CheckSize(std::string(NormKindName(kind)) + " weight", weight.size(), shape.cols);
}

}  // namespace

Expected<NormForwardResult> ReferenceNormForward(NormKind kind, const MatrixShape& shape,
                                                 std::span<const double> x,
                                                 std::span<const double> weight,
                                                 std::span<const double> bias, double eps) {
  GPUPLAN_RETURN_IF_ERROR(CheckCommon(kind, shape, x, weight));
  const bool layer = kind == NormKind::kLayerNorm;
  GPUPLAN_RETURN_IF_ERROR(CheckSize("bias", bias.size(), layer ? shape.cols : 0));
  if (!(eps >= 0)) return Status::Invalid("norm: eps must be >= 0");
  const int64_t n = shape.cols;
  NormForwardResult r;
  r.y.resize(x.size());
  r.rstd.resize(static_cast<size_t>(shape.rows));
  if (layer) r.mean.resize(static_cast<size_t>(shape.rows));
  for (int64_t row = 0; row < shape.rows; ++row) {
    const double* xr = x.data() + row * n;
    double mean = 0;
    if (layer) {
      for (int64_t c = 0; c < n; ++c) mean += xr[c];
      mean /= static_cast<double>(n);
      r.mean[row] = mean;
    }
    double ss = 0;
    for (int64_t c = 0; c < n; ++c) ss += (xr[c] - mean) * (xr[c] - mean);
    const double rstd = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
    r.rstd[row] = rstd;
    for (int64_t c = 0; c < n; ++c) {
      r.y[row * n + c] = (xr[c] - mean) * rstd * weight[c] + (layer ? bias[c] : 0.0);
    }
  }
  return r;
}

Expected<NormGradients> ReferenceNormBackward(NormKind kind, const MatrixShape& shape,
                                              std::span<const double> x,
                                              std::span<const double> weight,
                                              std::span<const double> mean,
                                              std::span<const double> rstd,
                                              std::span<const double> dy) {
  GPUPLAN_RETURN_IF_ERROR(CheckCommon(kind, shape, x, weight));
  const bool layer = kind == NormKind::kLayerNorm;
  GPUPLAN_RETURN_IF_ERROR(CheckSize("mean", mean.size(), layer ? shape.rows : 0));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("rstd", rstd.size(), shape.rows));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("dy", dy.size(), shape.Elements()));
  const int64_t n = shape.cols;
  NormGradients g;
  g.dx.resize(x.size());
  g.dweight.assign(weight.size(), 0.0);
  if (layer) g.dbias.assign(weight.size(), 0.0);
  for (int64_t row = 0; row < shape.rows; ++row) {
    const double mu = layer ? mean[row] : 0.0;
    const double rs = rstd[row];
    const int64_t base = row * n;
    double mean_g = 0;
    double mean_gx = 0;
    for (int64_t c = 0; c < n; ++c) {
      const double xhat = (x[base + c] - mu) * rs;
      const double gc = dy[base + c] * weight[c];
      mean_g += gc;
      mean_gx += gc * xhat;
      g.dweight[c] += dy[base + c] * xhat;
      if (layer) g.dbias[c] += dy[base + c];
    }
    mean_g /= static_cast<double>(n);
    mean_gx /= static_cast<double>(n);
    for (int64_t c = 0; c < n; ++c) {
      const double xhat = (x[base + c] - mu) * rs;
      const double gc = dy[base + c] * weight[c];
      g.dx[base + c] = rs * (gc - (layer ? mean_g : 0.0) - xhat * mean_gx);
    }
  }
  return g;
}

}  // namespace gpuplan::kernels

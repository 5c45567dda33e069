// CPU reference of RMSNorm and LayerNorm over the rows of a matrix, forward and backward: float64
// for the tests' ground truth, float32 (the ...Into forms) for the validator's CPU ranks.
#pragma once

#include <span>
#include <vector>

#include "common/status.h"
#include "kernels/norm_kind.h"
#include "kernels/tensor_shapes.h"

namespace gpuplan::kernels {

/// y and the per-row statistics the backward needs.
struct NormForwardResult {
  std::vector<double> y;     ///< [rows, cols]
  std::vector<double> mean;  ///< [rows]; LayerNorm only (empty for RMSNorm)
  std::vector<double> rstd;  ///< [rows], 1/sqrt(mean(x^2) + eps) or 1/sqrt(var + eps)
};

/// dx [rows, cols], dweight [cols], dbias [cols] (LayerNorm only; empty for RMSNorm).
struct NormGradients {
  std::vector<double> dx;
  std::vector<double> dweight;
  std::vector<double> dbias;
};

/// Normalises each row of x [rows, cols] (see NormKind for the formulas), then scales by
/// weight [cols] and, for LayerNorm, shifts by bias [cols] (`bias` must be empty for RMSNorm).
/// Invalid when eps < 0 or a size is wrong.
Expected<NormForwardResult> ReferenceNormForward(NormKind kind, const MatrixShape& shape,
                                                 std::span<const double> x,
                                                 std::span<const double> weight,
                                                 std::span<const double> bias, double eps);

/// Gradients given dy [rows, cols] and the saved statistics (`mean` empty for RMSNorm). With
/// xhat = (x - mean) rstd and g = dy * w:
///   RMSNorm   dx = rstd (g - xhat mean_row(g xhat))               (Zhang & Sennrich 2019),
///   LayerNorm dx = rstd (g - mean_row(g) - xhat mean_row(g xhat)) (Ba et al. 2016),
///   dweight = sum_rows dy xhat, dbias = sum_rows dy.
Expected<NormGradients> ReferenceNormBackward(NormKind kind, const MatrixShape& shape,
                                              std::span<const double> x,
                                              std::span<const double> weight,
                                              std::span<const double> mean,
                                              std::span<const double> rstd,
                                              std::span<const double> dy);

/// The forward in `T` (float or double) into the caller's buffers: y [rows, cols], mean [rows]
/// (LayerNorm; empty for RMSNorm), rstd [rows]. Accumulates in `T`. Same checks as above.
template <typename T>
Status ReferenceNormForwardInto(NormKind kind, const MatrixShape& shape, std::span<const T> x,
                                std::span<const T> weight, std::span<const T> bias, double eps,
                                std::span<T> y, std::span<T> mean, std::span<T> rstd);

/// The backward in `T` into dx [rows, cols], dweight [cols], dbias [cols] (LayerNorm; empty for
/// RMSNorm); dweight and dbias are overwritten, not accumulated.
template <typename T>
Status ReferenceNormBackwardInto(NormKind kind, const MatrixShape& shape, std::span<const T> x,
                                 std::span<const T> weight, std::span<const T> mean,
                                 std::span<const T> rstd, std::span<const T> dy, std::span<T> dx,
                                 std::span<T> dweight, std::span<T> dbias);

}  // namespace gpuplan::kernels

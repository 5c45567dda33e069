// CPU reference of softmax cross-entropy over the rows of a logit matrix: float64 for the tests'
// ground truth, float32 (the ...Into form) for the validator's CPU ranks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"
#include "kernels/tensor_shapes.h"

namespace gpuplan::kernels {

/// Per-row losses, their mean, and the gradient of the mean w.r.t. the logits.
struct CrossEntropyResult {
  std::vector<double> loss;     ///< [rows]: logsumexp(z_r) - z_r[label_r]
  double mean_loss = 0;         ///< mean of `loss` over rows
  std::vector<double> dlogits;  ///< [rows, cols]: (softmax(z_r) - onehot(label_r)) / rows
};

/// Softmax cross-entropy of logits [rows, cols = vocab] against labels [rows] (Goodfellow et
/// al. 2016, Sec. 6.2.2.3; the gradient softmax - onehot is their Eq. 6.30 differentiated).
/// Invalid when a size is wrong or a label is outside [0, cols).
Expected<CrossEntropyResult> ReferenceCrossEntropy(const MatrixShape& shape,
                                                   std::span<const double> logits,
                                                   std::span<const int64_t> labels);

/// The same in `T` (float or double) into loss [rows] and dlogits [rows, cols]; returns the mean
/// loss (accumulated in double).
template <typename T>
Expected<double> ReferenceCrossEntropyInto(const MatrixShape& shape, std::span<const T> logits,
                                           std::span<const int64_t> labels, std::span<T> loss,
                                           std::span<T> dlogits);

}  // namespace gpuplan::kernels

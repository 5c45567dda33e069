#include "kernels/reference_cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuplan::kernels {

Expected<CrossEntropyResult> ReferenceCrossEntropy(const MatrixShape& shape,
                                                   std::span<const double> logits,
                                                   std::span<const int64_t> labels) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("logits", logits.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("labels", labels.size(), shape.rows));
  const int64_t n = shape.cols;
  const double inv_rows = 1.0 / static_cast<double>(shape.rows);
  CrossEntropyResult r;
  r.loss.resize(static_cast<size_t>(shape.rows));
  r.dlogits.resize(logits.size());
  for (int64_t row = 0; row < shape.rows; ++row) {
    const int64_t label = labels[row];
    if (label < 0 || label >= n) {
      return Status::Invalid("labels[" + std::to_string(row) + "] = " + std::to_string(label) +
                             " is outside [0, " + std::to_string(n) + ")");
    }
    const double* z = logits.data() + row * n;
    const double m = *std::max_element(z, z + n);
    double sum = 0;
    for (int64_t c = 0; c < n; ++c) sum += std::exp(z[c] - m);
    const double lse = m + std::log(sum);
    r.loss[row] = lse - z[label];
    r.mean_loss += r.loss[row] * inv_rows;
    for (int64_t c = 0; c < n; ++c) {
      r.dlogits[row * n + c] = (std::exp(z[c] - lse) - (c == label ? 1.0 : 0.0)) * inv_rows;
    }
  }
  return r;
}

}  // namespace gpuplan::kernels

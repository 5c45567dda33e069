#include "kernels/reference_cross_entropy.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace gpuplan::kernels {

template <typename T>
Expected<double> ReferenceCrossEntropyInto(const MatrixShape& shape, std::span<const T> logits,
                                           std::span<const int64_t> labels, std::span<T> loss,
                                           std::span<T> dlogits) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("logits", logits.size(), shape.Elements()));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("labels", labels.size(), shape.rows));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("loss", loss.size(), shape.rows));
  GPUPLAN_RETURN_IF_ERROR(CheckSize("dlogits", dlogits.size(), shape.Elements()));
  const int64_t n = shape.cols;
  const T inv_rows = T(1) / static_cast<T>(shape.rows);
  double mean_loss = 0;
  for (int64_t row = 0; row < shape.rows; ++row) {
    const int64_t label = labels[row];
    if (label < 0 || label >= n) {
      return Status::Invalid("labels[" + std::to_string(row) + "] = " + std::to_string(label) +
                             " is outside [0, " + std::to_string(n) + ")");
    }
    const T* z = logits.data() + row * n;
    const T m = *std::max_element(z, z + n);
    T sum = 0;
    for (int64_t c = 0; c < n; ++c) sum += std::exp(z[c] - m);
    const T lse = m + std::log(sum);
    loss[row] = lse - z[label];
    mean_loss += static_cast<double>(loss[row] * inv_rows);
    for (int64_t c = 0; c < n; ++c) {
      dlogits[row * n + c] = (std::exp(z[c] - lse) - (c == label ? T(1) : T(0))) * inv_rows;
    }
  }
  return mean_loss;
}

Expected<CrossEntropyResult> ReferenceCrossEntropy(const MatrixShape& shape,
                                                   std::span<const double> logits,
                                                   std::span<const int64_t> labels) {
  GPUPLAN_RETURN_IF_ERROR(CheckShape(shape));
  CrossEntropyResult r;
  r.loss.resize(static_cast<size_t>(shape.rows));
  r.dlogits.resize(logits.size());
  Expected<double> mean =
      ReferenceCrossEntropyInto<double>(shape, logits, labels, r.loss, r.dlogits);
  if (!mean.ok()) return mean.status();
  r.mean_loss = *mean;
  return r;
}

template Expected<double> ReferenceCrossEntropyInto<float>(const MatrixShape&,
                                                           std::span<const float>,
                                                           std::span<const int64_t>,
                                                           std::span<float>, std::span<float>);

}  // namespace gpuplan::kernels

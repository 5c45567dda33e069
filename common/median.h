// The median of a series, shared by every summary statistic gpuplan prints (docs/ACCURACY.md).
#pragma once

#include <algorithm>
#include <limits>
#include <vector>

namespace gpuplan {

/// The middle value of `values`, the mean of the two middle ones for an even count; NaN when
/// `values` is empty.
inline double Median(std::vector<double> values) {
  if (values.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace gpuplan

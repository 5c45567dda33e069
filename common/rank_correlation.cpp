#include "common/rank_correlation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/str_format.h"

namespace gpuplan {
namespace {

// 1-based ranks, ties averaged.
std::vector<double> Ranks(const std::vector<double>& x) {
  std::vector<size_t> order(x.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return x[a] < x[b]; });
  std::vector<double> ranks(x.size());
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    const double rank = 0.5 * static_cast<double>(i + j) + 1;
    for (size_t k = i; k <= j; ++k) ranks[order[k]] = rank;
    i = j + 1;
  }
  return ranks;
}

}  // namespace

double SpearmanCorrelation(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> rx = Ranks(x), ry = Ranks(y);
  const double mean = 0.5 * static_cast<double>(x.size() + 1);
  double sxy = 0, sxx = 0, syy = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    sxy += (rx[i] - mean) * (ry[i] - mean);
    sxx += (rx[i] - mean) * (rx[i] - mean);
    syy += (ry[i] - mean) * (ry[i] - mean);
  }
  return sxx > 0 && syy > 0 ? sxy / std::sqrt(sxx * syy) : std::numeric_limits<double>::quiet_NaN();
}

std::string FormatSpearman(double rho) { return std::isnan(rho) ? "-" : StrFormat("%+.2f", rho); }

}  // namespace gpuplan

#include "profiler/fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "common/str_format.h"

namespace gpuplan {
namespace {

// Non-negative least squares of the relative residuals (X c - y) / y for a handful of columns:
// every subset of columns that contains column 0 is solved unconstrained (QR), and the feasible
// solution (all coefficients >= 0) with the least residual wins. Exact for NNLS with <= 3
// columns (the optimum is the unconstrained optimum of its set of positive coefficients; Lawson
// & Hanson 1974, Ch. 23). Returns the coefficients (0 where dropped) and the rms relative error.
struct NnlsResult {
  Eigen::VectorXd coefficients;
  double rms_relative_error = std::numeric_limits<double>::infinity();
};

NnlsResult RelativeNnls(const Eigen::MatrixXd& x, const Eigen::VectorXd& y) {
  const Eigen::Index rows = x.rows();
  const Eigen::Index cols = x.cols();
  Eigen::MatrixXd xw = x;
  for (Eigen::Index i = 0; i < rows; ++i) xw.row(i) /= y(i);
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(rows);
  NnlsResult best;
  for (unsigned mask = 1; mask < (1u << cols); mask += 2) {  // odd masks keep column 0
    std::vector<Eigen::Index> keep;
    for (Eigen::Index c = 0; c < cols; ++c)
      if (mask & (1u << c)) keep.push_back(c);
    if (static_cast<Eigen::Index>(keep.size()) > rows) continue;
    Eigen::MatrixXd sub(rows, static_cast<Eigen::Index>(keep.size()));
    for (size_t c = 0; c < keep.size(); ++c)
      sub.col(static_cast<Eigen::Index>(c)) = xw.col(keep[c]);
    const Eigen::VectorXd solved = sub.colPivHouseholderQr().solve(ones);
    if ((solved.array() < 0).any() || !solved.allFinite()) continue;
    const double rms = std::sqrt((sub * solved - ones).squaredNorm() / static_cast<double>(rows));
    if (rms < best.rms_relative_error) {
      best.rms_relative_error = rms;
      best.coefficients = Eigen::VectorXd::Zero(cols);
      for (size_t c = 0; c < keep.size(); ++c)
        best.coefficients(keep[c]) = solved(static_cast<Eigen::Index>(c));
    }
  }
  return best;
}

std::string GroupName(const CollectiveSample& s) {
  return std::string(GetCollectiveInfo(s.kind).name) + " over " + std::to_string(s.ranks) + " " +
         Noun(s.ranks, "rank", "ranks");
}

}  // namespace

Expected<CollectiveFit> FitCollective(std::span<const CollectiveSample> samples) {
  if (samples.empty()) return Status::Invalid("collective fit: no samples");
  const CollectiveSample& first = samples.front();
  std::vector<double> sizes;
  for (const CollectiveSample& s : samples) {
    if (s.kind != first.kind || s.ranks != first.ranks) {
      return Status::Invalid("collective fit: samples mix " + GroupName(first) + " and " +
                             GroupName(s));
    }
    if (std::find(sizes.begin(), sizes.end(), s.bytes) == sizes.end()) sizes.push_back(s.bytes);
  }
  if (sizes.size() < 2) {
    return Status::Invalid("collective fit: " + GroupName(first) +
                           " needs at least two message sizes, got " +
                           std::to_string(sizes.size()));
  }
  const double factor = GetCollectiveInfo(first.kind).bus_factor(first.ranks);
  const auto rows = static_cast<Eigen::Index>(samples.size());
  Eigen::MatrixXd x(rows, 2);  // column 0: size * factor (-> 1/busbw); column 1: 1 (-> alpha)
  Eigen::VectorXd y(rows);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const CollectiveSample& s = samples[static_cast<size_t>(i)];
    x(i, 0) = s.bytes * factor;
    x(i, 1) = 1.0;
    y(i) = s.seconds;
  }
  const NnlsResult r = RelativeNnls(x, y);
  if (!(r.coefficients.size() == 2 && r.coefficients(0) > 0)) {
    return Status::Invalid("collective fit: " + GroupName(first) +
                           ": time does not grow with size; no bandwidth can be fitted");
  }
  CollectiveFit fit;
  fit.kind = first.kind;
  fit.ranks = first.ranks;
  fit.busbw_bytes_per_s = 1.0 / r.coefficients(0);
  fit.alpha_s = r.coefficients(1);
  fit.rms_relative_error = r.rms_relative_error;
  fit.samples = static_cast<int>(samples.size());
  std::sort(sizes.begin(), sizes.end());
  for (double size : sizes) {
    double sum = 0;
    int n = 0;
    for (const CollectiveSample& s : samples) {
      if (s.bytes == size) {
        sum += s.seconds;
        ++n;
      }
    }
    fit.table.emplace_back(size, sum / n);
  }
  return fit;
}

std::vector<CollectiveFit> FitCollectives(std::span<const CollectiveSample> samples) {
  std::vector<CollectiveFit> fits;
  std::vector<std::pair<Collective, int>> seen;
  for (const CollectiveSample& s : samples) {
    const std::pair<Collective, int> key{s.kind, s.ranks};
    if (s.ranks < 2 || std::find(seen.begin(), seen.end(), key) != seen.end()) continue;
    seen.push_back(key);
    std::vector<CollectiveSample> group;
    for (const CollectiveSample& t : samples)
      if (t.kind == s.kind && t.ranks == s.ranks) group.push_back(t);
    Expected<CollectiveFit> fit = FitCollective(group);
    if (fit.ok()) fits.push_back(*fit);
  }
  return fits;
}

Expected<GemmFit> FitGemm(std::span<const GemmSample> samples, Precision dtype, int sm_count,
                          double memory_bytes_per_s) {
  std::vector<const GemmSample*> used;
  GemmFit fit;
  fit.dtype = dtype;
  const double element_bytes = PrecisionBytes(dtype);
  for (const GemmSample& s : samples) {
    if (s.dtype != dtype) continue;
    const double m = static_cast<double>(s.shape.m), n = static_cast<double>(s.shape.n),
                 k = static_cast<double>(s.shape.k), b = static_cast<double>(s.shape.batch);
    const double bytes = element_bytes * b * (m * k + k * n + m * n);
    if (memory_bytes_per_s > 0 && bytes / memory_bytes_per_s >= 0.5 * s.seconds) {
      ++fit.excluded_memory_bound;
      continue;
    }
    used.push_back(&s);
  }
  const std::string name(PrecisionName(dtype));
  if (used.size() < 2) {
    return Status::Invalid("GEMM fit (" + name +
                           "): needs at least two compute-bound samples, got " +
                           std::to_string(used.size()));
  }
  const auto rows = static_cast<Eigen::Index>(used.size());
  Eigen::MatrixXd x(rows, 3);  // columns: F/w (-> 1/R), F/(w k) (-> fill/R), 1 (-> overhead)
  Eigen::VectorXd y(rows);
  for (Eigen::Index i = 0; i < rows; ++i) {
    const GemmSample& s = *used[static_cast<size_t>(i)];
    const double w =
        GemmWaveEfficiency(static_cast<double>(s.shape.m), static_cast<double>(s.shape.n),
                           static_cast<double>(s.shape.batch), sm_count);
    x(i, 0) = s.Flops() / w;
    x(i, 1) = s.Flops() / w / static_cast<double>(s.shape.k);
    x(i, 2) = 1.0;
    y(i) = s.seconds;
  }
  const NnlsResult r = RelativeNnls(x, y);
  if (!(r.coefficients.size() == 3 && r.coefficients(0) > 0)) {
    return Status::Invalid("GEMM fit (" + name + "): no positive throughput fits the samples");
  }
  fit.flops_per_s = 1.0 / r.coefficients(0);
  fit.fill_depth = r.coefficients(1) / r.coefficients(0);
  fit.overhead_s = r.coefficients(2);
  fit.rms_relative_error = r.rms_relative_error;
  fit.samples = static_cast<int>(rows);
  return fit;
}

DeviceRates GemmFitRates(const GemmFit& fit, int sm_count, double memory_bytes_per_s) {
  DeviceRates r;
  r.matmul_flops_per_s = fit.flops_per_s;
  r.memory_bytes_per_s =
      memory_bytes_per_s > 0 ? memory_bytes_per_s : std::numeric_limits<double>::infinity();
  r.sm_count = std::max(1, sm_count);
  r.kernel_overhead_s = fit.overhead_s;
  r.gemm_fill_depth = fit.fill_depth;
  r.activation_bytes = PrecisionBytes(fit.dtype);
  return r;
}

}  // namespace gpuplan

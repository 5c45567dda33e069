// Spearman's rank correlation, shared by the layout-sweep and published-run reports
// (docs/ACCURACY.md): how well predicted throughputs order layouts as measured.
#pragma once

#include <string>
#include <vector>

namespace gpuplan {

/// Spearman rank correlation of two equally long series (ties take their average rank;
/// Spearman 1904, the Pearson correlation of the ranks). NaN for fewer than two values or a
/// constant series.
double SpearmanCorrelation(const std::vector<double>& x, const std::vector<double>& y);

/// A Spearman correlation as printed in reports: "+0.84", or "-" for NaN.
std::string FormatSpearman(double rho);

}  // namespace gpuplan

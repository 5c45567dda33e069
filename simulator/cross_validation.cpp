#include "simulator/cross_validation.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/str_format.h"
#include "simulator/cost_model.h"

namespace gpuplan {
namespace {

// Values from `min` to `max` in kCalibrationGridStep, computed from an integer index so that the
// grid points are exact to the printed precision.
std::vector<double> GridAxis(double min, double max) {
  std::vector<double> axis;
  const int steps = static_cast<int>(std::lround((max - min) / kCalibrationGridStep));
  for (int i = 0; i <= steps; ++i) axis.push_back(min + i * kCalibrationGridStep);
  return axis;
}

// Relative error of every run at one grid point.
std::vector<double> Errors(const std::vector<PublishedRun>& runs, const RateCalibration& c) {
  std::vector<double> errors;
  errors.reserve(runs.size());
  for (const PublishedRun& run : runs) {
    const StepResult r = EvaluateStep(run.job, *run.gpu, *run.net,
                                      DatasheetRates(*run.gpu, run.job.training.precision, c));
    errors.push_back((r.tokens_per_s_per_gpu - run.measured_tokens_per_s_per_gpu) /
                     run.measured_tokens_per_s_per_gpu);
  }
  return errors;
}

// The grid point with the least mean |error| over the runs whose source is not `held_out` (all
// runs when it is empty), and that mean. Points are visited in increasing order, so a tie keeps
// the smaller constants.
size_t BestPoint(const std::vector<std::vector<double>>& errors_by_point,
                 const std::vector<PublishedRun>& runs, const std::string& held_out, double* mape) {
  size_t best = 0;
  *mape = std::numeric_limits<double>::infinity();
  for (size_t g = 0; g < errors_by_point.size(); ++g) {
    double sum = 0;
    int n = 0;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].source == held_out) continue;
      sum += std::abs(errors_by_point[g][i]);
      n += 1;
    }
    if (n > 0 && sum / n < *mape) {
      *mape = sum / n;
      best = g;
    }
  }
  return best;
}

std::string Constants(const RateCalibration& c) {
  return StrFormat("%.2f / %.2f", c.sustained_gemm_fraction, c.fused_attention_relative_efficiency);
}

}  // namespace

Expected<CrossValidationReport> CrossValidatePublishedRuns(const std::vector<PublishedRun>& runs) {
  std::vector<std::string> sources;
  for (const PublishedRun& run : runs) {
    if (std::find(sources.begin(), sources.end(), run.source) == sources.end()) {
      sources.push_back(run.source);
    }
  }
  if (sources.size() < 2) {
    return Status::Invalid(StrFormat(
        "cross-validation needs runs from at least two sources, got %zu (the run's 'source' "
        "field names its publication)",
        sources.size()));
  }
  std::vector<RateCalibration> grid;
  for (double gemm : GridAxis(kGemmFractionGridMin, kGemmFractionGridMax)) {
    for (double attention : GridAxis(kAttentionEfficiencyGridMin, kAttentionEfficiencyGridMax)) {
      grid.push_back(RateCalibration{gemm, attention});
    }
  }
  std::vector<std::vector<double>> errors_by_point;
  errors_by_point.reserve(grid.size());
  for (const RateCalibration& c : grid) errors_by_point.push_back(Errors(runs, c));

  CrossValidationReport report;
  report.grid_points = static_cast<int>(grid.size());
  report.fitted_on_all = grid[BestPoint(errors_by_point, runs, "", &report.fitted_on_all_mape)];
  const std::vector<double> shipped = Errors(runs, RateCalibration{});
  report.runs.resize(runs.size());
  std::vector<double> all_in_sample, all_cross_validated;
  for (const std::string& source : sources) {
    double mape = 0;
    const size_t g = BestPoint(errors_by_point, runs, source, &mape);
    std::vector<double> in_sample, cross_validated;
    for (size_t i = 0; i < runs.size(); ++i) {
      if (runs[i].source != source) continue;
      in_sample.push_back(shipped[i]);
      cross_validated.push_back(errors_by_point[g][i]);
      RunComparison& cmp = report.runs[i];
      cmp.id = runs[i].id;
      cmp.source = source;
      cmp.measured = runs[i].measured_tokens_per_s_per_gpu;
      cmp.error = errors_by_point[g][i];
      cmp.predicted = cmp.measured * (1 + cmp.error);
    }
    report.folds.push_back(CrossValidationFold{source, grid[g], SummarizeErrors(source, in_sample),
                                               SummarizeErrors(source, cross_validated)});
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    all_in_sample.push_back(shipped[i]);
    all_cross_validated.push_back(report.runs[i].error);
  }
  report.in_sample = SummarizeErrors("all runs", all_in_sample);
  report.cross_validated = SummarizeErrors("all runs", all_cross_validated);
  return report;
}

std::string FormatCrossValidation(const CrossValidationReport& report, bool markdown) {
  std::string out;
  if (markdown) {
    out +=
        "| held-out source | runs | fitted without it (GEMM / attention) | in-sample MAPE | "
        "cross-validated MAPE | cross-validated bias | cross-validated worst |\n"
        "|---|---:|---:|---:|---:|---:|---:|\n";
  } else {
    out += StrFormat("%-24s %5s %13s %10s %9s %9s %9s\n", "held-out source", "runs", "GEMM / attn",
                     "in-sample", "CV MAPE", "CV bias", "CV worst");
  }
  auto row = [&](const std::string& label, const std::string& constants, const SourceSummary& in,
                 const SourceSummary& cv) {
    if (markdown) {
      out += StrFormat("| %s | %d | %s | %.1f%% | %.1f%% | %+.1f%% | %.1f%% |\n", label.c_str(),
                       cv.runs, constants.c_str(), 100 * in.mape, 100 * cv.mape,
                       100 * cv.mean_error, 100 * cv.max_abs_error);
    } else {
      out += StrFormat("%-24.24s %5d %13s %9.1f%% %8.1f%% %+8.1f%% %8.1f%%\n", label.c_str(),
                       cv.runs, constants.c_str(), 100 * in.mape, 100 * cv.mape,
                       100 * cv.mean_error, 100 * cv.max_abs_error);
    }
  };
  for (const CrossValidationFold& f : report.folds) {
    row(f.source, Constants(f.fitted), f.in_sample, f.cross_validated);
  }
  row("all runs", "per fold", report.in_sample, report.cross_validated);
  out += StrFormat(
      "\nConstants (sustained GEMM fraction / fused-attention relative efficiency) refitted on a "
      "grid of %d points (%.2f-%.2f / %.2f-%.2f in steps of %.2f) by least mean |error| of "
      "tokens/s/GPU over the other sources' runs. Shipped: %s. Fitted on all runs: %s (MAPE "
      "%.1f%%).\n",
      report.grid_points, kGemmFractionGridMin, kGemmFractionGridMax, kAttentionEfficiencyGridMin,
      kAttentionEfficiencyGridMax, kCalibrationGridStep, Constants(RateCalibration{}).c_str(),
      Constants(report.fitted_on_all).c_str(), 100 * report.fitted_on_all_mape);
  return out;
}

}  // namespace gpuplan

// Leave-one-source-out cross-validation of the constants calibrated on the published runs
// (`gpuplan accuracy --cross-validate`, docs/ACCURACY.md): how well the model predicts runs from a
// publication whose runs had no say in its constants.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "simulator/accuracy.h"
#include "simulator/gemm_time.h"

namespace gpuplan {

/// The grid the constants are refitted on: every sustained GEMM fraction from 0.50 to 1.00 and
/// every fused-attention relative efficiency from 0.20 to 0.80, both in steps of 0.01 (3,111
/// points). The ranges hold every value the sources allow (docs/METRICS.md: Megatron's per-layer
/// measurements imply 0.7-0.8 of the benchmark GEMM rate; FlashAttention-2's benchmark ~0.65).
inline constexpr double kCalibrationGridStep = 0.01;
inline constexpr double kGemmFractionGridMin = 0.50;
inline constexpr double kGemmFractionGridMax = 1.00;
inline constexpr double kAttentionEfficiencyGridMin = 0.20;
inline constexpr double kAttentionEfficiencyGridMax = 0.80;

/// One fold: a source's runs predicted with constants fitted on every other source.
struct CrossValidationFold {
  std::string source;             ///< the held-out publication
  RateCalibration fitted;         ///< least mean |error| over the other sources' runs
  SourceSummary in_sample;        ///< the held-out runs with the shipped constants
  SourceSummary cross_validated;  ///< the held-out runs with `fitted`
};

struct CrossValidationReport {
  int grid_points = 0;
  /// The grid's least mean |error| over all runs (what the shipped constants were chosen by;
  /// they may differ from it by a grid step or two, docs/ACCURACY.md).
  RateCalibration fitted_on_all;
  double fitted_on_all_mape = 0;
  std::vector<CrossValidationFold> folds;  ///< in order of the sources' first run
  SourceSummary in_sample;                 ///< every run, shipped constants
  SourceSummary cross_validated;           ///< every run, by the fold that held its source out
  /// Every run as its fold predicted it (error = cross-validated error), in input order.
  std::vector<RunComparison> runs;
};

/// Refits RateCalibration on the grid above, once per source with that source's runs left out,
/// and predicts the left-out runs with it. Fitting criterion: the mean absolute relative error of
/// tokens/s/GPU over the fitting runs (each run counts once, so a source with more runs weighs
/// more); ties go to the smaller constants. Invalid when the runs come from fewer than two
/// sources (nothing to hold out against).
Expected<CrossValidationReport> CrossValidatePublishedRuns(const std::vector<PublishedRun>& runs);

/// The per-source table: held-out source, runs, constants fitted without it, in-sample and
/// cross-validated MAPE, bias and worst run; then the same over all runs. `markdown` for
/// docs/ACCURACY.md, otherwise aligned text.
std::string FormatCrossValidation(const CrossValidationReport& report, bool markdown);

}  // namespace gpuplan

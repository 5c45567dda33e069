// Leave-one-model-out cross-validation of the training-stack constants calibrated on the layout
// sweep (`gpuplan accuracy --cross-validate`, docs/ACCURACY.md). The sweep is one source, so
// leaving its source out (simulator/cross_validation.h) would leave nothing to fit nanotron's
// CALIBRATED constants on; instead each model's rows (1B, 8B) are predicted with the constants
// refitted on the other models' rows, by the same selection rules that chose the shipped values.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/framework_spec.h"

namespace gpuplan {

class HardwareDb;
struct SweepRow;

/// The grid each constant is refitted on: 0 to its maximum in steps of 0.25 ms, the step the
/// shipped values were chosen on (frameworks.json sources).
inline constexpr double kSweepConstantGridStepSeconds = 0.25e-3;

/// One constant of the sweep's stack that is fitted on the sweep, and the rows that fit it.
/// Constants are fitted in table order, each with the ones before it already refitted; the rows
/// of one constant do not depend on the constants after it (pp 1 rows carry no pipelined floor,
/// rows with TP inside a node no cross-node TP cost), so one pass is the joint optimum.
struct SweepConstantRule {
  const char* name;                      ///< frameworks.json field, without its unit
  double FrameworkSpec::*seconds;        ///< the field it sets
  double grid_max_seconds;               ///< the grid's last value
  bool (*selects)(const SweepRow& row);  ///< rows that fit it (among those that ran)
  /// Leave out rows that ran with a stall (SweepStallSecondsPerMicroBatch >= kSweepStallSeconds),
  /// judged at the grid's last value so that the set does not move with the candidate.
  bool without_stalls;
  const char* rows_text;  ///< the selection in words (docs/ACCURACY.md)
};

/// host_ms_per_layer, pipeline_host_ms_per_tp_rank, tp_ms_per_inter_node_hop.
const std::vector<SweepConstantRule>& SweepConstantRules();

/// The constants of SweepConstantRules() as one point (seconds, in table order).
using SweepConstants = std::vector<double>;

/// One fold: a model's rows predicted with constants fitted on the other models' rows.
struct SweepFold {
  std::string model;          ///< the held-out model (the sweep's `model` column)
  SweepConstants fitted;      ///< on the other models' rows
  std::vector<int> fit_rows;  ///< rows each constant was fitted on
  int rows = 0;               ///< held-out rows that ran and gpuplan can express
  /// Median |error| and median signed error of tokens/s/GPU over those rows: with the shipped
  /// constants (in-sample), and with `fitted` (cross-validated).
  double in_sample_median_abs_error = 0;
  double cross_validated_median_abs_error = 0;
  double cross_validated_median_error = 0;
};

/// A held-out row and its cross-validated prediction (its fold's constants).
struct SweepHeldOutRow {
  const SweepRow* row = nullptr;  ///< into the rows given to CrossValidateSweepByModel
  double tokens_per_s_per_gpu = 0;
};

struct SweepCrossValidationReport {
  SweepConstants shipped;            ///< the stack's values (frameworks.json)
  SweepConstants fitted_on_all;      ///< the same rules over every model's rows
  std::vector<int> fit_rows_on_all;  ///< rows each constant of fitted_on_all was fitted on
  std::vector<SweepFold> folds;      ///< in order of each model's first row
  /// Every held-out row, fold by fold (the error bands' residuals, SweepBandResiduals); valid
  /// while the rows given to CrossValidateSweepByModel are.
  std::vector<SweepHeldOutRow> held_out;
  /// Every expressible row that ran: its in-sample and its cross-validated error.
  int rows = 0;
  double in_sample_median_abs_error = 0;
  double cross_validated_median_abs_error = 0;
  double cross_validated_median_error = 0;
};

/// Refits SweepConstantRules() once per model with that model's rows left out: each constant is
/// the grid value with the least median |log(predicted / measured)| of tokens/s/GPU over its
/// selected rows of the other models (ties to the smaller value). Invalid when the rows hold
/// fewer than two models, or a fold leaves a constant with no row to fit it on.
Expected<SweepCrossValidationReport> CrossValidateSweepByModel(const std::vector<SweepRow>& rows,
                                                               const HardwareDb& db);

/// The per-model table (held-out model, rows, constants fitted without it, in-sample and
/// cross-validated median |error|, cross-validated median error), the pooled line, and the rules.
/// `markdown` for docs/ACCURACY.md, otherwise aligned text.
std::string FormatSweepCrossValidation(const SweepCrossValidationReport& report, bool markdown);

}  // namespace gpuplan

// Predictions against published runs (hardware-db/calibration/published_runs.json): the error table
// that docs/ACCURACY.md shows and the calibration test asserts on.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"

namespace gpuplan {

struct RunComparison {
  std::string id;
  std::string source;    ///< the publication (first words of the run's "source")
  double measured = 0;   ///< tokens/s/GPU as published (derived_from says how)
  double predicted = 0;  ///< gpuplan's tokens/s/GPU
  double error = 0;      ///< (predicted - measured) / measured
  bool fits = false;     ///< memory model's verdict
};

struct SourceSummary {
  std::string source;
  int runs = 0;
  double mape = 0;        ///< mean |error|
  double mean_error = 0;  ///< signed mean (bias)
  double max_abs_error = 0;
};

struct AccuracyReport {
  std::vector<RunComparison> runs;
  std::vector<SourceSummary> by_source;  ///< in order of first appearance
  SourceSummary overall;
};

/// Parses and evaluates every run of a published_runs.json document. A run whose spec does not
/// parse is an error naming the run id.
Expected<AccuracyReport> CompareWithPublishedRuns(const nlohmann::json& runs_document,
                                                  const std::string& origin, const HardwareDb& db);

/// The report as Markdown: per-source summary table, then one row per run.
std::string FormatAccuracyMarkdown(const AccuracyReport& report);

}  // namespace gpuplan

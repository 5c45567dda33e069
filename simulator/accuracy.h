// Predictions against published runs (hardware-db/calibration/published_runs.json): the error table
// that docs/ACCURACY.md shows and the calibration test asserts on.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "simulator/gemm_time.h"
#include "simulator/job.h"

namespace gpuplan {

/// One run of a published_runs.json document, parsed: its job and what was measured.
struct PublishedRun {
  std::string id;
  std::string source;  ///< the publication (first words of the run's "source")
  JobSpec job;
  const GpuSpec* gpu = nullptr;      ///< the job's GPU, in the database it was parsed with
  const NetworkSpec* net = nullptr;  ///< the job's inter-node network, same
  double measured_tokens_per_s_per_gpu = 0;
};

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

/// The summary of relative errors (predicted - measured) / measured of one group of runs.
SourceSummary SummarizeErrors(const std::string& source, const std::vector<double>& errors);

struct AccuracyReport {
  std::vector<RunComparison> runs;
  std::vector<SourceSummary> by_source;  ///< in order of first appearance
  SourceSummary overall;
};

/// Parses every run of a published_runs.json document (format: hardware-db/calibration/
/// README.md). A run whose spec does not parse, or without a positive measured
/// tokens_per_s_per_gpu, is an error naming `origin` and the run id. The runs point into `db`,
/// which must outlive them.
Expected<std::vector<PublishedRun>> ParsePublishedRuns(const nlohmann::json& runs_document,
                                                       const std::string& origin,
                                                       const HardwareDb& db);

/// Predicts every run with datasheet rates under `calibration` (EvaluateStep) and compares.
AccuracyReport EvaluatePublishedRuns(const std::vector<PublishedRun>& runs,
                                     const RateCalibration& calibration = {});

/// ParsePublishedRuns, then EvaluatePublishedRuns with the shipped constants.
Expected<AccuracyReport> CompareWithPublishedRuns(const nlohmann::json& runs_document,
                                                  const std::string& origin, const HardwareDb& db);

/// The report as Markdown: per-source summary table, then one row per run.
std::string FormatAccuracyMarkdown(const AccuracyReport& report);

}  // namespace gpuplan

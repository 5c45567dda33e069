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
  /// The published peak memory of the most loaded GPU, GiB (2^30 bytes); 0 when not published.
  double measured_peak_memory_gib = 0;
};

struct RunComparison {
  std::string id;
  std::string source;             ///< the publication (first words of the run's "source")
  double measured = 0;            ///< tokens/s/GPU as published (derived_from says how)
  double predicted = 0;           ///< gpuplan's tokens/s/GPU
  double error = 0;               ///< (predicted - measured) / measured
  bool fits = false;              ///< memory model's verdict
  bool fits_with_margin = false;  ///< it fits with kDefaultMemoryMargin of the GPU left free
  bool stack_runs = false;        ///< the run's stack accepts the layout (StackRunsLayout)
  /// Peak memory, GiB, when the run publishes one (0 otherwise): measured (PublishedRun::
  /// measured_peak_memory_gib) and predicted (the most loaded stage's peak less what PyTorch's
  /// allocator counters do not see, BytesOutsideAllocator).
  double measured_memory_gib = 0;
  double predicted_memory_gib = 0;
  bool HasMemory() const { return measured_memory_gib > 0; }
  /// (predicted - measured) / measured peak memory; 0 without a published peak.
  double MemoryError() const {
    return HasMemory() ? (predicted_memory_gib - measured_memory_gib) / measured_memory_gib : 0;
  }
  /// Predicted to run at all: it fits and the stack accepts it.
  bool PredictedToRun() const { return fits && stack_runs; }
  /// The planner would consider the layout: it runs with the planner's memory margin.
  bool PlannerWouldPick() const { return fits_with_margin && stack_runs; }
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

/// Runs of one job in different layouts: the same model, GPU type and count, sequence length,
/// global batch and precision. Does the cost model rank them as measured, and would the planner
/// have picked a fast one (the layout sweep's metrics, docs/ACCURACY.md)?
struct JobLayouts {
  std::string label;         ///< "GPT 39.1B (vTrain), 512 x a100-sxm4-80gb, seq 2048, batch 1536"
  std::vector<size_t> runs;  ///< indices into AccuracyReport::runs
  /// Spearman of predicted vs measured tokens/s/GPU, a run predicted not to run
  /// (RunComparison::PredictedToRun) counting as predicted 0 (last); NaN when undefined.
  double spearman = 0;
  /// Index of the fastest predicted run the planner would pick (RunComparison::
  /// PlannerWouldPick); -1 when it would pick none.
  int pick = -1;
  int best = -1;  ///< index of the run measured fastest
  /// The pick's measured tokens/s/GPU over the best's: 1 when the planner picks the best.
  double PickShareOfBest(const std::vector<RunComparison>& all) const;
};

/// A job needs at least this many layouts to be a JobLayouts.
inline constexpr size_t kMinJobLayoutsRuns = 3;

struct AccuracyReport {
  std::vector<RunComparison> runs;
  std::vector<SourceSummary> by_source;  ///< in order of first appearance
  SourceSummary overall;
  /// Relative errors of the predicted peak memory over the runs that publish one (runs == 0 when
  /// none does).
  SourceSummary memory;
  /// Jobs with at least kMinJobLayoutsRuns runs, in order of first appearance.
  std::vector<JobLayouts> layout_groups;
};

/// Parses every run of a published_runs.json document (format: hardware-db/calibration/
/// README.md). A run whose spec does not parse, or without a positive measured
/// tokens_per_s_per_gpu, is an error naming `origin` and the run id. The runs point into `db`,
/// which must outlive them.
Expected<std::vector<PublishedRun>> ParsePublishedRuns(const nlohmann::json& runs_document,
                                                       const std::string& origin,
                                                       const HardwareDb& db);

/// Reads and parses a published_runs.json file (errors name the path).
Expected<std::vector<PublishedRun>> ReadPublishedRunsFile(const std::string& path,
                                                          const HardwareDb& db);

/// Predicts every run with datasheet rates under `calibration` (EvaluateStep) and compares.
AccuracyReport EvaluatePublishedRuns(const std::vector<PublishedRun>& runs,
                                     const RateCalibration& calibration = {});

/// ParsePublishedRuns, then EvaluatePublishedRuns with the shipped constants.
Expected<AccuracyReport> CompareWithPublishedRuns(const nlohmann::json& runs_document,
                                                  const std::string& origin, const HardwareDb& db);

/// The report as Markdown: per-source summary table, the layout groups (when there are any),
/// then one row per run (with the peak memory when a run publishes one).
std::string FormatAccuracyMarkdown(const AccuracyReport& report);

/// The report as plain text: one line per source and one for all runs, one for peak memory (when
/// a run publishes it), then one per layout group (when there are any).
std::string FormatAccuracyTable(const AccuracyReport& report);

}  // namespace gpuplan

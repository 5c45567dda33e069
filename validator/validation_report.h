// The validation report: a plan's predicted step against the measured one, written by
// `gpuplan validate` (JSON and Markdown) and read by `gpuplan calibrate`. Format in
// docs/VALIDATION.md.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "simulator/cost_model.h"
#include "simulator/job.h"

namespace gpuplan {

inline constexpr const char* kValidationReportFormat = "gpuplan-validation";
inline constexpr int kValidationReportVersion = 1;

/// How close a prediction must come to the measurement, as |error| fractions.
struct ValidationTargets {
  double step_time = 0;
  double peak_memory = 0;
};

/// On GPUs (issue 6): step time within 10 %, peak memory within 5 %. On the CPU backend
/// (cluster.gpu "cpu"; issue 19): 25 % and 10 %, its ranks sharing a small, noisy host.
ValidationTargets TargetsFor(const JobSpec& job);

/// How the plan was executed.
enum class ValidationMode {
  kFull,        ///< every rank ran on its own GPU with real collectives
  kRankReplay,  ///< one rank's work ran on a local GPU; its communication took the modelled time
};

/// Seconds per step of each part of the step (TimeBreakdown's fields), predicted and measured.
struct PhaseTimes {
  TimeBreakdown predicted;
  TimeBreakdown measured;
};

struct ValidationReport {
  std::string created_utc;
  std::string tool;
  std::string host;
  std::string device;   ///< GPU name as CUDA reports it
  std::string profile;  ///< profile the prediction used; "" = datasheet rates
  ValidationMode mode = ValidationMode::kFull;
  int64_t replayed_rank = -1;  ///< kRankReplay: the rank whose work ran
  JobSpec job;
  int64_t warmup_steps = 0;
  std::vector<double> step_seconds;  ///< every measured step
  double predicted_step_s = 0;
  double predicted_peak_memory_bytes = 0;
  double measured_peak_memory_bytes = 0;  ///< cudaMemGetInfo / allocator peak on the busiest GPU
  PhaseTimes phases;
  std::vector<std::string> notes;

  double MeasuredStepSeconds() const;  ///< median of step_seconds
  double StepError() const;            ///< (predicted - measured) / measured
  double MemoryError() const;          ///< (predicted - measured) / measured
  /// Both errors within TargetsFor(job).
  bool MeetsTargets() const;
};

std::string_view ValidationModeName(ValidationMode mode);  ///< "full", "rank_replay"

nlohmann::json ValidationReportToJson(const ValidationReport& report);
/// Validates every field; the job is checked against `db` like a job spec.
Expected<ValidationReport> ValidationReportFromJson(const nlohmann::json& json,
                                                    const std::string& origin,
                                                    const HardwareDb& db);
Expected<ValidationReport> ReadValidationReport(const std::string& path, const HardwareDb& db);

/// Markdown: the plan, predicted vs measured step time and peak memory with errors against the
/// targets, the phase table, the measured steps and notes.
std::string ValidationReportMarkdown(const ValidationReport& report);

}  // namespace gpuplan

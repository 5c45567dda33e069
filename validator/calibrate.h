// `gpuplan calibrate`: fit a profile's correction factors to validation reports so that the next
// prediction on that hardware is closer, and show each report's error before and after.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "profiler/profile.h"
#include "validator/validation_report.h"

namespace gpuplan {

/// One report re-predicted with the profile before and after the new corrections.
struct CalibrationRow {
  std::string report;
  double measured_s = 0;
  double before_s = 0;
  double after_s = 0;
};

struct CalibrationResult {
  ProfileCorrections corrections;  ///< the profile's corrections after calibration
  std::vector<CalibrationRow> rows;
  int compute_reports = 0;        ///< reports the compute factor was fitted to
  int communication_reports = 0;  ///< full runs with communication, for the communication factor
  /// Root-mean-square relative step-time error over the reports, before and after the
  /// corrections.
  double rms_error_before = 0;
  double rms_error_after = 0;
  /// What the corrections may not carry over to: set when the compute factor is below 1 and no
  /// report measured communication beside its compute (rank replays, runs without collectives).
  /// The sustained-in-training fraction the prediction applies (kSustainedGemmFraction) is fitted
  /// on multi-GPU runs, which lose it to NCCL kernels and power limits; one H200 running alone
  /// did not (docs/VALIDATION.md), so such a factor can make plans of many GPUs too fast.
  std::string caveat;
  /// The corrections predict the reports better (rms_error_after <= rms_error_before): only then
  /// should they be written.
  bool Improves() const { return rms_error_after <= rms_error_before; }
};

/// Re-predicts each report's job with `profile` as it stands, then multiplies its compute factor
/// by sum(measured compute) / sum(predicted compute) over all reports, and its communication
/// factor by sum(measured) / sum(predicted) of the communication phases (tp, cp, ep, pp, dp)
/// over full runs. Rank replays leave the communication factor alone: their communication was
/// modelled, not measured. Ratio of sums: the least-squares scale of measured on predicted,
/// weighted by time. kInvalidInput when a report ran on another GPU than the profile calibrates,
/// or no report has a measured compute phase.
Expected<CalibrationResult> CalibrateWithReports(const Profile& profile,
                                                 std::span<const ValidationReport> reports,
                                                 std::span<const std::string> names,
                                                 const HardwareDb& db);

/// Table: report, measured, predicted before and after, errors; then the factors.
std::string FormatCalibration(const CalibrationResult& result);

}  // namespace gpuplan

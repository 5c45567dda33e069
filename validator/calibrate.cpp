#include "validator/calibrate.h"

#include <algorithm>
#include <cmath>

#include "common/str_format.h"
#include "profiler/profile_rates.h"
#include "simulator/cost_model.h"
#include "simulator/gemm_time.h"
#include "validator/executed_job.h"

namespace gpuplan {
namespace {

double Communication(const TimeBreakdown& t) {
  return t.tp_comm + t.cp_comm + t.ep_comm + t.pp_comm + t.dp_comm;
}

// The report's job, as the executor ran it (ExecutedJob: a report written before 2026-12-01
// holds the plan's job, overlaps on), predicted with `rates`.
StepResult Predict(const MeasuredRates& rates, const ValidationReport& r, const HardwareDb& db) {
  const GpuSpec& gpu = *db.FindGpu(r.job.cluster.gpu);
  const NetworkSpec& net = *db.FindNetwork(r.job.cluster.inter_node);
  return EvaluateStep(ExecutedJob(r.job), gpu, net, &rates);
}

}  // namespace

Expected<CalibrationResult> CalibrateWithReports(const Profile& profile,
                                                 std::span<const ValidationReport> reports,
                                                 std::span<const std::string> names,
                                                 const HardwareDb& db) {
  Expected<ProfileCalibration> cal =
      CalibrateFromProfile(profile, db, "profile", ProfileUse::kGpuplanExecutor);
  if (!cal.ok()) return cal.status();
  CalibrationResult out;
  double compute_measured = 0, compute_predicted = 0, comm_measured = 0, comm_predicted = 0;
  std::vector<double> before;
  for (size_t i = 0; i < reports.size(); ++i) {
    const ValidationReport& r = reports[i];
    if (r.job.cluster.gpu != profile.gpu_id) {
      return Status::Invalid(names[i] + ": ran on " + r.job.cluster.gpu + ", but the profile " +
                             "calibrates " + profile.gpu_id);
    }
    const StepResult p = Predict(cal->rates, r, db);
    before.push_back(p.step_time_s);
    if (r.phases.measured.compute > 0) {
      compute_measured += r.phases.measured.compute;
      compute_predicted += p.breakdown_s.compute;
      ++out.compute_reports;
    }
    const double comm = Communication(r.phases.measured);
    if (r.mode == ValidationMode::kFull && comm > 0 && Communication(p.breakdown_s) > 0) {
      comm_measured += comm;
      comm_predicted += Communication(p.breakdown_s);
      ++out.communication_reports;
    }
  }
  if (out.compute_reports == 0) {
    return Status::Invalid(
        "calibrate: no report has a measured compute phase "
        "(measured.phases.compute)");
  }
  out.corrections = profile.corrections;
  const double compute_factor = compute_measured / compute_predicted;
  out.corrections.compute_time_factor *= compute_factor;
  if (compute_factor < 1 && out.communication_reports == 0) {
    // CalibrateFromProfile above has checked that the profile's GPU is in db.
    const double sustained = SustainedGemmFraction(*db.FindGpu(profile.gpu_id));
    if (sustained < 1) {
      out.caveat = StrFormat(
          "no report measured communication beside its compute (rank replays or runs without "
          "collectives): compute x %.3f takes back some of the sustained-in-training fraction "
          "(%.2f) that multi-GPU runs lose to NCCL kernels and power limits, so plans of many "
          "GPUs with this profile may be up to %.0f%% too fast; calibrate with full runs of the "
          "plan's kind",
          compute_factor, sustained, 100.0 * (1.0 / std::max(compute_factor, sustained) - 1.0));
    }
  }
  if (out.communication_reports > 0)
    out.corrections.communication_time_factor *= comm_measured / comm_predicted;
  for (const std::string& n : names) out.corrections.reports.push_back(n);

  MeasuredRates after = cal->rates;
  after.compute_time_factor = out.corrections.compute_time_factor;
  after.communication_time_factor = out.corrections.communication_time_factor;
  double before_sq = 0, after_sq = 0;
  for (size_t i = 0; i < reports.size(); ++i) {
    const CalibrationRow row{names[i], reports[i].MeasuredStepSeconds(), before[i],
                             Predict(after, reports[i], db).step_time_s};
    before_sq += std::pow((row.before_s - row.measured_s) / row.measured_s, 2);
    after_sq += std::pow((row.after_s - row.measured_s) / row.measured_s, 2);
    out.rows.push_back(row);
  }
  const double n = static_cast<double>(reports.size());
  out.rms_error_before = std::sqrt(before_sq / n);
  out.rms_error_after = std::sqrt(after_sq / n);
  return out;
}

std::string FormatCalibration(const CalibrationResult& c) {
  std::string out =
      "  report                              measured   before   error    after   error\n";
  for (const CalibrationRow& r : c.rows) {
    const double eb = (r.before_s - r.measured_s) / r.measured_s;
    const double ea = (r.after_s - r.measured_s) / r.measured_s;
    out += StrFormat("  %-34s %8.4f %8.4f %+6.1f%% %8.4f %+6.1f%%\n", r.report.c_str(),
                     r.measured_s, r.before_s, 100 * eb, r.after_s, 100 * ea);
  }
  out += StrFormat("  rms step-time error: %.1f%% before, %.1f%% after\n", 100 * c.rms_error_before,
                   100 * c.rms_error_after);
  out += StrFormat("  corrections: compute x %.3f (%d %s), communication x %.3f (%d full %s)\n",
                   c.corrections.compute_time_factor, c.compute_reports,
                   Noun(c.compute_reports, "report", "reports").c_str(),
                   c.corrections.communication_time_factor, c.communication_reports,
                   Noun(c.communication_reports, "run", "runs").c_str());
  if (!c.caveat.empty()) out += "  caveat: " + c.caveat + "\n";
  return out;
}

}  // namespace gpuplan

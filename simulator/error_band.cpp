#include "simulator/error_band.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "common/json_reader.h"
#include "common/median.h"
#include "common/str_format.h"
#include "hardware-db/hardware_db.h"
#include "simulator/accuracy.h"
#include "simulator/cross_validation.h"
#include "simulator/job.h"
#include "simulator/layout_sweep.h"
#include "simulator/sweep_cross_validation.h"

namespace gpuplan {
namespace {

// Ratios are kept in the file and in BandResidual between these bounds (a run measured 100x off
// is a data error, not a residual).
constexpr double kMinRatio = 0.01;
constexpr double kMaxRatio = 100;

struct Spread {
  double centre = 0;  ///< median of the logs
  /// Scale below and above the centre: 1.4826 x median absolute deviation on both sides, or,
  /// from kMinQuantileBandRuns runs, each side's from its empirical quantile (SpreadOf).
  double sigma_low = 0, sigma_high = 0;
  int n = 0;
};

// The `p` quantile of sorted `v` (not empty), linear between order statistics (Hyndman & Fan
// type 7, the default of R and NumPy).
double SortedQuantile(const std::vector<double>& v, double p) {
  const double i = p * static_cast<double>(v.size() - 1);
  const size_t k = static_cast<size_t>(i);
  if (k + 1 >= v.size()) return v.back();
  const double f = i - static_cast<double>(k);
  return v[k] * (1 - f) + v[k + 1] * f;
}

Spread SpreadOf(const std::vector<double>& logs) {
  Spread s;
  s.n = static_cast<int>(logs.size());
  s.centre = Median(logs);
  if (s.n >= kMinQuantileBandRuns) {
    // Each side's scale puts that end of the unwidened band on the class's own quantile.
    std::vector<double> sorted = logs;
    std::sort(sorted.begin(), sorted.end());
    const double t = StudentTQuantile(0.5 + kBandCentralShare / 2, s.n - 1);
    s.sigma_low = (s.centre - SortedQuantile(sorted, 0.5 - kBandCentralShare / 2)) / t;
    s.sigma_high = (SortedQuantile(sorted, 0.5 + kBandCentralShare / 2) - s.centre) / t;
    return s;
  }
  std::vector<double> deviations;
  for (double x : logs) deviations.push_back(std::abs(x - s.centre));
  s.sigma_low = s.sigma_high = 1.4826 * Median(deviations);
  return s;
}

// The residuals a predicate selects: their log ratios and the publications they come from.
struct Selection {
  std::vector<double> logs;
  std::vector<std::string> sources;  ///< distinct, in order of first appearance
  int sweep_rows = 0;                ///< of the logs, rows of the layout sweep
};

// Candidate runs band no class and count in no pool (BandResidual::candidate).
template <typename Pred>
Selection Select(std::span<const BandResidual> residuals, Pred keep) {
  Selection s;
  for (const BandResidual& r : residuals) {
    if (r.candidate || !keep(r)) continue;
    s.logs.push_back(std::log(r.step_time_ratio));
    if (!r.sweep_model.empty()) ++s.sweep_rows;
    if (std::find(s.sources.begin(), s.sources.end(), r.source) == s.sources.end()) {
      s.sources.push_back(r.source);
    }
  }
  return s;
}

bool Published(const BandResidual& r) { return r.sweep_model.empty() && !r.candidate; }

// Standard deviation of the median log ratio of each publication with >= kMinBandRuns runs
// (0 when fewer than two publications have that many); published runs only.
double BetweenSourceSpread(std::span<const BandResidual> residuals) {
  const std::vector<std::string> sources = Select(residuals, Published).sources;
  std::vector<double> medians;
  for (const std::string& source : sources) {
    const std::vector<double> logs =
        Select(residuals, [&](const BandResidual& r) { return r.source == source; }).logs;
    if (static_cast<int>(logs.size()) >= kMinBandRuns) medians.push_back(Median(logs));
  }
  if (medians.size() < 2) return 0;
  double mean = 0;
  for (double m : medians) mean += m;
  mean /= static_cast<double>(medians.size());
  double ss = 0;
  for (double m : medians) ss += (m - mean) * (m - mean);
  return std::sqrt(ss / static_cast<double>(medians.size() - 1));
}

// Standard normal quantile, Acklam's algorithm (P. J. Acklam, "An algorithm for computing the
// inverse normal cumulative distribution function", 2003): rational approximations in the
// central region and the tails.
double NormalQuantile(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
                                 -2.759285104469687e+02, 1.383577518672690e+02,
                                 -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
                                 -1.556989798598866e+02, 6.680131188771972e+01,
                                 -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
                                 -2.400758277161838e+00, -2.549732539343734e+00,
                                 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
                                 2.445134137142996e+00, 3.754408661907416e+00};
  constexpr double kLow = 0.02425;
  if (p < kLow) {
    const double q = std::sqrt(-2 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
  }
  if (p > 1 - kLow) return -NormalQuantile(1 - p);
  const double q = p - 0.5, r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
}

ErrorBand Band(const Spread& s, double extra_sigma, std::string basis, bool validated,
               int publications) {
  const double n = s.n;
  ErrorBand band;
  band.publications = publications;
  band.log_centre = s.centre;
  auto widened = [&](double sigma) {
    return std::sqrt(sigma * sigma * (1 + 1 / n) + extra_sigma * extra_sigma);
  };
  band.log_scale_low = widened(s.sigma_low);
  band.log_scale_high = widened(s.sigma_high);
  band.df = std::max(1.0, n - 1);
  band.low_factor = band.Factor(0.5 - kBandCentralShare / 2);
  band.high_factor = band.Factor(0.5 + kBandCentralShare / 2);
  band.runs = s.n;
  band.basis = std::move(basis);
  band.validated = validated;
  return band;
}

// An MoE job's untested band, widened so that its 10% and 90% ends hold at least the middle 80%
// of the candidate MoE runs (BandFor): each side's scale raised to put its end on the candidates'
// own quantile when the band's end falls short of it.
void WidenToCandidateMoeRuns(std::span<const BandResidual> residuals, ErrorBand& band) {
  std::vector<double> logs;
  for (const BandResidual& r : residuals) {
    if (r.candidate && r.moe) logs.push_back(std::log(r.step_time_ratio));
  }
  if (static_cast<int>(logs.size()) < kMinBandRuns) return;
  std::sort(logs.begin(), logs.end());
  const double q_low = SortedQuantile(logs, 0.5 - kBandCentralShare / 2);
  const double q_high = SortedQuantile(logs, 0.5 + kBandCentralShare / 2);
  const double t = StudentTQuantile(0.5 + kBandCentralShare / 2, band.df);
  band.log_scale_low = std::max(band.log_scale_low, (band.log_centre - q_low) / t);
  band.log_scale_high = std::max(band.log_scale_high, (q_high - band.log_centre) / t);
  band.low_factor = band.Factor(0.5 - kBandCentralShare / 2);
  band.high_factor = band.Factor(0.5 + kBandCentralShare / 2);
  band.moe_candidate_runs = static_cast<int>(logs.size());
  band.moe_candidate_low_factor = std::exp(q_low);
  band.moe_candidate_high_factor = std::exp(q_high);
}

// A run's residual from its relative tokens/s error, (predicted - measured) / measured.
BandResidual ResidualOfRun(const PublishedRun& run, double error) {
  BandResidual r;
  r.id = run.id;
  r.source = run.source;
  r.stack = BandStack(run.job);
  r.architecture = run.gpu->architecture;
  r.num_gpus = run.job.cluster.num_gpus;
  r.moe = run.job.model.is_moe();
  r.step_time_ratio = std::clamp(1 + error, kMinRatio, kMaxRatio);
  return r;
}

}  // namespace

double StudentTQuantile(double p, double df) {
  const double z = NormalQuantile(p);
  const double z3 = z * z * z, z5 = z3 * z * z;
  return z + (z3 + z) / (4 * df) + (5 * z5 + 16 * z3 + 3 * z) / (96 * df * df);
}

double ErrorBand::Factor(double quantile) const {
  const double t = StudentTQuantile(quantile, df);
  return std::exp(log_centre + (t < 0 ? log_scale_low : log_scale_high) * t);
}

std::string DescribeBand(const ErrorBand& band) {
  // What the residuals are: published runs, rows of the measured layout sweep, or both.
  const int published = band.runs - band.sweep_rows;
  const std::string sweep = std::to_string(band.sweep_rows) + " rows of the layout sweep";
  const std::string counted = band.sweep_rows == 0 ? std::to_string(band.runs) + " published runs"
                              : published == 0
                                  ? sweep
                                  : std::to_string(published) + " published runs and " + sweep;
  std::string out = band.validated ? counted + " of " + band.basis + ", cross-validated"
                                   : "WIDE, no published run of this class: widened from " +
                                         counted + " of " + band.basis + " in other classes";
  if (band.validated && band.publications < kMinBandPublications) {
    out += ", all from one publication: widened by the spread between publications";
  }
  // The median run's bias, when it is large enough to move the band off the point estimate.
  const double median_ratio = std::exp(band.log_centre);
  if (median_ratio < 0.95 || median_ratio > 1.05) {
    out += StrFormat("; their median ran %.0f%% %s than predicted",
                     100 * std::abs(1 / median_ratio - 1), median_ratio < 1 ? "faster" : "slower");
  }
  if (band.moe_candidate_runs > 0) {
    out += StrFormat(
        "; widened to %d MoE candidate runs, whose middle %.0f%% ran %.2f-%.2fx the predicted "
        "step time",
        band.moe_candidate_runs, 100 * kBandCentralShare, band.moe_candidate_low_factor,
        band.moe_candidate_high_factor);
  }
  return out;
}

std::string ScaleBandName(int64_t num_gpus) {
  if (num_gpus <= 64) return "<= 64 GPUs";
  if (num_gpus <= 512) return "65-512 GPUs";
  return "> 512 GPUs";
}

std::string BandStack(const JobSpec& job) {
  const bool sharded = job.parallel.zero_stage == 3 || job.parallel.fsdp;
  return job.training.framework.id + (sharded ? " FSDP/ZeRO-3" : "");
}

ErrorBand BandFor(std::span<const BandResidual> residuals, const std::string& stack,
                  const std::string& architecture, int64_t num_gpus, bool moe) {
  const std::string scale = ScaleBandName(num_gpus);
  const double tau = BetweenSourceSpread(residuals);
  // A class's own band is widened by tau when one publication's runs make it up (its centre is
  // that publication's bias), an untested class's always.
  auto band_of = [&](const Selection& c, std::string basis, bool validated) {
    const int publications = static_cast<int>(c.sources.size());
    const bool widen = !validated || publications < kMinBandPublications;
    ErrorBand band =
        Band(SpreadOf(c.logs), widen ? tau : 0, std::move(basis), validated, publications);
    band.sweep_rows = c.sweep_rows;
    return band;
  };
  const std::string kind = stack + (moe ? " MoE" : "");
  const Selection fine = Select(residuals, [&](const BandResidual& r) {
    return r.stack == stack && r.moe == moe && r.architecture == architecture &&
           ScaleBandName(r.num_gpus) == scale;
  });
  if (static_cast<int>(fine.logs.size()) >= kMinBandRuns) {
    return band_of(fine, kind + ", " + architecture + ", " + scale, true);
  }
  const Selection coarse = Select(residuals, [&](const BandResidual& r) {
    return r.stack == stack && r.moe == moe && r.architecture == architecture;
  });
  if (static_cast<int>(coarse.logs.size()) >= kMinBandRuns) {
    return band_of(coarse, kind + ", " + architecture + ", any scale", true);
  }
  // Untested: the stack's runs of either kind, saying when none is of the job's kind.
  const Selection of_stack =
      Select(residuals, [&](const BandResidual& r) { return r.stack == stack; });
  const bool any_moe = std::any_of(residuals.begin(), residuals.end(), [&](const BandResidual& r) {
    return r.stack == stack && r.moe && !r.candidate;
  });
  ErrorBand band =
      of_stack.logs.empty()
          ? band_of(Select(residuals, Published), "all stacks", false)
          : band_of(of_stack, stack + (moe && !any_moe ? " (dense models only)" : ""), false);
  if (moe) WidenToCandidateMoeRuns(residuals, band);
  return band;
}

std::vector<BandResidual> CandidateMoeBandResiduals(const std::vector<PublishedRun>& runs) {
  const AccuracyReport report = EvaluatePublishedRuns(runs);
  std::vector<BandResidual> out;
  for (size_t i = 0; i < runs.size() && i < report.runs.size(); ++i) {
    if (!runs[i].job.model.is_moe()) continue;
    out.push_back(ResidualOfRun(runs[i], report.runs[i].error));
    out.back().candidate = true;
  }
  return out;
}

std::vector<BandResidual> BandResiduals(const CrossValidationReport& report,
                                        const std::vector<PublishedRun>& runs) {
  std::vector<BandResidual> out;
  for (size_t i = 0; i < runs.size() && i < report.runs.size(); ++i) {
    out.push_back(ResidualOfRun(runs[i], report.runs[i].error));
  }
  return out;
}

std::vector<BandResidual> SweepBandResiduals(const SweepCrossValidationReport& report,
                                             const HardwareDb& db) {
  std::vector<BandResidual> out;
  for (const SweepHeldOutRow& held : report.held_out) {
    const SweepRow& row = *held.row;
    BandResidual r;
    r.id = StrFormat("sweep line %d", row.line);
    r.source = kSweepBandSource;
    r.stack = BandStack(row.job);
    r.architecture = db.FindGpu(row.job.cluster.gpu)->architecture;
    r.num_gpus = row.job.cluster.num_gpus;
    r.moe = row.job.model.is_moe();
    r.step_time_ratio = std::clamp(held.tokens_per_s_per_gpu / row.measured_tokens_per_s_per_gpu,
                                   kMinRatio, kMaxRatio);
    r.sweep_model = row.model;
    out.push_back(std::move(r));
  }
  return out;
}

BandCoverage CrossValidatedBandCoverage(std::span<const BandResidual> residuals) {
  BandCoverage c;
  std::map<std::pair<bool, std::string>, std::vector<BandResidual>> others_of_fold;
  for (const BandResidual& r : residuals) {
    if (r.candidate) continue;  // not cross-validated: it only widens MoE bands
    // A published run's fold leaves its publication out, a sweep row's its model's rows.
    const bool sweep = !Published(r);
    auto& table = sweep ? c.sweep_by_model : c.by_source;
    const std::string& key = sweep ? r.sweep_model : r.source;
    auto it =
        std::find_if(table.begin(), table.end(), [&](const auto& s) { return s.first == key; });
    if (it == table.end()) {
      table.push_back({key, {0, 0}});
      it = table.end() - 1;
    }
    // Every residual outside the fold, gathered once per fold.
    std::vector<BandResidual>& others = others_of_fold[{sweep, key}];
    if (others.empty()) {
      for (const BandResidual& o : residuals) {
        if (sweep ? o.sweep_model != r.sweep_model : o.source != r.source) others.push_back(o);
      }
    }
    if (std::none_of(others.begin(), others.end(), Published)) continue;
    const ErrorBand band = BandFor(others, r.stack, r.architecture, r.num_gpus, r.moe);
    const bool inside =
        r.step_time_ratio >= band.low_factor && r.step_time_ratio <= band.high_factor;
    it->second.second += 1;
    it->second.first += inside ? 1 : 0;
    if (sweep) continue;
    c.runs += 1;
    c.covered += inside ? 1 : 0;
    if (!band.validated) {
      c.untested_runs += 1;
      c.untested_covered += inside ? 1 : 0;
    }
  }
  return c;
}

std::string FormatBandCoverage(const BandCoverage& c, bool markdown) {
  std::string out =
      markdown
          ? "| runs of | runs | inside their 80% band | coverage |\n|---|---:|---:|---:|\n"
          : StrFormat("\n%-40s %5s %8s %9s\n", "80% bands: runs of", "runs", "inside", "coverage");
  auto row = [&](const std::string& label, int covered, int runs) {
    const double share = runs > 0 ? 100.0 * covered / runs : 0.0;
    out += markdown ? StrFormat("| %s | %d | %d | %.1f%% |\n", label.c_str(), runs, covered, share)
                    : StrFormat("%-40.40s %5d %8d %8.1f%%\n", label.c_str(), runs, covered, share);
  };
  for (const auto& [source, counts] : c.by_source) row(source, counts.first, counts.second);
  row("untested classes (no class of their own)", c.untested_covered, c.untested_runs);
  row("all runs", c.covered, c.runs);
  for (const auto& [model, counts] : c.sweep_by_model) {
    row(std::string(kSweepBandSource) + ", " + model, counts.first, counts.second);
  }
  out +=
      "\nEach publication's runs against bands built from the other publications' residuals "
      "(simulator/error_band.h); a calibrated 80% band holds 75-85% of them.";
  if (!c.sweep_by_model.empty()) {
    out +=
        " The layout sweep's rows (not in 'all runs'), each model's against bands built "
        "without that model's rows.";
  }
  out += "\n";
  return out;
}

std::string FormatBandResidualsJson(std::span<const BandResidual> residuals) {
  std::string out =
      "{\n  \"about\": \"Cross-validated residuals of the published runs (published_runs.json): "
      "each run's measured / predicted step time with the two calibrated constants refitted "
      "without its publication; then those of the layout sweep's rows that ran "
      "(ultrascale_sweep.csv, sweep_model set), each with nanotron's sweep-fitted constants "
      "refitted without its model's rows; last the mixture-of-experts runs of "
      "candidate_runs.json (candidate set), predicted with the shipped constants, which only "
      "widen the band of an MoE job no class covers. Written by gpuplan accuracy --cross-validate "
      "--residuals; the test Calibration.LeaveOneSourceOut checks it against the program. Error "
      "bands are built from it (docs/ACCURACY.md, Error bands).\",\n  \"runs\": [\n";
  for (size_t i = 0; i < residuals.size(); ++i) {
    const BandResidual& r = residuals[i];
    out += StrFormat(
        "    {\"id\": %s, \"source\": %s, \"stack\": %s, \"architecture\": %s, "
        "\"num_gpus\": %lld, \"moe\": %s, \"step_time_ratio\": %.4f%s%s}%s\n",
        nlohmann::json(r.id).dump().c_str(), nlohmann::json(r.source).dump().c_str(),
        nlohmann::json(r.stack).dump().c_str(), nlohmann::json(r.architecture).dump().c_str(),
        static_cast<long long>(r.num_gpus), r.moe ? "true" : "false", r.step_time_ratio,
        r.sweep_model.empty()
            ? ""
            : (", \"sweep_model\": " + nlohmann::json(r.sweep_model).dump()).c_str(),
        r.candidate ? ", \"candidate\": true" : "", i + 1 < residuals.size() ? "," : "");
  }
  out += "  ]\n}\n";
  return out;
}

Expected<std::vector<BandResidual>> ReadBandResidualsFile(const std::string& path) {
  Expected<nlohmann::json> doc = ReadJsonFile(path);
  if (!doc.ok()) return doc.status();
  if (!doc->is_object() || !doc->contains("runs") || !(*doc)["runs"].is_array() ||
      (*doc)["runs"].empty()) {
    return Status::Invalid(path + ": expected an object with a non-empty 'runs' array");
  }
  std::vector<BandResidual> out;
  const nlohmann::json& runs = (*doc)["runs"];
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string context = path + ": runs[" + std::to_string(i) + "]";
    if (!runs[i].is_object()) return Status::Invalid(context + ": must be an object");
    JsonObjectReader reader(runs[i], context);
    reader.RejectUnknownFields({"id", "source", "stack", "architecture", "num_gpus", "moe",
                                "step_time_ratio", "sweep_model", "candidate"});
    BandResidual r;
    r.id = reader.String("id");
    r.source = reader.String("source");
    r.stack = reader.String("stack");
    r.architecture = reader.String("architecture");
    r.num_gpus = reader.PositiveInt("num_gpus");
    r.moe = reader.OptionalBool("moe", false);
    r.step_time_ratio = reader.ScaledNumber("step_time_ratio", 1.0, kMinRatio, kMaxRatio);
    if (runs[i].contains("sweep_model")) r.sweep_model = reader.String("sweep_model");
    r.candidate = reader.OptionalBool("candidate", false);
    if (!reader.status().ok()) return reader.status();
    if (runs[i].contains("sweep_model") && r.sweep_model.empty()) {
      return Status::Invalid(context + ": field 'sweep_model': must not be empty");
    }
    if (r.candidate && (!r.moe || !r.sweep_model.empty())) {
      return Status::Invalid(context +
                             ": field 'candidate': only a mixture-of-experts run ('moe' true) "
                             "without 'sweep_model' may be a candidate");
    }
    out.push_back(std::move(r));
  }
  if (std::none_of(out.begin(), out.end(), Published)) {
    return Status::Invalid(path + ": 'runs' holds no published run (every entry has sweep_model)");
  }
  return out;
}

std::string BuiltinBandResidualsPath() { return BuiltinCalibrationDir() + "/cv_residuals.json"; }

std::string BuiltinCandidateRunsPath() { return BuiltinCalibrationDir() + "/candidate_runs.json"; }

}  // namespace gpuplan

#include "simulator/sweep_cross_validation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "common/median.h"
#include "common/str_format.h"
#include "hardware-db/hardware_db.h"
#include "simulator/cost_model.h"
#include "simulator/job_spec_json.h"
#include "simulator/layout_sweep.h"

namespace gpuplan {
namespace {

bool HostBound(const SweepRow& r) {
  const ParallelSpec& p = r.job.parallel;
  return p.pp == 1 && p.tp >= 2 && p.tp <= 8 && r.job.training.micro_batch_size <= 2 &&
         r.nodes <= 4;
}
bool Pipelined(const SweepRow& r) {
  const ParallelSpec& p = r.job.parallel;
  return p.pp >= 2 && p.pp <= 8 && p.tp >= 2 && r.nodes <= 16;
}
bool TpAcrossNodes(const SweepRow& r) {
  const ParallelSpec& p = r.job.parallel;
  return p.pp == 1 && p.tp >= 16 && r.nodes >= 2 && r.nodes <= 16;
}

// The constants of `rules` set on a copy of the row's job, and its predicted tokens/s/GPU.
double PredictTokensPerS(const SweepRow& row, const SweepConstants& constants,
                         const HardwareDb& db) {
  JobSpec job = row.job;
  const std::vector<SweepConstantRule>& rules = SweepConstantRules();
  for (size_t i = 0; i < rules.size(); ++i)
    job.training.framework.*(rules[i].seconds) = constants[i];
  return EvaluateStep(job, *db.FindGpu(job.cluster.gpu), *db.FindNetwork(job.cluster.inter_node))
      .tokens_per_s_per_gpu;
}

double LogError(const SweepRow& row, double predicted) {
  return std::log(predicted / row.measured_tokens_per_s_per_gpu);
}

SweepConstants ShippedConstants(const SweepRow& row) {
  SweepConstants c;
  for (const SweepConstantRule& rule : SweepConstantRules()) {
    c.push_back(row.job.training.framework.*(rule.seconds));
  }
  return c;
}

// Fits every constant in table order on `rows` (rows that ran and gpuplan can express), starting
// from zero; `fit_rows` gets how many rows each was fitted on. Invalid when a rule selects none.
Expected<SweepConstants> FitConstants(const std::vector<const SweepRow*>& rows,
                                      const HardwareDb& db, std::vector<int>* fit_rows) {
  const std::vector<SweepConstantRule>& rules = SweepConstantRules();
  SweepConstants c(rules.size(), 0.0);
  fit_rows->clear();
  for (size_t i = 0; i < rules.size(); ++i) {
    const SweepConstantRule& rule = rules[i];
    std::vector<const SweepRow*> selected;
    for (const SweepRow* row : rows) {
      if (!rule.selects(*row)) continue;
      if (rule.without_stalls) {
        c[i] = rule.grid_max_seconds;
        SweepPrediction p;
        p.row = row;
        p.tokens_per_s_per_gpu = PredictTokensPerS(*row, c, db);
        if (SweepStallSecondsPerMicroBatch(p) >= kSweepStallSeconds) continue;
      }
      selected.push_back(row);
    }
    if (selected.empty()) {
      return Status::Invalid(StrFormat("no row to fit %s on (%s)", rule.name, rule.rows_text));
    }
    fit_rows->push_back(static_cast<int>(selected.size()));
    const int steps =
        static_cast<int>(std::lround(rule.grid_max_seconds / kSweepConstantGridStepSeconds));
    double best_error = std::numeric_limits<double>::infinity();
    double best_value = 0;
    for (int step = 0; step <= steps; ++step) {
      c[i] = step * kSweepConstantGridStepSeconds;
      std::vector<double> errors;
      for (const SweepRow* row : selected) {
        errors.push_back(std::abs(LogError(*row, PredictTokensPerS(*row, c, db))));
      }
      const double error = Median(errors);
      if (error < best_error) {
        best_error = error;
        best_value = c[i];
      }
    }
    c[i] = best_value;
  }
  return c;
}

struct ErrorMedians {
  double median_abs = 0;
  double median = 0;
};
ErrorMedians MediansOf(const std::vector<double>& relative_errors) {
  std::vector<double> abs;
  for (double e : relative_errors) abs.push_back(std::abs(e));
  return ErrorMedians{Median(abs), Median(relative_errors)};
}

// One value per constant, "a / b / c": seconds as milliseconds, or row counts.
template <typename T>
std::string PerConstant(const std::vector<T>& values) {
  std::string out;
  for (T v : values) {
    out += out.empty() ? "" : " / ";
    if constexpr (std::is_floating_point_v<T>) {
      out += StrFormat("%.2f", v * 1e3);
    } else {
      out += std::to_string(v);
    }
  }
  return out;
}

}  // namespace

const std::vector<SweepConstantRule>& SweepConstantRules() {
  static const std::vector<SweepConstantRule> rules = {
      {"host_ms_per_layer", &FrameworkSpec::host_seconds_per_layer, 10e-3, HostBound, false,
       "pp 1, tp 2-8, micro-batch 1-2, 1-4 nodes"},
      {"tp_ms_per_inter_node_hop", &FrameworkSpec::tp_seconds_per_inter_node_hop, 5e-3,
       TpAcrossNodes, false, "pp 1, tp 16-32, 2-16 nodes"},
      {"pipeline_host_ms_per_tp_rank", &FrameworkSpec::pipeline_host_seconds_per_tp_rank, 5e-3,
       Pipelined, true, "pp 2-8, tp 2-32, 1-16 nodes, stalls left out"},
  };
  return rules;
}

Expected<SweepCrossValidationReport> CrossValidateSweepByModel(const std::vector<SweepRow>& rows,
                                                               const HardwareDb& db) {
  std::vector<const SweepRow*> usable;
  std::vector<std::string> models;
  for (const SweepRow& row : rows) {
    if (!row.ran || !ValidateJob(row.job, db).ok()) continue;
    usable.push_back(&row);
    if (std::find(models.begin(), models.end(), row.model) == models.end()) {
      models.push_back(row.model);
    }
  }
  if (models.size() < 2) {
    return Status::Invalid(
        StrFormat("leave-one-model-out needs rows that ran from at least two models, got %zu",
                  models.size()));
  }
  SweepCrossValidationReport report;
  report.shipped = ShippedConstants(*usable.front());
  Expected<SweepConstants> all = FitConstants(usable, db, &report.fit_rows_on_all);
  if (!all.ok()) return all.status();
  report.fitted_on_all = *all;

  std::vector<double> in_sample_all, cross_validated_all;
  for (const std::string& model : models) {
    SweepFold fold;
    fold.model = model;
    std::vector<const SweepRow*> training, held_out;
    for (const SweepRow* row : usable) (row->model == model ? held_out : training).push_back(row);
    Expected<SweepConstants> fitted = FitConstants(training, db, &fold.fit_rows);
    if (!fitted.ok()) {
      return Status::Invalid("fold without " + model + ": " + fitted.status().message());
    }
    fold.fitted = *fitted;
    std::vector<double> in_sample, cross_validated;
    for (const SweepRow* row : held_out) {
      const double measured = row->measured_tokens_per_s_per_gpu;
      in_sample.push_back((PredictTokensPerS(*row, report.shipped, db) - measured) / measured);
      const double predicted = PredictTokensPerS(*row, fold.fitted, db);
      cross_validated.push_back((predicted - measured) / measured);
      report.held_out.push_back(SweepHeldOutRow{row, predicted});
    }
    fold.rows = static_cast<int>(held_out.size());
    fold.in_sample_median_abs_error = MediansOf(in_sample).median_abs;
    const ErrorMedians cv = MediansOf(cross_validated);
    fold.cross_validated_median_abs_error = cv.median_abs;
    fold.cross_validated_median_error = cv.median;
    in_sample_all.insert(in_sample_all.end(), in_sample.begin(), in_sample.end());
    cross_validated_all.insert(cross_validated_all.end(), cross_validated.begin(),
                               cross_validated.end());
    report.folds.push_back(std::move(fold));
  }
  report.rows = static_cast<int>(usable.size());
  report.in_sample_median_abs_error = MediansOf(in_sample_all).median_abs;
  const ErrorMedians cv = MediansOf(cross_validated_all);
  report.cross_validated_median_abs_error = cv.median_abs;
  report.cross_validated_median_error = cv.median;
  return report;
}

std::string FormatSweepCrossValidation(const SweepCrossValidationReport& report, bool markdown) {
  std::string out;
  const char* constants_head = "fitted without it (ms)";
  if (markdown) {
    out += StrFormat(
        "| held-out model | rows | %s | fitted on rows | in-sample median | cross-validated "
        "median | cross-validated median bias |\n|---|---:|---|---|---:|---:|---:|\n",
        constants_head);
  } else {
    out += StrFormat("%-15s %5s  %-22s %-16s %9s %9s %8s\n", "held-out model", "rows",
                     constants_head, "fitted on rows", "in-sample", "CV median", "CV bias");
  }
  auto line = [&](const std::string& model, int rows, const std::string& constants,
                  const std::string& counts, double in_sample, double cv, double bias) {
    if (markdown) {
      out += StrFormat("| %s | %d | %s | %s | %.1f%% | %.1f%% | %+.1f%% |\n", model.c_str(), rows,
                       constants.c_str(), counts.c_str(), 100 * in_sample, 100 * cv, 100 * bias);
    } else {
      out += StrFormat("%-15s %5d  %-22s %-16s %8.1f%% %8.1f%% %+7.1f%%\n", model.c_str(), rows,
                       constants.c_str(), counts.c_str(), 100 * in_sample, 100 * cv, 100 * bias);
    }
  };
  for (const SweepFold& f : report.folds) {
    line(f.model, f.rows, PerConstant(f.fitted), PerConstant(f.fit_rows),
         f.in_sample_median_abs_error, f.cross_validated_median_abs_error,
         f.cross_validated_median_error);
  }
  line("all rows", report.rows, "per fold", "", report.in_sample_median_abs_error,
       report.cross_validated_median_abs_error, report.cross_validated_median_error);
  std::string rules;
  for (const SweepConstantRule& r : SweepConstantRules()) {
    rules += StrFormat("%s%s (%s)", rules.empty() ? "" : "; ", r.name, r.rows_text);
  }
  out += StrFormat(
      "\nLayout sweep, each model held out: the training stack's constants fitted on the sweep "
      "(%s), in that order, refitted on the other models' rows that ran, each on a %.2f ms grid "
      "by least median |log error| of tokens/s/GPU. Errors: median over the held-out rows that "
      "ran. Shipped: %s ms. Fitted on all rows: %s ms (on %s rows).\n",
      rules.c_str(), kSweepConstantGridStepSeconds * 1e3, PerConstant(report.shipped).c_str(),
      PerConstant(report.fitted_on_all).c_str(), PerConstant(report.fit_rows_on_all).c_str());
  return out;
}

}  // namespace gpuplan

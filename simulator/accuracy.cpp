#include "simulator/accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "simulator/cost_model.h"
#include "simulator/job_spec_json.h"

namespace gpuplan {
namespace {

// Short publication label: the text before the first comma or quote ("Narayanan et al.").
std::string SourceLabel(const std::string& source) {
  size_t end = source.find_first_of(",\"(");
  std::string label = source.substr(0, end);
  while (!label.empty() && label.back() == ' ') label.pop_back();
  return label.empty() ? source : label;
}

void Accumulate(SourceSummary* s, double error) {
  s->runs += 1;
  s->mape += std::abs(error);
  s->mean_error += error;
  s->max_abs_error = std::max(s->max_abs_error, std::abs(error));
}

void Finish(SourceSummary* s) {
  if (s->runs == 0) return;
  s->mape /= s->runs;
  s->mean_error /= s->runs;
}

}  // namespace

SourceSummary SummarizeErrors(const std::string& source, const std::vector<double>& errors) {
  SourceSummary s{source, 0, 0, 0, 0};
  for (double e : errors) Accumulate(&s, e);
  Finish(&s);
  return s;
}

Expected<std::vector<PublishedRun>> ParsePublishedRuns(const nlohmann::json& doc,
                                                       const std::string& origin,
                                                       const HardwareDb& db) {
  if (!doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array()) {
    return Status::Invalid(origin + ": expected an object with a 'runs' array");
  }
  std::vector<PublishedRun> runs;
  for (const nlohmann::json& run : doc["runs"]) {
    PublishedRun r;
    r.id = run.value("id", std::string("?"));
    if (!run.contains("spec") || !run.contains("measured")) {
      return Status::Invalid(origin + ": run '" + r.id + "': needs 'spec' and 'measured'");
    }
    Expected<JobSpec> job = ParseJobSpec(run["spec"], origin + ": run '" + r.id + "'", ".", db);
    if (!job.ok()) return job.status();
    r.job = std::move(*job);
    r.gpu = db.FindGpu(r.job.cluster.gpu);
    r.net = db.FindNetwork(r.job.cluster.inter_node);
    r.source = SourceLabel(run.value("source", std::string("?")));
    const nlohmann::json& measured = run["measured"];
    r.measured_tokens_per_s_per_gpu =
        measured.is_object() ? measured.value("tokens_per_s_per_gpu", 0.0) : 0.0;
    if (!(r.measured_tokens_per_s_per_gpu > 0)) {
      return Status::Invalid(origin + ": run '" + r.id +
                             "': measured.tokens_per_s_per_gpu missing or not positive");
    }
    runs.push_back(std::move(r));
  }
  return runs;
}

AccuracyReport EvaluatePublishedRuns(const std::vector<PublishedRun>& runs,
                                     const RateCalibration& calibration) {
  AccuracyReport report;
  report.overall.source = "all runs";
  for (const PublishedRun& run : runs) {
    const StepResult r =
        EvaluateStep(run.job, *run.gpu, *run.net,
                     DatasheetRates(*run.gpu, run.job.training.precision, calibration));
    RunComparison cmp;
    cmp.id = run.id;
    cmp.source = run.source;
    cmp.measured = run.measured_tokens_per_s_per_gpu;
    cmp.predicted = r.tokens_per_s_per_gpu;
    cmp.error = (cmp.predicted - cmp.measured) / cmp.measured;
    cmp.fits = r.memory.fits;
    auto it = std::find_if(report.by_source.begin(), report.by_source.end(),
                           [&](const SourceSummary& s) { return s.source == cmp.source; });
    if (it == report.by_source.end()) {
      report.by_source.push_back(SourceSummary{cmp.source, 0, 0, 0, 0});
      it = report.by_source.end() - 1;
    }
    Accumulate(&*it, cmp.error);
    Accumulate(&report.overall, cmp.error);
    report.runs.push_back(std::move(cmp));
  }
  for (SourceSummary& s : report.by_source) Finish(&s);
  Finish(&report.overall);
  return report;
}

Expected<AccuracyReport> CompareWithPublishedRuns(const nlohmann::json& doc,
                                                  const std::string& origin, const HardwareDb& db) {
  Expected<std::vector<PublishedRun>> runs = ParsePublishedRuns(doc, origin, db);
  if (!runs.ok()) return runs.status();
  return EvaluatePublishedRuns(*runs);
}

std::string FormatAccuracyMarkdown(const AccuracyReport& report) {
  std::string out;
  char line[512];
  out += "| source | runs | MAPE | mean error (bias) | worst |\n|---|---:|---:|---:|---:|\n";
  auto summary = [&](const SourceSummary& s) {
    std::snprintf(line, sizeof(line), "| %s | %d | %.1f%% | %+.1f%% | %.1f%% |\n", s.source.c_str(),
                  s.runs, 100 * s.mape, 100 * s.mean_error, 100 * s.max_abs_error);
    out += line;
  };
  for (const SourceSummary& s : report.by_source) summary(s);
  summary(report.overall);
  out += "\n| run | measured tok/s/GPU | predicted | error | fits |\n|---|---:|---:|---:|:-:|\n";
  for (const RunComparison& r : report.runs) {
    std::snprintf(line, sizeof(line), "| %s | %.1f | %.1f | %+.1f%% | %s |\n", r.id.c_str(),
                  r.measured, r.predicted, 100 * r.error, r.fits ? "yes" : "no");
    out += line;
  }
  return out;
}

}  // namespace gpuplan

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

Expected<AccuracyReport> CompareWithPublishedRuns(const nlohmann::json& doc,
                                                  const std::string& origin, const HardwareDb& db) {
  if (!doc.is_object() || !doc.contains("runs") || !doc["runs"].is_array()) {
    return Status::Invalid(origin + ": expected an object with a 'runs' array");
  }
  AccuracyReport report;
  report.overall.source = "all runs";
  for (const nlohmann::json& run : doc["runs"]) {
    const std::string id = run.value("id", std::string("?"));
    if (!run.contains("spec") || !run.contains("measured")) {
      return Status::Invalid(origin + ": run '" + id + "': needs 'spec' and 'measured'");
    }
    Expected<JobSpec> job = ParseJobSpec(run["spec"], origin + ": run '" + id + "'", ".", db);
    if (!job.ok()) return job.status();
    const GpuSpec* gpu = db.FindGpu(job->cluster.gpu);
    const NetworkSpec* net = db.FindNetwork(job->cluster.inter_node);
    const StepResult r = EvaluateStep(*job, *gpu, *net);
    RunComparison cmp;
    cmp.id = id;
    cmp.source = SourceLabel(run.value("source", std::string("?")));
    cmp.measured = run["measured"].value("tokens_per_s_per_gpu", 0.0);
    if (!(cmp.measured > 0)) {
      return Status::Invalid(origin + ": run '" + id + "': measured.tokens_per_s_per_gpu missing");
    }
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

#include "simulator/accuracy.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "common/json_reader.h"
#include "common/limits.h"
#include "common/median.h"
#include "common/rank_correlation.h"
#include "common/str_format.h"
#include "simulator/cost_model.h"
#include "simulator/framework.h"
#include "simulator/job_spec_json.h"
#include "simulator/memory.h"

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

// The job a run's layout runs: what stays fixed when only the layout changes.
std::string JobLabel(const JobSpec& job) {
  return StrFormat("%s, %lld x %s, seq %lld, batch %lld", job.model.name.c_str(),
                   static_cast<long long>(job.cluster.num_gpus), job.cluster.gpu.c_str(),
                   static_cast<long long>(job.training.seq_len),
                   static_cast<long long>(job.training.global_batch_size));
}

// Groups the runs by job (JobLabel, model dimensions and precision) and ranks each group of at
// least kMinJobLayoutsRuns.
std::vector<JobLayouts> GroupLayouts(const std::vector<PublishedRun>& runs,
                                     const std::vector<RunComparison>& compared) {
  std::vector<JobLayouts> groups;
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < runs.size(); ++i) {
    const JobSpec& job = runs[i].job;
    const std::string label = JobLabel(job);
    const std::string key = StrFormat(
        "%s|%lld|%lld|%d", label.c_str(), static_cast<long long>(job.model.num_layers),
        static_cast<long long>(job.model.hidden_size), static_cast<int>(job.training.precision));
    auto [it, added] = index.emplace(key, groups.size());
    if (added) groups.push_back(JobLayouts{label, {}, 0, -1, -1});
    groups[it->second].runs.push_back(i);
  }
  std::erase_if(groups, [](const JobLayouts& g) { return g.runs.size() < kMinJobLayoutsRuns; });
  for (JobLayouts& g : groups) {
    std::vector<double> predicted, measured;
    for (size_t i : g.runs) {
      const RunComparison& r = compared[i];
      // A layout predicted not to run ranks below every one predicted to run.
      predicted.push_back(r.PredictedToRun() ? r.predicted : 0.0);
      measured.push_back(r.measured);
      if (g.best < 0 || r.measured > compared[g.best].measured) g.best = static_cast<int>(i);
      if (r.PlannerWouldPick() && (g.pick < 0 || r.predicted > compared[g.pick].predicted)) {
        g.pick = static_cast<int>(i);
      }
    }
    g.spearman = SpearmanCorrelation(predicted, measured);
  }
  return groups;
}

// A run's id, or "none" (no run of the group would be picked).
std::string PickId(const AccuracyReport& report, int index) {
  return index < 0 ? "none" : report.runs[index].id;
}

std::string PickShare(const AccuracyReport& report, const JobLayouts& g) {
  return g.pick < 0 ? "-" : StrFormat("%.0f%%", 100 * g.PickShareOfBest(report.runs));
}

// "\nPeak memory of the 7 runs that publish it:\n", above the memory summary of either format.
std::string MemoryHeading(const AccuracyReport& report) {
  return "\nPeak memory of the " + std::to_string(report.memory.runs) + " runs that publish it:\n";
}

// The plain-text report lists the jobs one by one up to this many.
constexpr size_t kMaxListedJobs = 12;

// "  136 jobs: median Spearman +0.94; the pick within 10% of the best in 115 of 136"
std::string LayoutGroupsSummary(const AccuracyReport& report) {
  std::vector<double> rho;
  int picks = 0, within = 0;
  for (const JobLayouts& g : report.layout_groups) {
    if (!std::isnan(g.spearman)) rho.push_back(g.spearman);
    if (g.pick < 0) continue;
    picks += 1;
    within += g.PickShareOfBest(report.runs) >= 0.9 ? 1 : 0;
  }
  return StrFormat("  %zu jobs: median Spearman %s; the pick within 10%% of the best in %d of %d",
                   report.layout_groups.size(), FormatSpearman(Median(rho)).c_str(), within, picks);
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
  // Format: hardware-db/calibration/README.md, "published_runs.json".
  JsonObjectReader top(doc, origin);
  top.RejectUnknownFields({"about", "runs"});
  (void)top.OptionalString("about", "");
  if (top.status().ok() && !(doc.contains("runs") && doc["runs"].is_array())) {
    top.Fail("runs", "must be an array of runs");
  }
  if (top.status().ok() && doc["runs"].empty()) top.Fail("runs", "is empty: give at least one run");
  if (!top.status().ok()) return top.status();
  std::vector<PublishedRun> runs;
  std::set<std::string> ids;
  const nlohmann::json& list = doc["runs"];
  for (size_t i = 0; i < list.size(); ++i) {
    const nlohmann::json& run = list[i];
    JsonObjectReader r(run, origin + ": runs[" + std::to_string(i) + "]");
    r.RejectUnknownFields(
        {"id", "source", "source_location", "spec", "measured", "imputed", "notes"});
    PublishedRun out;
    out.id = r.String("id");
    const std::string source = r.String("source");
    (void)r.OptionalString("source_location", "");
    (void)r.OptionalString("notes", "");
    (void)r.OptionalStringList("imputed");
    const nlohmann::json* spec = r.Object("spec");
    const nlohmann::json* measured = r.Object("measured");
    if (r.status().ok() && !ids.insert(out.id).second) {
      r.Fail("id", "'" + out.id + "' is given to an earlier run too; ids must be unique");
    }
    if (!r.status().ok()) return r.status();
    JsonObjectReader m(*measured, origin + ": run '" + out.id + "': measured");
    m.RejectUnknownFields({"tokens_per_s_per_gpu", "derived_from", "peak_memory_gib"});
    out.measured_tokens_per_s_per_gpu =
        m.ScaledNumber("tokens_per_s_per_gpu", 1.0, kMinMeasurement, kMaxMeasurement);
    out.measured_peak_memory_gib =
        m.OptionalScaledNumber("peak_memory_gib", 0, 1.0, kMinMeasurement, kMaxMeasurement);
    (void)m.OptionalString("derived_from", "");
    if (!m.status().ok()) return m.status();
    Expected<JobSpec> job = ParseJobSpec(*spec, origin + ": run '" + out.id + "'", ".", db);
    if (!job.ok()) return job.status();
    out.job = std::move(*job);
    out.gpu = db.FindGpu(out.job.cluster.gpu);
    out.net = db.FindNetwork(out.job.cluster.inter_node);
    out.source = SourceLabel(source);
    runs.push_back(std::move(out));
  }
  return runs;
}

Expected<std::vector<PublishedRun>> ReadPublishedRunsFile(const std::string& path,
                                                          const HardwareDb& db) {
  Expected<nlohmann::json> doc = ReadJsonFile(path);
  if (!doc.ok()) return doc.status();
  return ParsePublishedRuns(*doc, path, db);
}

AccuracyReport EvaluatePublishedRuns(const std::vector<PublishedRun>& runs,
                                     const RateCalibration& calibration) {
  AccuracyReport report;
  report.overall.source = "all runs";
  report.memory.source = "peak memory";
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
    cmp.fits_with_margin = FitsWithMargin(r.memory, kDefaultMemoryMargin);
    cmp.stack_runs = StackRunsLayout(run.job).ok();
    if (run.measured_peak_memory_gib > 0) {
      cmp.measured_memory_gib = run.measured_peak_memory_gib;
      cmp.predicted_memory_gib =
          (r.memory.peak_bytes - BytesOutsideAllocator(run.job)) / kBytesPerGiB;
      Accumulate(&report.memory, cmp.MemoryError());
    }
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
  Finish(&report.memory);
  report.layout_groups = GroupLayouts(runs, report.runs);
  return report;
}

double JobLayouts::PickShareOfBest(const std::vector<RunComparison>& all) const {
  if (pick < 0 || best < 0) return 0;
  return all[pick].measured / all[best].measured;
}

Expected<AccuracyReport> CompareWithPublishedRuns(const nlohmann::json& doc,
                                                  const std::string& origin, const HardwareDb& db) {
  Expected<std::vector<PublishedRun>> runs = ParsePublishedRuns(doc, origin, db);
  if (!runs.ok()) return runs.status();
  return EvaluatePublishedRuns(*runs);
}

std::string FormatAccuracyTable(const AccuracyReport& report) {
  std::string out = StrFormat("%-24s %5s %8s %8s %8s\n", "source", "runs", "MAPE", "bias", "worst");
  auto summary = [&](const std::string& name, const SourceSummary& s) {
    out += StrFormat("%-24.24s %5d %7.1f%% %+7.1f%% %7.1f%%\n", name.c_str(), s.runs, 100 * s.mape,
                     100 * s.mean_error, 100 * s.max_abs_error);
  };
  for (const SourceSummary& s : report.by_source) summary(s.source, s);
  summary("all runs", report.overall);
  if (report.memory.runs > 0) {
    out += MemoryHeading(report);
    summary("peak memory", report.memory);
  }
  if (report.layout_groups.empty()) return out;
  out +=
      "\nLayouts of one job: rank correlation, and the planner's pick against the measured best\n";
  out += LayoutGroupsSummary(report) + "\n";
  if (report.layout_groups.size() > kMaxListedJobs) {
    out += StrFormat("  (%zu jobs: --markdown lists each)\n", report.layout_groups.size());
    return out;
  }
  for (const JobLayouts& g : report.layout_groups) {
    out += StrFormat("  %s: %zu runs, Spearman %s\n    pick %s, best %s, pick/best %s\n",
                     g.label.c_str(), g.runs.size(), FormatSpearman(g.spearman).c_str(),
                     PickId(report, g.pick).c_str(), PickId(report, g.best).c_str(),
                     PickShare(report, g).c_str());
  }
  return out;
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
  if (!report.layout_groups.empty()) {
    out += "\n" + LayoutGroupsSummary(report).substr(2) + ".\n";
    out +=
        "\n| job (layouts of it) | runs | Spearman | planner's pick | measured best | pick / best "
        "|\n|---|---:|---:|---|---|---:|\n";
    for (const JobLayouts& g : report.layout_groups) {
      out += StrFormat("| %s | %zu | %s | %s | %s | %s |\n", g.label.c_str(), g.runs.size(),
                       FormatSpearman(g.spearman).c_str(), PickId(report, g.pick).c_str(),
                       PickId(report, g.best).c_str(), PickShare(report, g).c_str());
    }
  }
  if (report.memory.runs > 0) {
    out += MemoryHeading(report) + "\n";
    out += "| | runs | MAPE | mean error (bias) | worst |\n|---|---:|---:|---:|---:|\n";
    summary(report.memory);
  }
  const bool memory = report.memory.runs > 0;
  out += "\n| run | measured tok/s/GPU | predicted | error | fits |";
  out += memory ? " measured GiB | predicted GiB | memory error "
                  "|\n|---|---:|---:|---:|:-:|---:|---:|---:|\n"
                : "\n|---|---:|---:|---:|:-:|\n";
  for (const RunComparison& r : report.runs) {
    std::snprintf(line, sizeof(line), "| %s | %.1f | %.1f | %+.1f%% | %s |", r.id.c_str(),
                  r.measured, r.predicted, 100 * r.error, r.fits ? "yes" : "no");
    out += line;
    if (memory && r.HasMemory()) {
      out += StrFormat(" %.1f | %.1f | %+.1f%% |", r.measured_memory_gib, r.predicted_memory_gib,
                       100 * r.MemoryError());
    } else if (memory) {
      out += " | | |";
    }
    out += "\n";
  }
  return out;
}

}  // namespace gpuplan

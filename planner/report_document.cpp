#include "planner/report_document.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/str_format.h"
#include "planner/explain.h"
#include "planner/units_format.h"
#include "simulator/job_spec_json.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

std::string Str(int64_t v) { return std::to_string(v); }

std::string Join(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += separator;
    out += s;
  }
  return out;
}

std::string PricePerHour(const PlanEconomics& e) {
  if (e.usd_per_gpu_hour <= 0) return "no price known";
  return FormatUsd(e.usd_per_gpu_hour) + "/GPU-h";
}

// Money that depends on a price: "n/a" when no price is known for the plan's GPU.
std::string PricedUsd(const PlanEconomics& e, double usd) {
  return e.usd_per_gpu_hour > 0 ? FormatUsd(usd) : "n/a";
}

std::string Memory(const MemoryBreakdown& m) {
  std::string out = FormatGb(m.peak_bytes) + " of " + FormatGb(m.capacity_bytes);
  if (m.peak_bytes <= m.capacity_bytes) {
    return out + " (" + FormatPercent(m.peak_bytes / m.capacity_bytes) + "; headroom " +
           FormatGb(m.capacity_bytes - m.peak_bytes) + ")";
  }
  return out + " (over by " + FormatGb(m.peak_bytes - m.capacity_bytes) + ")";
}

// Facts every plan block shows: hardware, layout and memory.
void AddHardwareFacts(const Plan& p, ReportSection* s) {
  const ClusterSpec& c = p.job.cluster;
  s->facts.push_back({"GPUs", Str(c.num_gpus) + " x " + c.gpu});
  const std::string node = p.node.empty() ? std::string("custom") : p.node;
  // A job smaller than one node uses part of one machine: its scale-out network is idle.
  s->facts.push_back(
      {"node", c.num_gpus <= c.gpus_per_node
                   ? node + " (" + Str(c.num_gpus) + " " + Noun(c.num_gpus, "GPU", "GPUs") +
                         " of one machine)"
                   : node + " (" + Str(c.gpus_per_node) + " GPUs/node, " + c.inter_node + ")"});
  s->facts.push_back({"layout", LayoutSummary(p.job)});
  s->facts.push_back({"memory per GPU", Memory(p.step.memory)});
}

ReportSection Recommendation(const PlanResult& r) {
  const Plan& p = r.recommendation;
  const PlanEconomics& e = p.econ;
  const StepResult& st = p.step;
  ReportSection s;
  s.title = "Recommendation";
  AddHardwareFacts(p, &s);
  std::string price = (e.provider.empty() ? std::string() : e.provider + " ") +
                      (e.offering.empty() ? std::string() : e.offering + ", ") +
                      std::string(PriceKindName(e.price_kind)) + ", " + PricePerHour(e);
  if (e.billed_gpus > p.job.cluster.num_gpus)
    price += ", billed for " + Str(e.billed_gpus) + " GPUs";
  s.facts.push_back({"price", price});
  std::string step = FormatDuration(st.step_time_s) + " (" + Str(st.microbatches) + " " +
                     Noun(st.microbatches, "micro-batch", "micro-batches");
  if (p.analytic_step_s > 0) {
    step += "; event simulation, analytic model " + FormatDuration(p.analytic_step_s);
  }
  s.facts.push_back({"step time", step + ")"});
  s.facts.push_back({"throughput", FormatCount(st.tokens_per_s) + " tokens/s (" +
                                       FormatCount(st.tokens_per_s_per_gpu) + " per GPU)"});
  s.facts.push_back({"MFU / HFU", FormatPercent(st.mfu) + " / " + FormatPercent(st.hfu)});
  s.facts.push_back({"compute time", FormatDuration(e.compute_time_s) + " for " +
                                         FormatCount(e.steps) + " " +
                                         Noun(e.steps, "step", "steps") + ", " +
                                         FormatSiCount(e.tokens) + " tokens"});
  const bool banded = p.band.runs > 0;
  const std::string share = StrFormat("%.0f%%", 100 * kBandCentralShare);
  s.facts.push_back(
      {"expected wall time",
       FormatDuration(e.expected_wall_s) + " (goodput " + FormatPercent(e.goodput) +
           (banded
                ? "; " + share + " band " + FormatDuration(e.expected_wall_s * p.band.low_factor) +
                      " - " + FormatDuration(e.expected_wall_s * p.band.high_factor)
                : std::string()) +
           ")"});
  std::string interruptions = std::isfinite(e.mtbf_s)
                                  ? FormatFixed(e.expected_interruptions, 1) + " expected (MTBF " +
                                        FormatDuration(e.mtbf_s) + ")"
                                  : std::string("none modelled (no interruption rate known)");
  if (const std::string trays = SpareTrayClause(e, r.request.reliability.host_repair_s);
      std::isfinite(e.mtbf_s) && !trays.empty()) {
    interruptions += "; " + trays;
  }
  s.facts.push_back({"interruptions", interruptions});
  s.facts.push_back({"checkpoints", "every " + FormatDuration(e.checkpoint_interval_s) + " (" +
                                        FormatGb(e.checkpoint_bytes) + ", " +
                                        FormatDuration(e.checkpoint_write_s) + " to write)"});
  std::string cost = PricedUsd(e, e.expected_cost_usd);
  if (banded && e.usd_per_gpu_hour > 0) {
    cost += " (" + share + " band " + FormatUsd(e.expected_cost_usd * p.band.low_factor) + " - " +
            FormatUsd(e.expected_cost_usd * p.band.high_factor) + ")";
  }
  s.facts.push_back({"expected cost", cost});
  if (banded) s.facts.push_back({"error band", DescribeBand(p.band)});
  if (r.request.confidence > 0) {
    std::string ranked = FormatDuration(e.expected_wall_s * p.rank_factor);
    if (e.usd_per_gpu_hour > 0) ranked += ", " + FormatUsd(e.expected_cost_usd * p.rank_factor);
    s.facts.push_back(
        {"ranked by", "each plan's " + StrFormat("%.0f%%", 100 * r.request.confidence) +
                          " end of its band (--confidence " + FormatFixed(r.request.confidence, 2) +
                          "): " + ranked + " for this plan"});
  }
  s.facts.push_back({"cost per 1M tokens", PricedUsd(e, e.usd_per_million_tokens)});
  s.facts.push_back({"memory margin", FormatPercent(r.request.memory_margin) +
                                          " of each GPU kept free (--memory-margin)"});
  if (!r.bound.empty()) s.facts.push_back({"bound by", r.bound});
  s.paragraphs = r.explanation;
  s.charts = {ChartKind::kMemory, ChartKind::kStepTime};
  return s;
}

// The planner's explanation says why: nothing fits, no layout exists, or plans fit but miss the
// constraints (then no_fit is empty, and saying "no layout" would be false).
ReportSection NoFit(const PlanResult& r) {
  ReportSection s;
  s.title = "No plan found";
  s.paragraphs = r.explanation;
  s.bullets = r.no_fit.suggestions;
  return s;
}

ReportSection SmallestFootprint(const PlanResult& r) {
  ReportSection s;
  s.title = "Smallest memory footprint found";
  AddHardwareFacts(r.no_fit.smallest, &s);
  s.charts = {ChartKind::kMemory};
  return s;
}

ReportSection Pareto(const PlanResult& r) {
  ReportSection s;
  s.title = "Pareto front: time vs cost";
  s.table.header = {"",         "GPU",     "GPUs", "layout",    "wall time",
                    "provider", "$/GPU-h", "cost", "$/M tokens"};
  s.table.numeric = {false, false, true, false, true, false, true, true, true};
  bool marked = false;
  for (const Plan& p : r.pareto) {
    const bool recommended = r.found && SamePlan(p, r.recommendation);
    marked = marked || recommended;
    s.table.rows.push_back({recommended ? "*" : "", p.job.cluster.gpu, Str(p.job.cluster.num_gpus),
                            LayoutSummary(p.job), FormatDuration(p.econ.expected_wall_s),
                            p.econ.provider, PricedUsd(p.econ, p.econ.usd_per_gpu_hour),
                            PricedUsd(p.econ, p.econ.expected_cost_usd),
                            PricedUsd(p.econ, p.econ.usd_per_million_tokens)});
  }
  if (marked) s.table_note = "* recommended";
  s.charts = {ChartKind::kPareto};
  return s;
}

ReportSection Alternatives(const PlanResult& r) {
  ReportSection s;
  s.title = "Alternatives";
  s.table.header = {"GPU", "GPUs", "node", "price", "layout", "step time", "wall time", "cost"};
  s.table.numeric = {false, true, false, true, false, true, true, true};
  for (const Plan& p : r.alternatives) {
    s.table.rows.push_back(
        {p.job.cluster.gpu, Str(p.job.cluster.num_gpus), p.node, PricePerHour(p.econ),
         LayoutSummary(p.job), FormatDuration(p.step.step_time_s),
         FormatDuration(p.econ.expected_wall_s), PricedUsd(p.econ, p.econ.expected_cost_usd)});
  }
  return s;
}

// Speedup and efficiency say what they compare with, each row where its price comes from, and
// every efficiency above 100% why.
ReportSection Scaling(const PlanResult& r) {
  ReportSection s;
  s.title = "Scaling on " + r.scaling_gpu;
  int64_t baseline = 0;
  std::vector<std::string> providers;
  for (const ScalingRow& row : r.scaling) {
    if (!row.feasible) continue;
    if (baseline == 0) baseline = row.baseline_gpus;
    const std::string& p = row.plan.econ.provider;
    if (!p.empty() && std::find(providers.begin(), providers.end(), p) == providers.end()) {
      providers.push_back(p);
    }
  }
  const std::string vs = baseline > 0 ? " vs " + Str(baseline) : "";
  s.table.header = {"GPUs",     "step time", "wall time", "speedup" + vs, "efficiency" + vs,
                    "provider", "$/GPU-h",   "cost",      "layout"};
  s.table.numeric = {true, true, true, true, true, false, true, true, false};
  // Rows superlinear for the same reason share one line: reason, GPU counts.
  std::vector<std::pair<std::string, std::string>> superlinear;
  for (const ScalingRow& row : r.scaling) {
    if (!row.feasible) {
      s.table.rows.push_back({Str(row.gpus), "does not fit", "-", "-", "-", "-", "-", "-", "-"});
      continue;
    }
    const PlanEconomics& e = row.plan.econ;
    s.table.rows.push_back({Str(row.gpus), FormatDuration(row.plan.step.step_time_s),
                            FormatDuration(e.expected_wall_s), FormatFixed(row.speedup, 2) + "x",
                            FormatPercent(row.scaling_efficiency),
                            e.provider.empty() ? "-" : e.provider, PricedUsd(e, e.usd_per_gpu_hour),
                            PricedUsd(e, e.expected_cost_usd), LayoutSummary(row.plan.job)});
    if (!row.superlinear_reason.empty()) {
      auto same = std::find_if(superlinear.begin(), superlinear.end(),
                               [&](const auto& g) { return g.first == row.superlinear_reason; });
      if (same == superlinear.end()) {
        superlinear.push_back({row.superlinear_reason, Str(row.gpus)});
      } else {
        same->second += ", " + Str(row.gpus);
      }
    }
  }
  for (const auto& [reason, counts] : superlinear) {
    s.bullets.push_back("Superlinear at " + counts + " GPUs: " + reason + ".");
  }
  if (baseline > 0) {
    s.table_note = "Speedup and efficiency against " + Str(baseline) + " " +
                   Noun(baseline, "GPU", "GPUs") +
                   ", the smallest count that fits (efficiency 100% = linear scaling); " +
                   (providers.empty()       ? std::string("no row has a known price.")
                    : providers.size() == 1 ? "every priced row is at " + providers.front() + "."
                                            : std::string("each row is priced at the provider it "
                                                          "names."));
  }
  s.charts = {ChartKind::kScaling};
  return s;
}

ReportSection Search(const SearchStats& st) {
  ReportSection s;
  s.title = "Search";
  // The counts depend only on the query, the times on the machine: one paragraph each, so that
  // a document can quote the first (README.md's headline query does).
  s.paragraphs.push_back(
      "Enumerated " + FormatCount(static_cast<double>(st.configurations)) +
      " layouts: " + FormatCount(static_cast<double>(st.evaluated)) + " evaluated, " +
      FormatCount(static_cast<double>(st.pruned_memory)) + " rejected by the memory check, " +
      FormatCount(static_cast<double>(st.pruned_invalid)) + " by divisibility rules" +
      (st.pruned_export > 0 ? ", " + FormatCount(static_cast<double>(st.pruned_export)) +
                                  " fast enough to keep but not expressible in the export"
                            : "") +
      ".");
  s.paragraphs.push_back(
      "Searched in " + FormatDuration(st.seconds) + " on " + std::to_string(st.threads) + " " +
      Noun(st.threads, "thread", "threads") + "; the event simulator re-timed the " +
      Str(st.event_simulated) + " " + Noun(st.event_simulated, "layout", "layouts") +
      " kept for the best hardware choices (" + FormatDuration(st.event_seconds) + ").");
  return s;
}

std::string RequestLine(const PlanRequest& q) {
  std::vector<std::string> parts;
  parts.push_back(q.train_steps > 0 ? FormatCount(static_cast<double>(q.train_steps)) + " " +
                                          Noun(q.train_steps, "step", "steps")
                                    : FormatSiCount(q.train_tokens) + " tokens");
  parts.push_back("seq " + Str(q.seq_len));
  std::vector<std::string> batches;
  for (int64_t b : q.global_batch_sizes) batches.push_back(Str(b));
  if (!batches.empty()) parts.push_back("global batch " + Join(batches, "/"));
  parts.push_back(Join(q.gpus, ", ") + ", " + Str(q.min_gpus) + "-" + Str(q.max_gpus) + " GPUs");
  if (q.framework.id != kDefaultFrameworkId) parts.push_back("framework " + q.framework.id);
  parts.push_back(std::string(PriceKindName(q.price_kind)) + " prices" +
                  (q.providers.empty() ? "" : " from " + Join(q.providers, ", ")));
  parts.push_back("objective " + std::string(ObjectiveName(q.objective)));
  if (q.deadline_s > 0) parts.push_back("deadline " + FormatDuration(q.deadline_s));
  if (q.budget_usd > 0) parts.push_back("budget " + FormatUsd(q.budget_usd));
  return q.model.name + ": " + Join(parts, ", ");
}

}  // namespace

std::string LayoutSummary(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  std::string out = "TP" + Str(p.tp) + " PP" + Str(p.pp);
  if (!p.stage_layers.empty()) {
    out += "(" + StageLayersText(job) + ")";
  } else if (p.first_stage_layers > 0 || p.last_stage_layers > 0) {
    // An uneven pipeline: layers of the first stage, the middle stages and the last stage.
    out += "(" + Str(StageLayers(job, 0)) + "+";
    if (p.pp > 3) out += Str(p.pp - 2) + "x";
    if (p.pp > 2) out += Str(StageLayers(job, 1)) + "+";
    out += Str(StageLayers(job, p.pp - 1)) + ")";
  }
  if (p.vpp > 1) out += " VPP" + Str(p.vpp);
  out += " DP" + Str(p.dp);
  if (p.cp > 1) out += " CP" + Str(p.cp);
  if (p.ep > 1) out += " EP" + Str(p.ep);
  if (p.ExpertTp() != p.tp) out += " ETP" + Str(p.ExpertTp());
  out += " mb" + Str(job.training.micro_batch_size);
  if (job.training.recompute == Recompute::kSelective) {
    out += " selective";
    if (job.training.recompute_modules != kRecomputeCoreAttn) {
      out += "(" + RecomputeModulesName(job.training.recompute_modules, "+") + ")";
    }
  }
  if (job.training.recompute == Recompute::kFull) out += " full-recompute";
  if (job.training.activation_offload_layers > 0) {
    out += " act-offload" + Str(job.training.activation_offload_layers);
  }
  out += " " + std::string(PrecisionName(job.training.precision));
  if (job.training.fp8_param_gather) out += " fp8-params";
  if (job.training.grad_reduce_bf16) out += " bf16-grads";
  if (p.fsdp) {
    out += " FSDP";
  } else if (p.zero_stage > 0) {
    out += " ZeRO-" + std::to_string(p.zero_stage);
  }
  if (p.dp_replicate > 1) out += " HSDP" + Str(p.dp_replicate);
  if (p.cpu_offload) out += " offload";
  if (p.tp_overlap && p.tp > 1) out += " tp-overlap";
  if (p.ep_overlap && p.ep > 1) out += " ep-overlap";
  return out;
}

bool SamePlan(const Plan& a, const Plan& b) {
  return a.job.cluster.gpu == b.job.cluster.gpu &&
         a.job.cluster.num_gpus == b.job.cluster.num_gpus && a.node == b.node &&
         a.econ.provider == b.econ.provider && LayoutSummary(a.job) == LayoutSummary(b.job);
}

const Plan* ChartedPlan(const PlanResult& result) {
  if (result.found) return &result.recommendation;
  if (result.no_fit.any_plan) return &result.no_fit.smallest;
  return nullptr;
}

ReportDocument BuildReportDocument(const PlanResult& r) {
  ReportDocument doc;
  doc.title = "gpuplan plan: " + r.request.model.name;
  doc.request_line = RequestLine(r.request);
  if (r.found) {
    doc.sections.push_back(Recommendation(r));
  } else {
    doc.sections.push_back(NoFit(r));
    if (r.no_fit.any_plan) doc.sections.push_back(SmallestFootprint(r));
  }
  if (!r.pareto.empty()) doc.sections.push_back(Pareto(r));
  if (!r.alternatives.empty()) doc.sections.push_back(Alternatives(r));
  if (!r.scaling.empty()) doc.sections.push_back(Scaling(r));
  if (!r.warnings.empty()) {
    ReportSection w;
    w.title = "Warnings";
    w.bullets = r.warnings;
    doc.sections.push_back(w);
  }
  doc.sections.push_back(Search(r.stats));
  return doc;
}

}  // namespace gpuplan

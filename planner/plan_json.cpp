#include "planner/plan_json.h"

#include <string>
#include <vector>

#include "planner/report_document.h"
#include "simulator/job_spec_json.h"
#include "simulator/result_format.h"

namespace gpuplan {
namespace {

// 0 means "no constraint" in PlanRequest; JSON says so with null.
nlohmann::json OptionalLimit(double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(); }

nlohmann::json RequestToJson(const PlanRequest& q) {
  nlohmann::json precisions = nlohmann::json::array();
  for (Precision p : q.precisions) precisions.push_back(PrecisionName(p));
  return {
      {"model", q.model.name},
      {"train_tokens", q.train_tokens},
      {"train_steps", q.train_steps},
      {"seq_len", q.seq_len},
      {"global_batch_sizes", q.global_batch_sizes},
      {"precisions", precisions},
      {"lora", q.lora.enabled},
      {"gpus", q.gpus},
      {"nodes", q.nodes},
      {"min_gpus", q.min_gpus},
      {"max_gpus", q.max_gpus},
      {"providers", q.providers},
      {"price_kind", PriceKindName(q.price_kind)},
      {"price_overrides_usd_per_gpu_hour", q.price_overrides},
      {"deadline_s", OptionalLimit(q.deadline_s)},
      {"budget_usd", OptionalLimit(q.budget_usd)},
      {"objective", ObjectiveName(q.objective)},
      {"memory_margin", q.memory_margin},
      {"framework", q.framework.id},
      {"confidence", q.confidence > 0 ? nlohmann::json(q.confidence) : nlohmann::json()},
  };
}

// The plan's error band on its expected wall time and cost (null without one), and the factor
// the planner ranked it by.
nlohmann::json BandToJson(const Plan& p) {
  if (p.band.runs == 0) return nullptr;
  const PlanEconomics& e = p.econ;
  return {{"share", kBandCentralShare},
          {"expected_wall_s",
           {{"low", e.expected_wall_s * p.band.low_factor},
            {"high", e.expected_wall_s * p.band.high_factor}}},
          {"expected_cost_usd",
           {{"low", e.expected_cost_usd * p.band.low_factor},
            {"high", e.expected_cost_usd * p.band.high_factor}}},
          {"runs", p.band.runs},
          {"sweep_rows", p.band.sweep_rows},
          {"moe_candidate_runs", p.band.moe_candidate_runs},
          {"publications", p.band.publications},
          {"basis", p.band.basis},
          {"validated", p.band.validated},
          {"rank_factor", p.rank_factor}};
}

nlohmann::json EconomicsToJson(const PlanEconomics& e) {
  return {
      {"steps", e.steps},
      {"tokens", e.tokens},
      {"compute_time_s", e.compute_time_s},
      {"checkpoint_bytes", e.checkpoint_bytes},
      {"checkpoint_write_s", e.checkpoint_write_s},
      {"checkpoint_interval_s", e.checkpoint_interval_s},
      {"mtbf_s", e.mtbf_s},
      {"expected_interruptions", e.expected_interruptions},
      {"spare_hosts_per_domain", e.spare_hosts_per_domain},
      {"no_spare_probability", e.no_spare_probability},
      {"expected_repair_wait_s", e.expected_repair_wait_s},
      {"expected_wall_s", e.expected_wall_s},
      {"goodput", e.goodput},
      {"provider", e.provider},
      {"offering", e.offering},
      {"price_kind", PriceKindName(e.price_kind)},
      {"usd_per_gpu_hour", e.usd_per_gpu_hour},
      {"billed_gpus", e.billed_gpus},
      {"expected_cost_usd", e.expected_cost_usd},
      {"usd_per_million_tokens", e.usd_per_million_tokens},
  };
}

nlohmann::json PlansToJson(const std::vector<Plan>& plans) {
  nlohmann::json out = nlohmann::json::array();
  for (const Plan& p : plans) out.push_back(PlanToJson(p));
  return out;
}

nlohmann::json ScalingToJson(const PlanResult& r) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ScalingRow& row : r.scaling) {
    nlohmann::json j = {{"gpus", row.gpus}, {"feasible", row.feasible}};
    const bool f = row.feasible;
    j["step_time_s"] = f ? nlohmann::json(row.plan.step.step_time_s) : nlohmann::json();
    j["expected_wall_s"] = f ? nlohmann::json(row.plan.econ.expected_wall_s) : nlohmann::json();
    j["baseline_gpus"] = f ? nlohmann::json(row.baseline_gpus) : nlohmann::json();
    j["speedup"] = f ? nlohmann::json(row.speedup) : nlohmann::json();
    j["scaling_efficiency"] = f ? nlohmann::json(row.scaling_efficiency) : nlohmann::json();
    j["superlinear_reason"] = f && !row.superlinear_reason.empty()
                                  ? nlohmann::json(row.superlinear_reason)
                                  : nlohmann::json();
    j["provider"] = f ? nlohmann::json(row.plan.econ.provider) : nlohmann::json();
    j["usd_per_gpu_hour"] = f ? nlohmann::json(row.plan.econ.usd_per_gpu_hour) : nlohmann::json();
    j["expected_cost_usd"] = f ? nlohmann::json(row.plan.econ.expected_cost_usd) : nlohmann::json();
    j["layout"] = f ? nlohmann::json(LayoutSummary(row.plan.job)) : nlohmann::json();
    rows.push_back(std::move(j));
  }
  return {{"gpu", r.scaling_gpu}, {"rows", rows}};
}

nlohmann::json NoFitToJson(const NoFitDiagnosis& d) {
  return {{"any_plan", d.any_plan},
          {"smallest", d.any_plan ? PlanToJson(d.smallest) : nlohmann::json()},
          {"suggestions", d.suggestions}};
}

nlohmann::json StatsToJson(const SearchStats& s) {
  return {{"configurations", s.configurations},
          {"evaluated", s.evaluated},
          {"pruned_memory", s.pruned_memory},
          {"pruned_invalid", s.pruned_invalid},
          {"pruned_export", s.pruned_export},
          {"elapsed_s", s.seconds},
          {"threads", s.threads},
          {"event_simulated", s.event_simulated},
          {"event_elapsed_s", s.event_seconds}};
}

}  // namespace

nlohmann::json PlanToJson(const Plan& plan) {
  return {{"job", JobSpecToJson(plan.job)},
          {"node", plan.node},
          {"layout", LayoutSummary(plan.job)},
          {"step", StepResultToJson(plan.step)},
          {"timed_by", plan.analytic_step_s > 0 ? "event-simulator" : "analytic"},
          {"analytic_step_time_s",
           plan.analytic_step_s > 0 ? plan.analytic_step_s : plan.step.step_time_s},
          {"economics", EconomicsToJson(plan.econ)},
          {"band", BandToJson(plan)}};
}

nlohmann::json PlanResultToJson(const PlanResult& r) {
  return {
      {"request", RequestToJson(r.request)},
      {"found", r.found},
      {"recommendation", r.found ? PlanToJson(r.recommendation) : nlohmann::json()},
      {"bound", r.bound},
      {"explanation", r.explanation},
      {"alternatives", PlansToJson(r.alternatives)},
      {"pareto", PlansToJson(r.pareto)},
      {"scaling", ScalingToJson(r)},
      {"warnings", r.warnings},
      {"no_fit", r.found ? nlohmann::json() : NoFitToJson(r.no_fit)},
      {"stats", StatsToJson(r.stats)},
  };
}

}  // namespace gpuplan

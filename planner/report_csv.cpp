// PlanResultToCsv: one RFC 4180 row per plan.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "planner/report.h"
#include "planner/report_document.h"

namespace gpuplan {
namespace {

// The header row; docs/REPORTS.md defines each column.
constexpr const char* kHeader =
    "kind,gpu,gpus,node,provider,price_kind,usd_per_gpu_hour,tp,pp,vpp,dp,cp,ep,micro_batch,"
    "global_batch,recompute,zero_stage,fsdp,dp_replicate,cpu_offload,precision,step_time_s,tokens_"
    "per_s,mfu,"
    "peak_memory_gb,capacity_gb,headroom_gb,compute_time_s,expected_wall_s,goodput,expected_cost_"
    "usd,"
    "usd_per_million_tokens,expected_wall_s_low,expected_wall_s_high,expected_cost_usd_low,"
    "expected_cost_usd_high\r\n";

// Quoted when it holds a comma, a double quote, CR or LF; quotes doubled (RFC 4180 Sec. 2).
std::string Field(const std::string& s) {
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Full precision for tools; an empty field when not finite.
std::string Num(double v) {
  if (!std::isfinite(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.10g", v);
  return buf;
}

// `value` x `factor`, one end of the plan's error band; an empty field without a band.
std::string Banded(const Plan& plan, double value, double factor) {
  return plan.band.runs > 0 ? Num(value * factor) : "";
}

std::string Int(int64_t v) { return std::to_string(v); }
std::string Bool(bool v) { return v ? "true" : "false"; }

std::string Line(const std::vector<std::string>& fields) {
  std::string out;
  for (const std::string& f : fields) {
    if (!out.empty()) out += ',';
    out += Field(f);
  }
  return out + "\r\n";
}

std::string Row(const char* kind, const Plan& plan) {
  const JobSpec& j = plan.job;
  const ParallelSpec& p = j.parallel;
  const PlanEconomics& e = plan.econ;
  const StepResult& st = plan.step;
  return Line({kind,
               j.cluster.gpu,
               Int(j.cluster.num_gpus),
               plan.node,
               e.provider,
               std::string(PriceKindName(e.price_kind)),
               Num(e.usd_per_gpu_hour),
               Int(p.tp),
               Int(p.pp),
               Int(p.vpp),
               Int(p.dp),
               Int(p.cp),
               Int(p.ep),
               Int(j.training.micro_batch_size),
               Int(j.training.global_batch_size),
               std::string(RecomputeName(j.training.recompute)),
               Int(p.zero_stage),
               Bool(p.fsdp),
               Int(p.dp_replicate),
               Bool(p.cpu_offload),
               std::string(PrecisionName(j.training.precision)),
               Num(st.step_time_s),
               Num(st.tokens_per_s),
               Num(st.mfu),
               Num(st.memory.peak_bytes / 1e9),
               Num(st.memory.capacity_bytes / 1e9),
               Num((st.memory.capacity_bytes - st.memory.peak_bytes) / 1e9),
               Num(e.compute_time_s),
               Num(e.expected_wall_s),
               Num(e.goodput),
               Num(e.expected_cost_usd),
               Num(e.usd_per_million_tokens),
               Banded(plan, e.expected_wall_s, plan.band.low_factor),
               Banded(plan, e.expected_wall_s, plan.band.high_factor),
               Banded(plan, e.expected_cost_usd, plan.band.low_factor),
               Banded(plan, e.expected_cost_usd, plan.band.high_factor)});
}

}  // namespace

std::string PlanResultToCsv(const PlanResult& result) {
  std::string out = kHeader;
  if (result.found) out += Row("recommendation", result.recommendation);
  for (const Plan& p : result.alternatives) out += Row("alternative", p);
  for (const Plan& p : result.pareto) out += Row("pareto", p);
  for (const ScalingRow& row : result.scaling) {
    if (row.feasible) out += Row("scaling", row.plan);
  }
  return out;
}

}  // namespace gpuplan

#include "planner/plan.h"

#include <array>
#include <string>

#include "common/str_format.h"
#include "simulator/job_spec_json.h"

namespace gpuplan {

namespace {
// Efficiencies below this print as 100.0% (FormatPercent, planner/units_format.h, keeps one
// decimal): linear, no reason owed.
constexpr double kSuperlinear = 1.0005;

// The layout settings a part of the job's time depends on (beyond the GPU count).
enum Setting : unsigned {
  kRecompute = 1u << 0,
  kOffload = 1u << 1,
  kZero = 1u << 2,
  kTp = 1u << 3,
  kPp = 1u << 4,
  kVpp = 1u << 5,
  kCp = 1u << 6,
  kEp = 1u << 7,
  kMicroBatch = 1u << 8,
  kPrecision = 1u << 9,
  kEtp = 1u << 10,
};

// One part of the job's GPU time: its name, GPU-seconds per token, the settings that change it
// most, and those that also change it (named when none of the first changed).
struct Part {
  const char* name;
  double gpu_s_per_token;
  unsigned settings;
  unsigned also;
};

// Where the job's GPU time goes: each part of the step (scaled to the step time, which the event
// simulator may have re-timed) over all steps, and the expected wall time beyond the compute time
// (checkpoints, lost work and restarts), as GPU-seconds per token. Compute also depends on the
// GEMM shapes (TP, CP, micro-batch) and on the slowest pipeline stage (PP).
std::array<Part, 9> GpuSecondsPerToken(const Plan& p) {
  const TimeBreakdown& b = p.step.breakdown_s;
  const double gpus = static_cast<double>(p.job.cluster.num_gpus);
  const double total = b.Total();
  const double per_step =
      total > 0 ? p.step.step_time_s / total * p.econ.steps * gpus / p.econ.tokens : 0;
  return {
      {{"compute", b.compute * per_step, kRecompute | kPrecision,
        kTp | kPp | kCp | kMicroBatch | kEtp},
       {"tensor-parallel communication", b.tp_comm * per_step, kTp | kEtp, 0},
       {"context-parallel communication", b.cp_comm * per_step, kCp, 0},
       {"pipeline sends", b.pp_comm * per_step, kPp | kVpp | kMicroBatch, 0},
       {"data-parallel communication", b.dp_comm * per_step, kZero, kTp | kPp},
       {"expert all-to-all", b.ep_comm * per_step, kEp, kTp | kEtp},
       {"the pipeline bubble", b.bubble * per_step, kPp | kVpp | kMicroBatch, 0},
       {"the optimizer step and offload transfers", b.optimizer * per_step, kOffload | kZero, 0},
       {"checkpoints, lost work and restarts",
        (p.econ.expected_wall_s - p.econ.compute_time_s) * gpus / p.econ.tokens, 0, 0}}};
}

std::string Zero(const ParallelSpec& p) {
  const std::string stage = p.fsdp             ? "FSDP"
                            : p.zero_stage > 0 ? "ZeRO-" + std::to_string(p.zero_stage)
                                               : "no ZeRO";
  return p.dp_replicate > 1 ? stage + " HSDP" + std::to_string(p.dp_replicate) : stage;
}

// The settings among `which` that differ from `a` to `b`: "recomputation full -> none, CPU offload
// on -> off"; empty when none does.
std::string Changes(const JobSpec& a, const JobSpec& b, unsigned which) {
  std::string out;
  const auto add = [&](Setting s, const std::string& what, const std::string& from,
                       const std::string& to) {
    if ((which & s) != 0 && from != to)
      out += (out.empty() ? "" : ", ") + what + from + " -> " + to;
  };
  const auto on = [](bool v) { return std::string(v ? "on" : "off"); };
  const ParallelSpec &pa = a.parallel, &pb = b.parallel;
  add(kRecompute, "recomputation ", std::string(RecomputeName(a.training.recompute)),
      std::string(RecomputeName(b.training.recompute)));
  add(kOffload, "CPU offload ", on(pa.cpu_offload), on(pb.cpu_offload));
  add(kZero, "", Zero(pa), Zero(pb));
  add(kTp, "TP ", std::to_string(pa.tp), std::to_string(pb.tp));
  add(kPp, "PP ", std::to_string(pa.pp), std::to_string(pb.pp));
  add(kVpp, "VPP ", std::to_string(pa.vpp), std::to_string(pb.vpp));
  add(kCp, "CP ", std::to_string(pa.cp), std::to_string(pb.cp));
  add(kEp, "EP ", std::to_string(pa.ep), std::to_string(pb.ep));
  if (a.model.is_moe()) {  // a dense model has no experts to split
    add(kEtp, "expert TP ", std::to_string(pa.ExpertTp()), std::to_string(pb.ExpertTp()));
  }
  add(kMicroBatch, "micro-batch ", std::to_string(a.training.micro_batch_size),
      std::to_string(b.training.micro_batch_size));
  add(kPrecision, "", std::string(PrecisionName(a.training.precision)),
      std::string(PrecisionName(b.training.precision)));
  return out;
}

// "fewer GPU-hours than 8 GPUs; the largest saving is in <part> (<its settings that changed>)":
// the same words for every row that is superlinear for the same reason, so reports can group them.
std::string SuperlinearReason(const ScalingRow& base, const ScalingRow& row) {
  const std::array<Part, 9> before = GpuSecondsPerToken(base.plan);
  const std::array<Part, 9> after = GpuSecondsPerToken(row.plan);
  size_t largest = 0;
  for (size_t i = 1; i < before.size(); ++i) {
    if (before[i].gpu_s_per_token - after[i].gpu_s_per_token >
        before[largest].gpu_s_per_token - after[largest].gpu_s_per_token) {
      largest = i;
    }
  }
  const Part& part = before[largest];
  std::string changes = Changes(base.plan.job, row.plan.job, part.settings);
  if (changes.empty()) changes = Changes(base.plan.job, row.plan.job, part.also);
  return "fewer GPU-hours than " + std::to_string(base.gpus) + " " +
         Noun(base.gpus, "GPU", "GPUs") + "; the largest saving is in " + part.name +
         (changes.empty() ? "" : " (" + changes + ")");
}

struct ObjectiveRow {
  Objective objective;
  std::string_view name;
};
constexpr ObjectiveRow kObjectives[] = {
    {Objective::kTime, "time"},
    {Objective::kCost, "cost"},
    {Objective::kCostUnderDeadline, "cost-under-deadline"},
    {Objective::kTimeUnderBudget, "time-under-budget"},
};
}  // namespace

std::string_view ObjectiveName(Objective o) {
  for (const ObjectiveRow& row : kObjectives) {
    if (row.objective == o) return row.name;
  }
  return "?";
}

bool ParseObjective(std::string_view name, Objective* out) {
  for (const ObjectiveRow& row : kObjectives) {
    if (row.name == name) {
      *out = row.objective;
      return true;
    }
  }
  return false;
}

void FillSpeedups(std::vector<ScalingRow>* rows) {
  const ScalingRow* base = nullptr;
  for (ScalingRow& row : *rows) {
    if (!row.feasible) continue;
    if (base == nullptr) base = &row;
    row.baseline_gpus = base->gpus;
    row.speedup = base->plan.econ.expected_wall_s / row.plan.econ.expected_wall_s;
    row.scaling_efficiency =
        row.speedup / (static_cast<double>(row.gpus) / static_cast<double>(base->gpus));
    row.superlinear_reason =
        row.scaling_efficiency >= kSuperlinear ? SuperlinearReason(*base, row) : std::string();
  }
}

void PlaceOnTemplate(const NodeTemplate& node, const GpuSpec& gpu, Plan* plan) {
  plan->node = node.id;
  plan->gpus_per_host = node.tray_gpus;
  plan->domain_gpus = node.tray_gpus < node.gpus_per_node ? gpu.scaleup_domain_gpus : 0;
}

void AttachBand(const PlanRequest& req, const GpuSpec& gpu, Plan* plan) {
  if (req.band_residuals.empty()) return;
  plan->band = BandFor(req.band_residuals, BandStack(plan->job), gpu.architecture,
                       plan->job.cluster.num_gpus, plan->job.model.is_moe());
  plan->rank_factor = req.confidence > 0 ? plan->band.Factor(req.confidence) : 1.0;
}

}  // namespace gpuplan

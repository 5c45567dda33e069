// What the planner is asked (PlanRequest) and what it answers (Plan, PlanResult).
// docs/PLANNER.md describes the search; docs/METRICS.md defines every number.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hardware-db/hardware.h"
#include "hardware-db/pricing.h"
#include "simulator/cost_model.h"
#include "simulator/error_band.h"
#include "simulator/job.h"
#include "simulator/memory.h"
#include "simulator/model.h"

namespace gpuplan {

/// What the recommendation optimises.
enum class Objective {
  kTime,               ///< shortest expected wall time (within the budget when one is given)
  kCost,               ///< lowest expected cost (within the deadline when one is given)
  kCostUnderDeadline,  ///< cheapest plan that meets the deadline (deadline required)
  kTimeUnderBudget,    ///< fastest plan that stays within the budget (budget required)
};

/// "time", "cost", "cost-under-deadline", "time-under-budget".
std::string_view ObjectiveName(Objective o);
bool ParseObjective(std::string_view name, Objective* out);

/// Largest margin `plan --memory-margin` accepts.
inline constexpr double kMaxMemoryMargin = 0.9;
/// Range of `plan --confidence`: the quantile of each plan's error band the planner ranks by
/// (0.5: the band's median; above 0.99 a band of a few runs says nothing).
inline constexpr double kMinConfidence = 0.5;
inline constexpr double kMaxConfidence = 0.99;

/// The question: a model, an amount of work, and the hardware, price and constraint choices.
struct PlanRequest {
  ModelSpec model;
  /// Tokens to train on (samples x epochs x seq_len when given that way). Exactly one of
  /// train_tokens > 0 or train_steps > 0.
  double train_tokens = 0;
  int64_t train_steps = 0;  ///< optimizer steps (then tokens = steps x global batch x seq_len)
  int64_t seq_len = 0;
  /// Global batch sizes in sequences; one entry = fixed. More than one: the planner may choose,
  /// and warns that the batch size changes convergence.
  std::vector<int64_t> global_batch_sizes;
  std::vector<Precision> precisions = {Precision::kBf16};
  LoraSpec lora;  ///< enabled = fine-tune adapters only
  AttentionImpl attention = AttentionImpl::kFlash;
  bool dropout = false;
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;  ///< TrainingSpec::moe_dispatcher
  double moe_load_imbalance = 1.0;                          ///< TrainingSpec::moe_load_imbalance
  /// TrainingSpec::grad_reduce_bf16 for every plan (every precision must be bf16, fp8 or fp4).
  bool grad_reduce_bf16 = false;
  /// TrainingSpec::fp8_param_gather for the fp8 plans with ZeRO >= 1 (others cannot use it).
  bool fp8_param_gather = false;
  /// The training stack every plan runs on (TrainingSpec::framework); the search only tries the
  /// layouts it can run (StackRunsLayout) and uses its pipeline split.
  FrameworkSpec framework;
  OverheadSpec overhead;
  /// An export format (planner/export.h) the plan is for: the search keeps only layouts it can
  /// express (CheckExportable), so the recommendation is one it writes. Empty: any layout.
  std::string export_format;
  /// Share of each GPU's memory a plan must leave free (FitsWithMargin); in [0, kMaxMemoryMargin].
  double memory_margin = kDefaultMemoryMargin;

  std::vector<std::string> gpus;   ///< GpuSpec ids to consider; must not be empty
  std::vector<std::string> nodes;  ///< NodeTemplate ids; empty = every template of each GPU
  int64_t min_gpus = 1;
  int64_t max_gpus = 0;  ///< >= min_gpus

  std::vector<std::string> providers;  ///< provider ids; empty = all in the hardware db
  PriceKind price_kind = PriceKind::kOnDemand;
  std::map<std::string, double> price_overrides;  ///< gpu id -> $/GPU-hour (provider "override")

  double deadline_s = 0;  ///< 0 = none
  double budget_usd = 0;  ///< 0 = none
  Objective objective = Objective::kCost;

  ReliabilitySpec reliability;  ///< from the hardware db unless the user overrides
  /// Cross-validated residuals each plan's error band is built from (simulator/error_band.h,
  /// hardware-db/calibration/cv_residuals.json); empty: plans carry no band.
  std::vector<BandResidual> band_residuals;
  /// 0: plans are ranked, and checked against the deadline and budget, by their expected wall
  /// time and cost. In [kMinConfidence, kMaxConfidence]: by those times band.Factor(confidence),
  /// the end of the band a run stays under with that probability (`plan --confidence`); needs
  /// band_residuals.
  double confidence = 0;
  /// Measured rates of one GPU type (a profile, simulator/calibration.h): used for that type,
  /// datasheet figures for the others. Not owned; nullptr = datasheet everywhere.
  const MeasuredRates* measured = nullptr;
  int threads = 0;  ///< 0 = hardware concurrency
};

/// Time and money of one plan over the whole job, failures included (planner/reliability.h).
struct PlanEconomics {
  double steps = 0;                  ///< optimizer steps for the requested work
  double tokens = 0;                 ///< tokens processed
  double compute_time_s = 0;         ///< steps x step time: failure-free, no checkpoints
  double checkpoint_bytes = 0;       ///< one checkpoint: weights + optimizer state
  double checkpoint_write_s = 0;     ///< time to write one checkpoint
  double checkpoint_interval_s = 0;  ///< Young/Daly optimum used
  double mtbf_s = 0;                 ///< mean time between interruptions of the whole job
  double expected_interruptions = 0;
  /// Rack-scale templates: spare hosts (trays) in each of the job's scale-up domains, the
  /// probability that a host failure finds none free, and the expected time the job waits for
  /// repairs (part of expected_wall_s; planner/reliability.h). -1, 0, 0 for server templates.
  int64_t spare_hosts_per_domain = -1;
  double no_spare_probability = 0;
  double expected_repair_wait_s = 0;
  double expected_wall_s = 0;  ///< with checkpoints, lost work, restarts and repair waits
  double goodput = 0;          ///< compute_time_s / expected_wall_s, in (0, 1]
  std::string provider;        ///< where the price comes from ("override" for --price)
  std::string offering;
  PriceKind price_kind = PriceKind::kOnDemand;
  double usd_per_gpu_hour = 0;   ///< 0 when no price is known for this GPU
  int64_t billed_gpus = 0;       ///< GPUs paid for: whole instances of the offering
  double expected_cost_usd = 0;  ///< expected_wall_s x billed_gpus x price
  double usd_per_million_tokens = 0;
};

/// One fully specified plan: the job (hardware + layout) and its predicted step and economics.
struct Plan {
  JobSpec job;       ///< model, cluster, training settings, parallel layout
  std::string node;  ///< NodeTemplate id the cluster is built from
  /// GPUs of one host of that template (NodeTemplate::tray_gpus: a GB200 NVL72 tray holds 4 of
  /// the rack's 64); the hosts write checkpoints in parallel. 0: one host per node.
  int64_t gpus_per_host = 0;
  /// Rack-scale templates (hosts smaller than the node): GPUs of the physical scale-up domain the
  /// hosts sit in (the GPU's scaleup.domain_gpus: 72 in a GB200 NVL72 rack); its hosts the job
  /// leaves unused are the spares that replace a failed one (planner/reliability.h). 0 for
  /// server templates.
  int64_t domain_gpus = 0;
  StepResult step;  ///< the analytic cost model's answer, or the event simulator's (below)
  PlanEconomics econ;
  /// The analytic step time when the event simulator re-timed this plan (a finalist); 0 when
  /// `step` is the analytic answer.
  double analytic_step_s = 0;
  /// The error band of the plan's class (BandStack x architecture x GPU count); factors 1 and 0
  /// runs when the request has no residuals.
  ErrorBand band;
  /// What expected wall time and cost are multiplied by where plans are ranked and checked
  /// against the deadline and budget: band.Factor(request.confidence), or 1 without confidence.
  double rank_factor = 1;
};

/// Sets plan->node, plan->gpus_per_host and plan->domain_gpus from the node template `node` of
/// GPU `gpu`.
void PlaceOnTemplate(const NodeTemplate& node, const GpuSpec& gpu, Plan* plan);

/// Sets plan->band and plan->rank_factor for `req` (the plan's job and GPU decide the class).
void AttachBand(const PlanRequest& req, const GpuSpec& gpu, Plan* plan);

/// One row of the scaling table: the best plan on `gpus` GPUs of one type.
struct ScalingRow {
  int64_t gpus = 0;
  bool feasible = false;  ///< a plan fits in memory, with the request's margin, on this many GPUs
  /// Valid when feasible. plan.econ names the provider, offering and $/GPU-hour the row is
  /// costed at (rows may be priced at different providers: see the table's producer).
  Plan plan;
  /// GPUs of the row that speedup and efficiency compare with: the first feasible row.
  int64_t baseline_gpus = 0;
  double speedup = 0;  ///< baseline row's expected wall time / this row's
  /// speedup / (gpus / baseline_gpus): 1 = linear scaling. Above 1 (superlinear) exactly when
  /// this row needs fewer GPU-hours for the job than the baseline, e.g. because more GPUs hold
  /// the model without CPU offload or recomputation.
  double scaling_efficiency = 0;
  /// Why, when scaling_efficiency prints above 100.0%: "fewer GPU-hours than 4 GPUs; the largest
  /// saving is in compute (recomputation full -> none)", naming the part of the job's GPU time
  /// that shrank most and the baseline's layout settings behind that part that differ. The same
  /// words for rows superlinear for the same reason. Empty otherwise.
  std::string superlinear_reason;
};

/// Sets baseline_gpus, speedup, scaling_efficiency and superlinear_reason of every feasible row
/// of `rows` (ascending GPU counts) relative to the first feasible row, from
/// plan.econ.expected_wall_s (and, for the reason, plan.step.breakdown_s, plan.econ and the
/// layouts).
void FillSpeedups(std::vector<ScalingRow>* rows);

/// Counters of one search (printed, and benchmarked).
struct SearchStats {
  int64_t configurations = 0;  ///< layouts enumerated
  int64_t evaluated = 0;       ///< layouts the cost model evaluated (fit in memory)
  int64_t pruned_memory = 0;   ///< rejected by the memory check before timing
  int64_t pruned_invalid = 0;  ///< rejected by divisibility rules (heads % tp, layers % pp, ...)
  double seconds = 0;
  int threads = 1;
  int64_t event_simulated = 0;  ///< finalist layouts re-timed by the event simulator
  double event_seconds = 0;     ///< wall time of those simulations
  /// Evaluated layouts fast enough to keep that the export format cannot express
  /// (PlanRequest::export_format).
  int64_t pruned_export = 0;
};

/// When nothing fits: the smallest footprint found and what would fit instead.
struct NoFitDiagnosis {
  bool any_plan = false;                 ///< true when at least one layout was enumerated
  Plan smallest;                         ///< the layout with the smallest peak memory per GPU
  std::vector<std::string> suggestions;  ///< e.g. "h200-sxm-141gb (141 GB) fits at 64 GPUs"
};

/// The answer.
struct PlanResult {
  PlanRequest request;
  bool found = false;   ///< a plan satisfies every constraint
  Plan recommendation;  ///< valid when found
  /// What bound the recommendation: "deadline", "budget", "max-gpus" (the fastest plan uses all
  /// GPUs allowed), "memory", "communication", "pipeline bubble" or "compute".
  std::string bound;
  std::vector<std::string> explanation;  ///< sentences: why this plan, what the next-best costs
  std::vector<Plan> alternatives;        ///< next-best plans (other GPU types, counts, layouts)
  std::vector<Plan> pareto;              ///< time vs cost front, sorted by expected wall time
  std::string scaling_gpu;               ///< GPU id of the scaling table (the recommended type)
  std::vector<ScalingRow> scaling;       ///< 1, 2, 4, 8, ... GPUs of scaling_gpu
  std::vector<std::string> warnings;     ///< e.g. "global batch varies: convergence changes"
  NoFitDiagnosis no_fit;                 ///< filled when !found
  SearchStats stats;
};

}  // namespace gpuplan

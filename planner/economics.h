// Prices a plan: where the GPU-hours are bought, and what the whole job then costs with
// failures, checkpoints and restarts counted (planner/reliability.h).
#pragma once

#include <string>
#include <vector>

#include "hardware-db/hardware_db.h"
#include "planner/plan.h"

namespace gpuplan {

/// One way to buy GPU-hours of one GPU type.
struct PriceOption {
  std::string provider;  ///< provider id, or "override" for a --price override
  std::string offering;
  PriceKind kind = PriceKind::kOnDemand;
  double usd_per_gpu_hour = 0;   ///< 0: no price known (the plan is ranked by time only)
  int gpus_per_instance = 1;     ///< billing granularity: GPUs are rented in whole instances
  int64_t max_gpus_per_job = 0;  ///< largest job this offering serves; 0 = no limit

  /// Whether a job on `num_gpus` GPUs can be bought this way.
  bool Serves(int64_t num_gpus) const {
    return max_gpus_per_job == 0 || num_gpus <= max_gpus_per_job;
  }
};

/// The price options for `gpu` in node template `node` under `req`: its --price override if
/// any, else every hardware-db price of the requested kind at the requested providers (all when
/// none given) whose offering is that node (a price naming a node template applies to it only;
/// a template named by some price is priced only by those), cheapest first. Empty when none.
std::vector<PriceOption> PriceOptionsFor(const PlanRequest& req, const HardwareDb& db,
                                         const std::string& gpu, const std::string& node);

/// The cheapest of `options` (PriceOptionsFor order) that serves a job of `num_gpus` GPUs; an
/// unpriced option (usd_per_gpu_hour 0, provider "") of `kind` when none does.
PriceOption CheapestServing(const std::vector<PriceOption>& options, int64_t num_gpus,
                            PriceKind kind);
/// Optimizer steps for the request's work at `global_batch` sequences of `seq_len` tokens: its
/// train_steps when given, else ceil(train_tokens / (global_batch x seq_len)).
double StepsFor(const PlanRequest& req, int64_t global_batch, int64_t seq_len);
/// Fills plan->econ from the plan's step time and econ.steps/tokens/compute_time_s: checkpoint
/// size and interval, MTBF, expected wall time and goodput (EvaluateReliability), and the cost
/// = expected wall time x billed GPUs (whole instances) x price.
void PricePlan(const PlanRequest& req, const PriceOption& price, Plan* plan);

/// Whether plan has a known price.
inline bool IsPriced(const Plan& plan) { return plan.econ.usd_per_gpu_hour > 0; }

}  // namespace gpuplan

#include "planner/what_if.h"

#include <algorithm>

#include "planner/economics.h"
#include "simulator/cost_model.h"
#include "simulator/job_spec_json.h"

namespace gpuplan {

Plan EvaluateFixedPlan(const PlanRequest& req, const HardwareDb& db, const JobSpec& job,
                       const std::string& node) {
  Plan plan;
  plan.job = job;
  plan.node = node;
  const GpuSpec& gpu = *db.FindGpu(job.cluster.gpu);
  if (const NodeTemplate* n = db.FindNode(node)) PlaceOnTemplate(*n, gpu, &plan);
  const NetworkSpec& net = *db.FindNetwork(job.cluster.inter_node);
  plan.step = EvaluateStep(job, gpu, net, req.measured);
  // The planner's work accounting (search.cpp), with the job's own batch and sequence length.
  const int64_t global_batch = job.training.global_batch_size;
  const int64_t seq_len = job.training.seq_len;
  plan.econ.steps = StepsFor(req, global_batch, seq_len);
  plan.econ.tokens = plan.econ.steps * static_cast<double>(global_batch * seq_len);
  plan.econ.compute_time_s = plan.econ.steps * plan.step.step_time_s;
  AttachBand(req, gpu, &plan);
  const std::vector<PriceOption> options = PriceOptionsFor(req, db, job.cluster.gpu, node);
  PricePlan(req, CheapestServing(options, job.cluster.num_gpus, req.price_kind), &plan);
  return plan;
}

std::vector<ScalingRow> DataParallelScaling(const PlanRequest& req, const HardwareDb& db,
                                            const JobSpec& job, const std::string& node,
                                            int64_t max_gpus) {
  const ParallelSpec& p = job.parallel;
  const int64_t model_parallel = p.tp * p.pp * p.cp;
  std::vector<int64_t> dps;
  for (int64_t dp = 1; dp * model_parallel <= max_gpus; dp *= 2) dps.push_back(dp);
  if (std::find(dps.begin(), dps.end(), p.dp) == dps.end()) dps.push_back(p.dp);
  std::sort(dps.begin(), dps.end());

  // Machines of the node template; part of one machine for a job smaller than one (the rule of
  // ParseJobSpec).
  const NodeTemplate* machine = db.FindNode(node);
  const int64_t per_node = machine != nullptr ? machine->gpus_per_node : job.cluster.gpus_per_node;
  std::vector<ScalingRow> rows;
  for (const int64_t dp : dps) {
    JobSpec scaled = job;
    scaled.parallel.dp = dp;
    // HSDP keeps its shard group and scales the replicas (a smaller DP shards over all of it).
    if (p.dp_replicate > 1) {
      const int64_t shard = p.DpShard();
      scaled.parallel.dp_replicate = dp % shard == 0 ? dp / shard : 1;
    }
    scaled.cluster.num_gpus = dp * model_parallel;
    scaled.cluster.gpus_per_node = std::min(per_node, scaled.cluster.num_gpus);
    if (!ValidateJob(scaled, db).ok()) continue;
    ScalingRow row;
    row.gpus = scaled.cluster.num_gpus;
    row.plan = EvaluateFixedPlan(req, db, scaled, node);
    row.feasible = FitsWithMargin(row.plan.step.memory, req.memory_margin);
    rows.push_back(std::move(row));
  }
  FillSpeedups(&rows);
  return rows;
}

}  // namespace gpuplan

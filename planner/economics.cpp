#include "planner/economics.h"

#include <algorithm>
#include <cmath>

#include "planner/reliability.h"

namespace gpuplan {

namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
}  // namespace

std::vector<PriceOption> PriceOptionsFor(const PlanRequest& req, const HardwareDb& db,
                                         const std::string& gpu, const std::string& node) {
  std::vector<PriceOption> options;
  if (auto it = req.price_overrides.find(gpu); it != req.price_overrides.end()) {
    options.push_back({"override", "--price", req.price_kind, it->second, 1, 0});
    return options;
  }
  bool node_is_an_offering = false;
  for (const PriceEntry& e : db.prices())
    node_is_an_offering = node_is_an_offering || e.node == node;
  for (const PriceEntry* e : db.FindPrices(gpu, req.price_kind)) {
    if (e->node != (node_is_an_offering ? node : std::string())) continue;
    if (!req.providers.empty() &&
        std::find(req.providers.begin(), req.providers.end(), e->provider) == req.providers.end()) {
      continue;
    }
    options.push_back({e->provider, e->offering, e->kind, e->usd_per_gpu_hour,
                       std::max(1, e->gpus_per_instance), e->max_gpus_per_job});
  }
  return options;
}

PriceOption CheapestServing(const std::vector<PriceOption>& options, int64_t num_gpus,
                            PriceKind kind) {
  for (const PriceOption& option : options) {
    if (option.Serves(num_gpus)) return option;
  }
  return PriceOption{"", "", kind, 0, 1, 0};
}

double StepsFor(const PlanRequest& req, int64_t global_batch, int64_t seq_len) {
  if (req.train_steps > 0) return static_cast<double>(req.train_steps);
  return std::ceil(req.train_tokens / static_cast<double>(global_batch * seq_len));
}

void PricePlan(const PlanRequest& req, const PriceOption& price, Plan* plan) {
  PlanEconomics& econ = plan->econ;
  const ClusterSpec& cluster = plan->job.cluster;
  const int64_t instances = CeilDiv(cluster.num_gpus, price.gpus_per_instance);
  ReliabilityInputs in;
  in.solve_s = econ.compute_time_s;
  in.step_s = plan->step.step_time_s;
  in.checkpoint_bytes = CheckpointBytes(plan->job);
  in.num_gpus = cluster.num_gpus;
  // Checkpoints are written by every host: a server, or each tray of a rack-scale node.
  const int64_t host_gpus = plan->gpus_per_host > 0
                                ? std::min<int64_t>(plan->gpus_per_host, cluster.gpus_per_node)
                                : cluster.gpus_per_node;
  in.num_nodes = CeilDiv(cluster.num_gpus, std::max<int64_t>(1, host_gpus));
  // A rack-scale domain's hosts the job leaves unused are its spares.
  if (plan->domain_gpus > 0 && host_gpus < plan->domain_gpus) {
    const int64_t domain_hosts = plan->domain_gpus / std::max<int64_t>(1, host_gpus);
    in.hosts_per_domain = domain_hosts;
    in.gpus_per_host = host_gpus;
    in.spare_hosts_per_domain =
        std::max<int64_t>(0, domain_hosts - CeilDiv(cluster.gpus_per_node, host_gpus));
  }
  in.instances = instances;
  in.spot = price.kind == PriceKind::kSpot;
  in.spot_preemptions_per_instance_hour =
      req.reliability.SpotPreemptionsPerInstanceHour(price.provider);
  const ReliabilityOutcome r = EvaluateReliability(in, req.reliability);

  econ.checkpoint_bytes = in.checkpoint_bytes;
  econ.checkpoint_write_s = r.checkpoint_write_s;
  econ.checkpoint_interval_s = r.checkpoint_interval_s;
  econ.mtbf_s = r.mtbf_s;
  econ.expected_interruptions = r.expected_interruptions;
  econ.spare_hosts_per_domain = in.hosts_per_domain > 0 ? in.spare_hosts_per_domain : -1;
  econ.no_spare_probability = r.no_spare_probability;
  econ.expected_repair_wait_s = r.expected_repair_wait_s;
  econ.expected_wall_s = r.expected_wall_s;
  econ.goodput = r.goodput;
  econ.provider = price.provider;
  econ.offering = price.offering;
  econ.price_kind = price.kind;
  econ.usd_per_gpu_hour = price.usd_per_gpu_hour;
  econ.billed_gpus = instances * price.gpus_per_instance;
  econ.expected_cost_usd = r.expected_wall_s / kSecondsPerHour *
                           static_cast<double>(econ.billed_gpus) * price.usd_per_gpu_hour;
  econ.usd_per_million_tokens = econ.tokens > 0 ? econ.expected_cost_usd / (econ.tokens / 1e6) : 0;
}

}  // namespace gpuplan

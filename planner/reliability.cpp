#include "planner/reliability.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "simulator/model.h"
#include "simulator/shard.h"

namespace gpuplan {

double CheckpointBytes(const JobSpec& job) {
  const TrainingSpec& tr = job.training;
  const bool fp32 = tr.precision == Precision::kFp32 || tr.precision == Precision::kTf32;
  // Working weight + fp32 master + two Adam moments (fp32 training has no separate master copy).
  const double bytes_per_param = fp32 ? 4.0 + 8.0 : 2.0 + 4.0 + 8.0;
  if (tr.lora.enabled) {
    const double adapters =
        static_cast<double>(job.model.num_layers) * LoraParamsPerLayer(job.model, tr.lora);
    return adapters * bytes_per_param;
  }
  return CountParameters(job.model).total * bytes_per_param;
}

double OptimalCheckpointIntervalSeconds(double checkpoint_s, double mtbf_s) {
  if (checkpoint_s >= 2.0 * mtbf_s) return mtbf_s;
  const double xi = checkpoint_s / (2.0 * mtbf_s);
  return std::sqrt(2.0 * checkpoint_s * mtbf_s) * (1.0 + std::sqrt(xi) / 3.0 + xi / 9.0) -
         checkpoint_s;
}

double ExpectedWallSeconds(double solve_s, double interval_s, double checkpoint_s, double restart_s,
                           double mtbf_s) {
  const double segments = solve_s / interval_s;
  if (!std::isfinite(mtbf_s)) return solve_s + segments * checkpoint_s;
  return mtbf_s * std::exp(restart_s / mtbf_s) * std::expm1((interval_s + checkpoint_s) / mtbf_s) *
         segments;
}

double NoSpareHostProbability(int64_t spare_hosts, int64_t other_hosts, double host_failures_per_s,
                              double repair_s) {
  const double mean_in_repair = static_cast<double>(other_hosts) * host_failures_per_s * repair_s;
  double term = std::exp(-mean_in_repair);  // P(k = 0)
  double below = 0;                         // P(k < spare_hosts)
  for (int64_t k = 0; k < spare_hosts; ++k) {
    below += term;
    term *= mean_in_repair / static_cast<double>(k + 1);
  }
  return std::clamp(1.0 - below, 0.0, 1.0);
}

ReliabilityOutcome EvaluateReliability(const ReliabilityInputs& in, const ReliabilitySpec& spec) {
  ReliabilityOutcome out;
  const double nodes = static_cast<double>(std::max<int64_t>(1, in.num_nodes));
  out.checkpoint_write_s =
      in.checkpoint_bytes / (nodes * spec.checkpoint_write_bytes_per_s_per_node);
  const double rate_per_hour =
      static_cast<double>(in.num_gpus) * spec.interruptions_per_gpu_hour +
      (in.spot ? static_cast<double>(in.instances) * in.spot_preemptions_per_instance_hour : 0.0);
  out.mtbf_s =
      rate_per_hour > 0 ? kSecondsPerHour / rate_per_hour : std::numeric_limits<double>::infinity();
  // Without failures a single checkpoint at the end suffices; otherwise Daly's optimum, on step
  // boundaries, never longer than the job itself.
  const double ideal = std::isfinite(out.mtbf_s) && out.checkpoint_write_s > 0
                           ? OptimalCheckpointIntervalSeconds(out.checkpoint_write_s, out.mtbf_s)
                           : in.solve_s;
  const double steps = std::max(1.0, std::round(std::min(ideal, in.solve_s) / in.step_s));
  out.checkpoint_interval_s = std::min(steps * in.step_s, in.solve_s);
  const double running_s = ExpectedWallSeconds(in.solve_s, out.checkpoint_interval_s,
                                               out.checkpoint_write_s, spec.restart_s, out.mtbf_s);
  out.expected_interruptions = std::isfinite(out.mtbf_s) ? running_s / out.mtbf_s : 0.0;
  // Rack-scale domains: host failures that find no spare host in their domain wait for a repair.
  const double host_failures_per_gpu_s =
      spec.interruptions_per_gpu_hour * spec.host_repair_share / kSecondsPerHour;
  if (in.hosts_per_domain > 0 && host_failures_per_gpu_s > 0) {
    out.no_spare_probability = NoSpareHostProbability(
        in.spare_hosts_per_domain, in.hosts_per_domain - 1,
        static_cast<double>(in.gpus_per_host) * host_failures_per_gpu_s, spec.host_repair_s);
    const double host_failures =
        running_s * static_cast<double>(in.num_gpus) * host_failures_per_gpu_s;
    out.expected_repair_wait_s = host_failures * out.no_spare_probability * spec.host_repair_s /
                                 static_cast<double>(in.spare_hosts_per_domain + 1);
  }
  out.expected_wall_s = running_s + out.expected_repair_wait_s;
  out.goodput = in.solve_s / out.expected_wall_s;
  return out;
}

}  // namespace gpuplan

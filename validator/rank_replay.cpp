#include "validator/rank_replay.h"

#include "common/str_format.h"
#include "validator/replay_transport.h"
#include "validator/step_executor.h"

namespace gpuplan {

Expected<RunMeasurement> ReplayRank(const JobSpec& job, const RankLayout& layout, int64_t rank,
                                    const std::vector<ProgramStep>& program, RankCompute& compute,
                                    const GpuSpec& gpu, const NetworkSpec& net,
                                    const MeasuredRates* rates, const RunOptions& options) {
  if (options.warmup_steps < 0 || options.steps < 1) {
    return Status::Invalid("a run needs steps >= 1 and warm-up steps >= 0");
  }
  if (rank < 0 || rank >= layout.world_size) {
    return Status::Invalid(StrFormat("--rank: %lld is not a rank of this plan (0..%lld)",
                                     static_cast<long long>(rank),
                                     static_cast<long long>(layout.world_size - 1)));
  }
  const double bubble_s = EvaluateStep(job, gpu, net, rates).breakdown_s.bubble;
  ReplayTransport transport(job, layout, rank, gpu, net, rates);
  StepOptions step_options;
  step_options.watchdog_s = options.watchdog_s;
  step_options.compute = &compute;
  RunMeasurement out;
  out.slowest_rank = rank;
  out.peak_memory_rank = rank;
  const double per_step = 1.0 / static_cast<double>(options.steps);
  for (int64_t i = 0; i < options.warmup_steps + options.steps; ++i) {
    if (i == options.warmup_steps) GPUPLAN_RETURN_IF_ERROR(compute.ResetPeaks());
    transport.Reset();
    Expected<StepRunResult> step = RunStep(job, program, transport, step_options);
    if (!step.ok()) return step.status();
    if (i < options.warmup_steps) continue;
    // Communication took no time here: its measured phases are replaced by the prediction.
    TimeBreakdown phases = transport.Predicted();
    phases.compute = step->phases.compute;
    phases.optimizer = step->phases.optimizer;
    phases.bubble = bubble_s;
    const double comm =
        phases.tp_comm + phases.cp_comm + phases.pp_comm + phases.dp_comm + phases.ep_comm;
    out.step_seconds.push_back(step->seconds + comm + bubble_s);
    out.phases.Add(phases, per_step);
  }
  Expected<RankCompute::AllocatorUse> allocator = compute.Allocator();
  if (!allocator.ok()) return allocator.status();
  out.allocator = *allocator;
  out.peak_memory_bytes = compute.Arena().PeakBytes();
  out.parameters = static_cast<int64_t>(compute.Parameters());
  out.trainable_parameters = static_cast<int64_t>(compute.TrainableParameters());
  return out;
}

std::string ReplayNote(int64_t rank, const std::string& backend, const RunMeasurement& measured) {
  const TimeBreakdown& p = measured.phases;
  return StrFormat(
      "rank replay: rank %lld's compute ran alone on this host (%s); its communication (%.4f s "
      "per step) and the pipeline bubble (%.4f s) are the cost model's predictions, added to the "
      "measured time: nothing was exchanged or checked, and only the compute and memory are "
      "measured",
      static_cast<long long>(rank), backend.c_str(),
      p.tp_comm + p.cp_comm + p.pp_comm + p.dp_comm + p.ep_comm, p.bubble);
}

}  // namespace gpuplan

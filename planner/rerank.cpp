#include "planner/rerank.h"

#include <algorithm>

#include "simulator/event_sim.h"

namespace gpuplan {

Status RetimeWithEventSim(const HardwareDb& db, const MeasuredRates* measured,
                          std::vector<Plan>* layouts) {
  EventSimOptions options;
  options.record_timeline = false;
  for (Plan& plan : *layouts) {
    const JobSpec& job = plan.job;
    // A step too large to simulate keeps its analytic time (docs/PLANNER.md).
    if (!CheckEventSimSize(job).ok()) continue;
    const GpuSpec& gpu = *db.FindGpu(job.cluster.gpu);
    const NetworkSpec& net = *db.FindNetwork(job.cluster.inter_node);
    Expected<EventSimResult> sim = SimulateStepEvents(job, gpu, net, options, measured);
    if (!sim.ok()) return sim.status();
    plan.analytic_step_s = plan.step.step_time_s;
    plan.step = WithEventStep(plan.step, *sim);
    plan.econ.compute_time_s = plan.econ.steps * plan.step.step_time_s;
  }
  std::stable_sort(layouts->begin(), layouts->end(), [](const Plan& a, const Plan& b) {
    return a.econ.compute_time_s * a.rank_factor < b.econ.compute_time_s * b.rank_factor;
  });
  return Status::Ok();
}

}  // namespace gpuplan

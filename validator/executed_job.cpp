#include "validator/executed_job.h"

#include <vector>

#include "common/str_format.h"
#include "simulator/cost_model.h"

namespace gpuplan {
namespace {

// The overlap fields of `plan` that apply to its layout and that ExecutedJob turns off.
std::vector<std::string> UnexecutedOverlaps(const JobSpec& plan) {
  const ParallelSpec& p = plan.parallel;
  std::vector<std::string> fields;
  if (p.dp_overlap && p.dp * p.cp > 1) fields.push_back("dp_overlap");
  if (p.tp_overlap) fields.push_back("tp_overlap");
  if (!p.tp_overlap && p.tp > 1 && p.TpBackwardOverlap(plan.training.framework)) {
    fields.push_back("tp_backward_overlap");
  }
  if (p.cp_overlap && p.cp > 1) fields.push_back("cp_overlap");
  if (p.ep_overlap) fields.push_back("ep_overlap");
  return fields;
}

}  // namespace

JobSpec ExecutedJob(const JobSpec& plan) {
  JobSpec job = plan;
  job.parallel.dp_overlap = false;
  job.parallel.tp_overlap = false;
  job.parallel.tp_backward_overlap = false;
  job.parallel.cp_overlap = false;
  job.parallel.ep_overlap = false;
  return job;
}

std::string UnexecutedOverlapNote(const JobSpec& plan, const GpuSpec& gpu, const NetworkSpec& net,
                                  const MeasuredRates* rates, double executed_step_s) {
  const std::vector<std::string> fields = UnexecutedOverlaps(plan);
  if (fields.empty()) return "";
  std::string names;
  for (size_t i = 0; i < fields.size(); ++i) {
    names += (i == 0 ? "" : i + 1 == fields.size() ? " and " : ", ") + fields[i];
  }
  const double overlapped_s = EvaluateStep(plan, gpu, net, rates).step_time_s;
  return StrFormat(
      "the plan's %s %s off in this run and in its prediction: the executor runs every "
      "collective and pipeline message between compute ops, none beside them; as its stack runs "
      "it, with %s, the plan is predicted at %.4f s a step (%+.1f%% against the %.4f s here), "
      "which this run does not check",
      names.c_str(), fields.size() == 1 ? "is" : "are", fields.size() == 1 ? "it" : "them",
      overlapped_s, 100.0 * (overlapped_s / executed_step_s - 1.0), executed_step_s);
}

}  // namespace gpuplan

#include "simulator/ep_overlap.h"

#include <algorithm>

#include "common/str_format.h"
#include "simulator/pipeline_schedule.h"
#include "simulator/step_costs.h"

namespace gpuplan {

double EpOverlapExposedSeconds(const EpOverlapLayer& l) {
  const double a = l.a2a;
  // Communication stream and computation stream, each in issue order.
  const double combine_bwd = a;
  const double attn_fwd = l.attn_fwd;
  const double dispatch_fwd = std::max(combine_bwd, attn_fwd) + a;
  const double mlp_bwd = std::max(attn_fwd, combine_bwd) + l.mlp_bwd;
  const double mlp_wgrad = mlp_bwd + l.mlp_wgrad;
  const double dispatch_bwd = std::max(dispatch_fwd, mlp_bwd) + a;
  const double mlp_fwd = std::max(mlp_wgrad, dispatch_fwd) + l.mlp_fwd;
  const double combine_fwd = std::max(dispatch_bwd, mlp_fwd) + a;
  const double attn_bwd = std::max(mlp_fwd, dispatch_bwd) + l.attn_bwd;
  const double attn_wgrad = attn_bwd + l.attn_wgrad;
  const double pair = std::max(combine_fwd, attn_wgrad);
  const double compute =
      l.attn_fwd + l.attn_bwd + l.attn_wgrad + l.mlp_fwd + l.mlp_bwd + l.mlp_wgrad;
  const double comm = 4.0 * a;
  const double scheduled = std::max(pair - compute, kOverlapInterference * std::min(comm, compute));
  return comm - kEpOverlapEfficiency * std::max(0.0, comm - scheduled);
}

double EpOverlapPairedFraction(const ParallelSpec& p, int64_t microbatches) {
  const double passes = static_cast<double>(microbatches * (p.pp > 1 ? p.vpp : 1));
  if (passes <= 0) return 0.0;
  const double alone = p.pp > 1 ? static_cast<double>(2 * (p.pp - 1) + (p.vpp - 1) * p.pp) : 1.0;
  return std::max(0.0, passes - alone) / passes;
}

std::optional<std::string> EpOverlapProblem(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  if (!job.model.is_moe()) return "needs a mixture-of-experts model";
  if (p.ep < 2) {
    return StrFormat("needs ep > 1 (it hides the expert-parallel all-to-all), got ep %lld",
                     static_cast<long long>(p.ep));
  }
  if (!job.training.framework.ep_overlap) {
    return StrFormat(
        "is Megatron-Core's combined 1F1B schedule; framework %s has none "
        "(frameworks.json: ep_overlap false)",
        job.training.framework.id.c_str());
  }
  if (job.training.precision == Precision::kFp32 || job.training.precision == Precision::kTf32) {
    return std::string(
        "needs a bf16 or fp16 model (Megatron-Core transformer_config.py: "
        "\"overlap_moe_expert_parallel_comm is only supported with bf16 or fp16 model\"); fp8 "
        "and fp4 train a bf16 model");
  }
  if (job.training.recompute == Recompute::kFull) {
    return std::string(
        "needs recompute none or selective (Megatron-Core: \"Disable full recomputation when "
        "enabling overlap_moe_expert_parallel_comm\")");
  }
  if (p.pp > 1 && p.schedule != Schedule::kInterleaved) {
    return StrFormat(
        "with pp > 1 needs the interleaved schedule (vpp > 1; Megatron-Core asserts "
        "virtual_pipeline_model_parallel_size with EP A2A overlap), got schedule %s",
        std::string(ScheduleName(p.schedule)).c_str());
  }
  if (p.pp == 1 && p.schedule != Schedule::k1F1B) {
    return StrFormat("needs schedule 1f1b without pipelining, got %s",
                     std::string(ScheduleName(p.schedule)).c_str());
  }
  return std::nullopt;
}

}  // namespace gpuplan

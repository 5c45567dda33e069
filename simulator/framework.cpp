#include "simulator/framework.h"

#include "common/str_format.h"
#include "simulator/job.h"
#include "simulator/shard.h"

namespace gpuplan {
Status StackRunsLayout(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  const FrameworkSpec& stack = job.training.framework;
  const char* name = stack.id.c_str();
  const struct {
    const char* dim;
    int64_t size;
    const char* what;
  } dims[] = {{"tp", p.tp, "tensor parallelism"},
              {"pp", p.pp, "pipeline parallelism"},
              {"cp", p.cp, "context parallelism"},
              {"ep", p.ep, "expert parallelism"}};
  for (const auto& d : dims) {
    if (d.size > 1 && stack.parallel_dims.count(d.dim) == 0) {
      return Status::Invalid(StrFormat(
          "parallelism: field '%s': %s runs no %s (frameworks.json parallel_dims), got %s %lld; "
          "use %s 1, or another framework",
          d.dim, name, d.what, d.dim, static_cast<long long>(d.size), d.dim));
    }
  }
  if ((p.fsdp && !stack.fsdp) || p.zero_stage > stack.max_zero_stage) {
    const bool no_fsdp = p.fsdp && !stack.fsdp;
    return Status::Invalid(StrFormat(
        "parallelism: field '%s': %s runs ZeRO stages up to %d%s (frameworks.json), got %s; use "
        "zero_stage %d or lower, or another framework",
        no_fsdp ? "fsdp" : "zero_stage", name, stack.max_zero_stage,
        stack.fsdp ? "" : " and no FSDP",
        no_fsdp ? "fsdp true" : StrFormat("zero_stage %d", p.zero_stage).c_str(),
        stack.max_zero_stage));
  }
  if (p.cpu_offload && !stack.cpu_offload) {
    return Status::Invalid(StrFormat(
        "parallelism: field 'cpu_offload': %s keeps the optimizer state on the GPU "
        "(frameworks.json cpu_offload false); set cpu_offload false, or use another framework",
        name));
  }
  if (p.pp > 1 && p.ZeroStage() > stack.max_zero_stage_with_pp) {
    return Status::Invalid(StrFormat(
        "parallelism: field '%s': %s runs ZeRO stages up to %d with pipeline parallelism "
        "(frameworks.json max_zero_stage_with_pp), got %s with pp %lld; use zero_stage %d, pp 1, "
        "or another framework",
        p.fsdp ? "fsdp" : "zero_stage", name, stack.max_zero_stage_with_pp,
        p.fsdp ? "fsdp true" : StrFormat("zero_stage %d", p.zero_stage).c_str(),
        static_cast<long long>(p.pp), stack.max_zero_stage_with_pp));
  }
  if (p.pp > 1 && p.vpp > 1 && !stack.interleaved_pipeline) {
    return Status::Invalid(StrFormat(
        "parallelism: field 'vpp': %s runs no interleaved pipeline schedule (frameworks.json "
        "interleaved_pipeline), got vpp %lld; use vpp 1 (schedule 1f1b), or another framework",
        name, static_cast<long long>(p.vpp)));
  }
  if (p.pp < 2 || p.vpp != 1 || p.pp > job.model.num_layers) return Status::Ok();
  const int64_t microbatches = MicrobatchesPerStep(job);
  if (stack.pipeline_needs_pp_minus_1_microbatches && p.schedule == Schedule::k1F1B &&
      microbatches < p.pp - 1) {
    return Status::Invalid(StrFormat(
        "training: field 'global_batch_size': %s's 1F1B engine needs at least pp - 1 = %lld "
        "micro-batches per step, this job has %lld (global_batch_size / (micro_batch_size x dp))",
        name, static_cast<long long>(p.pp - 1), static_cast<long long>(microbatches)));
  }
  if (stack.pipeline_split != PipelineSplit::kCostBalanced) return Status::Ok();
  const CostBalancedSplit split = CostBalancedPlacement(job.model, p.pp);
  if (split.empty_stage >= 0) {
    return Status::Invalid(
        StrFormat("parallelism: field 'pp': %s's cost-balanced split leaves stage %lld of %lld "
                  "without a block (the LM head weighs %.1f layers); use fewer stages",
                  name, static_cast<long long>(split.empty_stage), static_cast<long long>(p.pp),
                  split.head_in_layers));
  }
  return Status::Ok();
}

}  // namespace gpuplan

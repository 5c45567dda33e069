#include "simulator/framework.h"

#include "common/str_format.h"
#include "simulator/job.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

constexpr FrameworkTraits kFrameworks[] = {
    {Framework::kMegatronCore, "megatron-core",
     "NVIDIA/Megatron-LM megatron/core (tensor_parallel/cross_entropy.py, "
     "distributed/distributed_data_parallel.py, fused SwiGLU and rotary)",
     6.0, 0.0, false, PipelineSplit::kEven, true, 0.0, 0.0},
    {Framework::kNanotron, "nanotron",
     "huggingface/nanotron src/nanotron (parallel/tensor_parallel/functional.py, "
     "optim/gradient_accumulator.py, optim/zero.py, models/llama.py, models/base.py)",
     10.0, 2.0, true, PipelineSplit::kCostBalanced, false, 4.5e-3, 1.75e-3},
};

}  // namespace

std::span<const FrameworkTraits> Frameworks() { return kFrameworks; }

const FrameworkTraits& TraitsOf(Framework f) {
  for (const FrameworkTraits& t : kFrameworks) {
    if (t.id == f) return t;
  }
  return kFrameworks[0];
}

bool ParseFramework(std::string_view name, Framework* out) {
  for (const FrameworkTraits& t : kFrameworks) {
    if (name == t.name) {
      *out = t.id;
      return true;
    }
  }
  return false;
}

std::string FrameworkNames() {
  std::string names;
  for (const FrameworkTraits& t : kFrameworks)
    names += (names.empty() ? "" : ", ") + std::string(t.name);
  return names;
}

Status StackRunsLayout(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  if (job.training.framework != Framework::kNanotron) return Status::Ok();
  if (p.fsdp || p.zero_stage >= 2) {
    return Status::Invalid(StrFormat(
        "parallelism: field '%s': nanotron shards only the optimizer state (ZeRO-1: "
        "optim/zero.py ZeroDistributedOptimizer; its README lists ZeRO-3 as planned), got %s; use "
        "zero_stage 0 or 1, or framework megatron-core",
        p.fsdp ? "fsdp" : "zero_stage",
        p.fsdp ? "fsdp true" : StrFormat("zero_stage %d", p.zero_stage).c_str()));
  }
  if (p.pp < 2 || p.vpp != 1 || p.pp > job.model.num_layers) return Status::Ok();
  const int64_t microbatches = MicrobatchesPerStep(job);
  if (p.schedule == Schedule::k1F1B && microbatches < p.pp - 1) {
    return Status::Invalid(StrFormat(
        "training: field 'global_batch_size': nanotron's 1F1B engine needs at least pp - 1 = %lld "
        "micro-batches per step (parallel/pipeline_parallel/engine.py), this job has %lld "
        "(global_batch_size / (micro_batch_size x dp))",
        static_cast<long long>(p.pp - 1), static_cast<long long>(microbatches)));
  }
  const CostBalancedSplit split = CostBalancedPlacement(job.model, p.pp);
  if (split.empty_stage >= 0) {
    return Status::Invalid(
        StrFormat("parallelism: field 'pp': nanotron's cost-balanced split (models/base.py) leaves "
                  "stage %lld of %lld without a block (the LM head weighs %.1f layers); use fewer "
                  "stages",
                  static_cast<long long>(split.empty_stage), static_cast<long long>(p.pp),
                  split.head_in_layers));
  }
  return Status::Ok();
}

}  // namespace gpuplan

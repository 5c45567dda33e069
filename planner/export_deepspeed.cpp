// DeepSpeed export: the config JSON of deepspeedai/DeepSpeed docs/_pages/config-json.md. JSON has
// no comments, so the provenance line is left out rather than put under an invented key.
#include <nlohmann/json.hpp>

#include "planner/export_formats.h"
#include "simulator/cost_model.h"

namespace gpuplan {
namespace {

constexpr std::string_view kDeepSpeedFormat = "deepspeed";

}  // namespace

Status CheckDeepSpeedExpressible(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  const TrainingSpec& t = job.training;
  const std::string precision(PrecisionName(t.precision));
  // What the config JSON cannot express, one row each: the first that applies is the refusal.
  const struct {
    bool applies;
    std::string reason;
  } refusals[] = {
      {t.lora.enabled,
       "LoRA rank " + std::to_string(t.lora.rank) +
           ": the config JSON has no LoRA/PEFT key (the adapters are applied in the training "
           "script) and no comment to carry one, so the file would train the full model; export "
           "'accelerate' and apply the adapters with Hugging Face PEFT instead"},
      {p.pp > 1, "pp " + std::to_string(p.pp) +
                     ": DeepSpeed pipeline parallelism needs the model rewritten as a "
                     "PipelineModule in code, which a config JSON cannot express; export "
                     "'megatron' instead"},
      {p.cp > 1, "cp " + std::to_string(p.cp) +
                     ": the config JSON has no context (ring) parallelism; export 'megatron' or "
                     "'torchrun-fsdp' instead"},
      {p.ep > 1, "ep " + std::to_string(p.ep) +
                     ": DeepSpeed expert parallelism needs MoE layers built in code; export "
                     "'megatron' or 'torchrun-fsdp' instead"},
      {p.ExpertTp() != p.tp, "etp " + std::to_string(p.ExpertTp()) +
                                 ": the config JSON has no expert tensor parallelism; export "
                                 "'megatron' or 'torchrun-fsdp' instead"},
      {p.tp > 1 && (p.fsdp || p.zero_stage == 3),
       "tp " + std::to_string(p.tp) +
           " with ZeRO-3: DeepSpeed's AutoTP runs with ZeRO stages 0-2 (runtime/engine.py "
           "asserts zero_stage <= 2 with autotp); plan with zero <= 2, or export 'megatron' or "
           "'torchrun-fsdp' instead"},
      {p.dp_replicate > 1,
       "dp_replicate " + std::to_string(p.dp_replicate) +
           " (hybrid sharding): DeepSpeed's MiCS needs the model built under "
           "deepspeed.zero.MiCS_Init in code, and with the usual zero.Init the config's "
           "mics_shard_size fails; export 'megatron' or 'torchrun-fsdp' instead"},
      {t.precision == Precision::kFp8 || t.precision == Precision::kFp4,
       precision + ": the config JSON has no " + precision +
           " switch (it comes from Transformer Engine layers in the model code); export "
           "'megatron' instead"},
  };
  for (const auto& refusal : refusals) {
    if (refusal.applies) return Refuse(kDeepSpeedFormat, refusal.reason);
  }
  return RefuseMegatronOnlyKnobs(kDeepSpeedFormat, job);
}

Expected<std::string> WriteDeepSpeed(const Plan& plan) {
  const JobSpec& job = plan.job;
  GPUPLAN_RETURN_IF_ERROR(CheckDeepSpeedExpressible(job));
  const ParallelSpec& p = job.parallel;
  const TrainingSpec& t = job.training;
  // Buckets of the size the cost model assumed when it predicted the overlap.
  const auto bucket = static_cast<int64_t>(GradBucketParams(job));

  nlohmann::ordered_json ds;
  // "number of GPUs" in DeepSpeed's batch rule is the data-parallel size (world / autotp_size).
  ds["train_batch_size"] = t.global_batch_size;
  ds["train_micro_batch_size_per_gpu"] = t.micro_batch_size;
  ds["gradient_accumulation_steps"] = GradAccumulationSteps(job);
  ds["gradient_clipping"] = 1.0;
  if (t.precision == Precision::kBf16) ds["bf16"] = {{"enabled", true}};
  if (t.precision == Precision::kFp16) ds["fp16"] = {{"enabled", true}};

  const int stage = p.fsdp ? 3 : p.zero_stage;
  nlohmann::ordered_json zero;
  zero["stage"] = stage;
  zero["overlap_comm"] = p.dp_overlap;
  zero["contiguous_gradients"] = true;
  zero["reduce_bucket_size"] = bucket;
  zero["allgather_bucket_size"] = bucket;
  if (stage == 3) {
    zero["stage3_prefetch_bucket_size"] = bucket;
    zero["stage3_param_persistence_threshold"] = 1000000;
    zero["stage3_max_live_parameters"] = 1000000000;
    zero["stage3_max_reuse_distance"] = 1000000000;
    zero["stage3_gather_16bit_weights_on_model_save"] = true;
  }
  if (p.cpu_offload) zero["offload_optimizer"] = {{"device", "cpu"}, {"pin_memory", true}};
  ds["zero_optimization"] = zero;

  if (t.recompute != Recompute::kNone) {
    ds["activation_checkpointing"] = {{"partition_activations", false},
                                      {"cpu_checkpointing", false},
                                      {"contiguous_memory_optimization", false}};
  }
  if (p.tp > 1) {
    ds["tensor_parallel"] = {{"autotp_size", p.tp}, {"tp_overlap_comm", p.tp_overlap}};
  }
  return ds.dump(2) + "\n";
}

}  // namespace gpuplan

// DeepSpeed export: a bash script that runs Megatron-DeepSpeed's pretrain_gpt.py with torchrun,
// the stack the `deepspeed` framework times (frameworks.json), after writing the DeepSpeed config
// JSON it passes to deepspeed.initialize (deepspeedai/DeepSpeed docs/_pages/config-json.md).
// Flag names are those of deepspeedai/Megatron-DeepSpeed megatron/arguments.py and its
// examples_deepspeed scripts; docs/EXPORT.md lists the mapping and the refusals.
#include <nlohmann/json.hpp>

#include "planner/export_formats.h"
#include "simulator/cost_model.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

constexpr std::string_view kDeepSpeedFormat = "deepspeed";

// The config JSON: batch sizes (DeepSpeed checks train_batch_size = micro x accumulation x dp),
// precision, and ZeRO with the buckets the cost model assumed when it predicted the overlap.
nlohmann::ordered_json DeepSpeedConfig(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  const TrainingSpec& t = job.training;
  const auto bucket = static_cast<int64_t>(GradBucketParams(job));
  nlohmann::ordered_json ds;
  ds["train_batch_size"] = t.global_batch_size;
  ds["train_micro_batch_size_per_gpu"] = t.micro_batch_size;
  ds["gradient_accumulation_steps"] = GradAccumulationSteps(job);
  // Under --deepspeed Megatron hands DeepSpeed its bare optimizer: clipping is the config's.
  ds["gradient_clipping"] = 1.0;
  if (t.precision == Precision::kBf16) ds["bf16"] = {{"enabled", true}};
  if (t.precision == Precision::kFp16) ds["fp16"] = {{"enabled", true}};
  const int stage = p.ZeroStage();
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
  ds["steps_per_print"] = 10;
  ds["wall_clock_breakdown"] = false;
  return ds;
}

ArgArray DeepSpeedModelArgs(const JobSpec& job, std::vector<std::string>* notes) {
  const ModelSpec& m = job.model;
  ArgArray a;
  AddMegatronShapeArgs(m, &a);
  if (m.num_kv_heads < m.num_attention_heads) a.Add("--num-key-value-heads", m.num_kv_heads);
  // Learned absolute positions are Megatron-DeepSpeed's default (add_position_embedding).
  AddMegatronSequenceAndMlpArgs(
      job, {"Megatron-DeepSpeed", "", "--use-rotary-position-embeddings", "rmsnorm"}, &a, notes);
  if (!m.HasLinearBiases()) a.Flag("--disable-bias-linear");
  AddMegatronEmbeddingAndDropoutArgs(job, &a, notes);
  return a;
}

ArgArray DeepSpeedParallelArgs(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  ArgArray a;
  a.Add("--tensor-model-parallel-size", p.tp);
  if (p.sequence_parallel && p.tp > 1) a.Flag("--sequence-parallel");
  a.Add("--pipeline-model-parallel-size", p.pp);
  // Without it --deepspeed builds GPTModelPipe on DeepSpeed's PipelineEngine even at pp 1, which
  // asserts ZeRO 0-1; the plan times the plain model.
  if (p.pp == 1) a.Flag("--no-pipeline-parallel");
  a.Add("--zero-stage", p.ZeroStage());  // zero.Init for stage 3; must match the config's stage
  // ZeRO-Offload runs DeepSpeed's CPU Adam, which --cpu-optimizer makes Megatron build.
  if (p.cpu_offload) a.Flag("--cpu-optimizer");
  a.Flag("--deepspeed");
  a.Add("--deepspeed_config", "\"$DS_CONFIG\"");
  return a;
}

ArgArray DeepSpeedTrainingArgs(const Plan& plan) {
  const TrainingSpec& t = plan.job.training;
  ArgArray a;
  AddMegatronBatchArgs(plan, &a);
  if (t.precision == Precision::kBf16) a.Flag("--bf16");
  if (t.precision == Precision::kFp16) a.Flag("--fp16");
  // The stack's attention kernel (frameworks.json attention_kernels): FlashAttention-2.
  if (t.attention != AttentionImpl::kUnfused) a.Flag("--use-flash-attn-v2");
  // examples_deepspeed/pretrain_llama2_distributed.sh: whole layers through DeepSpeed's
  // activation checkpointing, uniform, the only method its pipeline engine runs.
  if (t.recompute == Recompute::kFull) a.Flag("--deepspeed-activation-checkpointing");
  AddMegatronRecomputeArgs(t, &a);
  return a;
}

}  // namespace

Status CheckDeepSpeedExpressible(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  const TrainingSpec& t = job.training;
  const ModelSpec& m = job.model;
  const std::string precision(PrecisionName(t.precision));
  const bool half = t.precision == Precision::kBf16 || t.precision == Precision::kFp16;
  const bool uneven = p.first_stage_layers > 0 || p.last_stage_layers > 0 || p.embedding_slot ||
                      p.loss_slot || !p.stage_layers.empty();
  // What Megatron-DeepSpeed cannot run as planned, one row each: the first that applies is the
  // refusal. What its stack cannot run at all (context parallelism, ZeRO-2/3 or the interleaved
  // schedule with pp > 1) a validated plan of the `deepspeed` framework never has
  // (StackRunsLayout).
  const struct {
    bool applies;
    std::string reason;
  } refusals[] = {
      {t.lora.enabled,
       "LoRA rank " + std::to_string(t.lora.rank) +
           ": Megatron-DeepSpeed's pretrain_gpt.py has no LoRA option, so the script would "
           "train the full model; export 'accelerate' and apply the adapters with Hugging Face "
           "PEFT instead"},
      {m.is_moe(),
       "mixture of experts: Megatron-DeepSpeed builds DeepSpeed MoE layers (one expert FFN as "
       "wide as the dense one every --expert-interval layers, capacity-factor token dropping), "
       "onto which this export does not map the plan's experts; export 'megatron' instead"},
      {p.dp_replicate > 1,
       "dp_replicate " + std::to_string(p.dp_replicate) +
           " (hybrid sharding): DeepSpeed's MiCS needs the model built under "
           "deepspeed.zero.MiCS_Init in code; export 'megatron' or 'torchrun-fsdp' instead"},
      {t.precision == Precision::kFp8 || t.precision == Precision::kFp4,
       precision + ": Megatron-DeepSpeed's GPT model has no " + precision +
           " training switch (Transformer Engine layers); export 'megatron' instead"},
      {!half && t.attention != AttentionImpl::kUnfused,
       precision +
           " with fused attention: flash-attn 2 (--use-flash-attn-v2) runs only in fp16 or bf16, "
           "so Megatron-DeepSpeed would fall back to its unfused attention; plan in bf16, or "
           "with training.attention 'unfused'"},
      {p.pp > 1 && p.schedule == Schedule::kZeroBubbleH1,
       "schedule zb-h1: this export does not map the plan's zero-bubble schedule onto "
       "Megatron-DeepSpeed's --enable-zbh1-pipeline (not checked against the schedule the plan "
       "timed); plan with schedule 1f1b, or export 'megatron'"},
      {p.pp > 1 && uneven,
       "pipeline split " + (uneven ? StageLayersText(job) : "") +
           ": DeepSpeed's PipelineModule balances the transformer layers over the stages itself "
           "(partition_method 'type:transformer'), with no flag for this split; plan with a "
           "layer count that pp divides, or export 'megatron'"},
      {m.attention_window > 0,
       "local attention of " + std::to_string(m.attention_window) +
           " tokens: this export has no mapping for a sliding or chunked window in "
           "Megatron-DeepSpeed; export 'megatron' instead"},
      {m.qkv_bias && !m.HasLinearBiases(),
       "Q/K/V bias without other linear biases: this export maps only all biases or none "
       "(--disable-bias-linear); export 'megatron' instead"},
  };
  for (const auto& refusal : refusals) {
    if (refusal.applies) return Refuse(kDeepSpeedFormat, refusal.reason);
  }
  return RefuseMegatronOnlyKnobs(kDeepSpeedFormat, job);
}

Expected<std::string> WriteDeepSpeed(const Plan& plan, Launcher launcher) {
  const JobSpec& job = plan.job;
  GPUPLAN_RETURN_IF_ERROR(CheckDeepSpeedExpressible(job));
  const ParallelSpec& p = job.parallel;
  PretrainGptScript script;
  script.tool = "Megatron-DeepSpeed";
  script.flags_source =
      "Megatron-DeepSpeed pretrain_gpt.py on DeepSpeed; flags as in megatron/arguments.py, "
      "config keys as in DeepSpeed's config-json.md.";
  script.model = DeepSpeedModelArgs(job, &script.notes);
  script.parallel = DeepSpeedParallelArgs(job);
  script.training = DeepSpeedTrainingArgs(plan);
  if (p.pp > 1 && p.schedule == Schedule::kGpipe) {
    script.notes.push_back(
        "schedule: the plan assumes GPipe; DeepSpeed's TrainSchedule runs 1F1B, which keeps "
        "fewer micro-batches in flight (less memory than predicted, same bubble)");
  }
  if (p.sequence_parallel && p.tp > 1) {
    script.setup =
        "# Megatron-DeepSpeed requires this with sequence parallelism.\n"
        "export CUDA_DEVICE_MAX_CONNECTIONS=1\n\n";
  }
  script.setup +=
      "# The DeepSpeed config: batch sizes, precision, ZeRO (the buckets the plan assumed).\n"
      "DS_CONFIG=${DS_CONFIG:-ds_config.json}\n"
      "cat > \"$DS_CONFIG\" <<'JSON'\n" +
      DeepSpeedConfig(job).dump(2) + "\nJSON\n\n";
  script.data =
      "# Not chosen by the plan. Megatron-DeepSpeed has no mock data: give the dataset and the\n"
      "# tokenizer, whose vocabulary the plan assumed to be " +
      std::to_string(job.model.vocab_size) +
      " tokens.\n"
      "DATA_ARGS=${DATA_ARGS:?set DATA_ARGS to the data and tokenizer flags, e.g. --data-path "
      "PREFIX --tokenizer-type GPTSentencePieceTokenizer --tokenizer-model tokenizer.model}\n";
  return PretrainGptScriptText(plan, script, launcher);
}

}  // namespace gpuplan

// Accelerate export: the config YAML `accelerate launch --config_file` reads, with the keys of
// huggingface/accelerate src/accelerate/commands/config/config_args.py (ClusterConfig), FSDP2 as
// in docs/source/concept_guides/fsdp1_vs_fsdp2.md and parallelism_config as in
// examples/torch_native_parallelism/configs/*.yaml (docs/EXPORT.md).
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "planner/export_formats.h"

namespace gpuplan {
namespace {

constexpr std::string_view kAccelerateFormat = "accelerate";

// Hugging Face transformers decoder-layer classes, chosen by a substring of the model name
// (lowercase). Order matters: the first match wins.
struct LayerClass {
  std::string_view name_part, layer_class;
};
constexpr LayerClass kLayerClasses[] = {
    {"mixtral", "MixtralDecoderLayer"},
    {"mistral", "MistralDecoderLayer"},
    {"llama", "LlamaDecoderLayer"},
    {"qwen2", "Qwen2DecoderLayer"},
    {"deepseek", "DeepseekV3DecoderLayer"},
    {"gpt-2", "GPT2Block"},
    {"gpt2", "GPT2Block"},
    {"mpt", "MptBlock"},
};

std::string_view DecoderLayerClass(const ModelSpec& m) {
  std::string name = m.name;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const LayerClass& c : kLayerClasses) {
    if (name.find(c.name_part) != std::string::npos) return c.layer_class;
  }
  return "";
}

}  // namespace

Status CheckAccelerateExpressible(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  if (p.pp > 1) {
    return Refuse(kAccelerateFormat,
                  "pp " + std::to_string(p.pp) +
                      ": Accelerate's config has no pipeline parallelism; export "
                      "'megatron' or 'torchrun-fsdp' instead");
  }
  if (p.ep > 1) {
    return Refuse(kAccelerateFormat, "ep " + std::to_string(p.ep) +
                                         ": Accelerate's config has no expert parallelism; export "
                                         "'megatron' or 'torchrun-fsdp' instead");
  }
  if (p.ExpertTp() != p.tp) {
    return Refuse(kAccelerateFormat,
                  "etp " + std::to_string(p.ExpertTp()) +
                      ": Accelerate's config has no expert tensor parallelism; export "
                      "'megatron' or 'torchrun-fsdp' instead");
  }
  if (job.training.precision == Precision::kFp4) {
    return Refuse(kAccelerateFormat,
                  "fp4: Accelerate's mixed precision has no NVFP4 recipe; export 'megatron' "
                  "instead");
  }
  if (p.cpu_offload && job.cluster.num_gpus == 1) {
    return Refuse(kAccelerateFormat,
                  "cpu offload on one GPU: Accelerate's offload is FSDP's (fsdp_offload_params), "
                  "and a one-process config runs without FSDP (distributed_type NO), so the "
                  "optimizer state would stay on the GPU; export 'deepspeed' (offload_optimizer) "
                  "instead");
  }
  if ((p.tp > 1 || p.cp > 1) && p.dp > 1 && !p.ShardsModelState()) {
    return Refuse(kAccelerateFormat,
                  "zero 0 with tp or cp: Accelerate's ParallelismConfig rejects pure data "
                  "parallelism (dp_replicate > 1, dp_shard 1) combined with tensor or context "
                  "parallelism; use a sharded plan (zero >= 1) or export 'torchrun-fsdp'");
  }
  return RefuseMegatronOnlyKnobs(kAccelerateFormat, job);
}

namespace {

std::string_view MixedPrecision(Precision p) {
  switch (p) {
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp8:
      return "fp8";
    case Precision::kFp32:
    case Precision::kTf32:
    case Precision::kFp4:  // refused by CheckAccelerateExpressible
    case Precision::kCount:
      break;
  }
  return "no";
}

std::string_view DistributedType(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  if (job.cluster.num_gpus == 1) return "NO";
  if (p.ShardsModelState() || p.tp > 1 || p.cp > 1) return "FSDP";  // ND parallelism needs FSDP2
  return "MULTI_GPU";
}

std::string Bool(bool b) { return b ? "true" : "false"; }

// The Hugging Face module names of the LoRA targets (Llama-style decoders).
std::string LoraModules(uint32_t targets) {
  constexpr std::pair<LoraTarget, const char*> kModules[] = {
      {kLoraQ, "q_proj"},       {kLoraK, "k_proj"},   {kLoraV, "v_proj"},      {kLoraO, "o_proj"},
      {kLoraGate, "gate_proj"}, {kLoraUp, "up_proj"}, {kLoraDown, "down_proj"}};
  std::string names;
  for (const auto& [target, name] : kModules) {
    if ((targets & target) != 0) names += (names.empty() ? "" : ", ") + std::string(name);
  }
  return names + " (Llama-style module names)";
}

// How the script must load the frozen base weights the plan counted at another precision than
// the training one; empty when they are kept as trained.
std::string BaseWeightsLoading(BaseWeights base) {
  switch (base) {
    case BaseWeights::kNf4:
      return "QLoRA: the plan holds the frozen base weights in 4-bit NF4; load the model with "
             "transformers' BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\") "
             "before PEFT, or it needs 4x the weight memory planned";
    case BaseWeights::kFp8:
      return "the plan holds the frozen base weights in fp8; load them quantized (e.g. "
             "transformers' FbgemmFp8Config or FineGrainedFP8Config), or they take twice the "
             "memory planned";
    case BaseWeights::kBf16:
    case BaseWeights::kFp16:
      return std::string("the plan holds the frozen base weights in ") +
             (base == BaseWeights::kBf16 ? "bf16" : "fp16") +
             "; load the model with that torch_dtype";
    case BaseWeights::kSame:
      return "";
  }
  return "";
}

std::string FsdpConfig(const JobSpec& job, std::vector<std::string>* notes) {
  const ParallelSpec& p = job.parallel;
  const bool full_shard = p.fsdp || p.zero_stage == 3;
  std::string y = "fsdp_config:\n  fsdp_version: 2\n";
  y += "  fsdp_reshard_after_forward: " + Bool(full_shard) + "\n";
  if (!full_shard && p.zero_stage > 0) {
    notes->push_back("zero " + std::to_string(p.zero_stage) +
                     ": FSDP2 without resharding after forward (SHARD_GRAD_OP) is the closest "
                     "match; memory is at most the plan's");
  }
  y += "  fsdp_auto_wrap_policy: TRANSFORMER_BASED_WRAP\n";
  const std::string_view layer = DecoderLayerClass(job.model);
  if (!layer.empty()) {
    y += "  fsdp_transformer_layer_cls_to_wrap: " + std::string(layer) + "\n";
  } else {
    notes->push_back("no Hugging Face decoder-layer class is known for " + job.model.name +
                     "; Accelerate then wraps the model's _no_split_modules (or set "
                     "fsdp_transformer_layer_cls_to_wrap)");
  }
  y += "  fsdp_cpu_ram_efficient_loading: true\n";
  y += "  fsdp_offload_params: " + Bool(p.cpu_offload) + "\n";
  if (p.cpu_offload) {
    notes->push_back(
        "cpu offload: FSDP2 offloads parameters and gradients as well as the "
        "optimizer state, more host traffic than the plan assumed");
  }
  y +=
      "  fsdp_activation_checkpointing: " + Bool(job.training.recompute == Recompute::kFull) + "\n";
  y += "  fsdp_state_dict_type: SHARDED_STATE_DICT\n";
  return y;
}

std::string ParallelismConfig(const ParallelSpec& p) {
  return "parallelism_config:\n"
         "  parallelism_config_dp_replicate_size: " +
         std::to_string(p.dp_replicate) +
         "\n"
         "  parallelism_config_dp_shard_size: " +
         std::to_string(p.DpShard()) +
         "\n"
         "  parallelism_config_tp_size: " +
         std::to_string(p.tp) +
         "\n"
         "  parallelism_config_cp_size: " +
         std::to_string(p.cp) + "\n";
}

}  // namespace

Expected<std::string> WriteAccelerate(const Plan& plan, Launcher /*launcher: kPerNode*/) {
  const JobSpec& job = plan.job;
  GPUPLAN_RETURN_IF_ERROR(CheckAccelerateExpressible(job));
  const ParallelSpec& p = job.parallel;
  const TrainingSpec& t = job.training;
  const std::string_view type = DistributedType(job);
  std::vector<std::string> notes;
  std::string body = "compute_environment: LOCAL_MACHINE\ndebug: false\n";
  body += "distributed_type: " + std::string(type) + "\n";
  body += "mixed_precision: " + std::string(MixedPrecision(t.precision)) + "\n";
  body += "num_machines: " + std::to_string(NumNodes(job.cluster)) + "\n";
  body += "num_processes: " + std::to_string(job.cluster.num_gpus) + "\n";
  body += "machine_rank: 0  # per machine: accelerate launch --machine_rank N\n";
  if (NumNodes(job.cluster) > 1) {
    body += "main_process_ip: MASTER_ADDR  # replace with the address of machine_rank 0\n";
    body += "main_process_port: 29500\n";
  }
  body += "main_training_function: main\nrdzv_backend: static\nsame_network: true\n";
  body += "use_cpu: false\n";
  if (type == "FSDP") body += FsdpConfig(job, &notes);
  if (p.tp > 1 || p.cp > 1 || p.dp_replicate > 1) body += ParallelismConfig(p);
  if (t.precision == Precision::kFp8) body += "fp8_config:\n  backend: TE\n  fp8_format: HYBRID\n";

  if (t.recompute == Recompute::kSelective) {
    notes.push_back(
        "selective recompute has no Accelerate key; a fused attention kernel "
        "(attn_implementation flash_attention_2 or sdpa) keeps the same memory");
  } else if (t.recompute == Recompute::kFull && type != "FSDP") {
    notes.push_back("full recompute: call model.gradient_checkpointing_enable() in the script");
  }
  if (p.tp > 1) notes.push_back("tensor parallelism uses the model's Hugging Face tp_plan");
  if (t.lora.enabled) {
    notes.push_back("LoRA rank " + std::to_string(t.lora.rank) + " on " +
                    LoraModules(t.lora.targets) +
                    ": wrap the model with Hugging Face PEFT (LoraConfig target_modules, "
                    "get_peft_model) in the script");
    if (const std::string load = BaseWeightsLoading(t.lora.base); !load.empty()) {
      notes.push_back(load);
    }
  }
  std::vector<std::string> header = HeaderLines(plan);
  header.push_back(
      "Hugging Face Accelerate config: accelerate launch --config_file "
      "accelerate_config.yaml train.py");
  for (const std::string& note : notes) header.push_back("note: " + note);
  return CommentLines(header) + body;
}

}  // namespace gpuplan

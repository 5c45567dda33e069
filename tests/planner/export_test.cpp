// Exporters: every name an exporter writes is one the tool itself defines (the lists below are
// copied from the tools' own sources, cited per list), the plan's values appear under those
// names, and what a tool cannot express is refused with a message saying which format can.
#include "planner/export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "hardware-db/hardware_db.h"
#include "planner/explain.h"
#include "simulator/cost_model.h"
#include "simulator/job_spec_json.h"
#include "tests/model/contains.h"

namespace gpuplan {
namespace {

// NVIDIA/Megatron-LM megatron/training/arguments.py at commit
// 000c4ac24f61159c138b0975def722c65245983c (the argparse groups network size, training,
// distributed, mixed precision, transformer engine, moe, data, tokenizer, learning rate,
// regularization, experimental); a subset, copied verbatim.
const std::set<std::string> kMegatronFlags = {
    "--num-layers",
    "--hidden-size",
    "--ffn-hidden-size",
    "--num-attention-heads",
    "--attention-backend",
    "--kv-channels",
    "--group-query-attention",
    "--num-query-groups",
    "--max-position-embeddings",
    "--position-embedding-type",
    "--rotary-base",
    "--rotary-percent",
    "--use-rope-scaling",
    "--make-vocab-size-divisible-by",
    "--normalization",
    "--norm-epsilon",
    "--swiglu",
    "--squared-relu",
    "--untie-embeddings-and-output-weights",
    "--multi-latent-attention",
    "--mtp-num-layers",
    "--attention-dropout",
    "--hidden-dropout",
    "--weight-decay",
    "--clip-grad",
    "--adam-beta1",
    "--adam-beta2",
    "--adam-eps",
    "--micro-batch-size",
    "--global-batch-size",
    "--rampup-batch-size",
    "--recompute-activations",
    "--recompute-granularity",
    "--recompute-method",
    "--recompute-num-layers",
    "--recompute-modules",
    "--distribute-saved-activations",
    "--tp-comm-overlap",
    "--train-iters",
    "--train-samples",
    "--log-interval",
    "--use-flash-attn",
    "--disable-bias-linear",
    "--add-qkv-bias",
    "--optimizer",
    "--optimizer-cpu-offload",
    "--optimizer-offload-fraction",
    "--sequence-parallel",
    "--no-gradient-accumulation-fusion",
    "--fp16",
    "--bf16",
    "--loss-scale",
    "--accumulate-allreduce-grads-in-fp32",
    "--tensor-model-parallel-size",
    "--pipeline-model-parallel-size",
    "--decoder-first-pipeline-num-layers",
    "--decoder-last-pipeline-num-layers",
    "--pipeline-model-parallel-layout",
    "--num-layers-per-virtual-pipeline-stage",
    "--num-virtual-stages-per-pipeline-rank",
    "--overlap-grad-reduce",
    "--overlap-param-gather",
    "--ddp-bucket-size",
    "--use-distributed-optimizer",
    "--use-megatron-fsdp",
    "--data-parallel-sharding-strategy",
    // Megatron-FSDP's hybrid sharding (its user guide, docs/source/user-guide/features/
    // megatron_fsdp.md: "--outer-dp-sharding-strategy {no_shard, optim}",
    // "--num-distributed-optimizer-instances <int>").
    "--num-distributed-optimizer-instances",
    "--outer-dp-sharding-strategy",
    "--use-torch-fsdp2",
    "--context-parallel-size",
    "--cp-comm-type",
    "--hierarchical-context-parallel-sizes",
    "--fp8-format",
    "--fp8-recipe",
    "--fp8-param-gather",
    "--grad-reduce-in-bf16",
    // megatron/training/arguments.py: --cpu-offloading, --cpu-offloading-num-layers
    // (TransformerConfig.cpu_offloading, cpu_offloading_num_layers).
    "--cpu-offloading",
    "--cpu-offloading-num-layers",
    "--transformer-impl",
    "--expert-model-parallel-size",
    "--expert-tensor-parallel-size",
    "--num-experts",
    "--moe-layer-freq",
    "--moe-ffn-hidden-size",
    "--moe-shared-expert-intermediate-size",
    "--moe-grouped-gemm",
    "--moe-permute-fusion",
    "--moe-router-padding-for-fp8",
    "--moe-router-topk",
    "--moe-router-load-balancing-type",
    "--moe-aux-loss-coeff",
    "--moe-token-dispatcher-type",
    // Window attention and the pipeline split's embedding and loss slots
    // (megatron/training/arguments.py: --window-size tuple_type, --window-attn-skip-freq
    // moe_freq_type; --account-for-embedding-in-pipeline-split, --account-for-loss-in-...).
    "--window-size",
    "--window-attn-skip-freq",
    "--account-for-embedding-in-pipeline-split",
    "--account-for-loss-in-pipeline-split",
    // The flex dispatcher's backend and group-limited routing (megatron/training/arguments.py).
    "--moe-flex-dispatcher-backend",
    "--moe-router-num-groups",
    "--moe-router-group-topk",
    // The combined 1F1B schedule's EP overlap (megatron/training/arguments.py; asserted together
    // in transformer_config.py).
    "--overlap-moe-expert-parallel-comm",
    "--delay-wgrad-compute",
    "--seq-length",
    "--data-path",
    "--split",
    "--mock-data",
    "--vocab-size",
    "--vocab-file",
    "--merge-file",
    "--tokenizer-type",
    "--tokenizer-model",
    "--lr",
    "--min-lr",
    "--lr-decay-style",
    "--lr-warmup-iters",
    "--save",
    "--load",
    "--save-interval",
    "--ckpt-format",
    "--use-precision-aware-optimizer",
    "--main-grads-dtype",
    "--main-params-dtype",
    "--exp-avg-dtype",
    "--exp-avg-sq-dtype",
    "--eval-iters",
    "--eval-interval",
};

// deepspeedai/Megatron-DeepSpeed megatron/arguments.py at commit
// f1feb8877d760b4ceaa0551debbf1cb4026fc9be, with --deepspeed and --deepspeed_config from
// deepspeed.add_config_arguments (underscore spelling only: the parser sets allow_abbrev=False);
// the flags the exporter writes, a subset.
const std::set<std::string> kMegatronDeepSpeedFlags = {
    "--num-layers",
    "--hidden-size",
    "--ffn-hidden-size",
    "--num-attention-heads",
    "--kv-channels",
    "--num-key-value-heads",
    "--seq-length",
    "--max-position-embeddings",
    "--use-rotary-position-embeddings",
    "--swiglu",
    "--normalization",
    "--disable-bias-linear",
    "--untie-embeddings-and-output-weights",
    "--attention-dropout",
    "--hidden-dropout",
    "--tensor-model-parallel-size",
    "--sequence-parallel",
    "--pipeline-model-parallel-size",
    "--no-pipeline-parallel",
    "--zero-stage",
    "--cpu-optimizer",
    "--deepspeed",
    "--deepspeed_config",
    "--micro-batch-size",
    "--global-batch-size",
    "--train-iters",
    "--save-interval",
    "--bf16",
    "--fp16",
    "--use-flash-attn-v2",
    "--recompute-granularity",
    "--recompute-method",
    "--recompute-num-layers",
    "--deepspeed-activation-checkpointing",
    "--lr",
    "--data-path",
    "--tokenizer-type",
    "--tokenizer-model",
};

// torchrun (pytorch torch/distributed/run.py): launcher flags, both spellings it accepts, as
// the reference section B.4 lists them.
const std::set<std::string> kTorchrunFlags = {
    "--nproc_per_node", "--nproc-per-node", "--nnodes",      "--node_rank",   "--node-rank",
    "--master_addr",    "--master-addr",    "--master_port", "--master-port", "--rdzv-backend",
    "--rdzv-endpoint",  "--rdzv-id",        "--standalone",
};

// Slurm's srun(1) and sbatch(1) options the Slurm launcher writes (the man pages of Slurm
// 23.11; torchtitan's multinode_trainer.slurm asks for its nodes with the same sbatch options).
const std::set<std::string> kSrunFlags = {"--ntasks-per-node", "--cpus-per-task",
                                          "--kill-on-bad-exit"};
const std::set<std::string> kSbatchFlags = {"--job-name", "--nodes", "--ntasks-per-node",
                                            "--gpus-per-node", "--exclusive"};

// pytorch/torchtitan torchtitan/config/job_config.py at commit
// 6404b932421f5ce382e7dac5ad381b2c17b1373c (dataclass section.field); a subset.
const std::set<std::string> kTorchtitanOptions = {
    "job.config_file",
    "job.dump_folder",
    "model.name",
    "model.flavor",
    "model.tokenizer_path",
    "model.converters",
    "optimizer.name",
    "optimizer.lr",
    "lr_scheduler.warmup_steps",
    "training.dataset",
    "training.local_batch_size",
    "training.global_batch_size",
    "training.seq_len",
    "training.max_norm",
    "training.steps",
    "training.enable_cpu_offload",
    "training.mixed_precision_param",
    "training.mixed_precision_reduce",
    "training.compile",
    "parallelism.data_parallel_replicate_degree",
    "parallelism.data_parallel_shard_degree",
    "parallelism.fsdp_reshard_after_forward",
    "parallelism.tensor_parallel_degree",
    "parallelism.disable_loss_parallel",
    "parallelism.enable_async_tensor_parallel",
    "parallelism.pipeline_parallel_degree",
    "parallelism.pipeline_parallel_layers_per_stage",
    "parallelism.pipeline_parallel_schedule",
    "parallelism.pipeline_parallel_microbatch_size",
    "parallelism.context_parallel_degree",
    "parallelism.context_parallel_rotate_method",
    "parallelism.expert_parallel_degree",
    "parallelism.expert_parallel_comm_backend",
    // Checkpoint.enable (renamed from enable_checkpoint, torchtitan PR #1607); releases with
    // expert_parallel_comm_backend (PR #2107) have only this name.
    "checkpoint.enable",
    "checkpoint.interval",
    "activation_checkpoint.mode",
    "activation_checkpoint.selective_ac_option",
    "float8.enable_fsdp_float8_all_gather",
    "float8.recipe_name",
};

// deepspeedai/DeepSpeed docs/_pages/config-json.md at commit
// 00376da49967bc6a15d70a550200ac67277b1fb4; keys per object, "" = the top level.
const std::map<std::string, std::set<std::string>> kDeepSpeedKeys = {
    {"",
     {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
      "optimizer", "scheduler", "communication_data_type", "prescale_gradients", "fp16", "bf16",
      "torch_autocast", "gradient_clipping", "zero_optimization", "aio", "activation_checkpointing",
      "tensor_parallel", "steps_per_print", "wall_clock_breakdown"}},
    {"bf16", {"enabled", "bf16_master_weights_and_grads", "bf16_optimizer_states"}},
    {"fp16",
     {"enabled", "auto_cast", "loss_scale", "initial_scale_power", "loss_scale_window",
      "hysteresis", "consecutive_hysteresis", "min_loss_scale"}},
    {"zero_optimization",
     {"stage", "allgather_partitions", "allgather_bucket_size", "overlap_comm", "reduce_scatter",
      "reduce_bucket_size", "contiguous_gradients", "offload_param", "offload_optimizer",
      "stage3_max_live_parameters", "stage3_max_reuse_distance", "stage3_prefetch_bucket_size",
      "stage3_param_persistence_threshold", "sub_group_size",
      "stage3_gather_16bit_weights_on_model_save", "round_robin_gradients",
      "zero_hpz_partition_size", "zero_quantized_weights", "zero_quantized_gradients",
      // MiCS (DeepSpeedZeroConfig.mics_shard_size in deepspeed/runtime/zero/config.py; docs
      // zero3.rst "MiCS Configurations").
      "mics_shard_size"}},
    {"offload_optimizer",
     {"device", "nvme_path", "pin_memory", "ratio", "buffer_count", "fast_init"}},
    {"activation_checkpointing",
     {"partition_activations", "cpu_checkpointing", "contiguous_memory_optimization",
      "number_checkpoints", "synchronize_checkpoint_boundary", "profile"}},
    {"tensor_parallel",
     {"autotp_size", "preset_model", "tp_overlap_comm", "vocab_parallel_lm_head",
      "partition_config"}},
};

// huggingface/accelerate: top level = BaseConfig + ClusterConfig fields of
// src/accelerate/commands/config/config_args.py (commit 6a0677cc2778d9e807f97e386a29eab0522d1731)
// plus parallelism_config (examples/torch_native_parallelism/configs/nd.yaml, commit
// 26db67d53ca44e19fcaa72578c097303e7eab150); fsdp_config keys of
// docs/source/concept_guides/fsdp1_vs_fsdp2.md; fp8_config keys of FP8RecipeKwargs.
const std::map<std::string, std::set<std::string>> kAccelerateKeys = {
    {"",
     {"compute_environment",
      "distributed_type",
      "mixed_precision",
      "use_cpu",
      "debug",
      "num_processes",
      "machine_rank",
      "num_machines",
      "gpu_ids",
      "main_process_ip",
      "main_process_port",
      "rdzv_backend",
      "same_network",
      "main_training_function",
      "enable_cpu_affinity",
      "fp8_config",
      "deepspeed_config",
      "fsdp_config",
      "megatron_lm_config",
      "downcast_bf16",
      "dynamo_config",
      "parallelism_config"}},
    {"fsdp_config",
     {"fsdp_version", "fsdp_reshard_after_forward", "fsdp_auto_wrap_policy",
      "fsdp_transformer_layer_cls_to_wrap", "fsdp_min_num_params", "fsdp_cpu_ram_efficient_loading",
      "fsdp_offload_params", "fsdp_activation_checkpointing", "fsdp_state_dict_type"}},
    {"parallelism_config",
     {"parallelism_config_dp_replicate_size", "parallelism_config_dp_shard_size",
      "parallelism_config_tp_size", "parallelism_config_cp_size",
      "parallelism_config_cp_comm_strategy"}},
    {"fp8_config", {"backend", "fp8_format", "amax_history_len", "amax_compute_algo"}},
};

const HardwareDb& Db() {
  static const Expected<HardwareDb>* const kDb = new Expected<HardwareDb>(LoadHardwareDb({}));
  EXPECT_TRUE(kDb->ok()) << kDb->status().message();
  static const HardwareDb kEmpty;
  return kDb->ok() ? **kDb : kEmpty;
}

// A plan as the planner would hold it: the parsed job, its node template and predicted step.
Plan MakePlan(const nlohmann::json& spec) {
  Plan plan;
  Expected<JobSpec> job = ParseJobSpec(spec, "<test>", ".", Db());
  EXPECT_TRUE(job.ok()) << job.status().message();
  if (!job.ok()) return plan;
  plan.job = *job;
  const GpuSpec& gpu = *Db().FindGpu(plan.job.cluster.gpu);
  plan.node = gpu.default_node;
  plan.step = EvaluateStep(plan.job, gpu, *Db().FindNetwork(plan.job.cluster.inter_node));
  plan.econ.steps = 1000;
  return plan;
}

nlohmann::json Spec(const std::string& model, int gpus, const nlohmann::json& parallelism,
                    const nlohmann::json& training = nlohmann::json::object()) {
  nlohmann::json t = {{"seq_len", 2048},
                      {"global_batch_size", 512},
                      {"micro_batch_size", 1},
                      {"precision", "bf16"}};
  t.update(training);
  return {{"model", model},
          {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", gpus}}},
          {"training", t},
          {"parallelism", parallelism}};
}

// GPT-3 175B, TP 8 x PP 16 x DP 8 on 1024 H100s (Narayanan et al. 2021 style layout).
Plan Gpt3Plan() {
  return MakePlan(
      Spec("gpt3-175b", 1024,
           {{"tp", 8}, {"pp", 16}, {"dp", 8}, {"sequence_parallel", true}, {"zero_stage", 1}},
           {{"global_batch_size", 1536}, {"recompute", "selective"}}));
}

// Llama 3 405B as 7 + 14 x 8 + 7 layers on 16 stages (Megatron-LM's uneven split).
Plan Llama405bUnevenPlan() {
  return MakePlan(Spec("llama3-405b", 128,
                       {{"tp", 8},
                        {"pp", 16},
                        {"sequence_parallel", true},
                        {"zero_stage", 1},
                        {"first_stage_layers", 7},
                        {"last_stage_layers", 7}}));
}

// A plan whose spec failed to parse is empty; exporting it would divide by its zero GPUs.
bool Valid(const Plan& plan) { return plan.job.cluster.num_gpus > 0; }

// `plan` as timed for the stack `format` launches: an export implies its stack (plan --export).
Plan UnderExportStack(Plan plan, std::string_view format) {
  const ExporterSpec* e = FindExporter(format);
  const FrameworkSpec* stack = e ? Db().FindFramework(std::string(e->framework)) : nullptr;
  if (stack != nullptr) plan.job.training.framework = *stack;
  return plan;
}

std::string Export(const Plan& plan, std::string_view format,
                   Launcher launcher = Launcher::kPerNode) {
  if (!Valid(plan)) return std::string();
  Expected<std::string> out = ExportPlan(UnderExportStack(plan, format), format, launcher);
  EXPECT_TRUE(out.ok()) << out.status().message();
  return out.ok() ? *out : std::string();
}

std::string ErrorOf(const Plan& plan, std::string_view format,
                    Launcher launcher = Launcher::kPerNode) {
  if (!Valid(plan)) return std::string();
  Expected<std::string> out = ExportPlan(UnderExportStack(plan, format), format, launcher);
  EXPECT_FALSE(out.ok()) << "expected " << format << " to refuse";
  return out.ok() ? std::string() : out.status().message();
}

// The DeepSpeed config the Megatron-DeepSpeed script writes (its quoted here-document), parsed
// without exceptions; an object, or a failed expectation.
nlohmann::json DeepSpeedJson(const std::string& script) {
  const std::string open = "cat > \"$DS_CONFIG\" <<'JSON'\n";
  const size_t begin = script.find(open);
  const size_t end = script.find("\nJSON\n", begin);
  EXPECT_TRUE(begin != std::string::npos && end != std::string::npos) << "no config:\n" << script;
  if (begin == std::string::npos || end == std::string::npos) return nlohmann::json::object();
  const size_t first = begin + open.size();
  nlohmann::json j = nlohmann::json::parse(script.substr(first, end - first), nullptr, false);
  EXPECT_TRUE(j.is_object()) << "not a JSON object";
  return j.is_object() ? j : nlohmann::json::object();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Every "--name" outside comment lines.
std::vector<std::string> Flags(const std::string& script) {
  static const std::regex kFlag(R"((^|[\s"(])(--[A-Za-z0-9][A-Za-z0-9_.-]*))");
  std::vector<std::string> flags;
  for (const std::string& line : Lines(script)) {
    if (line.starts_with("#")) continue;
    for (std::sregex_iterator it(line.begin(), line.end(), kFlag), end; it != end; ++it) {
      flags.push_back((*it)[2]);
    }
  }
  return flags;
}

void ExpectMegatronFlagsKnown(const std::string& script) {
  for (const std::string& flag : Flags(script)) {
    EXPECT_TRUE(kMegatronFlags.count(flag) || kTorchrunFlags.count(flag) || kSrunFlags.count(flag))
        << flag << " is not a Megatron-LM, torchrun or srun flag";
  }
}

void ExpectMegatronDeepSpeedFlagsKnown(const std::string& script) {
  for (const std::string& flag : Flags(script)) {
    EXPECT_TRUE(kMegatronDeepSpeedFlags.count(flag) || kTorchrunFlags.count(flag) ||
                kSrunFlags.count(flag))
        << flag << " is not a Megatron-DeepSpeed, torchrun or srun flag";
  }
}

void ExpectTorchtitanOptionsKnown(const std::string& script) {
  int options = 0;
  for (const std::string& flag : Flags(script)) {
    if (flag.find('.') != std::string::npos) {
      ++options;
      EXPECT_TRUE(kTorchtitanOptions.count(flag.substr(2)))
          << flag << " is not a torchtitan option";
    } else {
      EXPECT_TRUE(kTorchrunFlags.count(flag) || kSrunFlags.count(flag))
          << flag << " is not a torchrun or srun flag";
    }
  }
  EXPECT_GT(options, 5);
}

void ExpectDeepSpeedKeysKnown(const nlohmann::json& j, const std::string& object) {
  const auto known = kDeepSpeedKeys.find(object);
  ASSERT_NE(known, kDeepSpeedKeys.end()) << "no key list for '" << object << "'";
  for (const auto& [key, value] : j.items()) {
    EXPECT_TRUE(known->second.count(key)) << key << " is not a DeepSpeed key of '" << object << "'";
    if (value.is_object()) ExpectDeepSpeedKeysKnown(value, key);
  }
}

// The accelerate YAML as (section, key, value) rows; section "" is the top level.
struct YamlRow {
  std::string section, key, value;
};
std::vector<YamlRow> ParseYaml(const std::string& yaml) {
  std::vector<YamlRow> rows;
  std::string section;
  for (std::string line : Lines(yaml)) {
    if (line.empty() || line.starts_with("#")) continue;
    if (const size_t hash = line.find(" #"); hash != std::string::npos) line.resize(hash);
    const size_t indent = line.find_first_not_of(' ');
    const size_t colon = line.find(':');
    EXPECT_NE(colon, std::string::npos) << "not a key: " << line;
    if (colon == std::string::npos) continue;
    std::string key = line.substr(indent, colon - indent);
    std::string value = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (indent == 0) {
      section = value.empty() ? key : "";
      rows.push_back({"", key, value});
    } else {
      rows.push_back({section, key, value});
    }
  }
  return rows;
}

std::string YamlValue(const std::vector<YamlRow>& rows, const std::string& section,
                      const std::string& key) {
  for (const YamlRow& r : rows) {
    if (r.section == section && r.key == key) return r.value;
  }
  return "<missing>";
}

void ExpectAccelerateKeysKnown(const std::vector<YamlRow>& rows) {
  for (const YamlRow& r : rows) {
    const auto known = kAccelerateKeys.find(r.section);
    ASSERT_NE(known, kAccelerateKeys.end()) << "unknown section " << r.section;
    EXPECT_TRUE(known->second.count(r.key)) << r.key << " is not an Accelerate key";
  }
}

// ---- the table ------------------------------------------------------------------------------

TEST(Export, TableListsTheFourFormats) {
  std::vector<std::string> names;
  for (const ExporterSpec& e : Exporters()) {
    names.emplace_back(e.name);
    EXPECT_FALSE(e.description.empty());
    EXPECT_FALSE(e.file_name.empty());
    EXPECT_NE(e.write, nullptr);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"megatron", "deepspeed", "torchrun-fsdp", "accelerate"}));
}

TEST(Export, UnknownFormatListsTheAllowedOnes) {
  const std::string error = ErrorOf(Gpt3Plan(), "nemo");
  EXPECT_TRUE(Contains(error, "'nemo'"));
  EXPECT_TRUE(Contains(error, "megatron, deepspeed, torchrun-fsdp, accelerate"));
}

TEST(Export, TextFormatsStartWithProvenanceComment) {
  const Plan plan = MakePlan(Spec("llama3-8b", 8, {{"dp", 8}, {"fsdp", true}}));
  ASSERT_TRUE(Valid(plan));
  for (const ExporterSpec& e : Exporters()) {
    Expected<std::string> out = e.write(plan, Launcher::kPerNode);
    ASSERT_TRUE(out.ok()) << e.name << ": " << out.status().message();
    // Shell scripts start with their interpreter line, so `> train.sh` is runnable as is.
    const std::string shebang = "#!/usr/bin/env bash\n";
    const bool script = e.name != "accelerate";
    EXPECT_TRUE(out->substr(script ? shebang.size() : 0)
                    .starts_with("# generated by gpuplan for plan: Llama 3 8B on 8 x "
                                 "h100-sxm5-80gb"))
        << e.name << ":\n"
        << *out;
    EXPECT_EQ(out->starts_with(shebang), script) << e.name;
  }
}

// ---- launchers ------------------------------------------------------------------------------

TEST(ExportLaunchers, TableListsPerNodeThenSlurm) {
  std::vector<std::string> names;
  for (const LauncherSpec& l : Launchers()) {
    names.emplace_back(l.name);
    EXPECT_FALSE(l.description.empty());
    EXPECT_EQ(FindLauncher(l.name), &l);
    EXPECT_EQ(LauncherName(l.launcher), l.name);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"per-node", "slurm"}));
  EXPECT_EQ(FindLauncher("pbs"), nullptr);
}

// The script exporters under Slurm: #SBATCH lines for the plan's nodes (read by sbatch, so all
// before the first command), srun starting torchrun once per node, a c10d rendezvous at the
// job's first node instead of NODE_RANK and MASTER_ADDR from the environment.
TEST(ExportLaunchers, EveryLaunchScriptBecomesABatchScript) {
  const Plan plan = MakePlan(Spec("llama3-8b", 16, {{"dp", 16}, {"fsdp", true}}));
  ASSERT_TRUE(Valid(plan));
  int scripts = 0;
  for (const ExporterSpec& e : Exporters()) {
    if (!e.launch_script) continue;
    ++scripts;
    const std::string per_node = Export(plan, e.name);
    const std::string slurm = Export(plan, e.name, Launcher::kSlurm);
    EXPECT_FALSE(Contains(per_node, "#SBATCH")) << e.name;
    EXPECT_FALSE(Contains(per_node, "srun ")) << e.name;
    EXPECT_FALSE(Contains(slurm, "NODE_RANK")) << e.name;
    EXPECT_TRUE(Contains(slurm, "# Submit with sbatch from a ")) << e.name;
    EXPECT_TRUE(Contains(slurm, "on a filesystem all 2 nodes mount")) << e.name;
    EXPECT_TRUE(Contains(
        slurm, "MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | sed -n 1p)"))
        << e.name;
    EXPECT_TRUE(Contains(slurm,
                         "srun --ntasks-per-node=1 --cpus-per-task=\"$SLURM_CPUS_ON_NODE\" "
                         "--kill-on-bad-exit=1 \\\n  torchrun "))
        << e.name;
    EXPECT_TRUE(Contains(slurm, "SLURM_JOB_ID")) << e.name;  // the rendezvous id
    std::vector<std::string> directives;
    bool command_seen = false;
    for (const std::string& line : Lines(slurm)) {
      if (line.starts_with("#SBATCH ")) {
        EXPECT_FALSE(command_seen) << e.name << ": sbatch stops at the first command: " << line;
        directives.push_back(line.substr(8));
        const std::string flag = line.substr(8, line.find('=') - 8);
        EXPECT_TRUE(kSbatchFlags.count(flag)) << flag << " is not an sbatch option";
      } else if (!line.empty() && !line.starts_with("#")) {
        command_seen = true;
      }
    }
    EXPECT_EQ(directives,
              (std::vector<std::string>{"--job-name=gpuplan-llama-3-8b", "--nodes=2",
                                        "--ntasks-per-node=1", "--gpus-per-node=8", "--exclusive"}))
        << e.name;
    // The rest of the script is the per-node one: the same tool flags.
    if (e.name == "torchrun-fsdp") {
      ExpectTorchtitanOptionsKnown(slurm);
    } else if (e.name == "deepspeed") {
      ExpectMegatronDeepSpeedFlagsKnown(slurm);
    } else {
      ExpectMegatronFlagsKnown(slurm);
    }
    EXPECT_TRUE(Contains(slurm, "--use-megatron-fsdp") ==
                Contains(per_node, "--use-megatron-fsdp"));
  }
  EXPECT_EQ(scripts, 3);
}

TEST(ExportLaunchers, OneNodeBatchScript) {
  const std::string s = Export(MakePlan(Spec("llama3-8b", 8, {{"dp", 8}, {"fsdp", true}})),
                               "megatron", Launcher::kSlurm);
  EXPECT_TRUE(Contains(s, "\n#SBATCH --nodes=1\n"));
  EXPECT_TRUE(Contains(s, "checkout: srun starts torchrun on the job's node."));
}

// A configuration file is read by its tool's own launcher: only the per-node launcher applies.
TEST(ExportLaunchers, ConfigurationFilesRefuseSlurm) {
  const Plan plan = MakePlan(Spec("llama3-8b", 8, {{"dp", 8}, {"fsdp", true}}));
  const std::string error = ErrorOf(plan, "accelerate", Launcher::kSlurm);
  EXPECT_TRUE(Contains(error, "accelerate: launcher 'slurm': this format is a configuration file"));
  EXPECT_TRUE(Contains(error, "export 'megatron', 'deepspeed', 'torchrun-fsdp'"));
  EXPECT_TRUE(CheckLauncher("accelerate", Launcher::kPerNode).ok());
  EXPECT_FALSE(CheckLauncher("accelerate", Launcher::kSlurm).ok());
  EXPECT_TRUE(CheckLauncher("megatron", Launcher::kSlurm).ok());
  EXPECT_TRUE(Contains(CheckLauncher("nemo", Launcher::kSlurm).message(), "'nemo'"));
  EXPECT_FALSE(CheckExportable("accelerate", plan.job, Launcher::kSlurm).ok());
}

// ---- megatron -------------------------------------------------------------------------------

TEST(ExportMegatron, Gpt3Tp8Pp16) {
  const Plan plan = Gpt3Plan();
  const std::string s = Export(plan, "megatron");
  ExpectMegatronFlagsKnown(s);
  for (const char* part : {"--tensor-model-parallel-size 8\n",
                           "--pipeline-model-parallel-size 16\n",
                           "--sequence-parallel\n",
                           "--use-distributed-optimizer\n",
                           "--overlap-grad-reduce\n",
                           "--overlap-param-gather\n",
                           "--num-layers 96\n",
                           "--hidden-size 12288\n",
                           "--ffn-hidden-size 49152\n",
                           "--num-attention-heads 96\n",
                           "--kv-channels 128\n",
                           "--seq-length 2048\n",
                           "--max-position-embeddings 2048\n",
                           "--position-embedding-type learned_absolute\n",
                           "--micro-batch-size 1\n",
                           "--global-batch-size 1536\n",
                           "--train-iters 1000\n",
                           "--bf16\n",
                           "--recompute-granularity selective\n",
                           "--attention-backend flash\n",
                           "--vocab-size 50257",
                           "GPUS_PER_NODE=8\n",
                           "NNODES=128\n",
                           "export CUDA_DEVICE_MAX_CONNECTIONS=1\n",
                           "pretrain_gpt.py",
                           "# predicted: step "}) {
    EXPECT_TRUE(Contains(s, part));
  }
  // GPT-3: GELU, LayerNorm, biases, tied embeddings, MHA: none of the Llama-style flags.
  for (const char* absent : {"--swiglu", "--normalization", "--disable-bias-linear",
                             "--untie-embeddings-and-output-weights", "--group-query-attention",
                             "--context-parallel-size", "--use-megatron-fsdp"}) {
    EXPECT_FALSE(Contains(s, absent)) << absent;
  }
}

TEST(ExportMegatron, LlamaShapeFsdpAndFullRecompute) {
  const std::string s =
      Export(MakePlan(Spec("llama3-8b", 8, {{"dp", 8}, {"fsdp", true}},
                           {{"seq_len", 8192}, {"global_batch_size", 64}, {"recompute", "full"}})),
             "megatron");
  ExpectMegatronFlagsKnown(s);
  for (const char* part :
       {"--swiglu\n", "--normalization RMSNorm\n", "--group-query-attention\n",
        "--num-query-groups 8\n", "--untie-embeddings-and-output-weights\n",
        "--disable-bias-linear\n", "--position-embedding-type rope\n",
        "--max-position-embeddings 8192\n", "--use-megatron-fsdp\n",
        "--data-parallel-sharding-strategy optim_grads_params\n", "--ckpt-format fsdp_dtensor\n",
        "--recompute-granularity full\n", "--recompute-method uniform\n",
        "--recompute-num-layers 1\n", "--attention-dropout 0.0\n"}) {
    EXPECT_TRUE(Contains(s, part));
  }
  EXPECT_FALSE(Contains(s, "CUDA_DEVICE_MAX_CONNECTIONS")) << "Megatron-FSDP rejects it";
}

// HSDP: the shard group and its replicas in each format's own terms.
TEST(Export, HybridShardingInEveryFormat) {
  const Plan plan =
      MakePlan(Spec("llama3-8b", 32, {{"dp", 32}, {"fsdp", true}, {"dp_replicate", 4}},
                    {{"global_batch_size", 128}}));
  const std::string megatron = Export(plan, "megatron");
  ExpectMegatronFlagsKnown(megatron);
  EXPECT_TRUE(Contains(megatron, "--num-distributed-optimizer-instances 4\n"));
  EXPECT_TRUE(Contains(megatron, "--outer-dp-sharding-strategy no_shard\n"));
  const std::string titan = Export(plan, "torchrun-fsdp");
  ExpectTorchtitanOptionsKnown(titan);
  EXPECT_TRUE(Contains(titan, "--parallelism.data_parallel_replicate_degree 4 "));
  EXPECT_TRUE(Contains(titan, "--parallelism.data_parallel_shard_degree 8 "));
  // DeepSpeed's hybrid sharding (MiCS) needs MiCS_Init in the model code: refused.
  EXPECT_TRUE(Contains(ErrorOf(plan, "deepspeed"),
                       "deepspeed: dp_replicate 4 (hybrid sharding): DeepSpeed's MiCS needs the "
                       "model built under deepspeed.zero.MiCS_Init"));
  const std::vector<YamlRow> rows = ParseYaml(Export(plan, "accelerate"));
  ExpectAccelerateKeysKnown(rows);
  EXPECT_EQ(YamlValue(rows, "parallelism_config", "parallelism_config_dp_replicate_size"), "4");
  EXPECT_EQ(YamlValue(rows, "parallelism_config", "parallelism_config_dp_shard_size"), "8");
  // Without hybrid sharding none of it appears.
  const Plan flat =
      MakePlan(Spec("llama3-8b", 32, {{"dp", 32}, {"fsdp", true}}, {{"global_batch_size", 128}}));
  EXPECT_FALSE(Contains(Export(flat, "megatron"), "--num-distributed-optimizer-instances"));
  EXPECT_FALSE(
      DeepSpeedJson(Export(flat, "deepspeed"))["zero_optimization"].contains("mics_shard_size"));
}

TEST(ExportMegatron, ContextExpertAndVirtualPipelineFp8) {
  const std::string s =
      Export(MakePlan(Spec("mixtral-8x7b", 64,
                           {{"tp", 2},
                            {"pp", 4},
                            {"vpp", 2},
                            {"cp", 2},
                            {"dp", 4},
                            {"ep", 4},
                            {"sequence_parallel", true},
                            {"tp_overlap", true},
                            {"zero_stage", 1},
                            {"cpu_offload", true}},
                           {{"seq_len", 4096}, {"global_batch_size", 64}, {"precision", "fp8"}})),
             "megatron");
  ExpectMegatronFlagsKnown(s);
  for (const char* part :
       {"--context-parallel-size 2\n", "--cp-comm-type p2p\n",
        "--num-layers-per-virtual-pipeline-stage 4\n", "--expert-model-parallel-size 4\n",
        "--num-experts 8\n", "--moe-router-topk 2\n", "--moe-ffn-hidden-size 14336\n",
        "--tp-comm-overlap\n", "--fp8-format hybrid\n", "--bf16\n", "--optimizer-cpu-offload\n",
        "--use-precision-aware-optimizer\n",
        // The experts run as timed: grouped GEMMs, fused permutation; dropless FP8 with 2 local
        // experts pads in the router.
        "--moe-grouped-gemm\n", "--moe-permute-fusion\n", "--moe-router-padding-for-fp8\n"}) {
    EXPECT_TRUE(Contains(s, part)) << part;
  }
  // One local expert per rank (ep 8) needs no padding; bf16 neither.
  const std::string one = Export(
      MakePlan(Spec("mixtral-8x7b", 64,
                    {{"tp", 2}, {"pp", 4}, {"dp", 8}, {"ep", 8}, {"sequence_parallel", true}},
                    {{"seq_len", 4096}, {"global_batch_size", 64}, {"precision", "fp8"}})),
      "megatron");
  EXPECT_TRUE(Contains(one, "--moe-grouped-gemm\n"));
  EXPECT_FALSE(Contains(one, "--moe-router-padding-for-fp8"));
}

// A plan timed with the backward TP collectives in line (parallelism.tp_backward_overlap false)
// has no Megatron-Core flag: the script says it runs them overlapped.
TEST(Export, InLineBackwardTpCollectivesAreNoted) {
  const std::string s =
      Export(MakePlan(Spec("llama3-8b", 16, {{"tp", 2}, {"dp", 8}, {"tp_backward_overlap", false}},
                           {{"seq_len", 4096}, {"global_batch_size", 64}})),
             "megatron");
  EXPECT_TRUE(Contains(s, "tp_backward_overlap false: Megatron-Core always overlaps"));
  const std::string plain = Export(MakePlan(Spec("llama3-8b", 16, {{"tp", 2}, {"dp", 8}},
                                                 {{"seq_len", 4096}, {"global_batch_size", 64}})),
                                   "megatron");
  EXPECT_FALSE(Contains(plain, "tp_backward_overlap"));
}

// Megatron-LM's flags for bf16 gradient reduction and fp8 parameters; the other formats have no
// switch the plan was timed with, and say so.
TEST(Export, Bf16GradientsAndFp8ParametersAreMegatronFlags) {
  const Plan plan = MakePlan(Spec("llama3-8b", 16, {{"dp", 16}, {"zero_stage", 1}},
                                  {{"seq_len", 4096},
                                   {"global_batch_size", 64},
                                   {"precision", "fp8"},
                                   {"grad_reduce_bf16", true},
                                   {"fp8_param_gather", true}}));
  const std::string s = Export(plan, "megatron");
  ExpectMegatronFlagsKnown(s);
  EXPECT_TRUE(Contains(s, "--grad-reduce-in-bf16\n"));
  EXPECT_TRUE(Contains(s, "--fp8-param-gather\n"));
  EXPECT_TRUE(Contains(ErrorOf(plan, "torchrun-fsdp"), "fp8_param_gather: the plan was timed"));
  EXPECT_TRUE(Contains(ErrorOf(plan, "accelerate"), "export 'megatron' instead"));
  const Plan bf16 = MakePlan(Spec("llama3-8b", 16, {{"dp", 16}, {"zero_stage", 1}},
                                  {{"seq_len", 4096}, {"grad_reduce_bf16", true}}));
  EXPECT_TRUE(Contains(ErrorOf(bf16, "deepspeed"), "grad_reduce_bf16: the plan was timed"));
}

TEST(Export, ActivationOffloadIsMegatronFlags) {
  const Plan plan = MakePlan(Spec("llama3-8b", 8, {{"dp", 8}, {"zero_stage", 1}},
                                  {{"seq_len", 8192}, {"activation_offload_layers", 16}}));
  const std::string s = Export(plan, "megatron");
  ExpectMegatronFlagsKnown(s);
  EXPECT_TRUE(Contains(s, "--cpu-offloading\n  --cpu-offloading-num-layers 16\n"));
  EXPECT_TRUE(
      Contains(ErrorOf(plan, "deepspeed"), "activation_offload_layers: the plan was timed"));
}

TEST(ExportMegatron, UnevenPipelineStages) {
  // Llama 3 405B as 7 + 14 x 8 + 7 layers on 16 stages.
  std::string s = Export(Llama405bUnevenPlan(), "megatron");
  ExpectMegatronFlagsKnown(s);
  EXPECT_TRUE(Contains(s,
                       "--pipeline-model-parallel-size 16\n  "
                       "--decoder-first-pipeline-num-layers 7\n  "
                       "--decoder-last-pipeline-num-layers 7\n"));
  EXPECT_FALSE(Contains(s, "virtual"));
  // Interleaved: Megatron-LM takes the virtual stages per rank with an uneven pipeline.
  s = Export(MakePlan(Spec("llama3-405b", 64,
                           {{"tp", 8},
                            {"pp", 8},
                            {"vpp", 2},
                            {"sequence_parallel", true},
                            {"zero_stage", 1},
                            {"first_stage_layers", 14},
                            {"last_stage_layers", 16}})),
             "megatron");
  ExpectMegatronFlagsKnown(s);
  for (const char* part :
       {"--decoder-first-pipeline-num-layers 14\n", "--decoder-last-pipeline-num-layers 16\n",
        "--num-virtual-stages-per-pipeline-rank 2\n"}) {
    EXPECT_TRUE(Contains(s, part)) << part;
  }
  EXPECT_FALSE(Contains(s, "--num-layers-per-virtual-pipeline-stage"));
}

TEST(ExportMegatron, DeepSeekSharedExpertsAndDenseLayers) {
  const std::string s = Export(MakePlan(Spec("deepseek-v3", 64,
                                             {{"tp", 8},
                                              {"pp", 1},
                                              {"dp", 8},
                                              {"ep", 8},
                                              {"sequence_parallel", true},
                                              {"zero_stage", 1}})),
                               "megatron");
  ExpectMegatronFlagsKnown(s);
  EXPECT_TRUE(Contains(s, "--moe-shared-expert-intermediate-size 2048\n"));
  EXPECT_TRUE(Contains(s, "--moe-layer-freq \"([0]*3+[1]*58)\"\n"));
  EXPECT_TRUE(Contains(s, "--kv-channels 96\n"));
  EXPECT_TRUE(Contains(s, "# note: model note: MLA approximated"));
}

// The flags set no local attention: the script says so rather than training another model.
TEST(ExportMegatron, LocalAttentionSetsTheWindow) {
  // Transformer Engine's window (left, right) covers keys i - left .. i + right: w keys are
  // (w - 1, 0).
  Plan plan = MakePlan(Spec("mistral-7b", 8, {{"tp", 8}, {"sequence_parallel", true}}));
  const std::string all = Export(plan, "megatron");
  ExpectMegatronFlagsKnown(all);
  EXPECT_TRUE(Contains(all, "--window-size 4095,0\n"));
  EXPECT_FALSE(Contains(all, "--window-attn-skip-freq"));
  // Every other layer local (Gemma 2's pattern): one full layer after each window layer.
  plan.job.model.local_attention_layers = 16;
  const std::string half = Export(plan, "megatron");
  EXPECT_TRUE(Contains(half, "--window-attn-skip-freq 2\n"));
  EXPECT_TRUE(Contains(half,
                       "# note: local attention: one full-attention layer after every 1 "
                       "window layers"));
  // Chunks are not a window: refused rather than run as one.
  plan.job.model.attention_chunked = true;
  EXPECT_TRUE(Contains(ErrorOf(plan, "megatron"), "megatron: chunked attention of 4096 tokens"));
}

TEST(ExportMegatron, PipelineSlotsAndRefusals) {
  const std::string slots =
      Export(MakePlan(Spec("llama3-70b", 24,
                           {{"tp", 8},
                            {"pp", 3},
                            {"sequence_parallel", true},
                            {"account_for_embedding_in_pipeline_split", true}},
                           {{"global_batch_size", 24}})),
             "megatron");
  EXPECT_TRUE(Contains(slots, "--account-for-embedding-in-pipeline-split\n"));
  EXPECT_FALSE(Contains(slots, "--account-for-loss-in-pipeline-split"));
  // validate_args: "Expert parallelism is not supported with fp16 training."
  const Plan fp16 = MakePlan(Spec("mixtral-8x7b", 16,
                                  {{"tp", 2}, {"dp", 8}, {"ep", 8}, {"sequence_parallel", true}},
                                  {{"precision", "fp16"}, {"global_batch_size", 64}}));
  EXPECT_TRUE(Contains(ErrorOf(fp16, "megatron"), "megatron: fp16 with ep 8"));
  const Plan zb = MakePlan(Spec("llama3-8b", 16,
                                {{"pp", 4}, {"dp", 4}, {"zero_stage", 1}, {"schedule", "zb-h1"}},
                                {{"global_batch_size", 64}}));
  EXPECT_TRUE(Contains(ErrorOf(zb, "megatron"), "megatron: schedule zb-h1"));
  EXPECT_TRUE(Contains(ErrorOf(zb, "torchrun-fsdp"), "torchrun-fsdp: schedule zb-h1"));
}

TEST(Export, DeepEpDispatcherAndGroupLimitedRouting) {
  const Plan plan =
      MakePlan(Spec("deepseek-v3", 64, {{"tp", 1}, {"dp", 64}, {"ep", 64}, {"zero_stage", 1}},
                    {{"moe_dispatcher", "deepep"}}));
  const std::string megatron = Export(plan, "megatron");
  ExpectMegatronFlagsKnown(megatron);
  EXPECT_TRUE(Contains(megatron, "--moe-token-dispatcher-type flex\n"));
  EXPECT_TRUE(Contains(megatron, "--moe-flex-dispatcher-backend deepep\n"));
  EXPECT_TRUE(Contains(megatron, "--moe-router-num-groups 8\n"));
  EXPECT_TRUE(Contains(megatron, "--moe-router-group-topk 4\n"));
  EXPECT_TRUE(
      Contains(Export(plan, "torchrun-fsdp"), "--parallelism.expert_parallel_comm_backend deepep"));
  EXPECT_FALSE(Contains(megatron, "--overlap-moe-expert-parallel-comm"));
}

TEST(Export, EpOverlapIsMegatronsCombinedSchedule) {
  const Plan plan =
      MakePlan(Spec("deepseek-v3", 64,
                    {{"tp", 1}, {"dp", 64}, {"ep", 64}, {"zero_stage", 1}, {"ep_overlap", true}},
                    {{"moe_dispatcher", "deepep"}}));
  const std::string megatron = Export(plan, "megatron");
  ExpectMegatronFlagsKnown(megatron);
  EXPECT_TRUE(Contains(megatron, "--overlap-moe-expert-parallel-comm"));
  EXPECT_TRUE(Contains(megatron, "--delay-wgrad-compute"));
  const std::string error = ErrorOf(plan, "torchrun-fsdp");
  EXPECT_TRUE(Contains(error, "ep_overlap")) << error;
  EXPECT_TRUE(Contains(error, "'megatron'")) << error;
}

// A selective recomputation of other modules than the core attention is Megatron-LM's
// --recompute-modules; the formats of other stacks cannot express it.
TEST(Export, RecomputeModulesAreMegatronFlags) {
  const Plan plan = MakePlan(
      Spec("mixtral-8x7b", 64,
           {{"tp", 2}, {"dp", 32}, {"ep", 8}, {"sequence_parallel", true}, {"zero_stage", 1}},
           {{"recompute", "selective"}, {"recompute_modules", {"layernorm", "moe_act"}}}));
  const std::string megatron = Export(plan, "megatron");
  ExpectMegatronFlagsKnown(megatron);
  EXPECT_TRUE(Contains(megatron, "--recompute-granularity selective\n"));
  EXPECT_TRUE(Contains(megatron, "--recompute-modules layernorm moe_act\n")) << megatron;
  EXPECT_FALSE(Contains(
      Export(MakePlan(Spec(
                 "mixtral-8x7b", 64,
                 {{"tp", 2}, {"dp", 32}, {"ep", 8}, {"sequence_parallel", true}, {"zero_stage", 1}},
                 {{"recompute", "selective"}})),
             "megatron"),
      "--recompute-modules"));
  // The plan's explanation states the assumption.
  const std::vector<std::string> assumed = LayoutAssumptions(plan);
  EXPECT_TRUE(std::any_of(assumed.begin(), assumed.end(), [](const std::string& a) {
    return a.rfind(
               "Assumed for the recomputed modules: Megatron-Core --recompute-granularity "
               "selective --recompute-modules layernorm moe_act; each MoE layer's pre-MLP "
               "norm output and routed experts' activation output are discarded",
               0) == 0;
  }));
  const std::string error = ErrorOf(plan, "torchrun-fsdp");
  EXPECT_TRUE(Contains(error, "recompute_modules layernorm, moe_act")) << error;
  EXPECT_TRUE(Contains(error, "'megatron'")) << error;
}

TEST(ExportMegatron, RefusesLoraAndPointsToAccelerate) {
  const std::string error =
      ErrorOf(MakePlan(Spec("llama3-8b", 8, {{"dp", 8}}, {{"lora", {{"rank", 16}}}})), "megatron");
  EXPECT_TRUE(Contains(error, "megatron: "));
  EXPECT_TRUE(Contains(error, "LoRA"));
  EXPECT_TRUE(Contains(error, "'accelerate'"));
}

// ---- deepspeed ------------------------------------------------------------------------------

TEST(ExportDeepSpeed, Zero3KeysAndBatchIdentity) {
  const Plan plan =
      MakePlan(Spec("llama3-8b", 16, {{"dp", 16}, {"fsdp", true}},
                    {{"global_batch_size", 256}, {"micro_batch_size", 2}, {"recompute", "full"}}));
  const std::string s = Export(plan, "deepspeed");
  ExpectMegatronDeepSpeedFlagsKnown(s);
  const nlohmann::json j = DeepSpeedJson(s);
  ExpectDeepSpeedKeysKnown(j, "");
  EXPECT_EQ(j["train_batch_size"], 256);
  EXPECT_EQ(j["train_micro_batch_size_per_gpu"], 2);
  EXPECT_EQ(j["train_batch_size"].get<int64_t>(),
            j["train_micro_batch_size_per_gpu"].get<int64_t>() *
                j["gradient_accumulation_steps"].get<int64_t>() * plan.job.parallel.dp);
  EXPECT_EQ(j["bf16"]["enabled"], true);
  EXPECT_FALSE(j.contains("fp16"));
  EXPECT_EQ(j["zero_optimization"]["stage"], 3);
  EXPECT_TRUE(j["zero_optimization"].contains("stage3_prefetch_bucket_size"));
  EXPECT_FALSE(j["zero_optimization"].contains("offload_optimizer"));
  // Recomputation and parallelism are Megatron-DeepSpeed flags, not config keys.
  EXPECT_FALSE(j.contains("activation_checkpointing"));
  EXPECT_FALSE(j.contains("tensor_parallel"));
  for (const char* part :
       {"--zero-stage 3\n", "--no-pipeline-parallel\n", "--deepspeed\n",
        "--deepspeed_config \"$DS_CONFIG\"\n", "--deepspeed-activation-checkpointing\n",
        "--recompute-granularity full\n  --recompute-method uniform\n", "--bf16\n",
        "--use-flash-attn-v2\n", "--micro-batch-size 2\n  --global-batch-size 256\n",
        "--num-key-value-heads 8\n", "--use-rotary-position-embeddings\n", "--swiglu\n",
        "--normalization rmsnorm\n", "--untie-embeddings-and-output-weights\n",
        "torchrun \"${DISTRIBUTED_ARGS[@]}\" pretrain_gpt.py"}) {
    EXPECT_TRUE(Contains(s, part)) << part;
  }
  // No sequence parallelism, so no CUDA_DEVICE_MAX_CONNECTIONS; the data is the user's.
  EXPECT_FALSE(Contains(s, "CUDA_DEVICE_MAX_CONNECTIONS"));
  EXPECT_TRUE(Contains(s, "DATA_ARGS=${DATA_ARGS:?"));
}

TEST(ExportDeepSpeed, TensorParallelAndCpuOffload) {
  const Plan plan = MakePlan(Spec("llama3-8b", 8,
                                  {{"tp", 2}, {"dp", 4}, {"zero_stage", 2}, {"cpu_offload", true}},
                                  {{"precision", "fp16"}, {"global_batch_size", 64}}));
  const std::string s = Export(plan, "deepspeed");
  ExpectMegatronDeepSpeedFlagsKnown(s);
  EXPECT_TRUE(Contains(s, "--tensor-model-parallel-size 2\n"));
  EXPECT_TRUE(Contains(s, "--cpu-optimizer\n"));
  EXPECT_TRUE(Contains(s, "--fp16\n"));
  const nlohmann::json j = DeepSpeedJson(s);
  ExpectDeepSpeedKeysKnown(j, "");
  EXPECT_EQ(j["zero_optimization"]["stage"], 2);
  EXPECT_FALSE(j["zero_optimization"].contains("stage3_prefetch_bucket_size"));
  EXPECT_EQ(j["zero_optimization"]["offload_optimizer"]["device"], "cpu");
  EXPECT_EQ(j["zero_optimization"]["offload_optimizer"]["pin_memory"], true);
  EXPECT_EQ(j["fp16"]["enabled"], true);
  // "number of GPUs" in the batch rule is the data-parallel size: 8 GPUs / tp 2.
  EXPECT_EQ(j["train_batch_size"].get<int64_t>(),
            j["train_micro_batch_size_per_gpu"].get<int64_t>() *
                j["gradient_accumulation_steps"].get<int64_t>() * 4);
}

// GPT-3 175B on TP 8 x PP 16 runs on DeepSpeed's PipelineEngine (GPTModelPipe) with ZeRO-1.
TEST(ExportDeepSpeed, PipelinesRunOnTheEngineWithZeroOneAtMost) {
  const std::string s = Export(Gpt3Plan(), "deepspeed");
  ExpectMegatronDeepSpeedFlagsKnown(s);
  for (const char* part :
       {"--tensor-model-parallel-size 8\n  --sequence-parallel\n  "
        "--pipeline-model-parallel-size 16\n  --zero-stage 1\n",
        "export CUDA_DEVICE_MAX_CONNECTIONS=1\n", "--recompute-granularity selective\n",
        "--max-position-embeddings 2048\n", "NNODES=128\n"}) {
    EXPECT_TRUE(Contains(s, part)) << part;
  }
  EXPECT_FALSE(Contains(s, "--no-pipeline-parallel"));
  EXPECT_FALSE(Contains(s, "--use-rotary-position-embeddings"));  // GPT-3 learns its positions
  // What the engine cannot run at all, a job of the deepspeed stack does not pass its checks
  // with (StackRunsLayout), so no such plan reaches the exporter.
  auto error_of_deepspeed_job = [](const nlohmann::json& extra) {
    nlohmann::json par = {{"tp", 8}, {"pp", 16}, {"dp", 8}, {"sequence_parallel", true}};
    par.update(extra);
    Expected<JobSpec> job = ParseJobSpec(
        Spec("gpt3-175b", 1024, par, {{"global_batch_size", 1536}, {"framework", "deepspeed"}}),
        "<test>", ".", Db());
    return job.ok() ? std::string() : job.status().message();
  };
  EXPECT_TRUE(Contains(error_of_deepspeed_job({{"zero_stage", 2}}),
                       "deepspeed runs ZeRO stages up to 1 with pipeline parallelism"));
  EXPECT_TRUE(Contains(error_of_deepspeed_job({{"vpp", 2}, {"zero_stage", 1}}),
                       "deepspeed runs no interleaved pipeline schedule"));
  EXPECT_EQ(error_of_deepspeed_job({{"zero_stage", 1}}), "");
  // Megatron's uneven split is not DeepSpeed's balanced one.
  EXPECT_TRUE(Contains(
      ErrorOf(Llama405bUnevenPlan(), "deepspeed"),
      "deepspeed: pipeline split 7+8+8+8+8+8+8+8+8+8+8+8+8+8+8+7: DeepSpeed's PipelineModule"));
}

TEST(ExportDeepSpeed, RefusesMoeAndFp8) {
  EXPECT_TRUE(
      Contains(ErrorOf(MakePlan(Spec("mixtral-8x7b", 8, {{"dp", 8}, {"ep", 8}})), "deepspeed"),
               "deepspeed: mixture of experts"));
  EXPECT_TRUE(Contains(
      ErrorOf(MakePlan(Spec("llama3-8b", 8, {{"dp", 8}}, {{"precision", "fp8"}})), "deepspeed"),
      "fp8"));
  // flash-attn 2 needs 16-bit inputs: fp32 only with the unfused attention the plan then timed.
  EXPECT_TRUE(Contains(
      ErrorOf(MakePlan(Spec("llama3-8b", 8, {{"dp", 8}}, {{"precision", "fp32"}})), "deepspeed"),
      "deepspeed: fp32 with fused attention"));
  const std::string fp32 = Export(MakePlan(Spec("llama3-8b", 8, {{"dp", 8}},
                                                {{"precision", "fp32"}, {"attention", "unfused"}})),
                                  "deepspeed");
  EXPECT_FALSE(Contains(fp32, "--use-flash-attn-v2"));
  EXPECT_FALSE(Contains(fp32, "--bf16"));
}

TEST(ExportDeepSpeed, RefusesLoraRatherThanDroppingItAndNamesAccelerate) {
  // pretrain_gpt.py has no adapters: exporting would silently train the full model.
  const std::string error =
      ErrorOf(MakePlan(Spec("llama3-8b", 8, {{"dp", 8}}, {{"lora", {{"rank", 16}}}})), "deepspeed");
  EXPECT_TRUE(Contains(error, "deepspeed: LoRA rank 16")) << error;
  EXPECT_TRUE(Contains(error, "'accelerate'")) << error;
  EXPECT_TRUE(Contains(
      ErrorOf(MakePlan(Spec("llama3-8b", 1, {}, {{"lora", {{"rank", 8}, {"base", "nf4"}}}})),
              "deepspeed"),
      "LoRA rank 8"));
}

// ---- torchrun-fsdp --------------------------------------------------------------------------

TEST(ExportTorchrun, Gpt3Tp8Pp16) {
  const std::string s = Export(Gpt3Plan(), "torchrun-fsdp");
  ExpectTorchtitanOptionsKnown(s);
  for (const char* part :
       {"--nnodes=\"$NNODES\"", "NNODES=128\n", "NPROC_PER_NODE=8\n", "--rdzv-backend=c10d",
        "-m torchtitan.train", "--parallelism.tensor_parallel_degree 8 ",
        "--parallelism.pipeline_parallel_degree 16 ",
        "--parallelism.pipeline_parallel_schedule 1F1B ",
        "--parallelism.data_parallel_shard_degree 8 ",
        "--parallelism.data_parallel_replicate_degree 1 ",
        "--parallelism.fsdp_reshard_after_forward never ", "--training.seq_len 2048 ",
        "--training.global_batch_size 1536 ", "--training.local_batch_size 192 ",
        "--parallelism.pipeline_parallel_microbatch_size 1 ",
        "--activation_checkpoint.mode selective ", "--training.steps 1000 ",
        "# note: zero 1: FSDP2 has no optimizer-only sharding"}) {
    EXPECT_TRUE(Contains(s, part));
  }
  EXPECT_TRUE(Contains(s, "torchtitan has no built-in flavor"))
      << "GPT-3 is not a torchtitan model";
}

TEST(ExportTorchrun, LlamaFlavorDdpAndInterleaved) {
  const std::string ddp = Export(MakePlan(Spec("llama3-8b", 8, {{"dp", 8}})), "torchrun-fsdp");
  ExpectTorchtitanOptionsKnown(ddp);
  EXPECT_TRUE(Contains(ddp, "--model.name llama3 \\\n  --model.flavor 8B"));
  EXPECT_TRUE(Contains(ddp, "--parallelism.data_parallel_replicate_degree 8 "));
  EXPECT_TRUE(Contains(ddp, "--parallelism.data_parallel_shard_degree 1 "));
  EXPECT_TRUE(Contains(ddp, "--activation_checkpoint.mode none"));

  // 80 layers + embedding + output = 82 units; 11 per stage gives ceil(82 / 11) = 8 = pp x vpp.
  const std::string vpp =
      Export(MakePlan(Spec("llama3-70b", 64,
                           {{"tp", 8}, {"pp", 2}, {"vpp", 4}, {"dp", 4}, {"zero_stage", 3}})),
             "torchrun-fsdp");
  ExpectTorchtitanOptionsKnown(vpp);
  EXPECT_TRUE(Contains(vpp, "--parallelism.pipeline_parallel_schedule Interleaved1F1B "));
  EXPECT_TRUE(Contains(vpp, "--parallelism.pipeline_parallel_layers_per_stage 11 "));
  EXPECT_TRUE(Contains(vpp, "--parallelism.fsdp_reshard_after_forward always "));
}

TEST(ExportTorchrun, RefusesVirtualStagesTorchtitanCannotSplit) {
  // pp 4 x vpp 4 = 16 stages would need 82 / 16 <= per_stage < 82 / 15: no integer.
  const std::string error =
      ErrorOf(MakePlan(Spec("llama3-70b", 64,
                            {{"tp", 4}, {"pp", 4}, {"vpp", 4}, {"dp", 4}, {"zero_stage", 3}})),
              "torchrun-fsdp");
  EXPECT_TRUE(Contains(error, "vpp 4"));
}

TEST(ExportTorchrun, RefusesUnevenPipelineStages) {
  const std::string error = ErrorOf(MakePlan(Spec("llama3-405b", 128,
                                                  {{"tp", 8},
                                                   {"pp", 16},
                                                   {"zero_stage", 1},
                                                   {"first_stage_layers", 7},
                                                   {"last_stage_layers", 7}})),
                                    "torchrun-fsdp");
  EXPECT_TRUE(Contains(error, "uneven (first/last_stage_layers or stage_layers)")) << error;
  EXPECT_TRUE(Contains(error, "export 'megatron' instead")) << error;
}

TEST(ExportTorchrun, RefusesLoraAndFp16) {
  EXPECT_TRUE(
      Contains(ErrorOf(MakePlan(Spec("llama3-8b", 8, {{"dp", 8}}, {{"lora", {{"rank", 8}}}})),
                       "torchrun-fsdp"),
               "LoRA"));
  EXPECT_TRUE(Contains(ErrorOf(MakePlan(Spec("llama3-8b", 8, {{"dp", 8}}, {{"precision", "fp16"}})),
                               "torchrun-fsdp"),
                       "bfloat16 or float32"));
}

TEST(ExportTorchrun, RefusesWhatEagerTorchtitanDoesNotRun) {
  // Async TP raises without torch.compile; DDP raises on a multi-dimensional mesh; FSDP2's CPU
  // offload applies only to a sharded model.
  const Plan overlap = MakePlan(Spec("llama3-8b", 8,
                                     {{"tp", 2},
                                      {"dp", 4},
                                      {"sequence_parallel", true},
                                      {"tp_overlap", true},
                                      {"zero_stage", 3}}));
  EXPECT_TRUE(Contains(ErrorOf(overlap, "torchrun-fsdp"), "torchrun-fsdp: tp_overlap: "));
  const Plan ddp = MakePlan(Spec("llama3-8b", 8, {{"tp", 2}, {"dp", 4}}));
  EXPECT_TRUE(Contains(ErrorOf(ddp, "torchrun-fsdp"), "zero 0 with tp, pp or cp"));
  const Plan offload = MakePlan(
      Spec("llama3-8b", 1, {{"zero_stage", 1}, {"cpu_offload", true}}, {{"global_batch_size", 8}}));
  EXPECT_TRUE(Contains(ErrorOf(offload, "torchrun-fsdp"), "cpu offload without sharding"));
  EXPECT_TRUE(Contains(ErrorOf(offload, "accelerate"), "accelerate: cpu offload on one GPU"));
}

// Megatron tensor parallelism runs with ZeRO-3 (zero.Init under --zero-stage 3).
TEST(ExportDeepSpeed, TensorParallelWithZero3) {
  const std::string s = Export(
      MakePlan(Spec("llama3-8b", 8, {{"tp", 2}, {"dp", 4}, {"zero_stage", 3}})), "deepspeed");
  ExpectMegatronDeepSpeedFlagsKnown(s);
  EXPECT_TRUE(Contains(s, "--tensor-model-parallel-size 2\n"));
  EXPECT_TRUE(Contains(s, "--zero-stage 3\n"));
  EXPECT_EQ(DeepSpeedJson(s)["zero_optimization"]["stage"], 3);
}

// ---- accelerate -----------------------------------------------------------------------------

TEST(ExportAccelerate, Fsdp2LlamaWithTensorParallel) {
  const std::vector<YamlRow> rows =
      ParseYaml(Export(MakePlan(Spec("llama3-70b", 16, {{"tp", 2}, {"dp", 8}, {"fsdp", true}},
                                     {{"recompute", "full"}})),
                       "accelerate"));
  ExpectAccelerateKeysKnown(rows);
  EXPECT_EQ(YamlValue(rows, "", "distributed_type"), "FSDP");
  EXPECT_EQ(YamlValue(rows, "", "mixed_precision"), "bf16");
  EXPECT_EQ(YamlValue(rows, "", "num_machines"), "2");
  EXPECT_EQ(YamlValue(rows, "", "num_processes"), "16");
  EXPECT_EQ(YamlValue(rows, "fsdp_config", "fsdp_version"), "2");
  EXPECT_EQ(YamlValue(rows, "fsdp_config", "fsdp_reshard_after_forward"), "true");
  EXPECT_EQ(YamlValue(rows, "fsdp_config", "fsdp_transformer_layer_cls_to_wrap"),
            "LlamaDecoderLayer");
  EXPECT_EQ(YamlValue(rows, "fsdp_config", "fsdp_activation_checkpointing"), "true");
  EXPECT_EQ(YamlValue(rows, "parallelism_config", "parallelism_config_dp_shard_size"), "8");
  EXPECT_EQ(YamlValue(rows, "parallelism_config", "parallelism_config_tp_size"), "2");
}

TEST(ExportAccelerate, DdpSingleGpuLoraAndOffload) {
  const std::string ddp_yaml =
      Export(MakePlan(Spec("gpt2-xl", 8, {{"dp", 8}}, {{"seq_len", 1024}})), "accelerate");
  const std::vector<YamlRow> ddp = ParseYaml(ddp_yaml);
  ExpectAccelerateKeysKnown(ddp);
  EXPECT_EQ(YamlValue(ddp, "", "distributed_type"), "MULTI_GPU");
  EXPECT_EQ(YamlValue(ddp, "fsdp_config", "fsdp_version"), "<missing>");

  const std::string lora =
      Export(MakePlan(Spec("llama3-8b", 1, {}, {{"lora", {{"rank", 16}}}})), "accelerate");
  ExpectAccelerateKeysKnown(ParseYaml(lora));
  EXPECT_EQ(YamlValue(ParseYaml(lora), "", "distributed_type"), "NO");
  EXPECT_TRUE(Contains(lora, "# note: LoRA rank 16 on q_proj, k_proj, v_proj, o_proj"));
  // QLoRA: the 4-bit base the plan counted must be loaded so.
  const std::string qlora =
      Export(MakePlan(Spec("llama3-8b", 1, {}, {{"lora", {{"rank", 16}, {"base", "nf4"}}}})),
             "accelerate");
  EXPECT_TRUE(
      Contains(qlora, "BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type=\"nf4\")"));

  const std::vector<YamlRow> offload = ParseYaml(
      Export(MakePlan(Spec("mistral-7b", 8, {{"dp", 8}, {"zero_stage", 2}, {"cpu_offload", true}},
                           {{"precision", "fp8"}})),
             "accelerate"));
  ExpectAccelerateKeysKnown(offload);
  EXPECT_EQ(YamlValue(offload, "fsdp_config", "fsdp_reshard_after_forward"), "false");
  EXPECT_EQ(YamlValue(offload, "fsdp_config", "fsdp_offload_params"), "true");
  EXPECT_EQ(YamlValue(offload, "fsdp_config", "fsdp_transformer_layer_cls_to_wrap"),
            "MistralDecoderLayer");
  EXPECT_EQ(YamlValue(offload, "", "mixed_precision"), "fp8");
  EXPECT_EQ(YamlValue(offload, "fp8_config", "backend"), "TE");
}

TEST(ExportAccelerate, RefusesPipelineAndDdpWithTensorParallel) {
  const std::string pp = ErrorOf(Gpt3Plan(), "accelerate");
  EXPECT_TRUE(Contains(pp, "accelerate: pp 16"));
  EXPECT_TRUE(Contains(pp, "'megatron'"));
  EXPECT_TRUE(
      Contains(ErrorOf(MakePlan(Spec("llama3-8b", 8, {{"tp", 2}, {"dp", 4}})), "accelerate"),
               "pure data parallelism"));
}

}  // namespace
}  // namespace gpuplan

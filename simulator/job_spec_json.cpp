#include "simulator/job_spec_json.h"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "common/checked_math.h"
#include "common/json_reader.h"
#include "common/limits.h"
#include "common/str_format.h"
#include "simulator/ep_overlap.h"
#include "simulator/framework.h"
#include "simulator/hf_config.h"
#include "simulator/memory.h"
#include "simulator/model.h"
#include "simulator/moe_dispatch.h"
#include "simulator/pipeline_schedule.h"
#include "simulator/presets.h"
#include "simulator/shard.h"
#include "simulator/topology.h"
#include "simulator/tp_overlap.h"

namespace gpuplan {
namespace {

std::string Str(int64_t v) { return std::to_string(v); }

std::string Join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

// The spec fields of the embedding and loss pipeline slots (Megatron-LM's flag names).
constexpr const char* kEmbeddingSlot = "account_for_embedding_in_pipeline_split";
constexpr const char* kLossSlot = "account_for_loss_in_pipeline_split";
// The spec fields of an uneven pipeline's first and last stage layers.
constexpr const char* kFirstStageLayers = "first_stage_layers";
constexpr const char* kLastStageLayers = "last_stage_layers";
constexpr const char* kStageLayers = "stage_layers";

// Names spec fields in errors: a field set by a command-line flag by that flag and its value
// ("--gpus 100"), any other by its place in the spec ("parallelism.dp").
class FieldNames {
 public:
  explicit FieldNames(const SpecFlags& flags) : flags_(flags) {}

  // The flag and value that set the field, or nullptr when the spec did.
  const std::string* Given(std::string_view section, std::string_view field) const {
    auto it = flags_.given.find(Key(section, field));
    return it == flags_.given.end() ? nullptr : &it->second;
  }
  // The first of `fields` (section, field) that a flag set: the one to blame for a conflict
  // among them.
  using Field = std::pair<const char*, const char*>;
  std::optional<Field> FirstGiven(std::initializer_list<Field> fields) const {
    for (const Field& f : fields) {
      if (Given(f.first, f.second) != nullptr) return f;
    }
    return std::nullopt;
  }
  // The field's value source in a sentence: its flag, or its place in the spec.
  std::string Source(std::string_view section, std::string_view field) const {
    const std::string* flag = Given(section, field);
    return flag != nullptr ? *flag : Key(section, field);
  }
  // How a user sets the field: its flag when the job came from flags alone, else its place.
  std::string Setting(std::string_view section, std::string_view field) const {
    auto it = flags_.names.find(Key(section, field));
    return flags_.without_file && it != flags_.names.end() ? it->second : Key(section, field);
  }

 private:
  static std::string Key(std::string_view section, std::string_view field) {
    return std::string(section) + "." + std::string(field);
  }
  const SpecFlags& flags_;
};

// "origin: section: field 'name': problem" about a field a flag set becomes "--flag value:
// problem": the message names what the user typed.
Status NameFlags(const Status& st, const std::string& origin, const SpecFlags& flags) {
  for (const auto& [key, flag] : flags.given) {
    const size_t dot = key.find('.');
    const std::string prefix =
        origin + ": " + key.substr(0, dot) + ": field '" + key.substr(dot + 1) + "': ";
    if (st.message().starts_with(prefix)) {
      return Status::Invalid(flag + ": " + st.message().substr(prefix.size()));
    }
  }
  return st;
}

// Names used in the spec (kept here so the parser does not depend on hardware.cpp).
struct PrecisionName {
  const char* name;
  Precision value;
};
constexpr PrecisionName kPrecisions[] = {{"fp32", Precision::kFp32}, {"tf32", Precision::kTf32},
                                         {"bf16", Precision::kBf16}, {"fp16", Precision::kFp16},
                                         {"fp8", Precision::kFp8},   {"fp4", Precision::kFp4}};

const char* NameOf(Precision p) {
  for (const PrecisionName& n : kPrecisions) {
    if (n.value == p) return n.name;
  }
  return "?";
}

const char* NameOf(Recompute r) { return RecomputeName(r).data(); }

const char* NameOf(Schedule s) { return ScheduleName(s).data(); }

struct BaseWeightsEntry {
  const char* name;
  BaseWeights value;
};
constexpr BaseWeightsEntry kBaseWeights[] = {{"same", BaseWeights::kSame},
                                             {"bf16", BaseWeights::kBf16},
                                             {"fp16", BaseWeights::kFp16},
                                             {"fp8", BaseWeights::kFp8},
                                             {"nf4", BaseWeights::kNf4}};

const char* NameOf(AttentionImpl a) { return a == AttentionImpl::kFlash ? "flash" : "unfused"; }

struct LoraTargetName {
  const char* name;
  uint32_t bits;
};
constexpr LoraTargetName kLoraTargets[] = {
    {"q", kLoraQ},       {"k", kLoraK},   {"v", kLoraV},       {"o", kLoraO},
    {"gate", kLoraGate}, {"up", kLoraUp}, {"down", kLoraDown}, {"attention", kLoraAttention},
    {"all", kLoraAll}};

struct RecomputeModuleName {
  const char* name;
  uint32_t bit;
};
constexpr RecomputeModuleName kRecomputeModuleNames[] = {{"core_attn", kRecomputeCoreAttn},
                                                         {"layernorm", kRecomputeLayernorm},
                                                         {"moe_act", kRecomputeMoeAct},
                                                         {"mlp", kRecomputeMlp}};
// Megatron-Core's other --recompute-modules choices (transformer_config.py), not modelled.
constexpr const char* kUnmodelledRecomputeModules[] = {"moe", "shared_experts", "mla_up_proj"};
constexpr const char* kRecomputeModulesAllowed = "allowed: core_attn, layernorm, moe_act, mlp";

// ---- model ----------------------------------------------------------------------------------

Expected<ModelSpec> ParseModelDimensions(const nlohmann::json& j, const std::string& context) {
  JsonObjectReader r(j, context);
  r.RejectUnknownFields({"name",
                         "num_layers",
                         "hidden_size",
                         "ffn_hidden_size",
                         "num_attention_heads",
                         "num_kv_heads",
                         "head_dim",
                         "vocab_size",
                         "mlp",
                         "tied_embeddings",
                         "max_position_embeddings_learned",
                         "linear_biases",
                         "qkv_bias",
                         "moe_num_experts",
                         "moe_top_k",
                         "moe_ffn_hidden_size",
                         "moe_shared_experts",
                         "moe_first_dense_layers",
                         "moe_router_groups",
                         "moe_router_group_topk",
                         "attention_window",
                         "local_attention_layers",
                         "attention_chunked",
                         "approximation_note"});
  ModelSpec m;
  m.name = r.OptionalString("name", "custom");
  m.num_layers = r.PositiveInt("num_layers");
  m.hidden_size = r.PositiveInt("hidden_size");
  m.ffn_hidden_size = r.PositiveInt("ffn_hidden_size");
  m.num_attention_heads = r.PositiveInt("num_attention_heads");
  m.num_kv_heads = r.OptionalPositiveInt("num_kv_heads", m.num_attention_heads);
  m.head_dim = r.OptionalNonNegativeInt("head_dim", 0);
  m.vocab_size = r.PositiveInt("vocab_size");
  m.mlp = r.Enum("mlp", {"gelu", "swiglu"}) == "swiglu" ? MlpKind::kSwiGlu : MlpKind::kGelu;
  m.tied_embeddings = r.OptionalBool("tied_embeddings", false);
  m.max_position_embeddings_learned =
      r.OptionalNonNegativeInt("max_position_embeddings_learned", 0);
  m.linear_biases = r.OptionalBool("linear_biases", true);
  m.qkv_bias = r.OptionalBool("qkv_bias", false);
  m.moe_num_experts = r.OptionalNonNegativeInt("moe_num_experts", 0);
  m.moe_top_k = r.OptionalNonNegativeInt("moe_top_k", 0);
  m.moe_ffn_hidden_size = r.OptionalNonNegativeInt("moe_ffn_hidden_size", 0);
  m.moe_shared_experts = r.OptionalNonNegativeInt("moe_shared_experts", 0);
  m.moe_first_dense_layers = r.OptionalNonNegativeInt("moe_first_dense_layers", 0);
  m.moe_router_groups = r.OptionalNonNegativeInt("moe_router_groups", 0);
  m.moe_router_group_topk = r.OptionalNonNegativeInt("moe_router_group_topk", 0);
  m.attention_window = r.OptionalNonNegativeInt("attention_window", 0);
  m.local_attention_layers = r.OptionalNonNegativeInt("local_attention_layers", 0);
  m.attention_chunked = r.OptionalBool("attention_chunked", false);
  m.approximation_note = r.OptionalString("approximation_note", "");
  if (!r.status().ok()) return r.status();
  return m;
}

// `model`: a preset id, {"hf_config": path} or a dimensions object.
Expected<ModelSpec> ParseModel(const nlohmann::json& j, const std::string& origin,
                               const std::string& base_dir) {
  const std::string context = origin + ": model";
  if (j.is_string()) {
    Expected<ModelSpec> preset = FindModelPreset(j.get<std::string>());
    if (!preset.ok()) return preset.status().WithPrefix(origin + ": field 'model'");
    return preset;
  }
  if (!j.is_object()) {
    return Status::Invalid(origin +
                           ": field 'model': must be a preset id, a dimensions object or "
                           "{\"hf_config\": path}, got " +
                           DescribeJson(j));
  }
  if (j.contains("hf_config")) {
    JsonObjectReader r(j, context);
    r.RejectUnknownFields({"hf_config"});
    const std::string path = r.String("hf_config");
    if (!r.status().ok()) return r.status();
    std::filesystem::path p(path);
    if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
    Expected<ModelSpec> m = ReadHfConfigFile(p.string());
    if (!m.ok()) return m.status().WithPrefix(context);
    return m;
  }
  return ParseModelDimensions(j, context);
}

// ---- cluster --------------------------------------------------------------------------------

Status ParseCluster(const nlohmann::json* j, const std::string& origin, const HardwareDb& db,
                    ClusterSpec* c) {
  JsonObjectReader r(*j, origin + ": cluster");
  r.RejectUnknownFields({"gpu", "num_gpus", "gpus_per_node", "inter_node"});
  c->gpu = r.String("gpu");
  c->num_gpus = r.PositiveInt("num_gpus");
  if (!r.status().ok()) return r.status();
  const GpuSpec* gpu = db.FindGpu(c->gpu);
  if (gpu == nullptr) {
    r.Fail("gpu", "unknown GPU '" + c->gpu + "' (known: " + Join(db.GpuIds()) + ")");
    return r.status();
  }
  const NodeTemplate* node = gpu->default_node.empty() ? nullptr : db.FindNode(gpu->default_node);
  if (node == nullptr && (!r.Has("gpus_per_node") || !r.Has("inter_node"))) {
    r.Fail(r.Has("gpus_per_node") ? "inter_node" : "gpus_per_node",
           "is required: GPU '" + c->gpu + "' has no default node to take it from");
    return r.status();
  }
  const int64_t default_per_node = node != nullptr ? node->gpus_per_node : c->num_gpus;
  c->gpus_per_node = r.OptionalPositiveInt("gpus_per_node", default_per_node);
  // The job occupies at most num_gpus GPUs of a node: a larger node is partly used.
  c->gpus_per_node = std::min(c->gpus_per_node, c->num_gpus);
  c->inter_node = r.OptionalString("inter_node", node != nullptr ? node->network : "");
  if (r.status().ok() && db.FindNetwork(c->inter_node) == nullptr) {
    r.Fail("inter_node",
           "unknown network '" + c->inter_node + "' (known: " + Join(db.NetworkIds()) + ")");
  }
  return r.status();
}

// ---- training -------------------------------------------------------------------------------

Status ParseLora(const nlohmann::json* j, const std::string& context, Precision precision,
                 LoraSpec* lora) {
  JsonObjectReader r(*j, context);
  r.RejectUnknownFields({"rank", "targets", "base"});
  lora->enabled = true;
  lora->rank = r.PositiveInt("rank");
  std::vector<std::string> targets = r.OptionalStringList("targets");
  if (r.status().ok() && !r.Has("targets")) targets = {"q", "k", "v", "o"};
  if (r.status().ok() && targets.empty()) r.Fail("targets", "must name at least one projection");
  lora->targets = 0;
  for (const std::string& t : targets) {
    bool found = false;
    for (const LoraTargetName& n : kLoraTargets) {
      if (t == n.name) {
        lora->targets |= n.bits;
        found = true;
      }
    }
    if (!found) {
      r.Fail("targets", "'" + t +
                            "' is not allowed (allowed: q, k, v, o, gate, up, down, "
                            "attention, all)");
      break;
    }
  }
  const std::string base = r.OptionalEnum("base", "same", {"same", "bf16", "fp16", "fp8", "nf4"});
  for (const BaseWeightsEntry& n : kBaseWeights) {
    if (base == n.name) lora->base = n.value;
  }
  // A 16-bit base is the GEMM operand itself, so it must match the 16-bit math (fp8 training
  // keeps 16-bit weights); an fp8 base is cast to the 16-bit or fp8 math, not to fp32.
  const bool fp32_math = precision == Precision::kFp32 || precision == Precision::kTf32;
  const char* needs = nullptr;
  if (lora->base == BaseWeights::kBf16 && precision != Precision::kBf16 &&
      precision != Precision::kFp8) {
    needs = "bf16 or fp8";
  } else if (lora->base == BaseWeights::kFp16 && precision != Precision::kFp16 &&
             precision != Precision::kFp8) {
    needs = "fp16 or fp8";
  } else if (lora->base == BaseWeights::kFp8 && fp32_math) {
    needs = "bf16, fp16 or fp8";
  }
  if (r.status().ok() && needs != nullptr) {
    r.Fail("base", "'" + base + "' needs training.precision " + needs +
                       " (use 'same' to keep the base in " + std::string(NameOf(precision)) + ")");
  }
  return r.status();
}

}  // namespace

std::string_view BaseWeightsName(BaseWeights b) {
  for (const BaseWeightsEntry& n : kBaseWeights) {
    if (n.value == b) return n.name;
  }
  return "?";
}

std::string_view RecomputeName(Recompute r) {
  switch (r) {
    case Recompute::kNone:
      return "none";
    case Recompute::kSelective:
      return "selective";
    case Recompute::kFull:
      return "full";
  }
  return "?";
}

namespace {

// The names of the modules set in `modules`, in kRecomputeModuleNames' order.
std::vector<std::string> RecomputeModuleNames(uint32_t modules) {
  std::vector<std::string> out;
  for (const RecomputeModuleName& n : kRecomputeModuleNames) {
    if ((modules & n.bit) != 0) out.emplace_back(n.name);
  }
  return out;
}

}  // namespace

std::string RecomputeModulesName(uint32_t modules, std::string_view separator) {
  std::string out;
  for (const std::string& name : RecomputeModuleNames(modules)) {
    if (!out.empty()) out += separator;
    out += name;
  }
  return out;
}

Expected<LoraSpec> ParseLoraSpec(const nlohmann::json& lora, const std::string& context,
                                 Precision precision) {
  if (!lora.is_object()) return Status::Invalid(context + ": must be an object");
  LoraSpec spec;
  GPUPLAN_RETURN_IF_ERROR(ParseLora(&lora, context, precision, &spec));
  return spec;
}

namespace {

Status ParseTraining(const nlohmann::json* j, const std::string& origin, const ModelSpec& model,
                     const HardwareDb& db, TrainingSpec* t) {
  const std::string context = origin + ": training";
  JsonObjectReader r(*j, context);
  r.RejectUnknownFields({"seq_len", "global_batch_size", "micro_batch_size", "precision",
                         "recompute", "recompute_modules", "attention", "dropout", "lora",
                         "framework", "moe_dispatcher", "moe_load_imbalance", "grad_reduce_bf16",
                         "fp8_param_gather", "activation_offload_layers"});
  t->seq_len = r.OptionalPositiveInt("seq_len", kDefaultSeqLen);
  t->global_batch_size = r.PositiveInt("global_batch_size");
  t->micro_batch_size = r.OptionalPositiveInt("micro_batch_size", 1);
  const std::string precision =
      r.OptionalEnum("precision", "bf16", {"fp32", "tf32", "bf16", "fp16", "fp8", "fp4"});
  for (const PrecisionName& n : kPrecisions) {
    if (precision == n.name) t->precision = n.value;
  }
  const std::string recompute = r.OptionalEnum("recompute", "none", {"none", "selective", "full"});
  t->recompute = recompute == "full"        ? Recompute::kFull
                 : recompute == "selective" ? Recompute::kSelective
                                            : Recompute::kNone;
  if (r.Has("recompute_modules")) {
    const std::vector<std::string> modules = r.OptionalStringList("recompute_modules");
    if (r.status().ok() && t->recompute != Recompute::kSelective) {
      r.Fail("recompute_modules",
             "names what a selective recomputation re-runs: needs recompute selective, got " +
                 recompute);
    }
    if (r.status().ok() && modules.empty()) {
      r.Fail("recompute_modules",
             std::string("must name at least one module (") + kRecomputeModulesAllowed + ")");
    }
    t->recompute_modules = 0;
    for (const std::string& module : modules) {
      if (!r.status().ok()) break;
      const auto known =
          std::find_if(std::begin(kRecomputeModuleNames), std::end(kRecomputeModuleNames),
                       [&](const RecomputeModuleName& n) { return module == n.name; });
      if (known != std::end(kRecomputeModuleNames)) {
        t->recompute_modules |= known->bit;
        continue;
      }
      const bool megatron =
          std::find(std::begin(kUnmodelledRecomputeModules), std::end(kUnmodelledRecomputeModules),
                    module) != std::end(kUnmodelledRecomputeModules);
      r.Fail("recompute_modules", "'" + module + "' " +
                                      (megatron ? "is a Megatron-Core module gpuplan does not model"
                                                : std::string("is not allowed")) +
                                      " (" + kRecomputeModulesAllowed + ")");
    }
  }
  t->attention = r.OptionalEnum("attention", "flash", {"flash", "unfused"}) == "unfused"
                     ? AttentionImpl::kUnfused
                     : AttentionImpl::kFlash;
  // Default: GPT-style models with linear biases train with dropout (Megatron-LM's default
  // hidden/attention dropout 0.1); bias-free models (Llama family, MPT presets) without.
  t->dropout = r.OptionalBool("dropout", model.HasLinearBiases());
  t->grad_reduce_bf16 = r.OptionalBool("grad_reduce_bf16", false);
  t->fp8_param_gather = r.OptionalBool("fp8_param_gather", false);
  t->activation_offload_layers =
      r.OptionalIntInRange("activation_offload_layers", 0, 0, kMaxLayers - 1);
  // The stacks of the hardware database (frameworks.json); a user directory may add its own.
  const std::vector<std::string> framework_ids = db.FrameworkIds();
  const std::vector<std::string_view> frameworks(framework_ids.begin(), framework_ids.end());
  const std::string framework = r.OptionalEnum("framework", kDefaultFrameworkId, frameworks);
  if (r.status().ok()) {
    const FrameworkSpec* stack = db.FindFramework(framework);
    if (stack == nullptr) {
      r.Fail("framework",
             "no stack '" + framework + "' in the hardware database (frameworks.json)");
    } else {
      t->framework = *stack;
    }
  }
  std::vector<std::string_view> dispatchers;
  for (const MoeDispatcherName& d : kMoeDispatchers) dispatchers.push_back(d.name);
  ParseMoeDispatcher(r.OptionalEnum("moe_dispatcher", kMoeDispatchers[0].name, dispatchers),
                     &t->moe_dispatcher);
  t->moe_load_imbalance =
      r.OptionalNumberInRange("moe_load_imbalance", 1.0, 1.0, kMaxMoeLoadImbalance);
  const nlohmann::json* lora = r.OptionalObject("lora");
  GPUPLAN_RETURN_IF_ERROR(r.status());
  t->lora = LoraSpec{};
  if (lora != nullptr) {
    GPUPLAN_RETURN_IF_ERROR(ParseLora(lora, context + ": lora", t->precision, &t->lora));
  }
  return Status::Ok();
}

// ---- parallelism ----------------------------------------------------------------------------

Status ParseParallel(const nlohmann::json* j, const std::string& origin, int64_t num_gpus,
                     const FieldNames& names, ParallelSpec* p) {
  static const nlohmann::json kEmpty = nlohmann::json::object();
  JsonObjectReader r(j != nullptr ? *j : kEmpty, origin + ": parallelism");
  r.RejectUnknownFields({"tp",
                         "pp",
                         "dp",
                         "cp",
                         "ep",
                         "etp",
                         "vpp",
                         "sequence_parallel",
                         "zero_stage",
                         "fsdp",
                         "dp_replicate",
                         "cpu_offload",
                         "schedule",
                         "dp_overlap",
                         "tp_overlap",
                         "tp_backward_overlap",
                         "cp_overlap",
                         "ep_overlap",
                         kEmbeddingSlot,
                         kLossSlot,
                         kFirstStageLayers,
                         kLastStageLayers,
                         kStageLayers});
  p->tp = r.OptionalPositiveInt("tp", 1);
  p->pp = r.OptionalPositiveInt("pp", 1);
  p->cp = r.OptionalPositiveInt("cp", 1);
  p->ep = r.OptionalPositiveInt("ep", 1);
  p->etp = r.OptionalPositiveInt("etp", 0);  // 0: follows tp (ParallelSpec::ExpertTp)
  p->vpp = r.OptionalPositiveInt("vpp", 1);
  GPUPLAN_RETURN_IF_ERROR(r.status());
  // Checked before dp defaults to num_gpus/(tp*pp*cp): a wrapped product would divide by 0.
  int64_t model_parallel = 1;
  for (const auto& [name, value] : {std::pair{"tp", p->tp}, {"pp", p->pp}, {"cp", p->cp}}) {
    const std::optional<int64_t> product = CheckedMul(model_parallel, value);
    if (!product || *product > kMaxGpus) {
      r.Fail(name, Str(value) + ": tp*pp*cp = " + Str(p->tp) + "*" + Str(p->pp) + "*" + Str(p->cp) +
                       " exceeds the limit of " + Str(kMaxGpus) + " GPUs per job");
      return r.status();
    }
    model_parallel = *product;
  }
  if (!r.Has("dp") && num_gpus % model_parallel != 0) {
    const std::string problem = "cluster.num_gpus = " + Str(num_gpus) +
                                " is not divisible by tp*pp*cp = " + Str(p->tp) + "*" + Str(p->pp) +
                                "*" + Str(p->cp) + " = " + Str(model_parallel);
    if (const auto flagged = names.FirstGiven({{"cluster", "num_gpus"},
                                               {"parallelism", "tp"},
                                               {"parallelism", "pp"},
                                               {"parallelism", "cp"}})) {
      return Status::Invalid(*names.Given(flagged->first, flagged->second) + ": " + problem +
                             ", so dp cannot default to GPUs/(tp*pp*cp)");
    }
    r.Fail("dp", "cannot default to num_gpus/(tp*pp*cp): " + problem);
  }
  p->dp = r.OptionalPositiveInt("dp", std::max<int64_t>(1, num_gpus / model_parallel));
  p->sequence_parallel = r.OptionalBool("sequence_parallel", false);
  p->fsdp = r.OptionalBool("fsdp", false);
  const int64_t zero = r.OptionalNonNegativeInt("zero_stage", p->fsdp ? 3 : 0);
  if (r.status().ok() && zero > 3) {
    r.Fail("zero_stage", "must be 0, 1, 2 or 3, got " + Str(zero));
  }
  if (r.status().ok() && p->fsdp && zero != 3) {
    r.Fail("zero_stage", Str(zero) +
                             " conflicts with fsdp = true (FSDP FULL_SHARD shards like "
                             "ZeRO-3; leave zero_stage out or set 3)");
  }
  p->zero_stage = static_cast<int>(zero);
  p->dp_replicate = r.OptionalPositiveInt("dp_replicate", 1);
  p->cpu_offload = r.OptionalBool("cpu_offload", false);
  std::vector<std::string_view> schedule_names;
  for (const ScheduleInfo& info : Schedules()) schedule_names.push_back(info.name);
  const std::string schedule =
      r.OptionalEnum("schedule", p->vpp > 1 ? "interleaved" : "1f1b", schedule_names);
  p->schedule = ParseScheduleName(schedule).value_or(Schedule::k1F1B);
  p->dp_overlap = r.OptionalBool("dp_overlap", true);
  p->tp_overlap = r.OptionalBool("tp_overlap", false);
  if (r.Has("tp_backward_overlap"))
    p->tp_backward_overlap = r.OptionalBool("tp_backward_overlap", false);
  p->cp_overlap = r.OptionalBool("cp_overlap", true);
  p->ep_overlap = r.OptionalBool("ep_overlap", false);
  p->embedding_slot = r.OptionalBool(kEmbeddingSlot, false);
  p->loss_slot = r.OptionalBool(kLossSlot, false);
  p->first_stage_layers = r.OptionalPositiveInt(kFirstStageLayers, 0);
  p->last_stage_layers = r.OptionalPositiveInt(kLastStageLayers, 0);
  p->stage_layers = r.OptionalIntList(kStageLayers, 0, kMaxLayers);
  return r.status();
}

Status ParseOverhead(const nlohmann::json* j, const std::string& origin,
                     const OverheadSpec& defaults, OverheadSpec* o) {
  *o = defaults;
  if (j == nullptr) return Status::Ok();
  JsonObjectReader r(*j, origin + ": overhead");
  r.RejectUnknownFields({"framework_gb", "fragmentation", "allocator_headroom"});
  o->framework_bytes =
      r.OptionalScaledNumber("framework_gb", o->framework_bytes, 1e9, 0.0, kMaxDeviceMemoryBytes);
  o->fragmentation = r.OptionalNumberInRange("fragmentation", o->fragmentation, 0.0, 1.0);
  o->allocator_headroom =
      r.OptionalNumberInRange("allocator_headroom", o->allocator_headroom, 0.0, 0.5);
  return r.status();
}

Status ModelFail(const char* field, const std::string& problem) {
  return Status::Invalid(std::string("model: field '") + field + "': " + problem);
}
Status Fail(const char* section, const char* field, const std::string& problem) {
  return Status::Invalid(std::string(section) + ": field '" + field + "': " + problem);
}

Status Validate(const JobSpec& job, const HardwareDb& db, const FieldNames& names);

Expected<JobSpec> Parse(const nlohmann::json& spec, const std::string& origin,
                        const std::string& base_dir, const HardwareDb& db,
                        const FieldNames& names) {
  JsonObjectReader top(spec, origin);
  top.RejectUnknownFields({"model", "cluster", "training", "parallelism", "overhead"});
  if (top.status().ok() && !top.Has("model")) top.Fail("model", "is required but missing");
  const nlohmann::json* cluster = top.Object("cluster");
  const nlohmann::json* training = top.Object("training");
  const nlohmann::json* parallelism = top.OptionalObject("parallelism");
  const nlohmann::json* overhead = top.OptionalObject("overhead");
  if (!top.status().ok()) return top.status();

  JobSpec job;
  Expected<ModelSpec> model = ParseModel(spec.at("model"), origin, base_dir);
  if (!model.ok()) return model.status();
  job.model = std::move(*model);
  GPUPLAN_RETURN_IF_ERROR(ValidateModel(job.model, origin + ": model"));
  GPUPLAN_RETURN_IF_ERROR(ParseCluster(cluster, origin, db, &job.cluster));
  GPUPLAN_RETURN_IF_ERROR(ParseTraining(training, origin, job.model, db, &job.training));
  GPUPLAN_RETURN_IF_ERROR(
      ParseParallel(parallelism, origin, job.cluster.num_gpus, names, &job.parallel));
  GPUPLAN_RETURN_IF_ERROR(ParseOverhead(
      overhead, origin, DefaultOverhead(*db.FindGpu(job.cluster.gpu)), &job.overhead));
  ApplyStackPipelineSplit(&job);
  GPUPLAN_RETURN_IF_ERROR(Validate(job, db, names).WithPrefix(origin));
  GPUPLAN_RETURN_IF_ERROR(StackRunsLayout(job).WithPrefix(origin));
  return job;
}

}  // namespace

Expected<JobSpec> ParseJobSpec(const nlohmann::json& spec, const std::string& origin,
                               const std::string& base_dir, const HardwareDb& db,
                               const SpecFlags& flags) {
  Expected<JobSpec> job = Parse(spec, origin, base_dir, db, FieldNames(flags));
  if (!job.ok()) return NameFlags(job.status(), origin, flags);
  return job;
}

Expected<JobSpec> ReadJobSpecFile(const std::string& path, const HardwareDb& db) {
  Expected<nlohmann::json> j = ReadJsonFile(path);
  if (!j.ok()) return j.status();
  return ParseJobSpec(*j, path, std::filesystem::path(path).parent_path().string(), db);
}

Status ValidateJob(const JobSpec& job, const HardwareDb& db) {
  return Validate(job, db, FieldNames(SpecFlags{}));
}

namespace {

// "give parallelism.first_stage_layers and parallelism.last_stage_layers for an uneven split,
// e.g. 7 and 7: 7 + 14 x 8 + 7, or ": the fix for a layer count pp*vpp does not divide, when
// SuggestStageSplit has a split that vpp also divides; empty otherwise.
std::string UnevenHint(const ModelSpec& m, const ParallelSpec& p, const FieldNames& names) {
  const std::optional<StageSplit> split = SuggestStageSplit(m.num_layers, p.pp);
  if (!split || split->first % p.vpp != 0 || split->last % p.vpp != 0 ||
      split->middle % p.vpp != 0) {
    return "";
  }
  std::string layout = Str(split->first) + " + ";
  if (p.pp > 2) layout += Str(p.pp - 2) + " x " + Str(split->middle) + " + ";
  return "give " + names.Setting("parallelism", kFirstStageLayers) + " and " +
         names.Setting("parallelism", kLastStageLayers) + " for an uneven split, e.g. " +
         Str(split->first) + " and " + Str(split->last) + ": " + layout + Str(split->last) +
         ", or ";
}

// The vpp a split error blames: its flag and value ("--vpp 2"), or "parallelism.vpp = 2".
std::string VppSource(const ParallelSpec& p, const FieldNames& names) {
  const std::string* flag = names.Given("parallelism", "vpp");
  return flag != nullptr ? *flag : "parallelism.vpp = " + Str(p.vpp);
}

// An explicit split: one entry per stage, the layers add up, no interleaving and no other split
// setting beside it (each would place the same layers twice).
Status ValidateStageLayers(const ModelSpec& m, const ParallelSpec& p, const FieldNames& names) {
  const int64_t entries = static_cast<int64_t>(p.stage_layers.size());
  if (entries != p.pp) {
    return Fail("parallelism", kStageLayers,
                "has " + Str(entries) + " entries, parallelism.pp = " + Str(p.pp) +
                    " needs one per pipeline stage");
  }
  int64_t sum = 0;
  for (const int64_t layers : p.stage_layers) sum += layers;
  if (sum != m.num_layers) {
    return Fail("parallelism", kStageLayers,
                "adds up to " + Str(sum) + " layers, model.num_layers = " + Str(m.num_layers));
  }
  if (p.vpp != 1) {
    return Fail(
        "parallelism", kStageLayers,
        "needs vpp = 1 (interleaved stages split into equal chunks), got " + VppSource(p, names));
  }
  const std::pair<const char*, bool> others[] = {{kFirstStageLayers, p.first_stage_layers != 0},
                                                 {kLastStageLayers, p.last_stage_layers != 0},
                                                 {kEmbeddingSlot, p.embedding_slot},
                                                 {kLossSlot, p.loss_slot}};
  for (const auto& [other, set] : others) {
    if (set) {
      return Fail("parallelism", kStageLayers,
                  "cannot be combined with " + names.Source("parallelism", other) +
                      " (stage_layers already places every layer); give one or the other");
    }
  }
  return Status::Ok();
}

// Megatron-LM's rules for --decoder-first/last-pipeline-num-layers (TransformerConfig
// __post_init__): no embedding/loss slots, each given stage and every middle stage a multiple of
// vpp, the remaining layers split evenly over the middle stages; gpuplan also needs pp > 1 and
// at least one layer on every stage.
Status ValidateUnevenStages(const ModelSpec& m, const ParallelSpec& p, const FieldNames& names) {
  const char* field = p.first_stage_layers > 0 ? kFirstStageLayers : kLastStageLayers;
  if (p.first_stage_layers < 0 || p.last_stage_layers < 0) {
    return Fail("parallelism", p.first_stage_layers < 0 ? kFirstStageLayers : kLastStageLayers,
                "must be >= 1 (or absent)");
  }
  if (p.embedding_slot || p.loss_slot) {
    return Fail("parallelism", field,
                "cannot be combined with " +
                    names.Source("parallelism", p.embedding_slot ? kEmbeddingSlot : kLossSlot) +
                    " (Megatron-LM refuses uneven first/last stages together with the "
                    "embedding/loss slots); give one or the other");
  }
  if (p.pp < 2) return Fail("parallelism", field, "needs pp > 1");
  const std::string vpp = VppSource(p, names);
  for (const auto& [name, layers] : {std::pair{kFirstStageLayers, p.first_stage_layers},
                                     std::pair{kLastStageLayers, p.last_stage_layers}}) {
    if (layers > 0 && layers % p.vpp != 0) {
      return Fail("parallelism", name,
                  Str(layers) + " is not divisible by " + vpp +
                      " (Megatron-LM splits every stage into vpp equal model chunks)");
    }
  }
  const int64_t given = (p.first_stage_layers > 0 ? 1 : 0) + (p.last_stage_layers > 0 ? 1 : 0);
  const int64_t middle_stages = p.pp - given;
  const int64_t middle_layers = m.num_layers - p.first_stage_layers - p.last_stage_layers;
  std::string remaining = "model.num_layers " + Str(m.num_layers);
  if (p.first_stage_layers > 0) remaining += " - " + Str(p.first_stage_layers);
  if (p.last_stage_layers > 0) remaining += " - " + Str(p.last_stage_layers);
  remaining += " = " + Str(middle_layers) + " layers";
  if (middle_stages == 0) {
    if (middle_layers != 0) {
      return Fail("parallelism", field,
                  remaining + " left, but pp = 2 has no other stage (first + last must equal " +
                      Str(m.num_layers) + ")");
    }
    return Status::Ok();
  }
  const std::string over =
      " over the " + Str(middle_stages) + " other " + (middle_stages == 1 ? "stage" : "stages");
  if (middle_layers < middle_stages) {
    return Fail("parallelism", field,
                remaining + over + ": every pipeline stage needs at least one layer");
  }
  if (middle_layers % middle_stages != 0) {
    return Fail("parallelism", field,
                remaining + " do not split evenly" + over + " (Megatron-LM requires it)");
  }
  if ((middle_layers / middle_stages) % p.vpp != 0) {
    return Fail("parallelism", field,
                remaining + over + " give " + Str(middle_layers / middle_stages) +
                    " per stage, not divisible by " + vpp);
  }
  return Status::Ok();
}

Status Validate(const JobSpec& job, const HardwareDb& db, const FieldNames& names) {
  const ModelSpec& m = job.model;
  const ClusterSpec& c = job.cluster;
  const TrainingSpec& t = job.training;
  const ParallelSpec& p = job.parallel;
  GPUPLAN_RETURN_IF_ERROR(ValidateModel(m, "model"));

  // Cluster.
  const GpuSpec* gpu = db.FindGpu(c.gpu);
  if (gpu == nullptr) {
    return Fail("cluster", "gpu", "unknown GPU '" + c.gpu + "' (known: " + Join(db.GpuIds()) + ")");
  }
  if (db.FindNetwork(c.inter_node) == nullptr) {
    return Fail("cluster", "inter_node",
                "unknown network '" + c.inter_node + "' (known: " + Join(db.NetworkIds()) + ")");
  }
  if (c.num_gpus < 1) return Fail("cluster", "num_gpus", "must be >= 1, got " + Str(c.num_gpus));
  if (c.num_gpus > kMaxGpus) {
    return Fail("cluster", "num_gpus",
                Str(c.num_gpus) + " exceeds the limit of " + Str(kMaxGpus) + " GPUs per job");
  }
  if (c.gpus_per_node < 1) {
    return Fail("cluster", "gpus_per_node", "must be >= 1, got " + Str(c.gpus_per_node));
  }
  if (c.num_gpus > c.gpus_per_node && c.num_gpus % c.gpus_per_node != 0) {
    return Fail("cluster", "num_gpus",
                Str(c.num_gpus) + " is not a multiple of gpus_per_node = " + Str(c.gpus_per_node) +
                    " (jobs use whole nodes)");
  }

  // Training.
  if (t.seq_len < 1) return Fail("training", "seq_len", "must be >= 1, got " + Str(t.seq_len));
  if (t.seq_len > kMaxSeqLen) {
    return Fail("training", "seq_len",
                Str(t.seq_len) + " exceeds the limit of " + Str(kMaxSeqLen) + " tokens");
  }
  if (const std::string problem = SeqLenProblem(m, t.seq_len); !problem.empty()) {
    return Fail("training", "seq_len", problem);
  }
  if (t.global_batch_size < 1) {
    return Fail("training", "global_batch_size", "must be >= 1, got " + Str(t.global_batch_size));
  }
  if (t.micro_batch_size < 1) {
    return Fail("training", "micro_batch_size", "must be >= 1, got " + Str(t.micro_batch_size));
  }
  const std::optional<int64_t> step_tokens = CheckedMul(t.global_batch_size, t.seq_len);
  if (!step_tokens || *step_tokens > kMaxTokensPerStep) {
    return Fail("training", "global_batch_size",
                Str(t.global_batch_size) + " sequences of " + Str(t.seq_len) +
                    " tokens exceed the limit of " + Str(kMaxTokensPerStep) + " tokens per step");
  }
  if (t.micro_batch_size > t.global_batch_size) {
    return Fail(
        "training", "micro_batch_size",
        Str(t.micro_batch_size) + " exceeds global_batch_size = " + Str(t.global_batch_size));
  }
  if (t.precision == Precision::kFp4 && t.lora.enabled) {
    return Fail("training", "precision",
                "fp4 is modelled for full training (the NVFP4 pre-training recipe), not with "
                "lora; use bf16 or fp8");
  }
  if (t.grad_reduce_bf16 && !Bf16GradReductionApplies(t.precision)) {
    return Fail("training", "grad_reduce_bf16",
                std::string("needs precision bf16, fp8 or fp4 (") + NameOf(t.precision) +
                    " reduces its gradients in its own precision); remove it");
  }
  if (t.recompute_modules != kRecomputeCoreAttn) {
    // Megatron-Core's --recompute-modules (transformer_config.py; RecomputeModule).
    const auto modules_fail = [](const std::string& why) {
      return Fail("training", "recompute_modules", why);
    };
    if (t.recompute != Recompute::kSelective) {
      return modules_fail(std::string("names what a selective recomputation re-runs: needs "
                                      "recompute selective, got ") +
                          std::string(RecomputeName(t.recompute)));
    }
    if (!t.framework.recompute_modules) {
      return modules_fail("the training stack '" + t.framework.id +
                          "' does not choose the modules it recomputes (frameworks.json "
                          "recompute_modules); use megatron-core or remove it");
    }
    if (!m.is_moe() && (t.recompute_modules & (kRecomputeLayernorm | kRecomputeMoeAct)) != 0) {
      return modules_fail(
          "layernorm and moe_act recompute a mixture-of-experts layer's pre-MLP norm and its "
          "experts' activation, and the model has no MoE layers (Transformer Engine fuses a "
          "dense layer's norms into its linears); use core_attn");
    }
    if (m.DenseLayers() == 0 && (t.recompute_modules & kRecomputeMlp) != 0) {
      return modules_fail(
          "mlp recomputes a dense layer's MLP, and every layer of the model is a "
          "mixture-of-experts layer (Megatron-Core skips MoE layers); use moe_act");
    }
  }
  if (t.fp8_param_gather) {
    if (t.precision != Precision::kFp8) {
      return Fail("training", "fp8_param_gather",
                  std::string("needs precision fp8, got ") + NameOf(t.precision));
    }
    if (t.lora.enabled) {
      return Fail("training", "fp8_param_gather",
                  "stores trained weights in fp8; with lora use lora.base fp8 instead");
    }
    if (!job.parallel.fsdp && job.parallel.zero_stage < 1) {
      return Fail("training", "fp8_param_gather",
                  "needs the distributed optimizer or FSDP (ZeRO stage 1 or more), as Megatron-LM "
                  "asserts; the fp32 master weights live in its shards");
    }
  }
  if (t.activation_offload_layers > 0) {
    // Megatron-Core's checks (megatron/core/transformer/transformer_config.py).
    const auto offload_fail = [](const std::string& why) {
      return Fail("training", "activation_offload_layers", why);
    };
    if (!t.framework.activation_offload) {
      return offload_fail("the training stack '" + t.framework.id +
                          "' does not offload activations (frameworks.json activation_offload); "
                          "use megatron-core or remove it");
    }
    if (t.activation_offload_layers >= job.model.num_layers) {
      return offload_fail(Str(t.activation_offload_layers) + " must be less than num_layers = " +
                          Str(job.model.num_layers) + ", as Megatron-Core requires");
    }
    if (job.parallel.pp > 1) {
      return offload_fail(
          "needs pp 1 (Megatron-Core has no CPU offloading with pipeline "
          "parallelism), got pp " +
          Str(job.parallel.pp));
    }
    if (t.recompute != Recompute::kNone) {
      return offload_fail(
          "needs recompute none (Megatron-Core's CPU offloading does not work "
          "with activation recomputation)");
    }
    if (gpu->HostDevice()) {
      return offload_fail("the GPU '" + c.gpu + "' runs in host memory: nothing to offload to");
    }
  }
  if (!(gpu->PeakFlops(t.precision) > 0)) {
    const std::string problem = std::string(NameOf(t.precision)) + " is not supported by GPU '" +
                                c.gpu + "' (no " + NameOf(t.precision) +
                                " peak in the hardware database)";
    // A flag that chose the GPU is to blame when the precision is the spec's or the default.
    if (names.Given("cluster", "gpu") != nullptr &&
        names.Given("training", "precision") == nullptr) {
      return Fail("cluster", "gpu",
                  problem + "; set another precision with " +
                      names.Setting("training", "precision") + " or choose another GPU");
    }
    return Fail("training", "precision", problem);
  }
  if (t.lora.enabled) {
    if (t.lora.rank < 1) {
      return Fail("training.lora", "rank", "must be >= 1, got " + Str(t.lora.rank));
    }
    if ((t.lora.targets & kLoraAll) == 0) {
      return Fail("training.lora", "targets", "must name at least one projection");
    }
  }

  // Parallel layout.
  const std::pair<const char*, int64_t> degrees[] = {{"tp", p.tp}, {"pp", p.pp}, {"dp", p.dp},
                                                     {"cp", p.cp}, {"ep", p.ep}, {"vpp", p.vpp}};
  for (const auto& [name, value] : degrees) {
    if (value < 1) return Fail("parallelism", name, "must be >= 1, got " + Str(value));
  }
  // Bounded before any product of degrees is formed: tp*pp*dp*cp must equal num_gpus (at most
  // kMaxGpus), ep divides dp*cp, vpp splits the layers.
  int64_t gpus = 1;
  for (const auto& [name, value] : std::span(degrees).first(4)) {
    const std::optional<int64_t> product = CheckedMul(gpus, value);
    if (!product || *product > kMaxGpus) {
      return Fail("parallelism", name,
                  Str(value) + ": the product of parallel degrees exceeds the limit of " +
                      Str(kMaxGpus) + " GPUs per job");
    }
    gpus = *product;
  }
  if (p.ep > kMaxGpus) {
    return Fail("parallelism", "ep",
                Str(p.ep) + " exceeds the limit of " + Str(kMaxGpus) + " GPUs per job");
  }
  if (p.vpp > kMaxLayers) {
    return Fail("parallelism", "vpp",
                Str(p.vpp) + " exceeds the limit of " + Str(kMaxLayers) + " layers");
  }
  const int64_t product = p.dp * p.tp * p.pp * p.cp;
  if (product != c.num_gpus) {
    // dp is never derived here (a derived dp fits the GPU count): the spec or --dp pinned it.
    const auto flagged = names.FirstGiven({{"cluster", "num_gpus"},
                                           {"parallelism", "dp"},
                                           {"parallelism", "tp"},
                                           {"parallelism", "pp"},
                                           {"parallelism", "cp"}});
    if (!flagged) {
      return Status::Invalid("parallelism: dp*tp*pp*cp = " + Str(product) +
                             " does not equal cluster.num_gpus = " + Str(c.num_gpus));
    }
    const bool dp_in_spec = names.Given("parallelism", "dp") == nullptr;
    return Fail(
        flagged->first, flagged->second,
        "dp*tp*pp*cp = " + Str(p.dp) + "*" + Str(p.tp) + "*" + Str(p.pp) + "*" + Str(p.cp) + " = " +
            Str(product) + " GPUs, not " + Str(c.num_gpus) + "; dp = " + Str(p.dp) + " is set by " +
            names.Source("parallelism", "dp") +
            (dp_in_spec ? " (leave it out of the spec to derive dp from the GPU count)" : ""));
  }
  if (m.num_attention_heads % p.tp != 0) {
    return ModelFail(
        "num_attention_heads",
        Str(m.num_attention_heads) + " is not divisible by parallelism.tp = " + Str(p.tp));
  }
  if (m.num_kv_heads % p.tp != 0 && p.tp % m.num_kv_heads != 0) {
    return ModelFail("num_kv_heads", Str(m.num_kv_heads) + " and parallelism.tp = " + Str(p.tp) +
                                         ": neither divides the other");
  }
  if ((p.embedding_slot || p.loss_slot) && p.pp < 2) {
    return Fail("parallelism", p.embedding_slot ? kEmbeddingSlot : kLossSlot, "needs pp > 1");
  }
  if (p.pp > m.num_layers) {
    return Fail("parallelism", "pp",
                Str(p.pp) + " exceeds model.num_layers = " + Str(m.num_layers) +
                    ": every pipeline stage needs at least one layer");
  }
  if (!p.stage_layers.empty()) {
    GPUPLAN_RETURN_IF_ERROR(ValidateStageLayers(m, p, names));
  } else if (p.first_stage_layers != 0 || p.last_stage_layers != 0) {
    GPUPLAN_RETURN_IF_ERROR(ValidateUnevenStages(m, p, names));
  } else {
    const int64_t slots = m.num_layers + (p.embedding_slot ? 1 : 0) + (p.loss_slot ? 1 : 0);
    if (slots % (p.pp * p.vpp) != 0) {
      const std::string stages = " is not divisible by parallelism.pp*vpp = " + Str(p.pp * p.vpp);
      if (slots == m.num_layers) {
        return ModelFail("num_layers", Str(m.num_layers) + stages + " (" + UnevenHint(m, p, names) +
                                           names.Setting("parallelism", kEmbeddingSlot) + " / " +
                                           names.Setting("parallelism", kLossSlot) +
                                           " add one slot each)");
      }
      // The slots made the count uneven: the error is about the (first) slot.
      const bool both = p.embedding_slot && p.loss_slot;
      return Fail("parallelism", p.embedding_slot ? kEmbeddingSlot : kLossSlot,
                  "model.num_layers " + Str(m.num_layers) + " + " +
                      (both ? "2 slots (with " + names.Source("parallelism", kLossSlot) + ")"
                            : std::string("1 slot")) +
                      " = " + Str(slots) + stages);
    }
    if (ChunkLayers(job, 0, 0) < 1 || ChunkLayers(job, p.pp - 1, p.vpp - 1) < 1) {
      return Fail("parallelism", p.embedding_slot ? kEmbeddingSlot : kLossSlot,
                  "leaves a pipeline stage's model chunk with no transformer layer (" + Str(slots) +
                      " slots on pp*vpp = " + Str(p.pp * p.vpp) + " chunks)");
    }
  }
  if (p.vpp > 1 && p.schedule != Schedule::kInterleaved) {
    return Fail("parallelism", "vpp",
                Str(p.vpp) + " needs schedule 'interleaved', got '" + NameOf(p.schedule) + "'");
  }
  if (p.vpp > 1 && p.pp < 2) {
    return Fail("parallelism", "vpp", Str(p.vpp) + " needs pp > 1");
  }
  if (t.global_batch_size % (t.micro_batch_size * p.dp) != 0) {
    return Fail("training", "global_batch_size",
                Str(t.global_batch_size) +
                    " is not divisible by micro_batch_size*dp = " + Str(t.micro_batch_size) + "*" +
                    Str(p.dp) + " = " + Str(t.micro_batch_size * p.dp));
  }
  const int64_t micro_batches = t.global_batch_size / (t.micro_batch_size * p.dp);
  if (micro_batches > kMaxMicroBatchesPerStep) {
    return Fail("training", "global_batch_size",
                Str(t.global_batch_size) + " / (micro_batch_size*dp = " +
                    Str(t.micro_batch_size * p.dp) + ") = " + Str(micro_batches) +
                    " micro-batches per step exceed the limit of " + Str(kMaxMicroBatchesPerStep));
  }
  // The interleaved schedule runs micro-batches in groups of pp, chunk by chunk; a last group
  // smaller than pp makes the pass order wait on itself. Megatron-LM refuses such a count:
  // megatron/core/pipeline_parallel/schedules.py, forward_backward_pipelining_with_interleaving
  // ("number of microbatches is not divisible by pipeline-model-parallel-size when using
  // interleaved schedule"; later versions: microbatch_group_size_per_vp_stage, pp by default,
  // must be <= M, and M modulo it must be 0 or >= pp).
  if (p.schedule == Schedule::kInterleaved && micro_batches % p.pp != 0) {
    return Fail("training", "global_batch_size",
                Str(t.global_batch_size) + " / (micro_batch_size*dp = " +
                    Str(t.micro_batch_size * p.dp) + ") = " + Str(micro_batches) +
                    " micro-batches per step, not a multiple of parallelism.pp = " + Str(p.pp) +
                    " as the interleaved schedule needs (Megatron-LM runs micro-batches in groups "
                    "of pp); use a multiple of " +
                    Str(p.pp) + " micro-batches, or vpp = 1 with schedule '1f1b'");
  }
  if (t.seq_len % p.cp != 0) {
    return Fail("training", "seq_len",
                Str(t.seq_len) + " is not divisible by parallelism.cp = " + Str(p.cp));
  }
  if (p.ep > 1) {
    if (!m.is_moe()) {
      return Fail("parallelism", "ep", Str(p.ep) + " needs a mixture-of-experts model");
    }
    if (m.moe_num_experts % p.ep != 0) {
      return Fail("parallelism", "ep",
                  Str(p.ep) + " does not divide model.moe_num_experts = " + Str(m.moe_num_experts));
    }
  }
  const int64_t etp = p.ExpertTp();
  if (etp != p.tp) {
    if (!m.is_moe()) {
      return Fail("parallelism", "etp",
                  Str(etp) + " differs from tp = " + Str(p.tp) +
                      " and needs a mixture-of-experts model (expert tensor parallelism)");
    }
    if (p.tp % etp != 0) {
      return Fail("parallelism", "etp",
                  Str(etp) + " does not divide tp = " + Str(p.tp) +
                      " (gpuplan keeps the expert TP group inside the attention's TP group)");
    }
  }
  if (m.is_moe() && m.ExpertFfn() % etp != 0) {
    return Fail("parallelism", "etp",
                Str(etp) + " does not divide the expert FFN width " + Str(m.ExpertFfn()));
  }
  // Megatron-Core's expert grid: each stage's tp x cp x dp ranks regrouped as etp x ep x
  // expert-dp (megatron/core/parallel_state.py).
  if ((p.tp * p.cp * p.dp) % (etp * p.ep) != 0) {
    return Fail("parallelism", "ep",
                "etp*ep = " + Str(etp) + "*" + Str(p.ep) +
                    " does not divide tp*cp*dp = " + Str(p.tp * p.cp * p.dp) +
                    " (expert layers regroup each stage's tp x cp x dp ranks as etp x ep x "
                    "expert-dp)");
  }
  // Megatron-Core: "When using MoE with expert parallelism and tensor parallelism, sequence
  // parallelism must be enabled"; the dispatcher starts from each TP rank's own tokens.
  if (m.is_moe() && p.tp > 1 && (p.ep > 1 || etp != p.tp) && !p.sequence_parallel) {
    return Fail("parallelism", "sequence_parallel",
                "must be true with tp > 1 and ep > 1 or etp != tp (Megatron-Core's MoE token "
                "dispatcher starts from each TP rank's share of the sequence)");
  }
  if (!m.is_moe() && t.moe_dispatcher != MoeDispatcher::kAllToAll) {
    return Fail("training", "moe_dispatcher", "deepep needs a mixture-of-experts model");
  }
  if (!m.is_moe() && t.moe_load_imbalance != 1.0) {
    return Fail("training", "moe_load_imbalance",
                StrFormat("%g needs a mixture-of-experts model (dense layers route nothing)",
                          t.moe_load_imbalance));
  }
  if (const std::string problem = MoeLoadImbalanceProblem(t.moe_load_imbalance); !problem.empty()) {
    return Fail("training", "moe_load_imbalance", problem);
  }
  if (t.moe_dispatcher == MoeDispatcher::kDeepEp && p.ep > 1 &&
      !DeepEpRuns(*gpu, c.gpus_per_node)) {
    const std::string why =
        c.gpus_per_node > kDeepEpMaxNvlinkPeers
            ? "forwards among at most " + Str(kDeepEpMaxNvlinkPeers) +
                  " NVLink peers of a node (DeepEP NUM_MAX_NVL_PEERS); cluster.gpus_per_node is " +
                  Str(c.gpus_per_node)
            : "needs an NVSwitch node (NVLink between every pair of a node's GPUs); " + c.gpu +
                  " has scale-up '" + gpu->scaleup_kind + "'";
    return Fail("training", "moe_dispatcher", "deepep " + why + "; use alltoall");
  }
  if (t.moe_dispatcher == MoeDispatcher::kDeepEp && etp != 1) {
    return Fail("training", "moe_dispatcher",
                "deepep is modelled without expert tensor parallelism: set parallelism.etp = 1 "
                "(got " +
                    Str(etp) + "), or use alltoall");
  }
  if (p.zero_stage < 0 || p.zero_stage > 3) {
    return Fail("parallelism", "zero_stage", "must be 0, 1, 2 or 3, got " + Str(p.zero_stage));
  }
  if (p.cpu_offload && p.zero_stage == 0 && !p.fsdp) {
    return Fail("parallelism", "cpu_offload", "needs zero_stage >= 1 or fsdp");
  }
  if (p.cpu_offload && gpu->HostDevice()) {
    return Fail("parallelism", "cpu_offload",
                "'" + c.gpu + "' ranks already run in host memory: there is nothing to offload to");
  }
  if (p.dp_replicate < 1) {
    return Fail("parallelism", "dp_replicate", "must be at least 1, got " + Str(p.dp_replicate));
  }
  if (p.dp_replicate > 1) {
    if (p.zero_stage != 3 && !p.fsdp) {
      return Fail("parallelism", "dp_replicate",
                  Str(p.dp_replicate) +
                      " needs zero_stage 3 or fsdp (hybrid sharding replicates "
                      "a ZeRO-3/FSDP shard group), got zero_stage " +
                      Str(p.zero_stage));
    }
    if (p.dp % p.dp_replicate != 0) {
      return Fail("parallelism", "dp_replicate",
                  Str(p.dp_replicate) + " does not divide dp = " + Str(p.dp));
    }
    if ((p.tp * p.ShardRanks()) % (etp * p.ep) != 0) {
      return Fail("parallelism", "dp_replicate",
                  Str(p.dp_replicate) + " leaves a shard group of tp*dp/dp_replicate*cp = " +
                      Str(p.tp * p.ShardRanks()) + " ranks, which etp*ep = " + Str(etp * p.ep) +
                      " does not divide");
    }
  }
  // Transformer Engine's userbuffers (tp_overlap.h) split sequence parallelism's all-gather and
  // reduce-scatter, and map the TP peers' memory over the scale-up fabric.
  if (p.tp_overlap && p.tp > 1) {
    if (!job.training.framework.tp_overlap) {
      return Fail("parallelism", "tp_overlap",
                  "is Transformer Engine's userbuffer overlap (Megatron-Core --tp-comm-overlap); "
                  "framework " +
                      job.training.framework.id +
                      " has none (frameworks.json: tp_overlap false); set tp_overlap false");
    }
    if (!p.sequence_parallel) {
      return Fail("parallelism", "tp_overlap",
                  "needs sequence_parallel (the overlap splits sequence parallelism's all-gather "
                  "and reduce-scatter; Megatron-LM accepts --tp-comm-overlap only with "
                  "--sequence-parallel)");
    }
    const int64_t domain = TpOverlapMaxRanks(*gpu, c.gpus_per_node);
    if (p.tp > domain) {
      return Fail("parallelism", "tp_overlap",
                  "needs the TP group inside one scale-up domain (userbuffers map the peers' "
                  "memory over NVLink/xGMI); " +
                      (gpu->scaleup_kind == "none" || gpu->HostDevice()
                           ? c.gpu + " has no scale-up fabric"
                           : "tp = " + Str(p.tp) + " exceeds " + Str(domain) + " GPUs"));
    }
  }
  if (p.ep_overlap) {
    if (const std::optional<std::string> problem = EpOverlapProblem(job)) {
      return Fail("parallelism", "ep_overlap", *problem);
    }
  }
  // A node is a scale-up domain (a rack of a rack-scale template): a group straddling two with a
  // few members would put them on the network, which the placement model does not price.
  if (const std::optional<LayoutGroup> g = UntiledGroup(p, c.gpus_per_node)) {
    return Fail(
        "cluster", "gpus_per_node",
        Str(c.gpus_per_node) + " GPUs per node (scale-up domain) do not hold whole " +
            std::string(g->name) + " groups of " + Str(g->size) +
            (g->stride == 1 ? " consecutive ranks" : " ranks " + Str(g->stride) + " apart") +
            ": a group would straddle two domains. Use a gpus_per_node that " +
            "the layout tiles (an NVL72 rack runs power-of-two layouts on 64 GPUs, 16 " +
            "of its 18 trays)");
  }
  // Offloaded activations must fit in the host memory behind the GPU's link, where the database
  // has it (a Grace superchip's LPDDR5X per GPU); checked once the layout is valid.
  const double host_bytes = gpu->host_memory_bytes_per_gpu;
  if (t.activation_offload_layers > 0 && host_bytes > 0) {
    const double offloaded = OffloadedActivationBytes(job, JobLayerActivations(job));
    if (offloaded > host_bytes) {
      return Fail("training", "activation_offload_layers",
                  Str(t.activation_offload_layers) + " layers offload " +
                      StrFormat("%.1f", offloaded / 1e9) + " GB per GPU, more than the " +
                      StrFormat("%.0f", host_bytes / 1e9) + " GB of host memory per " + c.gpu +
                      " GPU (hardware-db c2c_host_memory_gb_per_gpu)");
    }
  }
  return Status::Ok();
}

}  // namespace

nlohmann::json JobSpecToJson(const JobSpec& job) {
  const ModelSpec& m = job.model;
  nlohmann::json model = {
      {"name", m.name},
      {"num_layers", m.num_layers},
      {"hidden_size", m.hidden_size},
      {"ffn_hidden_size", m.ffn_hidden_size},
      {"num_attention_heads", m.num_attention_heads},
      {"num_kv_heads", m.num_kv_heads},
      {"vocab_size", m.vocab_size},
      {"mlp", m.mlp == MlpKind::kSwiGlu ? "swiglu" : "gelu"},
      {"tied_embeddings", m.tied_embeddings},
  };
  if (m.head_dim > 0) model["head_dim"] = m.head_dim;
  if (m.max_position_embeddings_learned > 0) {
    model["max_position_embeddings_learned"] = m.max_position_embeddings_learned;
  }
  if (!m.linear_biases) model["linear_biases"] = false;
  if (m.qkv_bias) model["qkv_bias"] = true;
  if (m.is_moe()) {
    model["moe_num_experts"] = m.moe_num_experts;
    model["moe_top_k"] = m.moe_top_k;
    if (m.moe_ffn_hidden_size > 0) model["moe_ffn_hidden_size"] = m.moe_ffn_hidden_size;
    if (m.moe_shared_experts > 0) model["moe_shared_experts"] = m.moe_shared_experts;
    if (m.moe_first_dense_layers > 0) model["moe_first_dense_layers"] = m.moe_first_dense_layers;
    if (m.moe_router_groups > 0) {
      model["moe_router_groups"] = m.moe_router_groups;
      model["moe_router_group_topk"] = m.moe_router_group_topk;
    }
  }
  if (m.attention_window > 0) {
    model["attention_window"] = m.attention_window;
    model["local_attention_layers"] = m.local_attention_layers;
    if (m.attention_chunked) model["attention_chunked"] = true;
  }
  if (!m.approximation_note.empty()) model["approximation_note"] = m.approximation_note;

  const TrainingSpec& t = job.training;
  nlohmann::json training = {
      {"seq_len", t.seq_len},
      {"global_batch_size", t.global_batch_size},
      {"micro_batch_size", t.micro_batch_size},
      {"precision", NameOf(t.precision)},
      {"recompute", NameOf(t.recompute)},
      {"attention", NameOf(t.attention)},
      {"dropout", t.dropout},
      {"framework", t.framework.id},
  };
  if (t.recompute_modules != kRecomputeCoreAttn) {
    training["recompute_modules"] = RecomputeModuleNames(t.recompute_modules);
  }
  if (t.grad_reduce_bf16) training["grad_reduce_bf16"] = true;
  if (t.fp8_param_gather) training["fp8_param_gather"] = true;
  if (t.activation_offload_layers > 0) {
    training["activation_offload_layers"] = t.activation_offload_layers;
  }
  if (job.model.is_moe()) {
    training["moe_dispatcher"] = NameOf(t.moe_dispatcher);
    training["moe_load_imbalance"] = t.moe_load_imbalance;
  }
  if (t.lora.enabled) {
    nlohmann::json targets = nlohmann::json::array();
    for (const LoraTargetName& n : kLoraTargets) {
      if (n.bits == kLoraAttention || n.bits == kLoraAll) continue;
      if ((t.lora.targets & n.bits) != 0) targets.push_back(n.name);
    }
    training["lora"] = {{"rank", t.lora.rank},
                        {"targets", targets},
                        {"base", std::string(BaseWeightsName(t.lora.base))}};
  }

  const ParallelSpec& p = job.parallel;
  nlohmann::json out = {
      {"model", model},
      {"cluster",
       {{"gpu", job.cluster.gpu},
        {"num_gpus", job.cluster.num_gpus},
        {"gpus_per_node", job.cluster.gpus_per_node},
        {"inter_node", job.cluster.inter_node}}},
      {"training", training},
      {"parallelism",
       {{"tp", p.tp},
        {"pp", p.pp},
        {"dp", p.dp},
        {"cp", p.cp},
        {"ep", p.ep},
        {"vpp", p.vpp},
        {"sequence_parallel", p.sequence_parallel},
        {"zero_stage", p.zero_stage},
        {"fsdp", p.fsdp},
        {"cpu_offload", p.cpu_offload},
        {"schedule", NameOf(p.schedule)},
        {"dp_overlap", p.dp_overlap},
        {"tp_overlap", p.tp_overlap},
        {kEmbeddingSlot, p.embedding_slot},
        {kLossSlot, p.loss_slot}}},
      {"overhead",
       {{"framework_gb", job.overhead.framework_bytes / 1e9},
        {"fragmentation", job.overhead.fragmentation},
        {"allocator_headroom", job.overhead.allocator_headroom}}},
  };
  if (p.tp_backward_overlap) out["parallelism"]["tp_backward_overlap"] = *p.tp_backward_overlap;
  if (p.first_stage_layers > 0) out["parallelism"][kFirstStageLayers] = p.first_stage_layers;
  if (p.last_stage_layers > 0) out["parallelism"][kLastStageLayers] = p.last_stage_layers;
  if (!p.stage_layers.empty()) out["parallelism"][kStageLayers] = p.stage_layers;
  if (p.dp_replicate > 1) out["parallelism"]["dp_replicate"] = p.dp_replicate;
  // Written only where it differs from tp, so that a spec whose tp is later changed keeps
  // Megatron's default etp = tp.
  if (p.ExpertTp() != p.tp) out["parallelism"]["etp"] = p.ExpertTp();
  if (p.ep_overlap) out["parallelism"]["ep_overlap"] = true;
  // Written only where it is off (the validator's executed job): every stack overlaps the ring.
  if (!p.cp_overlap) out["parallelism"]["cp_overlap"] = false;
  return out;
}

}  // namespace gpuplan

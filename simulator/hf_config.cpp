#include "simulator/hf_config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "common/json_reader.h"
#include "common/str_format.h"

namespace gpuplan {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// Families whose MLP is gated (gate, up and down projections) whatever `hidden_act` says:
// SiLU gives SwiGLU, GELU gives GeGLU, both with the same three matrices.
bool IsGatedFamily(const std::string& model_type) {
  static const char* const kGated[] = {"llama",     "mistral",     "mixtral",     "qwen2",
                                       "qwen2_moe", "qwen3",       "qwen3_moe",   "gemma",
                                       "gemma2",    "deepseek_v2", "deepseek_v3", "olmo",
                                       "olmo2",     "phi3",        "cohere",      "granite"};
  for (const char* t : kGated) {
    if (model_type == t) return true;
  }
  return false;
}

// The model's name: `_name_or_path` when set, else the directory holding a `config.json`, else
// the file's stem. A name from the path is made valid UTF-8 (paths are bytes; names go to JSON).
std::string NameFor(const nlohmann::json& config, const std::string& origin) {
  auto it = config.find("_name_or_path");
  if (it != config.end() && it->is_string() && !it->get<std::string>().empty()) {
    return it->get<std::string>();
  }
  const std::filesystem::path p(origin);
  if (p.filename() == "config.json" && p.has_parent_path() && !p.parent_path().filename().empty()) {
    return ValidUtf8(p.parent_path().filename().string());
  }
  return ValidUtf8(p.stem().string().empty() ? origin : p.stem().string());
}

std::string StringField(const nlohmann::json& config, const char* field) {
  auto it = config.find(field);
  return it != config.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string FirstArchitecture(const nlohmann::json& config) {
  auto it = config.find("architectures");
  if (it != config.end() && it->is_array() && !it->empty() && it->front().is_string()) {
    return it->front().get<std::string>();
  }
  return {};
}

// GPT-2 (configuration_gpt2.py): n_embd, n_layer, n_head, n_inner (None => 4*n_embd), n_positions
// (learned absolute positions), activation_function; biases everywhere; tied head by default.
Expected<ModelSpec> FromGpt2(const nlohmann::json& config, const std::string& origin) {
  JsonObjectReader r(config, origin);
  ModelSpec m;
  m.hidden_size = r.PositiveInt("n_embd");
  m.num_layers = r.PositiveInt("n_layer");
  m.num_attention_heads = r.PositiveInt("n_head");
  m.num_kv_heads = m.num_attention_heads;
  m.ffn_hidden_size = r.OptionalPositiveInt("n_inner", 4 * m.hidden_size);
  m.vocab_size = r.PositiveInt("vocab_size");
  m.max_position_embeddings_learned =
      r.OptionalPositiveInt("n_positions", r.OptionalPositiveInt("n_ctx", 1024));
  // Any activation (gelu_new, gelu, relu, ...) drives a two-matrix MLP.
  (void)r.OptionalString("activation_function", "gelu_new");
  m.mlp = MlpKind::kGelu;
  m.linear_biases = true;
  m.tied_embeddings = r.OptionalBool("tie_word_embeddings", true);
  if (!r.status().ok()) return r.status();
  return m;
}

// Multi-head latent attention (DeepSeek-V2/V3) as grouped-query attention with the same
// projection parameter count: Q/K/V/O = h*d*(2a + 2kv) with kv = 8 (or 1 when 8 does not divide
// a) and d chosen to match. See docs/MODELS.md.
void ApproximateMla(JsonObjectReader& r, ModelSpec& m) {
  const int64_t q_lora = r.OptionalNonNegativeInt("q_lora_rank", 0);
  const int64_t kv_lora = r.PositiveInt("kv_lora_rank");
  const int64_t nope = r.PositiveInt("qk_nope_head_dim");
  const int64_t rope = r.PositiveInt("qk_rope_head_dim");
  const int64_t v_dim = r.PositiveInt("v_head_dim");
  if (!r.status().ok()) return;
  const double h = static_cast<double>(m.hidden_size);
  const double a = static_cast<double>(m.num_attention_heads);
  const double qk = static_cast<double>(nope + rope);
  const double q_params =
      q_lora > 0 ? h * static_cast<double>(q_lora) + static_cast<double>(q_lora) * a * qk
                 : h * a * qk;
  const double kv_params = h * static_cast<double>(kv_lora + rope) +
                           static_cast<double>(kv_lora) * a * static_cast<double>(nope + v_dim);
  const double o_params = a * static_cast<double>(v_dim) * h;
  const double mla = q_params + kv_params + o_params;
  m.num_kv_heads = m.num_attention_heads % 8 == 0 ? 8 : 1;
  const double per_dim = h * (2.0 * a + 2.0 * static_cast<double>(m.num_kv_heads));
  m.head_dim = std::max<int64_t>(1, std::llround(mla / per_dim));
  const double approx = per_dim * static_cast<double>(m.head_dim);
  m.approximation_note =
      "MLA approximated as GQA with " + std::to_string(m.num_kv_heads) + " KV heads and head_dim " +
      std::to_string(m.head_dim) + ": Q/K/V/O parameters " +
      std::to_string(static_cast<long long>(approx)) + " per layer vs MLA's " +
      std::to_string(static_cast<long long>(mla)) +
      "; attention-score FLOPs use 2*head_dim = " + std::to_string(2 * m.head_dim) +
      " per head instead of " + std::to_string(nope + rope + v_dim);
}

// Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE, DeepSeek-V3 and others with the same names.
Expected<ModelSpec> FromLlamaLike(const nlohmann::json& config, const std::string& origin,
                                  const std::string& model_type) {
  JsonObjectReader r(config, origin);
  ModelSpec m;
  m.hidden_size = r.PositiveInt("hidden_size");
  m.ffn_hidden_size = r.PositiveInt("intermediate_size");
  m.num_layers = r.PositiveInt("num_hidden_layers");
  m.num_attention_heads = r.PositiveInt("num_attention_heads");
  m.num_kv_heads = r.OptionalPositiveInt("num_key_value_heads", m.num_attention_heads);
  m.vocab_size = r.PositiveInt("vocab_size");
  m.head_dim = r.OptionalNonNegativeInt("head_dim", 0);
  m.tied_embeddings = r.OptionalBool("tie_word_embeddings", false);
  const std::string act = r.OptionalString("hidden_act", "silu");
  if (!r.status().ok()) return r.status();

  if (IsGatedFamily(model_type) || act == "silu" || act == "swish" || act == "swiglu") {
    m.mlp = MlpKind::kSwiGlu;
  } else if (StartsWith(act, "gelu") || act == "relu") {
    m.mlp = MlpKind::kGelu;  // non-gated two-matrix MLP (e.g. GPT-NeoX style), with biases
  } else {
    r.Fail("hidden_act", "'" + act + "' is not understood (expected silu or gelu*)");
    return r.status();
  }
  // Store head_dim only when it differs from hidden_size / heads.
  if (m.head_dim > 0 && m.hidden_size % m.num_attention_heads == 0 &&
      m.head_dim == m.hidden_size / m.num_attention_heads) {
    m.head_dim = 0;
  }
  // Attention biases: Qwen2 always has Q/K/V biases; Qwen2-MoE exposes `qkv_bias`; Llama-style
  // configs may set `attention_bias` (the O bias, h per layer, is not represented).
  m.qkv_bias = model_type == "qwen2"
                   ? true
                   : r.OptionalBool("qkv_bias", false) || r.OptionalBool("attention_bias", false);

  // Mixture of experts: Mixtral num_local_experts, Qwen2-MoE num_experts, DeepSeek
  // n_routed_experts.
  int64_t experts = 0;
  for (const char* field : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (experts == 0 && r.Has(field)) experts = r.OptionalNonNegativeInt(field, 0);
  }
  if (experts > 0) {
    m.moe_num_experts = experts;
    m.moe_top_k = r.PositiveInt("num_experts_per_tok");
    m.moe_ffn_hidden_size = r.OptionalPositiveInt("moe_intermediate_size", 0);
    m.moe_shared_experts = r.OptionalNonNegativeInt("n_shared_experts", 0);
    m.moe_first_dense_layers = r.OptionalNonNegativeInt("first_k_dense_replace", 0);
    // DeepSeek-V2/V3 group-limited routing; n_group 1 (DeepSeek-V2-Lite) means no limit.
    if (r.OptionalPositiveInt("n_group", 1) > 1) {
      m.moe_router_groups = r.OptionalPositiveInt("n_group", 1);
      m.moe_router_group_topk = r.PositiveInt("topk_group");
    }
    const int64_t shared_width = r.OptionalNonNegativeInt("shared_expert_intermediate_size", 0);
    if (!r.status().ok()) return r.status();
    if (shared_width > 0) {
      // Qwen2-MoE: one shared expert of shared_expert_intermediate_size, represented as
      // shared_width / expert width experts of the routed width (exact when it divides).
      const int64_t expert_ffn = m.ExpertFfn();
      m.moe_shared_experts = std::max<int64_t>(
          1, std::llround(static_cast<double>(shared_width) / static_cast<double>(expert_ffn)));
      if (m.moe_shared_experts * expert_ffn != shared_width) {
        m.approximation_note = "shared expert of width " + std::to_string(shared_width) +
                               " represented as " + std::to_string(m.moe_shared_experts) + " " +
                               Noun(m.moe_shared_experts, "expert", "experts") + " of width " +
                               std::to_string(expert_ffn);
      }
    }
    const int64_t sparse_step = r.OptionalPositiveInt("decoder_sparse_step", 1);
    const int64_t layer_freq = r.OptionalPositiveInt("moe_layer_freq", 1);
    auto mlp_only = config.find("mlp_only_layers");  // Qwen-MoE: layers that stay dense
    const bool some_dense = mlp_only != config.end() && mlp_only->is_array() && !mlp_only->empty();
    if (sparse_step != 1 || layer_freq != 1 || some_dense) {
      if (!m.approximation_note.empty()) m.approximation_note += "; ";
      m.approximation_note +=
          "MoE only in some layers (decoder_sparse_step, moe_layer_freq or mlp_only_layers) "
          "approximated as MoE in every layer after the first dense ones";
    }
  }
  if (r.Has("kv_lora_rank")) {
    std::string note = m.approximation_note;
    ApproximateMla(r, m);
    if (!r.status().ok()) return r.status();
    if (!note.empty()) m.approximation_note = note + "; " + m.approximation_note;
  }
  if (!r.status().ok()) return r.status();
  return m;
}

}  // namespace

Expected<ModelSpec> ModelFromHfConfig(const nlohmann::json& config, const std::string& origin) {
  if (!config.is_object()) {
    return Status::Invalid(origin + ": expected a JSON object (a Hugging Face config.json)");
  }
  const std::string model_type = StringField(config, "model_type");
  const std::string arch = FirstArchitecture(config);
  const bool gpt2 = model_type == "gpt2" || StartsWith(arch, "GPT2") ||
                    (model_type.empty() && config.contains("n_embd"));
  Expected<ModelSpec> m =
      gpt2 ? FromGpt2(config, origin) : FromLlamaLike(config, origin, model_type);
  if (!m.ok()) return m;
  m->name = NameFor(config, origin);
  GPUPLAN_RETURN_IF_ERROR(ValidateModel(*m, origin));
  return m;
}

Expected<ModelSpec> ReadHfConfigFile(const std::string& path) {
  Expected<nlohmann::json> j = ReadJsonFile(path);
  if (!j.ok()) return j.status();
  return ModelFromHfConfig(*j, path);
}

}  // namespace gpuplan

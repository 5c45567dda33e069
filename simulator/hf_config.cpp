#include "simulator/hf_config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "common/json_reader.h"
#include "common/limits.h"
#include "common/str_format.h"

namespace gpuplan {
namespace {

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool OneOf(const std::string& model_type, std::initializer_list<std::string_view> types) {
  return std::find(types.begin(), types.end(), model_type) != types.end();
}

// Families whose MLP is gated (gate, up and down projections) whatever `hidden_act` says:
// SiLU gives SwiGLU, GELU gives GeGLU, both with the same three matrices.
bool IsGatedFamily(const std::string& model_type) {
  return StartsWith(model_type, "gemma") ||  // gemma, gemma2, gemma3, gemma3_text
         OneOf(model_type,
               {"llama", "llama4_text", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
                "qwen3_moe", "deepseek_v2", "deepseek_v3", "olmo", "olmo2", "olmoe", "phi3",
                "phimoe", "cohere", "cohere2", "granite", "granitemoe"});
}

// Families whose transformers configuration class ties the LM head to the embedding when the
// file has no `tie_word_embeddings` (GemmaConfig, Gemma2Config, Gemma3TextConfig, CohereConfig,
// Cohere2Config, Starcoder2Config pass True; FalconConfig, BloomConfig, OPTConfig and
// GPTBigCodeConfig keep PretrainedConfig's True). The Llama-style classes pass False.
bool TiesByDefault(const std::string& model_type) {
  return StartsWith(model_type, "gemma") ||
         OneOf(model_type,
               {"cohere", "cohere2", "starcoder2", "falcon", "bloom", "opt", "gpt_bigcode"});
}

// Families whose class passes tie_word_embeddings=False, so an absent key is not a guess.
bool UntiedByDefault(const std::string& model_type) {
  return OneOf(model_type, {"llama",     "llama4_text", "mistral",   "mixtral",     "qwen2",
                            "qwen2_moe", "qwen3",       "qwen3_moe", "deepseek_v2", "deepseek_v3",
                            "olmo",      "olmo2",       "olmoe",     "phi3",        "phimoe",
                            "phi",       "gpt_neox",    "granite",   "granitemoe",  "stablelm"});
}

// Layers that are not attention (state-space, recurrent or linear-attention mixers): the cost
// model has transformer layers only, so such a model is refused rather than miscounted.
bool HasNonAttentionLayers(const std::string& model_type) {
  return OneOf(model_type,
               {"mamba",   "mamba2", "falcon_mamba", "falcon_h1",        "jamba", "zamba",
                "zamba2",  "bamba",  "nemotron_h",   "recurrent_gemma",  "rwkv",  "rwkv5",
                "rwkv6",   "rwkv7",  "qwen3_next",   "granitemoehybrid", "lfm2",  "xlstm",
                "minimax", "plamo2"});
}

void AppendNote(ModelSpec& m, const std::string& note) {
  if (!m.approximation_note.empty()) m.approximation_note += "; ";
  m.approximation_note += note;
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
// GPTBigCode (StarCoder, SantaCoder; configuration_gpt_bigcode.py) has the same keys and
// multi-query attention by default (`multi_query`: one K/V head, modeling_gpt_bigcode.py).
Expected<ModelSpec> FromGpt2(const nlohmann::json& config, const std::string& origin,
                             bool bigcode) {
  JsonObjectReader r(config, origin);
  ModelSpec m;
  m.hidden_size = r.PositiveInt("n_embd");
  m.num_layers = r.PositiveInt("n_layer");
  m.num_attention_heads = r.PositiveInt("n_head");
  m.num_kv_heads = bigcode && r.OptionalBool("multi_query", true) ? 1 : m.num_attention_heads;
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

// OPT (configuration_opt.py, modeling_opt.py): hidden_size, num_hidden_layers,
// num_attention_heads, ffn_dim, a two-matrix ReLU MLP, biases unless enable_bias is false, tied
// head, and a learned position table of max_position_embeddings rows (OPTLearnedPositionalEmbedding
// adds 2 rows of offset, 2·h parameters, not counted). A word_embed_proj_dim other than
// hidden_size (OPT-350m) puts the embedding in a smaller space with projections in and out,
// which ModelSpec cannot express: refused.
Expected<ModelSpec> FromOpt(const nlohmann::json& config, const std::string& origin) {
  JsonObjectReader r(config, origin);
  ModelSpec m;
  m.hidden_size = r.PositiveInt("hidden_size");
  m.num_layers = r.PositiveInt("num_hidden_layers");
  m.num_attention_heads = r.PositiveInt("num_attention_heads");
  m.num_kv_heads = m.num_attention_heads;
  m.ffn_hidden_size = r.PositiveInt("ffn_dim");
  m.vocab_size = r.PositiveInt("vocab_size");
  m.max_position_embeddings_learned =
      r.OptionalIntInRange("max_position_embeddings", 2048, 1, kMaxSeqLen);
  const int64_t projection =
      r.OptionalIntInRange("word_embed_proj_dim", m.hidden_size, 1, kMaxHiddenSize);
  if (r.status().ok() && projection != m.hidden_size) {
    r.Fail("word_embed_proj_dim",
           std::to_string(projection) +
               " differs from hidden_size = " + std::to_string(m.hidden_size) +
               ": an embedding in a smaller space with projections in and out is not modelled");
  }
  m.mlp = MlpKind::kGelu;  // two matrices; OPT's ReLU costs the same
  m.linear_biases = r.OptionalBool("enable_bias", true);
  m.tied_embeddings = r.OptionalBool("tie_word_embeddings", true);
  if (!r.status().ok()) return r.status();
  return m;
}

// Falcon (configuration_falcon.py; the older RefinedWeb files name n_layer, n_head, n_head_kv):
// multi-query attention unless new_decoder_architecture gives num_kv_heads, a two-matrix GELU
// MLP of ffn_hidden_size (4h when absent), no linear biases (`bias` false), tied head.
Expected<ModelSpec> FromFalcon(const nlohmann::json& config, const std::string& origin) {
  JsonObjectReader r(config, origin);
  auto first = [&](const char* a, const char* b) { return r.Has(a) ? a : b; };
  ModelSpec m;
  m.hidden_size = r.PositiveInt("hidden_size");
  m.num_layers = r.PositiveInt(first("num_hidden_layers", "n_layer"));
  m.num_attention_heads = r.PositiveInt(first("num_attention_heads", "n_head"));
  m.vocab_size = r.PositiveInt("vocab_size");
  m.ffn_hidden_size = r.OptionalPositiveInt("ffn_hidden_size", 4 * m.hidden_size);
  if (r.OptionalBool("new_decoder_architecture", false)) {
    m.num_kv_heads =
        r.OptionalPositiveInt(first("num_kv_heads", "n_head_kv"), m.num_attention_heads);
  } else {
    m.num_kv_heads = r.OptionalBool("multi_query", true) ? 1 : m.num_attention_heads;
  }
  m.mlp = MlpKind::kGelu;
  m.linear_biases = r.OptionalBool("bias", false);
  m.tied_embeddings = r.OptionalBool("tie_word_embeddings", true);
  if (!r.status().ok()) return r.status();
  return m;
}

// Multi-head latent attention (DeepSeek-V2/V3) as grouped-query attention with the same
// projection parameter count: Q/K/V/O = h*d*(2a + 2kv) with kv = 8 (or 1 when 8 does not divide
// a) and d chosen to match. See docs/MODELS.md.
void ApproximateMla(JsonObjectReader& r, ModelSpec& m) {
  const int64_t q_lora = r.OptionalIntInRange("q_lora_rank", 0, 0, kMaxHiddenSize);
  const int64_t kv_lora = r.IntInRange("kv_lora_rank", 1, kMaxHiddenSize);
  const int64_t nope = r.IntInRange("qk_nope_head_dim", 1, kMaxHiddenSize);
  const int64_t rope = r.IntInRange("qk_rope_head_dim", 1, kMaxHiddenSize);
  const int64_t v_dim = r.IntInRange("v_head_dim", 1, kMaxHiddenSize);
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
  const double head_dim = std::max(1.0, std::round(mla / per_dim));
  if (head_dim > static_cast<double>(kMaxHiddenSize)) {
    r.Fail("kv_lora_rank", "with the other MLA sizes gives an equivalent head_dim of " +
                               StrFormat("%.0f", head_dim) + ", above the limit of " +
                               std::to_string(kMaxHiddenSize));
    return;
  }
  m.head_dim = static_cast<int64_t>(head_dim);
  const double approx = per_dim * head_dim;
  AppendNote(m, "MLA approximated as GQA with " + std::to_string(m.num_kv_heads) +
                    " KV heads and head_dim " + std::to_string(m.head_dim) +
                    ": Q/K/V/O parameters " + StrFormat("%.0f", approx) + " per layer vs MLA's " +
                    StrFormat("%.0f", mla) +
                    "; attention-score FLOPs use 2*head_dim = " + std::to_string(2 * m.head_dim) +
                    " per head instead of " + std::to_string(nope + rope + v_dim));
}

// Which layers have a routed-expert MLP, counted the way each family's modeling code decides:
// DeepSeek (first_k_dense_replace, moe_layer_freq), Qwen-MoE (decoder_sparse_step,
// mlp_only_layers) and Llama 4 (moe_layers, else every interleave_moe_layer_step-th layer).
// The ModelSpec keeps the dense layers first; when the family interleaves them the count is
// exact and the order is noted.
void CountMoeLayers(JsonObjectReader& r, const std::string& model_type, ModelSpec& m) {
  const int64_t layers = m.num_layers;
  std::vector<bool> moe(static_cast<size_t>(std::min(layers, kMaxLayers)), true);
  const std::vector<int64_t> mlp_only = r.OptionalIntList("mlp_only_layers", 0, kMaxLayers);
  const int64_t first_dense = r.OptionalNonNegativeInt("first_k_dense_replace", 0);
  const int64_t layer_freq = r.OptionalPositiveInt("moe_layer_freq", 1);
  const int64_t sparse_step = r.OptionalPositiveInt("decoder_sparse_step", 1);
  const int64_t interleave = r.OptionalPositiveInt("interleave_moe_layer_step", 1);
  std::vector<int64_t> listed;
  if (model_type == "llama4_text") listed = r.OptionalIntList("moe_layers", 0, kMaxLayers);
  if (!r.status().ok()) return;
  for (size_t i = 0; i < moe.size(); ++i) {
    const auto n = static_cast<int64_t>(i);
    bool sparse = n >= first_dense && n % layer_freq == 0 && (n + 1) % sparse_step == 0 &&
                  std::find(mlp_only.begin(), mlp_only.end(), n) == mlp_only.end();
    if (model_type == "llama4_text") {
      sparse = r.Has("moe_layers") ? std::find(listed.begin(), listed.end(), n) != listed.end()
                                   : (n + 1) % interleave == 0;
    }
    moe[i] = sparse;
  }
  const auto moe_layers = static_cast<int64_t>(std::count(moe.begin(), moe.end(), true));
  if (moe_layers == 0) {
    const char* field = "num_hidden_layers";
    for (const char* key : {"first_k_dense_replace", "moe_layer_freq", "decoder_sparse_step",
                            "mlp_only_layers", "moe_layers", "interleave_moe_layer_step"}) {
      if (r.Has(key)) {
        field = key;
        break;
      }
    }
    r.Fail(field, "leaves none of the " + std::to_string(layers) +
                      " layers with routed experts (first_k_dense_replace, moe_layer_freq, "
                      "decoder_sparse_step, mlp_only_layers, moe_layers or "
                      "interleave_moe_layer_step decide which layers have them)");
    return;
  }
  m.moe_first_dense_layers = layers - moe_layers;
  const bool dense_first =
      std::all_of(moe.begin(), moe.begin() + m.moe_first_dense_layers, [](bool x) { return !x; });
  if (!dense_first) {
    AppendNote(m, std::to_string(moe_layers) + " of " + std::to_string(layers) +
                      " layers have routed experts, interleaved with the dense ones; counted "
                      "exactly, with the " +
                      std::to_string(m.moe_first_dense_layers) +
                      " dense layers placed first (a pipeline split sees them in that order)");
  }
}

// Keys of mixture-of-experts layouts this reader does not understand (ERNIE's moe_num_experts,
// DBRX-style nesting, ...): any key naming experts with a non-zero value on a model read as
// dense is refused, rather than counting the model without its experts.
void RejectUnreadExpertKeys(const nlohmann::json& config, JsonObjectReader& r) {
  for (const auto& [key, value] : config.items()) {
    if (key.find("expert") == std::string::npos) continue;
    const bool set = (value.is_number() && value.get<double>() != 0) ||
                     (value.is_boolean() && value.get<bool>()) ||
                     (value.is_array() && !value.empty());
    if (set) {
      r.Fail(key,
             "is a mixture-of-experts key gpuplan does not read (it reads the expert count from "
             "num_local_experts, num_experts or n_routed_experts, with num_experts_per_tok); "
             "describe the model with a dimensions object in a job spec (docs/JOB_SPEC.md)");
      return;
    }
  }
}

// Local attention (ModelSpec::attention_window): a sliding window (`sliding_window`, unless
// Qwen2's `use_sliding_window` is false) or Llama 4's chunks (`attention_chunk_size`), on the
// layers each family's modeling code gives it: the `sliding_attention` / `chunked_attention`
// entries of `layer_types` when the file lists them; Gemma 2 every other layer; Gemma 3 all but
// every `sliding_window_pattern`-th (6); Qwen2 the layers from `max_window_layers` on; Llama 4
// all but every fourth (its NoPE layers attend globally); other families every layer (Mistral).
void ReadLocalAttention(const nlohmann::json& config, JsonObjectReader& r,
                        const std::string& model_type, ModelSpec& m) {
  const int64_t chunk = r.OptionalIntInRange("attention_chunk_size", 0, 0, kMaxSeqLen);
  const bool enabled = r.OptionalBool("use_sliding_window", true);
  const int64_t window = enabled ? r.OptionalIntInRange("sliding_window", 0, 0, kMaxSeqLen) : 0;
  if (!r.status().ok() || (window == 0 && chunk == 0)) return;
  const int64_t layers = m.num_layers;
  int64_t local = layers;
  if (auto it = config.find("layer_types"); it != config.end() && it->is_array()) {
    local = 0;
    for (const auto& t : *it) {
      if (t.is_string() && t.get<std::string>() != "full_attention") ++local;
    }
  } else if (chunk > 0) {
    local = layers - layers / 4;
  } else if (model_type == "gemma2") {
    local = (layers + 1) / 2;
  } else if (StartsWith(model_type, "gemma3")) {
    local = layers - layers / r.OptionalPositiveInt("sliding_window_pattern", 6);
  } else if (r.Has("max_window_layers")) {
    local = std::max<int64_t>(0, layers - r.OptionalNonNegativeInt("max_window_layers", 0));
  }
  if (!r.status().ok() || local <= 0) return;
  m.attention_window = chunk > 0 ? chunk : window;
  m.attention_chunked = chunk > 0;
  m.local_attention_layers = std::min(local, layers);
}

// Llama, Mistral, Mixtral, Qwen2, Qwen2-MoE, DeepSeek-V3, Gemma, Llama 4 (text) and others with
// the same names.
Expected<ModelSpec> FromLlamaLike(const nlohmann::json& config, const std::string& origin,
                                  const std::string& model_type) {
  JsonObjectReader r(config, origin);
  ModelSpec m;
  const bool llama4 = model_type == "llama4_text";
  m.hidden_size = r.PositiveInt("hidden_size");
  // Llama 4: intermediate_size is the expert's width, intermediate_size_mlp the dense MLP's.
  m.ffn_hidden_size = r.PositiveInt(llama4 ? "intermediate_size_mlp" : "intermediate_size");
  m.num_layers = r.PositiveInt("num_hidden_layers");
  m.num_attention_heads = r.PositiveInt("num_attention_heads");
  m.num_kv_heads = r.OptionalPositiveInt("num_key_value_heads", m.num_attention_heads);
  // Gemma 3's multimodal files leave the text model's vocabulary at Gemma3TextConfig's default.
  m.vocab_size = model_type == "gemma3_text" ? r.OptionalPositiveInt("vocab_size", 262208)
                                             : r.PositiveInt("vocab_size");
  m.head_dim = r.OptionalNonNegativeInt("head_dim", 0);
  m.tied_embeddings = r.OptionalBool("tie_word_embeddings", TiesByDefault(model_type));
  const std::string act = r.OptionalString("hidden_act", "silu");
  if (!r.status().ok()) return r.status();
  if (!r.Has("tie_word_embeddings") && !TiesByDefault(model_type) && !UntiedByDefault(model_type)) {
    AppendNote(m,
               "no tie_word_embeddings in the file: read as an untied LM head (the default "
               "of the Llama-style classes; transformers' PretrainedConfig would tie it)");
  }

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

  // Mixture of experts: Mixtral and Llama 4 num_local_experts, Qwen2-MoE num_experts, DeepSeek
  // n_routed_experts.
  int64_t experts = 0;
  for (const char* field : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (experts == 0 && r.Has(field)) experts = r.OptionalNonNegativeInt(field, 0);
  }
  if (experts > 0) {
    m.moe_num_experts = experts;
    m.moe_top_k = r.PositiveInt("num_experts_per_tok");
    m.moe_ffn_hidden_size = llama4 ? r.PositiveInt("intermediate_size")
                                   : r.OptionalPositiveInt("moe_intermediate_size", 0);
    // Llama 4's MoE layer always has one shared expert of the routed width (Llama4TextMoe).
    m.moe_shared_experts = llama4 ? 1 : r.OptionalNonNegativeInt("n_shared_experts", 0);
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
        AppendNote(m, "shared expert of width " + std::to_string(shared_width) +
                          " represented as " + std::to_string(m.moe_shared_experts) + " " +
                          Noun(m.moe_shared_experts, "expert", "experts") + " of width " +
                          std::to_string(expert_ffn));
      }
    }
    if (m.num_layers <= kMaxLayers) CountMoeLayers(r, model_type, m);
  } else {
    RejectUnreadExpertKeys(config, r);
  }
  if (r.Has("kv_lora_rank")) ApproximateMla(r, m);
  ReadLocalAttention(config, r, model_type, m);
  if (!r.status().ok()) return r.status();
  return m;
}

// Config keys by the ModelSpec field they fill, so that ValidateModel's messages name the key
// the file has.
using HfKeyNames = std::vector<std::pair<std::string, std::string>>;

HfKeyNames HfKeysByField(const nlohmann::json& config, bool gpt2) {
  if (gpt2) {
    return {{"num_layers", "n_layer"},
            {"hidden_size", "n_embd"},
            {"ffn_hidden_size", "n_inner"},
            {"num_attention_heads", "n_head"},
            {"max_position_embeddings_learned", "n_positions"}};
  }
  std::string experts = "num_local_experts";
  for (const char* field : {"num_local_experts", "num_experts", "n_routed_experts"}) {
    if (config.contains(field)) {
      experts = field;
      break;
    }
  }
  const nlohmann::json model_type = config.value("model_type", nlohmann::json());
  if (model_type == "opt") {
    return {{"num_layers", "num_hidden_layers"},
            {"ffn_hidden_size", "ffn_dim"},
            {"max_position_embeddings_learned", "max_position_embeddings"}};
  }
  const bool llama4 = model_type == "llama4_text";
  return {{"num_layers", "num_hidden_layers"},
          {"ffn_hidden_size", llama4 ? "intermediate_size_mlp" : "intermediate_size"},
          {"num_kv_heads", "num_key_value_heads"},
          {"moe_num_experts", experts},
          {"moe_top_k", "num_experts_per_tok"},
          {"moe_ffn_hidden_size", llama4 ? "intermediate_size" : "moe_intermediate_size"},
          {"moe_first_dense_layers", "first_k_dense_replace"},
          {"moe_router_groups", "n_group"},
          {"moe_router_group_topk", "topk_group"}};
}

// Replaces each whole-word occurrence of a ModelSpec field name in `text` by the file's key.
std::string RenameFields(const std::string& text, const HfKeyNames& names) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_'; };
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    if (!word(text[i])) {
      out += text[i++];
      continue;
    }
    size_t j = i;
    while (j < text.size() && word(text[j])) ++j;
    const std::string token = text.substr(i, j - i);
    auto it =
        std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == token; });
    out += it != names.end() ? it->second : token;
    i = j;
  }
  return out;
}

// Control characters in a name would reach terminals and reports raw: each becomes a space.
std::string Printable(std::string name) {
  for (char& c : name) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return name;
}

}  // namespace

Expected<ModelSpec> ModelFromHfConfig(const nlohmann::json& config, const std::string& origin) {
  if (!config.is_object()) {
    return Status::Invalid(origin + ": expected a JSON object (a Hugging Face config.json)");
  }
  // A multimodal file (Llama 4, Gemma 3, ...) keeps its language model under `text_config`.
  auto text = config.find("text_config");
  if (!config.contains("hidden_size") && !config.contains("n_embd") && text != config.end() &&
      text->is_object()) {
    Expected<ModelSpec> m = ModelFromHfConfig(*text, origin + ": text_config");
    if (!m.ok()) return m;
    m->name = NameFor(config, origin);
    AppendNote(*m,
               "the language model of a multimodal config (text_config); its vision "
               "encoder is not counted");
    return m;
  }
  std::string model_type = StringField(config, "model_type");
  if (model_type == "RefinedWeb" || model_type == "RefinedWebModel") model_type = "falcon";
  if (HasNonAttentionLayers(model_type)) {
    return Status::Invalid(origin + ": field 'model_type': '" + model_type +
                           "' has state-space, recurrent or linear-attention layers; gpuplan "
                           "models transformer (attention) layers only (docs/MODELS.md)");
  }
  if (auto it = config.find("layer_types"); it != config.end() && it->is_array()) {
    for (size_t i = 0; i < it->size(); ++i) {
      const nlohmann::json& t = (*it)[i];
      const std::string kind = t.is_string() ? t.get<std::string>() : t.dump();
      if (kind != "full_attention" && kind != "sliding_attention" && kind != "chunked_attention") {
        return Status::Invalid(origin + ": field 'layer_types': entry " + std::to_string(i) +
                               " is '" + kind +
                               "'; gpuplan models full_attention, sliding_attention and "
                               "chunked_attention layers only (docs/MODELS.md)");
      }
    }
  }
  const std::string arch = FirstArchitecture(config);
  const bool bigcode = model_type == "gpt_bigcode" || StartsWith(arch, "GPTBigCode");
  const bool gpt2 = bigcode || model_type == "gpt2" || StartsWith(arch, "GPT2") ||
                    (model_type.empty() && config.contains("n_embd"));
  Expected<ModelSpec> m = gpt2                     ? FromGpt2(config, origin, bigcode)
                          : model_type == "falcon" ? FromFalcon(config, origin)
                          : model_type == "opt"    ? FromOpt(config, origin)
                                                   : FromLlamaLike(config, origin, model_type);
  if (!m.ok()) return m;
  m->name = Printable(NameFor(config, origin));
  if (Status valid = ValidateModel(*m, origin); !valid.ok()) {
    const std::string& message = valid.message();
    const size_t head = message.compare(0, origin.size(), origin) == 0 ? origin.size() : 0;
    return Status::Invalid(message.substr(0, head) +
                           RenameFields(message.substr(head), HfKeysByField(config, gpt2)));
  }
  return m;
}

Expected<ModelSpec> ReadHfConfigFile(const std::string& path) {
  // A model folder (a Hugging Face snapshot) holds its config.json.
  std::error_code ec;
  const std::string file = std::filesystem::is_directory(path, ec)
                               ? (std::filesystem::path(path) / "config.json").string()
                               : path;
  Expected<nlohmann::json> j = ReadJsonFile(file);
  if (!j.ok()) return j.status();
  return ModelFromHfConfig(*j, file);
}

}  // namespace gpuplan

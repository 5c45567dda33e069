// A decoder-only transformer, dense or mixture-of-experts, described by its dimensions.
#pragma once

#include <cstdint>
#include <string>

#include "common/status.h"

namespace gpuplan {

/// Feed-forward block: GELU (two matrices, h->f->h) or SwiGLU (three matrices: gate, up, down).
enum class MlpKind { kGelu, kSwiGlu };

/// Dimensions of one model. Counts are plain integers; derived sizes are computed, not stored.
struct ModelSpec {
  std::string name;
  int64_t num_layers = 0;
  int64_t hidden_size = 0;          ///< h
  int64_t ffn_hidden_size = 0;      ///< f, per dense MLP
  int64_t num_attention_heads = 0;  ///< a
  int64_t num_kv_heads = 0;         ///< a for MHA, 1 for MQA, between for GQA
  int64_t head_dim = 0;             ///< 0 means hidden_size / num_attention_heads
  int64_t vocab_size = 0;
  MlpKind mlp = MlpKind::kGelu;
  bool tied_embeddings = false;  ///< output projection shares the input embedding matrix
  /// Learned absolute position embeddings (GPT-2/MPT-style tables): 0 for rotary/ALiBi models.
  int64_t max_position_embeddings_learned = 0;
  /// GELU (GPT-style) models only: bias vectors on Q/K/V, O and both MLP matrices, and LayerNorm
  /// biases, as in GPT-2/GPT-3/Megatron GPT (true, the default). MPT sets false (llm-foundry
  /// `no_bias: true`: no linear or LayerNorm biases). Ignored for SwiGLU models, which never have
  /// MLP/O biases or norm biases (RMSNorm) here.
  bool linear_biases = true;
  /// Bias on the Q, K and V projections regardless of MLP kind (Qwen2). Redundant when the model
  /// already has linear biases.
  bool qkv_bias = false;

  // Mixture of experts (moe_num_experts == 0 means dense).
  int64_t moe_num_experts = 0;
  int64_t moe_top_k = 0;
  int64_t moe_ffn_hidden_size = 0;     ///< per expert; 0 means ffn_hidden_size
  int64_t moe_shared_experts = 0;      ///< always-active experts of moe_ffn_hidden_size each
  int64_t moe_first_dense_layers = 0;  ///< leading layers that keep a dense MLP (DeepSeek-V3: 3)
  /// Group-limited routing (DeepSeek-V3's node-limited routing; HF n_group / topk_group,
  /// Megatron-LM --moe-router-num-groups / --moe-router-group-topk): the experts form
  /// moe_router_groups equal groups of consecutive experts, and each token picks its top_k
  /// experts inside its moe_router_group_topk best groups. 0: no groups (any top_k experts).
  int64_t moe_router_groups = 0;
  int64_t moe_router_group_topk = 0;

  /// Local attention: on `local_attention_layers` of the layers each query attends to at most
  /// the `attention_window` tokens ending with itself (sliding window: Mistral 7B v0.1, Gemma 2
  /// and 3, gpt-oss), or with `attention_chunked` only to the earlier tokens of its own
  /// `attention_window`-token chunk (Llama 4's chunked attention). The other layers attend over
  /// the whole causal sequence. 0 / 0: every layer does.
  int64_t attention_window = 0;
  int64_t local_attention_layers = 0;
  bool attention_chunked = false;

  /// Free-text note on approximations made for this model (e.g. how MLA is represented).
  std::string approximation_note;

  bool is_moe() const { return moe_num_experts > 0; }
  int64_t HeadDim() const { return head_dim > 0 ? head_dim : hidden_size / num_attention_heads; }
  int64_t ExpertFfn() const {
    return moe_ffn_hidden_size > 0 ? moe_ffn_hidden_size : ffn_hidden_size;
  }
  int64_t MoeLayers() const { return is_moe() ? num_layers - moe_first_dense_layers : 0; }
  int64_t DenseLayers() const { return num_layers - MoeLayers(); }
  /// True when the GELU/GPT-style bias vectors (QKV, O, MLP, LayerNorm) are present.
  bool HasLinearBiases() const { return mlp == MlpKind::kGelu && linear_biases; }

  /// Field by field, the name and note included.
  bool operator==(const ModelSpec&) const = default;
};

/// Parameter counts (exact for the architecture as described; biases and norms included).
struct ParameterCounts {
  double attention_per_layer = 0;  ///< Q, K, V, O projections (+ biases for GELU/GPT models)
  double dense_mlp_per_layer = 0;  ///< one dense MLP
  double expert_mlp = 0;           ///< one routed expert's MLP
  double router_per_layer = 0;     ///< MoE gate
  double norms_per_layer = 0;      ///< LayerNorm/RMSNorm weights (and LayerNorm biases)
  double final_norm = 0;           ///< the norm after the last layer
  double embedding = 0;            ///< token (+ learned position) embedding
  double output_head = 0;          ///< untied LM head; 0 when tied
  double total = 0;                ///< everything stored
  double active_per_token = 0;     ///< what one token touches (top-k + shared experts for MoE)
};

/// Counts parameters exactly for the architecture as described: attention h*d*(2a + 2kv),
/// MLP 2hf (GELU) or 3hf (SwiGLU), biases and norms, embeddings, head; see model.cpp and
/// docs/MODELS.md for every term. Embedding and head are included in active_per_token.
ParameterCounts CountParameters(const ModelSpec& m);

/// Keys one query attends to on average over a causal sequence of `seq_tokens`, on a layer of
/// the model's local attention (`local` true) or a full one: s/2 for full attention (the causal
/// half of the s x s scores; the continuous form FlashAttention's causal FLOP count uses);
/// sliding window w < s: w - w^2 / (2s) (the first w queries see their prefix, the rest w keys);
/// chunks of c < s: (n c^2 + r^2) / (2s) for n whole chunks and r tokens left over.
double CausalKeysPerQuery(const ModelSpec& m, double seq_tokens, bool local);

/// Share of the layers with local attention (local_attention_layers / num_layers).
double LocalAttentionShare(const ModelSpec& m);

/// Why `m` cannot train on sequences of `seq_len` tokens, or "" when it can: a learned position
/// table (GPT-2, Megatron-LM's GPT) has no row past max_position_embeddings_learned. GPT-2
/// indexes past it and fails; Megatron-LM asserts max_position_embeddings >= seq_length
/// (megatron/training/arguments.py).
std::string SeqLenProblem(const ModelSpec& m, int64_t seq_len);

/// Checks dimensions: all positive and within the limits of common/limits.h (kMaxLayers,
/// kMaxHiddenSize, kMaxHeads, kMaxVocab, kMaxExperts), heads divide hidden size (unless head_dim
/// given), kv heads divide attention heads, MoE fields consistent. Errors name the field.
Status ValidateModel(const ModelSpec& m, const std::string& context);

}  // namespace gpuplan

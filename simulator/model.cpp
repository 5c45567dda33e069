#include "simulator/model.h"

#include <cmath>
#include <string>

#include "common/limits.h"

namespace gpuplan {
namespace {

double D(int64_t v) { return static_cast<double>(v); }

}  // namespace

// Parameter count of a decoder-only transformer. With h = hidden_size, a = attention heads,
// kv = key/value heads, d = HeadDim(), f = ffn_hidden_size, V = vocab_size, l = num_layers:
//
//   attention  Q h*(a*d) + K h*(kv*d) + V h*(kv*d) + O (a*d)*h            = h*d*(2a + 2kv)
//              + biases (GPT-style): a*d + 2*kv*d (QKV) + h (O)
//   MLP        GELU 2*h*f (+ f + h biases); SwiGLU 3*h*f (gate, up, down; no biases)
//   norms      GELU: two LayerNorms of weight+bias = 4h (2h without biases, MPT);
//              SwiGLU: two RMSNorms = 2h; plus one final norm of the same kind
//   embedding  V*h (+ s*h for a learned position table of s positions)
//   head       V*h unless tied to the embedding
//
// For GPT with MHA (kv = a, d = h/a), f = 4h and biases, one layer is 12h^2 + 13h and the total is
// 12*l*h^2 * (1 + 13/(12h) + (V+s)/(12*l*h)), Narayanan et al. 2021 (SC'21, arXiv:2104.04473)
// eq. for P in Sec. 5.1 / Appendix, plus the final LayerNorm 2h that formula leaves out.
//
// MoE (Fedus et al. 2021; Jiang et al. 2024 Mixtral; DeepSeek-AI 2024 DeepSeek-V3): layers
// [moe_first_dense_layers, l) replace the dense MLP by moe_num_experts routed experts of
// ExpertFfn() each, moe_shared_experts always-active experts of the same width, and a router
// h*E (no bias). The leading dense layers keep one MLP of width f.
//
// active_per_token counts what one token's forward pass multiplies with: attention, the dense MLP
// (dense layers) or top_k routed + shared experts + router (MoE layers), norms, and - as Megatron
// does when it reports model size - the embedding and the output head. For dense models it equals
// total.
ParameterCounts CountParameters(const ModelSpec& m) {
  ParameterCounts c;
  const double h = D(m.hidden_size);
  const double d = m.num_attention_heads > 0 || m.head_dim > 0 ? D(m.HeadDim()) : 0.0;
  const double q_width = D(m.num_attention_heads) * d;
  const double kv_width = D(m.num_kv_heads) * d;
  const bool gpt_biases = m.HasLinearBiases();

  // Q, K, V, O projections.
  c.attention_per_layer = h * q_width + 2.0 * h * kv_width + q_width * h;
  if (gpt_biases || m.qkv_bias) c.attention_per_layer += q_width + 2.0 * kv_width;
  if (gpt_biases) c.attention_per_layer += h;  // O bias

  auto mlp_params = [&](int64_t width) {
    const double f = D(width);
    if (m.mlp == MlpKind::kSwiGlu) return 3.0 * h * f;
    return 2.0 * h * f + (gpt_biases ? f + h : 0.0);
  };
  c.dense_mlp_per_layer = mlp_params(m.ffn_hidden_size);
  c.expert_mlp = m.is_moe() ? mlp_params(m.ExpertFfn()) : 0.0;
  c.router_per_layer = m.is_moe() ? h * D(m.moe_num_experts) : 0.0;

  // One norm before attention, one before the MLP; LayerNorm has weight and bias.
  const double one_norm = (m.mlp == MlpKind::kGelu && gpt_biases) ? 2.0 * h : h;
  c.norms_per_layer = 2.0 * one_norm;
  c.final_norm = one_norm;

  c.embedding = D(m.vocab_size) * h + D(m.max_position_embeddings_learned) * h;
  c.output_head = m.tied_embeddings ? 0.0 : D(m.vocab_size) * h;

  const double dense_layers = D(m.DenseLayers());
  const double moe_layers = D(m.MoeLayers());
  const double per_layer_common = c.attention_per_layer + c.norms_per_layer;
  const double moe_layer_total =
      D(m.moe_num_experts + m.moe_shared_experts) * c.expert_mlp + c.router_per_layer;
  const double moe_layer_active =
      D(m.moe_top_k + m.moe_shared_experts) * c.expert_mlp + c.router_per_layer;
  const double outside_layers = c.embedding + c.output_head + c.final_norm;

  c.total = D(m.num_layers) * per_layer_common + dense_layers * c.dense_mlp_per_layer +
            moe_layers * moe_layer_total + outside_layers;
  c.active_per_token = D(m.num_layers) * per_layer_common + dense_layers * c.dense_mlp_per_layer +
                       moe_layers * moe_layer_active + outside_layers;
  return c;
}

double CausalKeysPerQuery(const ModelSpec& m, double seq_tokens, bool local) {
  const double s = seq_tokens;
  const double w = static_cast<double>(m.attention_window);
  if (!local || w <= 0 || s <= w) return s / 2.0;
  if (!m.attention_chunked) return w - w * w / (2.0 * s);
  const double whole = std::floor(s / w);
  const double rest = s - whole * w;
  return (whole * w * w + rest * rest) / (2.0 * s);
}

double LocalAttentionShare(const ModelSpec& m) {
  return m.num_layers > 0
             ? static_cast<double>(m.local_attention_layers) / static_cast<double>(m.num_layers)
             : 0.0;
}

std::string SeqLenProblem(const ModelSpec& m, int64_t seq_len) {
  const int64_t positions = m.max_position_embeddings_learned;
  if (positions == 0 || seq_len <= positions) return "";
  return std::to_string(seq_len) + " tokens exceed the " + std::to_string(positions) +
         " learned positions of " + m.name +
         " (max_position_embeddings_learned; n_positions or max_position_embeddings in a "
         "config.json): "
         "train on "
         "sequences of at most " +
         std::to_string(positions) + " tokens, or a model with a longer position table";
}

Status ValidateModel(const ModelSpec& m, const std::string& context) {
  auto fail = [&](const char* field, const std::string& problem) {
    return Status::Invalid(context + ": field '" + field + "': " + problem);
  };
  // Each dimension is bounded by its documented limit (common/limits.h), so that products of
  // dimensions (parameters, activations, FLOPs) stay far inside a double and an int64_t.
  auto in_range = [&](const char* field, int64_t v, int64_t lo, int64_t hi) {
    if (v >= lo && v <= hi) return Status::Ok();
    return fail(field, "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                           "], got " + std::to_string(v));
  };
  GPUPLAN_RETURN_IF_ERROR(in_range("num_layers", m.num_layers, 1, kMaxLayers));
  GPUPLAN_RETURN_IF_ERROR(in_range("hidden_size", m.hidden_size, 1, kMaxHiddenSize));
  GPUPLAN_RETURN_IF_ERROR(in_range("ffn_hidden_size", m.ffn_hidden_size, 1, kMaxHiddenSize));
  GPUPLAN_RETURN_IF_ERROR(in_range("num_attention_heads", m.num_attention_heads, 1, kMaxHeads));
  GPUPLAN_RETURN_IF_ERROR(in_range("num_kv_heads", m.num_kv_heads, 1, kMaxHeads));
  GPUPLAN_RETURN_IF_ERROR(in_range("vocab_size", m.vocab_size, 1, kMaxVocab));
  GPUPLAN_RETURN_IF_ERROR(in_range("head_dim", m.head_dim, 0, kMaxHiddenSize));
  GPUPLAN_RETURN_IF_ERROR(in_range("max_position_embeddings_learned",
                                   m.max_position_embeddings_learned, 0, kMaxSeqLen));
  GPUPLAN_RETURN_IF_ERROR(in_range("moe_num_experts", m.moe_num_experts, 0, kMaxExperts));
  GPUPLAN_RETURN_IF_ERROR(in_range("moe_top_k", m.moe_top_k, 0, kMaxExperts));
  GPUPLAN_RETURN_IF_ERROR(
      in_range("moe_ffn_hidden_size", m.moe_ffn_hidden_size, 0, kMaxHiddenSize));
  GPUPLAN_RETURN_IF_ERROR(in_range("moe_shared_experts", m.moe_shared_experts, 0, kMaxExperts));
  GPUPLAN_RETURN_IF_ERROR(
      in_range("moe_first_dense_layers", m.moe_first_dense_layers, 0, kMaxLayers));
  GPUPLAN_RETURN_IF_ERROR(in_range("moe_router_groups", m.moe_router_groups, 0, kMaxExperts));
  GPUPLAN_RETURN_IF_ERROR(
      in_range("moe_router_group_topk", m.moe_router_group_topk, 0, kMaxExperts));

  GPUPLAN_RETURN_IF_ERROR(in_range("attention_window", m.attention_window, 0, kMaxSeqLen));
  GPUPLAN_RETURN_IF_ERROR(
      in_range("local_attention_layers", m.local_attention_layers, 0, m.num_layers));
  if ((m.attention_window > 0) != (m.local_attention_layers > 0)) {
    return fail(m.attention_window > 0 ? "local_attention_layers" : "attention_window",
                "local attention needs both attention_window and local_attention_layers "
                "(or neither)");
  }
  if (m.attention_chunked && m.attention_window == 0) {
    return fail("attention_chunked", "needs attention_window (the chunk's tokens)");
  }

  if (m.head_dim == 0 && m.hidden_size % m.num_attention_heads != 0) {
    return fail("num_attention_heads",
                std::to_string(m.num_attention_heads) + " does not divide hidden_size " +
                    std::to_string(m.hidden_size) + " (set head_dim to use another head size)");
  }
  if (m.num_kv_heads > m.num_attention_heads || m.num_attention_heads % m.num_kv_heads != 0) {
    return fail("num_kv_heads", std::to_string(m.num_kv_heads) +
                                    " does not divide num_attention_heads " +
                                    std::to_string(m.num_attention_heads));
  }
  if (m.is_moe()) {
    if (m.moe_top_k < 1 || m.moe_top_k > m.moe_num_experts) {
      return fail("moe_top_k",
                  "must be in [1, moe_num_experts = " + std::to_string(m.moe_num_experts) +
                      "], got " + std::to_string(m.moe_top_k));
    }
    if (m.moe_first_dense_layers >= m.num_layers) {
      return fail("moe_first_dense_layers", std::to_string(m.moe_first_dense_layers) +
                                                " must be less than num_layers " +
                                                std::to_string(m.num_layers));
    }
    if ((m.moe_router_groups > 0) != (m.moe_router_group_topk > 0)) {
      return fail(m.moe_router_groups > 0 ? "moe_router_group_topk" : "moe_router_groups",
                  "group-limited routing needs both moe_router_groups and moe_router_group_topk");
    }
    if (m.moe_router_groups > 0) {
      if (m.moe_num_experts % m.moe_router_groups != 0) {
        return fail("moe_router_groups", std::to_string(m.moe_router_groups) +
                                             " does not divide moe_num_experts " +
                                             std::to_string(m.moe_num_experts));
      }
      if (m.moe_router_group_topk > m.moe_router_groups) {
        return fail("moe_router_group_topk", std::to_string(m.moe_router_group_topk) +
                                                 " exceeds moe_router_groups " +
                                                 std::to_string(m.moe_router_groups));
      }
      const int64_t pool = m.moe_router_group_topk * (m.moe_num_experts / m.moe_router_groups);
      if (pool < m.moe_top_k) {
        return fail("moe_router_group_topk", std::to_string(m.moe_router_group_topk) +
                                                 " groups hold " + std::to_string(pool) +
                                                 " experts, fewer than moe_top_k " +
                                                 std::to_string(m.moe_top_k));
      }
    }
  } else {
    const char* stray = m.moe_top_k > 0                ? "moe_top_k"
                        : m.moe_shared_experts > 0     ? "moe_shared_experts"
                        : m.moe_ffn_hidden_size > 0    ? "moe_ffn_hidden_size"
                        : m.moe_first_dense_layers > 0 ? "moe_first_dense_layers"
                        : m.moe_router_groups > 0      ? "moe_router_groups"
                        : m.moe_router_group_topk > 0  ? "moe_router_group_topk"
                                                       : nullptr;
    if (stray != nullptr) return fail(stray, "is set but moe_num_experts is 0 (dense model)");
  }
  return Status::Ok();
}

}  // namespace gpuplan

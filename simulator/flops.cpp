#include "simulator/flops.h"

namespace gpuplan {
namespace {

// Matrices per MLP: GELU has up and down (h->f->h); SwiGLU adds the gate (Shazeer 2020).
double MlpMatrices(const ModelSpec& m) { return m.mlp == MlpKind::kSwiGlu ? 3.0 : 2.0; }

LayerFlops AttentionFlops(const ModelSpec& m, double s) {
  const double h = static_cast<double>(m.hidden_size);
  const double d = static_cast<double>(m.HeadDim());
  const double q_width = static_cast<double>(m.num_attention_heads) * d;
  const double kv_width = static_cast<double>(m.num_kv_heads) * d;
  LayerFlops f;
  f.qkv = 2.0 * s * h * (q_width + 2.0 * kv_width);
  // The full s x s scores (no causal halving, Megatron's convention); a local layer's s x its
  // window's keys, the same convention (twice the causal keys per query), averaged over layers.
  const double local = LocalAttentionShare(m);
  const double keys = (1.0 - local) * s + local * 2.0 * CausalKeysPerQuery(m, s, true);
  f.attn_core = 4.0 * s * keys * q_width;
  f.out_proj = 2.0 * s * q_width * h;
  return f;
}

}  // namespace

LayerFlops DenseLayerForwardFlops(const ModelSpec& m, double s) {
  LayerFlops f = AttentionFlops(m, s);
  f.mlp = 2.0 * s * static_cast<double>(m.hidden_size) * static_cast<double>(m.ffn_hidden_size) *
          MlpMatrices(m);
  return f;
}

LayerFlops MoeLayerForwardFlops(const ModelSpec& m, double s) {
  LayerFlops f = AttentionFlops(m, s);
  const double h = static_cast<double>(m.hidden_size);
  const double active = static_cast<double>(m.moe_top_k + m.moe_shared_experts);
  const double router = 2.0 * s * h * static_cast<double>(m.moe_num_experts);
  f.mlp = 2.0 * s * h * static_cast<double>(m.ExpertFfn()) * MlpMatrices(m) * active + router;
  return f;
}

double LogitsForwardFlops(const ModelSpec& m, double s) {
  return 2.0 * s * static_cast<double>(m.hidden_size) * static_cast<double>(m.vocab_size);
}

double ModelForwardFlopsPerSequence(const ModelSpec& m, double s) {
  double total = static_cast<double>(m.DenseLayers()) * DenseLayerForwardFlops(m, s).Total();
  if (m.is_moe()) total += static_cast<double>(m.MoeLayers()) * MoeLayerForwardFlops(m, s).Total();
  return total + LogitsForwardFlops(m, s);
}

double TrainingStepModelFlops(const ModelSpec& m, double s, double sequences, bool frozen_base) {
  const double fwd = ModelForwardFlopsPerSequence(m, s);
  if (!frozen_base) return 3.0 * fwd * sequences;
  // Frozen weights: backward computes input gradients only (1x) for the projections; attention
  // core backward is still 2x forward. Logits weights frozen too.
  double core = static_cast<double>(m.DenseLayers()) * DenseLayerForwardFlops(m, s).attn_core;
  if (m.is_moe()) core += static_cast<double>(m.MoeLayers()) * MoeLayerForwardFlops(m, s).attn_core;
  return (2.0 * fwd + core) * sequences;
}

}  // namespace gpuplan

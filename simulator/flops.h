// Floating-point operation counts of a decoder transformer (model FLOPs, the convention MFU uses).
#pragma once

#include "simulator/model.h"

namespace gpuplan {

/// Forward FLOPs of one layer for one sequence of `seq_len` tokens, split by part. Attention
/// scores count the full s x s product as Megatron's formula does (no causal halving):
/// QK^T and attention-over-V are 2*s*s*(a*d) each (Narayanan et al. 2021, Sec. 5.1 / App.).
struct LayerFlops {
  double qkv = 0;        ///< 2*s*h*(a*d + 2*kv*d)
  double attn_core = 0;  ///< 4*s^2*a*d
  double out_proj = 0;   ///< 2*s*(a*d)*h
  double mlp = 0;        ///< dense: 2*s*h*f*(2 or 3); MoE: (top_k + shared) experts + router
  double Total() const { return qkv + attn_core + out_proj + mlp; }
};

/// Forward FLOPs of dense layer / MoE layer (active experts only) for one sequence.
LayerFlops DenseLayerForwardFlops(const ModelSpec& m, double seq_len);
LayerFlops MoeLayerForwardFlops(const ModelSpec& m, double seq_len);

/// LM-head (logits) forward FLOPs for one sequence: 2*s*h*V.
double LogitsForwardFlops(const ModelSpec& m, double seq_len);

/// Forward FLOPs of the whole model for one sequence (all layers + logits).
double ModelForwardFlopsPerSequence(const ModelSpec& m, double seq_len);

/// Model FLOPs of one training step over `sequences` sequences: 3x forward (backward = 2x forward,
/// Kaplan et al. 2020 / Narayanan et al. 2021), recomputation NOT counted. With f = 4h, MHA and
/// GELU this equals Megatron's 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h)) (Narayanan et al. 2021 eq. 3
/// without the recompute forward pass). For LoRA pass `frozen_base=true`: the frozen weights need
/// no weight-gradient GEMMs, so backward is 1x forward for them (adapter FLOPs are not included;
/// they are counted by the cost model).
double TrainingStepModelFlops(const ModelSpec& m, double seq_len, double sequences,
                              bool frozen_base = false);

}  // namespace gpuplan

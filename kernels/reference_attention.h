// CPU reference of scaled dot-product attention, causal or not, forward and backward, and the
// merge of partial outputs that ring attention runs, in the layout of the CUDA kernels
// (kernels/attention.h): float64 for the tests' ground truth, float32 (the ...Into forms) for
// the validator's CPU ranks.
#pragma once

#include <span>
#include <vector>

#include "common/status.h"
#include "kernels/tensor_shapes.h"

namespace gpuplan::kernels {

/// O and the natural-log log-sum-exp of each row of scaled, masked scores.
struct AttentionForwardResult {
  std::vector<double> o;    ///< [batch, seq, heads, head_dim]
  std::vector<double> lse;  ///< [batch, heads, seq]
};

/// dq [batch, seq, heads, head_dim]; dk, dv [batch, KvSeq(), heads, head_dim].
struct AttentionGradients {
  std::vector<double> dq;
  std::vector<double> dk;
  std::vector<double> dv;
};

/// Attention O = softmax(scale * Q K^T + mask) V with scale = 1/sqrt(head_dim) and, when
/// shape.causal, key j visible to query i iff j <= i (Vaswani et al. 2017, Eq. 1); else every
/// key visible. Computed one key at a time with the online softmax (Milakov & Gimelshein 2018),
/// as FlashAttention-2 does per tile (Dao 2023, Algorithm 1); lse = m + log(l). q: [batch, seq,
/// heads, head_dim]; k, v: [batch, KvSeq(), heads, head_dim]. Any head_dim > 0. Invalid when
/// the shape or a buffer size is wrong.
Expected<AttentionForwardResult> ReferenceAttentionForward(const AttentionShape& shape,
                                                           std::span<const double> q,
                                                           std::span<const double> k,
                                                           std::span<const double> v);

/// Gradients of a loss L w.r.t. q, k, v given d_o = dL/dO, with P recomputed from the saved
/// lse (FlashAttention-2, Dao 2023, Algorithm 2): D_i = rowsum(dO_i * O_i),
/// P_ij = exp(scale q_i.k_j - lse_i), dV_j = sum_i P_ij dO_i, dP_ij = dO_i.v_j,
/// dS_ij = P_ij (dP_ij - D_i), dQ_i = scale sum_j dS_ij k_j, dK_j = scale sum_i dS_ij q_i.
/// o and lse as ReferenceAttentionForward returns them (or the kernel's rounded copies).
Expected<AttentionGradients> ReferenceAttentionBackward(
    const AttentionShape& shape, std::span<const double> q, std::span<const double> k,
    std::span<const double> v, std::span<const double> o, std::span<const double> d_o,
    std::span<const double> lse);

/// The forward in `T` (float or double, accumulating in `T`) into o [batch, seq, heads,
/// head_dim] and lse [batch, heads, seq].
template <typename T>
Status ReferenceAttentionForwardInto(const AttentionShape& shape, std::span<const T> q,
                                     std::span<const T> k, std::span<const T> v, std::span<T> o,
                                     std::span<T> lse);

/// Merges a partial attention result (o_part, lse_part: the same queries over other keys) into
/// the running one (o, lse), in place: lse' = log(e^lse + e^lse_part),
/// o' = e^(lse - lse') o + e^(lse_part - lse') o_part. The online softmax across key blocks
/// (Milakov & Gimelshein 2018), as ring attention corrects its output after each step against
/// another rank's K/V chunk (Liu et al. 2023; Transformer Engine's AttnFuncWithCPAndKVP2P).
/// Attention over keys K1 then merged with attention over K2 equals attention over K1 and K2.
/// o, o_part: [batch, seq, heads, head_dim]; lse, lse_part: [batch, heads, seq].
template <typename T>
Status ReferenceAttentionMergeInto(const AttentionShape& shape, std::span<const T> o_part,
                                   std::span<const T> lse_part, std::span<T> o, std::span<T> lse);

/// The backward in `T` into dq [batch, seq, heads, head_dim] and dk, dv [batch, KvSeq(), heads,
/// head_dim] (overwritten).
template <typename T>
Status ReferenceAttentionBackwardInto(const AttentionShape& shape, std::span<const T> q,
                                      std::span<const T> k, std::span<const T> v,
                                      std::span<const T> o, std::span<const T> d_o,
                                      std::span<const T> lse, std::span<T> dq, std::span<T> dk,
                                      std::span<T> dv);

}  // namespace gpuplan::kernels

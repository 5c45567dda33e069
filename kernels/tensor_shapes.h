// The shapes of the tensors the kernels of a transformer step take, shared by the float64
// references and the CUDA kernels, and their validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace gpuplan::kernels {

/// Attention tensors q, o and their gradients: [batch, seq, heads, head_dim], contiguous,
/// head_dim fastest (the layout of a fused QKV projection before any transpose); k, v and their
/// gradients: [batch, KvSeq(), heads, head_dim]. Per-row statistics (log-sum-exp,
/// D = rowsum(dO * O)) are [batch, heads, seq], seq fastest.
struct AttentionShape {
  int64_t batch = 0;
  int64_t seq = 0;  ///< queries per sequence
  int64_t heads = 0;
  int64_t head_dim = 0;
  /// Keys (and values) per sequence; 0: seq, the queries' own tokens.
  int64_t kv_seq = 0;
  /// True: key j is visible to query i iff j <= i (needs KvSeq() == seq). False: every query
  /// sees every key, as a ring-attention step against another rank's chunk does.
  bool causal = true;

  /// Keys per sequence: kv_seq, or seq when kv_seq is 0.
  int64_t KvSeq() const { return kv_seq == 0 ? seq : kv_seq; }
  /// Elements of one of q, o: batch * seq * heads * head_dim.
  int64_t Elements() const { return batch * seq * heads * head_dim; }
  /// Elements of one of k, v: batch * KvSeq() * heads * head_dim.
  int64_t KvElements() const { return batch * KvSeq() * heads * head_dim; }
  /// Elements of one per-row statistic: batch * heads * seq.
  int64_t StatRows() const { return batch * heads * seq; }
  /// Index of element (b, s, h, 0) of q/o.
  int64_t Offset(int64_t b, int64_t s, int64_t h) const {
    return ((b * seq + s) * heads + h) * head_dim;
  }
  /// Index of element (b, s, h, 0) of k/v.
  int64_t KvOffset(int64_t b, int64_t s, int64_t h) const {
    return ((b * KvSeq() + s) * heads + h) * head_dim;
  }
  /// Index of row (b, h, s) of a per-row statistic.
  int64_t StatOffset(int64_t b, int64_t h, int64_t s) const { return (b * heads + h) * seq + s; }
};

/// A row-major matrix [rows, cols], cols fastest: norm and cross-entropy inputs (one token a row).
struct MatrixShape {
  int64_t rows = 0;
  int64_t cols = 0;

  int64_t Elements() const { return rows * cols; }
};

/// Ok when every dimension is positive, the element count stays below 2^62 and a causal shape
/// has as many keys as queries; else Invalid naming the dimension ("attention shape: seq must
/// be positive, got 0").
Status CheckShape(const AttentionShape& shape);
Status CheckShape(const MatrixShape& shape);
/// Ok when the element count `n` of a flat tensor is positive and below 2^62.
Status CheckElementCount(std::string_view name, int64_t n);
/// Ok when a buffer called `name` holds `size` elements and the shape needs `expected`.
Status CheckSize(std::string_view name, size_t size, int64_t expected);

}  // namespace gpuplan::kernels

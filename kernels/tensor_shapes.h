// The shapes of the tensors the kernels of a transformer step take, shared by the float64
// references and the CUDA kernels, and their validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/status.h"

namespace gpuplan::kernels {

/// Attention tensors q, k, v, o and their gradients: [batch, seq, heads, head_dim], contiguous,
/// head_dim fastest (the layout of a fused QKV projection before any transpose). Per-row
/// statistics (log-sum-exp, D = rowsum(dO * O)) are [batch, heads, seq], seq fastest.
struct AttentionShape {
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t head_dim = 0;

  /// Elements of one of q, k, v, o: batch * seq * heads * head_dim.
  int64_t Elements() const { return batch * seq * heads * head_dim; }
  /// Elements of one per-row statistic: batch * heads * seq.
  int64_t StatRows() const { return batch * heads * seq; }
  /// Index of element (b, s, h, 0) of q/k/v/o.
  int64_t Offset(int64_t b, int64_t s, int64_t h) const {
    return ((b * seq + s) * heads + h) * head_dim;
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

/// Ok when every dimension is positive and the element count stays below 2^62; else
/// Invalid naming the dimension ("attention shape: seq must be positive, got 0").
Status CheckShape(const AttentionShape& shape);
Status CheckShape(const MatrixShape& shape);
/// Ok when the element count `n` of a flat tensor is positive and below 2^62.
Status CheckElementCount(std::string_view name, int64_t n);
/// Ok when a buffer called `name` holds `size` elements and the shape needs `expected`.
Status CheckSize(std::string_view name, size_t size, int64_t expected);

}  // namespace gpuplan::kernels

// The transformer kernels the profiler times (kernels/), as one table: name, the dimensions each
// uses, and the FLOPs and bytes one launch does, so achieved FLOP/s and GB/s follow from a time.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "hardware-db/hardware.h"

namespace gpuplan {

/// Order indexes KernelTable().
enum class KernelKind {
  kAttentionForward = 0,  ///< causal flash attention forward, q/k/v/o [batch, seq, heads, head_dim]
  kAttentionBackward,     ///< its backward (dq, dk, dv from o, do and the row log-sum-exp)
  kRmsNormForward,        ///< rows x cols, weight [cols]
  kRmsNormBackward,
  kLayerNormForward,
  kLayerNormBackward,
  kGeluForward,  ///< tanh-approximation GELU over rows x cols
  kGeluBackward,
  kSwiGluForward,  ///< silu(gate) * up: inputs rows x 2cols, output rows x cols
  kSwiGluBackward,
  kCrossEntropy,  ///< softmax cross-entropy forward + logit gradient, rows=tokens, cols=vocab
  kAdam,          ///< fused AdamW step over cols parameters (fp32 master, moments, grads)
  kCount
};
inline constexpr int kKernelKindCount = static_cast<int>(KernelKind::kCount);

/// One kernel launch to time. Attention uses batch/seq/heads/head_dim; the others rows/cols.
struct KernelCase {
  KernelKind kind = KernelKind::kRmsNormForward;
  Precision dtype = Precision::kBf16;  ///< activations' type (Adam: gradients'; state is fp32)
  int64_t batch = 0;
  int64_t seq = 0;
  int64_t heads = 0;
  int64_t head_dim = 0;
  int64_t rows = 0;
  int64_t cols = 0;
};

/// One row of the kernel table.
struct KernelInfo {
  KernelKind kind;
  std::string_view name;  ///< as written in profile JSON, e.g. "attention_fwd"
  bool attention;         ///< true: batch/seq/heads/head_dim; false: rows/cols
  /// Useful FLOPs of one launch (attention: causal half of 4*b*h*s^2*d forward, 2.5x that
  /// backward as FlashAttention-2 counts it; elementwise kernels count 0).
  double (*flops)(const KernelCase& c);
  /// Bytes one launch must read and write at least (the roofline denominator).
  double (*bytes)(const KernelCase& c);
};

std::span<const KernelInfo> KernelTable();
const KernelInfo& GetKernelInfo(KernelKind kind);
/// Parses a KernelInfo::name; false when unknown.
bool ParseKernelName(std::string_view name, KernelKind* out);

/// Bytes of one element of `p` (fp8 1, bf16/fp16 2, tf32/fp32 4).
double PrecisionBytes(Precision p);

}  // namespace gpuplan

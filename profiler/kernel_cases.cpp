#include "profiler/kernel_cases.h"

#include <array>

namespace gpuplan {
namespace {

double Rows(const KernelCase& c) { return static_cast<double>(c.rows); }
double Cols(const KernelCase& c) { return static_cast<double>(c.cols); }
double Elems(const KernelCase& c) { return Rows(c) * Cols(c); }
double Eb(const KernelCase& c) { return PrecisionBytes(c.dtype); }
double Bshd(const KernelCase& c) {
  return static_cast<double>(c.batch) * static_cast<double>(c.seq) * static_cast<double>(c.heads) *
         static_cast<double>(c.head_dim);
}
double RowStats(const KernelCase& c) {  // fp32 per-row statistics (log-sum-exp, rstd, mean)
  return 4.0 * static_cast<double>(c.batch) * static_cast<double>(c.heads) *
         static_cast<double>(c.seq);
}

// Attention forward: S = QK^T and O = PV, 2*s*s*d FLOPs each per (batch, head); causal masking
// skips half (FlashAttention-2, Dao 2023, Sec. 3.1.1 and the FLOP count of its benchmarks).
double AttnFwdFlops(const KernelCase& c) {
  return 4.0 * Bshd(c) * static_cast<double>(c.seq) * 0.5;
}
// Backward recomputes S and runs dV, dP, dQ, dK: 2.5x the forward FLOPs (same paper's count).
double AttnBwdFlops(const KernelCase& c) { return 2.5 * AttnFwdFlops(c); }
// Forward reads q, k, v and writes o plus the log-sum-exp; backward reads q, k, v, o, do and the
// log-sum-exp and writes dq, dk, dv.
double AttnFwdBytes(const KernelCase& c) { return 4.0 * Bshd(c) * Eb(c) + RowStats(c); }
double AttnBwdBytes(const KernelCase& c) { return 8.0 * Bshd(c) * Eb(c) + RowStats(c); }

double Zero(const KernelCase&) { return 0.0; }
// Norm forward: read x and the weight, write y and a per-row fp32 statistic (rstd; LayerNorm
// also the mean, bias read). Backward: read x, dy, weight, the statistics; write dx and fp32
// weight-gradient partials (counted once per column).
double NormFwdBytes(const KernelCase& c) { return 2.0 * Elems(c) * Eb(c) + 4.0 * Rows(c); }
double NormBwdBytes(const KernelCase& c) {
  return 3.0 * Elems(c) * Eb(c) + 4.0 * Rows(c) + 4.0 * Cols(c);
}
// GELU: read x, write y; backward read x and dy, write dx.
double GeluFwdBytes(const KernelCase& c) { return 2.0 * Elems(c) * Eb(c); }
double GeluBwdBytes(const KernelCase& c) { return 3.0 * Elems(c) * Eb(c); }
// SwiGLU: read gate and up, write the product; backward read gate, up, dy, write dgate, dup.
double SwiGluFwdBytes(const KernelCase& c) { return 3.0 * Elems(c) * Eb(c); }
double SwiGluBwdBytes(const KernelCase& c) { return 5.0 * Elems(c) * Eb(c); }
// Cross-entropy forward + backward in one pass per row: read the logits, write their gradient,
// read an int64 label and write an fp32 loss per row.
double CrossEntropyBytes(const KernelCase& c) { return 2.0 * Elems(c) * Eb(c) + 12.0 * Rows(c); }
// AdamW: read the fp32 parameter, both fp32 moments and the gradient; write parameter and
// moments (Loshchilov & Hutter 2019, Algorithm 2; 16 B/param state as in ZeRO, Rajbhandari 2020).
double AdamBytes(const KernelCase& c) { return Cols(c) * (4.0 * 3.0 + Eb(c) + 4.0 * 3.0); }

constexpr std::array<KernelInfo, kKernelKindCount> kKernels = {{
    {KernelKind::kAttentionForward, "attention_fwd", true, &AttnFwdFlops, &AttnFwdBytes},
    {KernelKind::kAttentionBackward, "attention_bwd", true, &AttnBwdFlops, &AttnBwdBytes},
    {KernelKind::kRmsNormForward, "rmsnorm_fwd", false, &Zero, &NormFwdBytes},
    {KernelKind::kRmsNormBackward, "rmsnorm_bwd", false, &Zero, &NormBwdBytes},
    {KernelKind::kLayerNormForward, "layernorm_fwd", false, &Zero, &NormFwdBytes},
    {KernelKind::kLayerNormBackward, "layernorm_bwd", false, &Zero, &NormBwdBytes},
    {KernelKind::kGeluForward, "gelu_fwd", false, &Zero, &GeluFwdBytes},
    {KernelKind::kGeluBackward, "gelu_bwd", false, &Zero, &GeluBwdBytes},
    {KernelKind::kSwiGluForward, "swiglu_fwd", false, &Zero, &SwiGluFwdBytes},
    {KernelKind::kSwiGluBackward, "swiglu_bwd", false, &Zero, &SwiGluBwdBytes},
    {KernelKind::kCrossEntropy, "cross_entropy", false, &Zero, &CrossEntropyBytes},
    {KernelKind::kAdam, "adam", false, &Zero, &AdamBytes},
}};

}  // namespace

std::span<const KernelInfo> KernelTable() { return kKernels; }

const KernelInfo& GetKernelInfo(KernelKind kind) { return kKernels[static_cast<size_t>(kind)]; }

bool ParseKernelName(std::string_view name, KernelKind* out) {
  for (const KernelInfo& k : kKernels) {
    if (k.name == name) {
      *out = k.kind;
      return true;
    }
  }
  return false;
}

double PrecisionBytes(Precision p) {
  switch (p) {
    case Precision::kFp8:
      return 1;
    case Precision::kBf16:
    case Precision::kFp16:
      return 2;
    default:
      return 4;
  }
}

}  // namespace gpuplan

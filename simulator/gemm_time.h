// Time of the kernels of a transformer step on one GPU: GEMMs with a shape-dependent efficiency,
// fused attention, and memory-bound (elementwise) kernels.
#pragma once

#include <cstdint>

#include "hardware-db/hardware.h"
#include "simulator/calibration.h"

namespace gpuplan {

/// k-elements of pipeline fill and epilogue per GEMM tile (see GemmSeconds): two k-tiles of 32.
inline constexpr double kGemmFillDepth = 64;

/// Sequence length at which a fused attention kernel runs at half its long-sequence rate: the
/// rate over sequences of s tokens goes as s / (s + s0). Shorter sequences leave fewer key blocks
/// per query block to amortise each block's prologue and epilogue over, and a larger share of
/// the blocks on the causal diagonal. FITTED: least squares in log rate on the FlashAttention-3
/// paper's H100 benchmark (Shah et al. 2024, "Attention forward speed, head dim 128 (H100 80GB
/// SXM5)", causal, 512-16,384 tokens) for FlashAttention-2 and cuDNN, the kernels Megatron-LM
/// (Transformer Engine) and nanotron run: s0 = 396 tokens (rounded to 400), RMS error 1.8%
/// (FlashAttention-3 alone: 604). Golden test Golden.AttentionRateFollowsTheSequenceLength.
inline constexpr double kAttentionHalfRateTokens = 400;

/// The achievable rates of one GPU at one precision. DatasheetRates() derives them from the
/// hardware database; CalibratedRates() replaces what a measured profile has.
struct DeviceRates {
  double matmul_flops_per_s = 0;     ///< sustained large-GEMM throughput in a training step
  double attention_flops_per_s = 0;  ///< fused (FlashAttention-style) attention, forward
  double attention_backward_flops_per_s = 0;  ///< same, backward (per useful FLOP)
  double memory_bytes_per_s = 0;  ///< streaming-kernel bandwidth (peak x memory_efficiency)
  int sm_count = 1;
  double kernel_overhead_s = 0;  ///< fixed cost per kernel (launch + tail), see kKernelOverhead
  double gemm_fill_depth = kGemmFillDepth;  ///< see GemmSeconds
  double activation_bytes = 2;              ///< bytes per activation element at this precision
  /// s0 of AttentionLengthFactor: the sequence length at which the attention kernel runs at half
  /// its long-sequence rate. 0: its rate does not depend on the length (the host device).
  double attention_half_rate_tokens = kAttentionHalfRateTokens;
  /// Measured collective fits for groups inside one node (CollectiveSeconds), or nullptr.
  const MeasuredRates* measured = nullptr;
  /// The host device's measured element-wise kernel times (all 0: priced by their bytes at
  /// memory_bytes_per_s, as on GPUs).
  HostKernelTimes host_kernels;
};

/// Fixed per-kernel cost. Back-to-back kernels on one stream leave a gap of a few microseconds
/// (launch latency plus the partial last wave); 2 us is the stated default (NVIDIA Nsight
/// Systems traces of PyTorch eager training loops show 1-5 us gaps).
inline constexpr double kKernelOverheadSeconds = 2.0e-6;

/// Sustained GEMM throughput of a training step relative to the best single-GEMM benchmark
/// (GpuSpec::gemm_efficiency, the "maximum achievable matmul FLOPS"). Training runs GEMMs of
/// fixed model shapes, backward GEMMs in transposed layouts, beside NCCL kernels that take SMs
/// and L2, under sustained power limits. CALIBRATED: 0.80 minimises the error over the 128
/// published runs of hardware-db/calibration (docs/ACCURACY.md shows the sweep); Megatron's own
/// per-layer measurements imply 0.7-0.8 of the benchmark figure on A100 (Korthikanti et al.
/// 2022 Table 4 vs ml-engineering MAMF). A measured profile replaces it.
inline constexpr double kSustainedGemmFraction = 0.80;

/// Fused-attention throughput per useful (causal) FLOP relative to the sustained GEMM rate.
/// FlashAttention-2's kernel benchmark gives ~0.65 (Dao 2023, Fig. 4-6: ~175 of 270 TFLOP/s on
/// A100, causal, head dim 128). CALIBRATED: the published runs imply 0.40 as deployed. Only the
/// runs that used a fused kernel constrain it (llm-foundry's Triton kernel with ALiBi, head dim
/// 64, seq 512-32k; the Megatron-LM README H100 runs with Transformer Engine); the older
/// Megatron/NeMo runs materialise the scores (AttentionImpl::kUnfused). docs/ACCURACY.md shows
/// the sweep. A measured profile replaces it.
inline constexpr double kFusedAttentionRelativeEfficiency = 0.40;

/// Sequence length at which the fused-attention rate is matmul x
/// kFusedAttentionRelativeEfficiency (or the measured profile's rate, whose samples run 1,024 to
/// 8,192 tokens).
inline constexpr double kAttentionReferenceTokens = 4096;

/// The attention kernel's s0 on `gpu` (DeviceRates::attention_half_rate_tokens):
/// Share of an NVFP4 model's linear layers kept in bf16: NVIDIA's recipe keeps about 16% of them
/// (the first and last blocks) in higher precision for stable convergence ("Pretraining Large
/// Language Models with NVFP4", arXiv:2509.25149, Sec. 4; Megatron-Core
/// --first-last-layers-bf16). Stated from the paper, not fitted.
inline constexpr double kFp4Bf16LayerFraction = 0.16;

/// Whether `precision` quantizes the linear layers' GEMM operands (fp8, fp4) while attention,
/// norms and the optimizer stay in 16/32 bits (Transformer Engine recipes).
bool QuantizedLinears(Precision precision);

/// Fraction of `precision`'s dense peak the best single GEMM reaches on `gpu`: the entry's
/// gemm_efficiency_fp8 for fp8 and fp4 GEMMs where it gives one (fp8 reaches less of its peak
/// than 16-bit GEMMs; no fp4 GEMM has been measured, and fp4 is taken to reach no more than
/// fp8), else gemm_efficiency.
double GemmEfficiency(const GpuSpec& gpu, Precision precision);

/// Best single-GEMM FLOP/s of the linear layers at `precision`: peak x GemmEfficiency, except
/// for fp4, whose kFp4Bf16LayerFraction of layers run at the bf16 rate (harmonic mix of the two
/// rates). The datasheet matmul rate is this times the sustained GEMM fraction.
double LinearGemmFlops(const GpuSpec& gpu, Precision precision);

/// kAttentionHalfRateTokens for a GPU's fused kernels, 0 for the host device's reference kernel.
double AttentionHalfRateTokens(const GpuSpec& gpu);

/// Rate of a fused attention kernel over sequences of `tokens` (> 0) relative to its rate over
/// kAttentionReferenceTokens: (s / (s + s0)) / (ref / (ref + s0)), s0 = `half_rate_tokens`
/// (>= 0; 0 gives 1 at every length). Below 1 for shorter sequences (0.92 at 2,048, 0.62 at 512
/// with kAttentionHalfRateTokens), up to 1.10 for very long ones.
double AttentionLengthFactor(double tokens, double half_rate_tokens = kAttentionHalfRateTokens);

/// The two rate constants calibrated on the published runs, as one value: the shipped ones by
/// default; `gpuplan accuracy --cross-validate` refits them on subsets of the runs
/// (simulator/cross_validation.h).
struct RateCalibration {
  double sustained_gemm_fraction = kSustainedGemmFraction;
  double fused_attention_relative_efficiency = kFusedAttentionRelativeEfficiency;
};

/// The sustained GEMM fraction on `gpu`: its database entry's (GpuSpec::sustained_gemm_fraction)
/// when it states one, else `calibration`'s.
double SustainedGemmFraction(const GpuSpec& gpu, const RateCalibration& calibration = {});

/// Rates from datasheet peak x the database's measured efficiencies, with `calibration`'s
/// sustained GEMM fraction (unless the GPU states its own) and fused-attention efficiency (both
/// > 0).
DeviceRates DatasheetRates(const GpuSpec& gpu, Precision precision,
                           const RateCalibration& calibration = {});

/// DatasheetRates with every figure `measured` has replaced, when `measured` is not null and was
/// taken on `gpu` (same id); otherwise the datasheet rates. The replacements (docs/PROFILE.md):
///  - GEMM: matmul = fitted best single-GEMM rate x SustainedGemmFraction(gpu) (the same
///    sustained fraction the datasheet path applies to peak x gemm_efficiency), fill depth and
///    kernel overhead from the same fit;
///  - attention: the measured kernel rates x SustainedGemmFraction(gpu), instead of matmul x
///    kFusedAttentionRelativeEfficiency, when they ran in the job's precision family (16-bit
///    kernels for bf16/fp16/fp8 training, fp32 kernels for fp32);
///  - memory: the measured copy bandwidth instead of peak x memory_efficiency;
///  - on the host device only, its element-wise kernels' measured times (HostKernelTimes);
///  - collectives: `measured` is kept in the rates for CollectiveSeconds;
///  - validation corrections: compute rates divided by measured->compute_time_factor and the
///    kernel overhead multiplied by it, so every kernel's time scales by that factor.
DeviceRates CalibratedRates(const GpuSpec& gpu, Precision precision, const MeasuredRates* measured);

/// Fraction of the SMs busy over a GEMM's waves: the m x n output of each of `batch` GEMMs is cut
/// into 128 x 128 tiles, one per SM at a time (wave quantisation, see GemmSeconds).
double GemmWaveEfficiency(double m, double n, double batch, int sm_count);

/// Seconds for `batch` independent (m x k) * (k x n) GEMMs. Efficiency falls for small shapes:
///  - wave quantisation: the output is cut into 128x128 tiles, one per SM at a time; a partial
///    last wave idles SMs (NVIDIA "Matrix Multiplication Background" user guide, Sec. "Wave
///    quantization");
///  - short reductions: k/(k + fill) of the main loop is useful work, the rest is pipeline fill
///    and epilogue (same guide, "Dimension quantization"; fill = r.gemm_fill_depth);
///  - memory: a GEMM cannot run faster than reading A and B and writing C once (roofline).
/// Returns the larger of compute and memory time plus one kernel overhead.
double GemmSeconds(const DeviceRates& r, double m, double n, double k, double batch = 1);

/// Seconds of one linear layer's GEMMs in each pass of a step: forward (Y = X W), data gradient
/// (dX = dY W^T) and weight gradient (dW = X^T dY, reducing over the rows).
struct GemmPasses {
  double forward_s = 0;
  double dgrad_s = 0;
  double wgrad_s = 0;
};

/// A rank's `experts` (>= 1) local experts' linear layer [in -> out] over `rows` (> 0) routed
/// token copies each, as Megatron-Core runs it with --moe-grouped-gemm (Transformer Engine's
/// GroupedLinear: one cuBLAS GEMM per expert, general_grouped_gemm, spread over several streams):
/// every expert's GEMM is its own kernel (one kernel overhead each) over its own weights, and
/// the streams let the experts' tiles share the SMs' waves (GemmSeconds with batch = experts).
/// The weight gradient's reduction runs over the expert's rows, so few rows per expert leave it
/// short-reduction bound (k/(k + fill), GemmSeconds). Golden test
/// Golden.GroupedExpertGemmsRunOneGemmPerLocalExpert.
GemmPasses GroupedGemmPasses(const DeviceRates& r, double experts, double rows, double out,
                             double in);

/// Seconds for memory-bound kernels moving `bytes` in `kernels` launches.
double MemoryBoundSeconds(const DeviceRates& r, double bytes, double kernels);

}  // namespace gpuplan

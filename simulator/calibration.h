// Figures measured on the user's own GPUs (a profile, profiler/profile.h) that replace the
// datasheet-derived ones. The simulator only reads this plain data; the profiler fits it.
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "hardware-db/hardware.h"
#include "simulator/collective.h"

namespace gpuplan {

/// Latency-bandwidth (alpha-beta, Hockney 1994) model of one collective over `ranks` GPUs inside
/// one node, in nccl-tests' terms: seconds(size) = alpha_s + size * busfactor(ranks) / busbw,
/// and the measured table it was fitted to.
struct CollectiveFit {
  Collective kind = Collective::kAllReduce;
  int ranks = 0;
  double alpha_s = 0;             ///< fixed cost per call, seconds
  double busbw_bytes_per_s = 0;   ///< bus bandwidth for large messages, bytes/s
  double rms_relative_error = 0;  ///< of the fit over the samples it was fitted to
  int samples = 0;
  /// The measured (bytes, mean seconds) per distinct size, by size (empty: the line alone).
  std::vector<std::pair<double, double>> table;

  /// Seconds of one collective of nccl-tests size `bytes` (> 0): between the smallest and the
  /// largest measured size the table interpolated linearly in log(size) and log(time), which
  /// keeps the knees a line misses (protocol switches, a CPU's caches); outside it the line.
  double Seconds(double bytes) const;
};

/// Seconds per element of one element-wise kernel, forward and backward; 0 = not measured.
struct ElementwiseTimes {
  double forward_s = 0;
  double backward_s = 0;
  bool Measured() const { return forward_s > 0 && backward_s > 0; }
};

/// The host device's element-wise kernels as a CPU profile times them: the float32 reference
/// kernels of kernels/ on one thread, which the validator's CPU ranks run. On a CPU they are
/// bound by their arithmetic (exp, tanh, rsqrt), not by memory: on the 2-core CI host
/// (2026-11-29) the cross-entropy of 256 x 8,192 logits took 16.8 ms against 1.4 ms for its
/// bytes at the measured copy bandwidth. Seconds per element of the tensor the kernel runs over
/// (rows x cols in the profile's samples): the normalised tensor, the activation's output, the
/// logits, the parameters. All 0 for GPUs, whose frameworks run fused kernels other than ours.
struct HostKernelTimes {
  ElementwiseTimes rmsnorm, layernorm, gelu, swiglu;
  double cross_entropy_s = 0;  ///< per logit: the loss and the logits' gradient, one kernel
  double adam_s = 0;           ///< per parameter: one AdamW step
  /// The same times x `factor` (a validation correction).
  HostKernelTimes Scaled(double factor) const;
};

/// Measured replacements for one GPU type (hardware-db id `gpu_id`). A zero or empty field means
/// "not measured": the datasheet-derived figure stays.
struct MeasuredRates {
  std::string gpu_id;
  /// Best single-GEMM throughput per precision from the fitted GEMM model (FLOP/s), before the
  /// training-sustained fraction kSustainedGemmFraction is applied.
  std::array<double, kPrecisionCount> gemm_flops_per_s{};
  /// Fitted k-depth of pipeline fill per GEMM tile (GemmSeconds), used with gemm_flops_per_s
  /// (it was fitted with it; 0 is a valid fit).
  double gemm_fill_depth = 0;
  double kernel_overhead_s = 0;  ///< fitted fixed cost per kernel; 0 = kKernelOverheadSeconds
  /// Causal attention throughput (useful FLOP/s) forward and backward at
  /// kAttentionReferenceTokens (samples at other lengths normalised by the device's
  /// AttentionLengthFactor), of kernels that ran in `attention_precision`: kBf16 for 16-bit
  /// samples, kFp32 for fp32 ones.
  double attention_forward_flops_per_s = 0;
  double attention_backward_flops_per_s = 0;
  Precision attention_precision = Precision::kBf16;
  double memory_bytes_per_s = 0;  ///< streaming-copy bandwidth (bytes read + written per second)
  HostKernelTimes host_kernels;   ///< the host device's element-wise kernels (CPU profiles only)
  std::vector<CollectiveFit> collectives;
  /// Corrections fitted from validation reports (`gpuplan calibrate`): measured / predicted time
  /// of the compute and of the communication phases. Kernel times are multiplied by the first
  /// (rates divided, overhead multiplied), collective times by the second; 1 = none.
  double compute_time_factor = 1;
  double communication_time_factor = 1;

  /// The fit of `kind` over exactly `ranks` GPUs, or nullptr.
  const CollectiveFit* FindCollective(Collective kind, double ranks) const;
};

}  // namespace gpuplan

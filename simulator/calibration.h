// Figures measured on the user's own GPUs (a profile, profiler/profile.h) that replace the
// datasheet-derived ones. The simulator only reads this plain data; the profiler fits it.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "hardware-db/hardware.h"
#include "simulator/collective.h"

namespace gpuplan {

/// Latency-bandwidth (alpha-beta, Hockney 1994) model of one collective over `ranks` GPUs inside
/// one node, in nccl-tests' terms: seconds(size) = alpha_s + size * busfactor(ranks) / busbw.
struct CollectiveFit {
  Collective kind = Collective::kAllReduce;
  int ranks = 0;
  double alpha_s = 0;             ///< fixed cost per call, seconds
  double busbw_bytes_per_s = 0;   ///< bus bandwidth for large messages, bytes/s
  double rms_relative_error = 0;  ///< of the fit over the samples it was fitted to
  int samples = 0;
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

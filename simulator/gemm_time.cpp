#include "simulator/gemm_time.h"

#include <algorithm>
#include <cmath>

namespace gpuplan {

double SustainedGemmFraction(const GpuSpec& gpu, const RateCalibration& calibration) {
  return gpu.sustained_gemm_fraction > 0 ? gpu.sustained_gemm_fraction
                                         : calibration.sustained_gemm_fraction;
}

DeviceRates DatasheetRates(const GpuSpec& gpu, Precision precision,
                           const RateCalibration& calibration) {
  DeviceRates r;
  const double sustained = SustainedGemmFraction(gpu, calibration);
  r.matmul_flops_per_s = LinearGemmFlops(gpu, precision) * sustained;
  // fp8 and fp4 training keep attention in bf16 (Transformer Engine recipes).
  const Precision attention = QuantizedLinears(precision) ? Precision::kBf16 : precision;
  r.attention_flops_per_s = gpu.PeakFlops(attention) * GemmEfficiency(gpu, attention) * sustained *
                            calibration.fused_attention_relative_efficiency;
  r.attention_backward_flops_per_s = r.attention_flops_per_s;
  r.memory_bytes_per_s = gpu.memory_bandwidth_bytes_per_s * gpu.memory_efficiency;
  r.sm_count = std::max(1, gpu.sm_count);
  r.kernel_overhead_s = kKernelOverheadSeconds;
  r.activation_bytes = (precision == Precision::kFp32 || precision == Precision::kTf32) ? 4 : 2;
  r.attention_half_rate_tokens = AttentionHalfRateTokens(gpu);
  return r;
}

DeviceRates CalibratedRates(const GpuSpec& gpu, Precision precision,
                            const MeasuredRates* measured) {
  DeviceRates r = DatasheetRates(gpu, precision);
  if (measured == nullptr || measured->gpu_id != gpu.id) return r;
  r.measured = measured;
  const double gemm = measured->gemm_flops_per_s[static_cast<size_t>(precision)];
  if (gemm > 0) {
    r.matmul_flops_per_s = gemm * SustainedGemmFraction(gpu);
    r.gemm_fill_depth = measured->gemm_fill_depth;
  }
  if (measured->kernel_overhead_s > 0) r.kernel_overhead_s = measured->kernel_overhead_s;
  // The measured attention kernels stand for the job's when they ran in its precision family:
  // 16-bit samples for bf16/fp16/fp8 training (fp8 keeps attention in bf16), fp32 ones for fp32.
  const bool sixteen_bit_job =
      precision == Precision::kBf16 || precision == Precision::kFp16 || QuantizedLinears(precision);
  const bool sixteen_bit_samples = measured->attention_precision != Precision::kFp32;
  if (sixteen_bit_job == sixteen_bit_samples && measured->attention_forward_flops_per_s > 0 &&
      measured->attention_backward_flops_per_s > 0) {
    r.attention_flops_per_s = measured->attention_forward_flops_per_s * SustainedGemmFraction(gpu);
    r.attention_backward_flops_per_s =
        measured->attention_backward_flops_per_s * SustainedGemmFraction(gpu);
  }
  if (measured->memory_bytes_per_s > 0) r.memory_bytes_per_s = measured->memory_bytes_per_s;
  const double c = measured->compute_time_factor;
  if (gpu.HostDevice()) r.host_kernels = measured->host_kernels.Scaled(c);
  r.matmul_flops_per_s /= c;
  r.attention_flops_per_s /= c;
  r.attention_backward_flops_per_s /= c;
  r.memory_bytes_per_s /= c;
  r.kernel_overhead_s *= c;  // so that every kernel time scales by exactly c
  return r;
}

bool QuantizedLinears(Precision precision) {
  return precision == Precision::kFp8 || precision == Precision::kFp4;
}

double GemmEfficiency(const GpuSpec& gpu, Precision precision) {
  return QuantizedLinears(precision) && gpu.gemm_efficiency_fp8 > 0 ? gpu.gemm_efficiency_fp8
                                                                    : gpu.gemm_efficiency;
}

double LinearGemmFlops(const GpuSpec& gpu, Precision precision) {
  const double rate = gpu.PeakFlops(precision) * GemmEfficiency(gpu, precision);
  if (precision != Precision::kFp4) return rate;
  // NVFP4's layers kept in bf16 take their share of the GEMM FLOPs at the bf16 rate.
  const double bf16 = gpu.PeakFlops(Precision::kBf16) * GemmEfficiency(gpu, Precision::kBf16);
  if (!(rate > 0) || !(bf16 > 0)) return rate;
  return 1.0 / ((1.0 - kFp4Bf16LayerFraction) / rate + kFp4Bf16LayerFraction / bf16);
}

double AttentionHalfRateTokens(const GpuSpec& gpu) {
  // The host device runs the reference attention of kernels/, one query row at a time: no tiles
  // to fill, and its rate does not follow the length (a 2-core CI host, 2026-11-25: 7.5 GFLOP/s
  // forward at 256 and at 512 tokens, backward 5.8 and 6.4).
  return gpu.HostDevice() ? 0 : kAttentionHalfRateTokens;
}

double AttentionLengthFactor(double tokens, double half_rate_tokens) {
  const double s0 = half_rate_tokens;
  const double ref = kAttentionReferenceTokens;
  return (tokens / (tokens + s0)) / (ref / (ref + s0));
}

double GemmWaveEfficiency(double m, double n, double batch, int sm_count) {
  constexpr double kTile = 128;  // CTA tile edge of cuBLAS/CUTLASS bf16 kernels
  const double tiles = std::ceil(m / kTile) * std::ceil(n / kTile) * batch;
  const double sms = sm_count;
  const double waves = std::ceil(tiles / sms);
  return tiles / (waves * sms);
}

double GemmSeconds(const DeviceRates& r, double m, double n, double k, double batch) {
  const double wave_efficiency = GemmWaveEfficiency(m, n, batch, r.sm_count);
  const double k_efficiency = k / (k + r.gemm_fill_depth);
  const double flops = 2.0 * m * n * k * batch;
  const double compute_s = flops / (r.matmul_flops_per_s * wave_efficiency * k_efficiency);
  const double bytes = r.activation_bytes * batch * (m * k + k * n + m * n);
  const double memory_s = bytes / r.memory_bytes_per_s;
  return std::max(compute_s, memory_s) + r.kernel_overhead_s;
}

GemmPasses GroupedGemmPasses(const DeviceRates& r, double experts, double rows, double out,
                             double in) {
  const double launches = (experts - 1.0) * r.kernel_overhead_s;
  GemmPasses p;
  p.forward_s = GemmSeconds(r, rows, out, in, experts) + launches;
  p.dgrad_s = GemmSeconds(r, rows, in, out, experts) + launches;
  p.wgrad_s = GemmSeconds(r, out, in, rows, experts) + launches;
  return p;
}

double MemoryBoundSeconds(const DeviceRates& r, double bytes, double kernels) {
  return bytes / r.memory_bytes_per_s + kernels * r.kernel_overhead_s;
}

}  // namespace gpuplan

#include "simulator/gemm_time.h"

#include <algorithm>
#include <cmath>

namespace gpuplan {

DeviceRates DatasheetRates(const GpuSpec& gpu, Precision precision) {
  DeviceRates r;
  r.matmul_flops_per_s = gpu.PeakFlops(precision) * gpu.gemm_efficiency * kSustainedGemmFraction;
  r.attention_flops_per_s = r.matmul_flops_per_s * kFusedAttentionRelativeEfficiency;
  // fp8 training keeps attention in bf16 (Transformer Engine recipes).
  if (precision == Precision::kFp8) {
    r.attention_flops_per_s = gpu.PeakFlops(Precision::kBf16) * gpu.gemm_efficiency *
                              kSustainedGemmFraction * kFusedAttentionRelativeEfficiency;
  }
  r.memory_bytes_per_s = gpu.memory_bandwidth_bytes_per_s * gpu.memory_efficiency;
  r.sm_count = std::max(1, gpu.sm_count);
  r.kernel_overhead_s = kKernelOverheadSeconds;
  r.activation_bytes = (precision == Precision::kFp32 || precision == Precision::kTf32) ? 4 : 2;
  return r;
}

double GemmSeconds(const DeviceRates& r, double m, double n, double k, double batch) {
  constexpr double kTile = 128;      // CTA tile edge of cuBLAS/CUTLASS bf16 kernels
  constexpr double kFillDepth = 64;  // k-elements of pipeline fill + epilogue per tile
  const double tiles = std::ceil(m / kTile) * std::ceil(n / kTile) * batch;
  const double sms = r.sm_count;
  const double waves = std::ceil(tiles / sms);
  const double wave_efficiency = tiles / (waves * sms);
  const double k_efficiency = k / (k + kFillDepth);
  const double flops = 2.0 * m * n * k * batch;
  const double compute_s = flops / (r.matmul_flops_per_s * wave_efficiency * k_efficiency);
  const double bytes = r.activation_bytes * batch * (m * k + k * n + m * n);
  const double memory_s = bytes / r.memory_bytes_per_s;
  return std::max(compute_s, memory_s) + r.kernel_overhead_s;
}

double MemoryBoundSeconds(const DeviceRates& r, double bytes, double kernels) {
  return bytes / r.memory_bytes_per_s + kernels * r.kernel_overhead_s;
}

}  // namespace gpuplan

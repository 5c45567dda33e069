// Least-squares fits of the cost model's parameters to profile samples (Eigen): the alpha-beta
// model of each collective and group size, and the GEMM model of simulator/gemm_time.h.
#pragma once

#include <span>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware.h"
#include "profiler/profile.h"
#include "simulator/calibration.h"
#include "simulator/gemm_time.h"

namespace gpuplan {

/// Fits seconds = alpha + size * busfactor(n) / busbw (Hockney's alpha-beta model in nccl-tests'
/// terms) to samples of one collective and one group size, minimising the squared *relative*
/// error so that 8 B and 1 GiB messages weigh alike, with alpha >= 0 and busbw > 0 (when the
/// unconstrained alpha is negative the fit is redone with alpha = 0).
/// kInvalidInput when the samples mix collectives or group sizes or have fewer than two sizes.
Expected<CollectiveFit> FitCollective(std::span<const CollectiveSample> samples);

/// FitCollective for every (collective, group size) in `samples` with at least two sizes and
/// more than one rank, in the order of first appearance.
std::vector<CollectiveFit> FitCollectives(std::span<const CollectiveSample> samples);

/// The GEMM model of GemmSeconds fitted to one precision's samples.
struct GemmFit {
  Precision dtype = Precision::kBf16;
  double flops_per_s = 0;  ///< best rate R (no sustained-training fraction)
  double fill_depth = 0;   ///< k-fill per tile; 0 when the fit found none
  double overhead_s = 0;   ///< fixed seconds per call
  double rms_relative_error = 0;
  int samples = 0;                ///< compute-bound samples fitted
  int excluded_memory_bound = 0;  ///< samples left out: memory traffic explains >= half the time
};

/// Fits GemmSeconds' compute branch, seconds = (F / w) / R * (1 + fill / k) + overhead with F the
/// FLOPs and w the wave efficiency (GemmWaveEfficiency for `sm_count`), which is linear in
/// (1/R, fill/R, overhead): non-negative least squares on relative errors over the samples of
/// `dtype`. Samples whose operands alone need >= half the measured time at
/// `memory_bytes_per_s` (the roofline's memory side; 0 = unknown, keep all) are left out.
/// kInvalidInput with fewer than two compute-bound samples.
Expected<GemmFit> FitGemm(std::span<const GemmSample> samples, Precision dtype, int sm_count,
                          double memory_bytes_per_s);

/// DeviceRates that make GemmSeconds evaluate `fit` (for comparing model and samples).
DeviceRates GemmFitRates(const GemmFit& fit, int sm_count, double memory_bytes_per_s);

}  // namespace gpuplan

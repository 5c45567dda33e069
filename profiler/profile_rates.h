// From a profile's raw samples to the simulator's measured rates (simulator/calibration.h), with
// a line per figure saying whether it came from the profile or from the datasheet, and why.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "profiler/fit.h"
#include "profiler/profile.h"
#include "simulator/calibration.h"

namespace gpuplan {

/// A fitted GEMM rate above this fraction of the datasheet peak is not used (measurement noise
/// allows a few percent; more means a wrong gpu_id or a damaged profile).
inline constexpr double kMaxFittedPeakFraction = 1.05;

/// Where one figure of the cost model comes from.
struct FigureSource {
  std::string figure;  ///< "GEMM bf16", "attention", "memory bandwidth", "all_reduce x8", ...
  bool from_profile = false;
  std::string detail;  ///< the fitted value and its quality, or why the datasheet figure stays
};

/// A profile turned into rates for the cost model.
struct ProfileCalibration {
  MeasuredRates rates;
  std::vector<GemmFit> gemm_fits;
  std::vector<FigureSource> sources;
  std::vector<std::string> warnings;  ///< e.g. a fitted rate above the datasheet peak
};

/// What the fitted rates will predict, which decides the attention figure. A training stack of
/// frameworks.json (plan, simulate, the GUI) runs FlashAttention or cuDNN, whose rate on a GPU is
/// the datasheet's reference kernel times the stack's attention_kernels speed: the profile's
/// attention samples time gpuplan's own kernels/ (on an H200, 2026-11-30: forward 47, backward 66
/// TFLOP/s against cuDNN's 480 and 399 at 4k tokens) and are not taken. gpuplan's executor
/// (validate, calibrate) runs kernels/, so their rate is. The cpu device's stack is kernels/
/// itself: both take them.
enum class ProfileUse { kTrainingStacks, kGpuplanExecutor };

/// Fits `profile` (see docs/PROFILE.md, "How a profile changes the prediction"):
///  - GEMM per precision: FitGemm over the profile's samples; fill depth and kernel overhead from
///    the bf16 fit (else the first precision fitted);
///  - attention forward / backward: total useful FLOPs / total seconds of the attention_fwd /
///    attention_bwd samples in bf16 or fp16, for `use` kGpuplanExecutor or the cpu device;
///  - memory: the device-copy sample of the largest size;
///  - collectives: FitCollectives (groups of >= 2 ranks with >= 2 sizes).
/// kInvalidInput when the profile's gpu_id is empty or not in `db` (the message says which GPU
/// was measured and how to name it).
Expected<ProfileCalibration> CalibrateFromProfile(const Profile& profile, const HardwareDb& db,
                                                  const std::string& origin, ProfileUse use);

/// "Rates: ..." lines for reports, one per figure, saying profile or datasheet.
std::string FormatFigureSources(const ProfileCalibration& calibration);

}  // namespace gpuplan

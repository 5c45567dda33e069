// The measurement sweep of `gpuplan profile`: which GEMM shapes, kernels, copy sizes and
// collective sizes are timed, and the loop that times them through ProfileBackends.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "profiler/backends.h"
#include "profiler/profile.h"
#include "simulator/model.h"

namespace gpuplan {

/// What to measure. Empty lists take the defaults below.
struct ProfileOptions {
  bool quick = false;  ///< smaller grids and shorter timed loops (<= 3 minutes on one GPU)
  int device = 0;      ///< the GPU that runs GEMMs, kernels and copies
  std::vector<GemmShape> gemm_shapes;
  std::vector<Precision> precisions = {Precision::kBf16, Precision::kFp16, Precision::kFp8,
                                       Precision::kTf32};
  std::vector<KernelCase> kernel_cases;
  double collective_min_bytes = 8;                     ///< nccl-tests -b
  double collective_max_bytes = 1024.0 * 1024 * 1024;  ///< nccl-tests -e (1 GiB)
  double collective_step_factor = 2;                   ///< nccl-tests -f
  TimingPolicy timing;
  // Written into the profile as given.
  std::string tool;
  std::string host;
  std::string created_utc;
};

/// Defaults of ProfileOptions for `quick` (timing, collective step factor 4 when quick).
ProfileOptions DefaultProfileOptions(bool quick);

/// Square GEMMs (wave and k-depth coverage) plus the QKV, O, FC1 and FC2 projections of
/// transformers of hidden size 2048-8192 at 2k-8k tokens (fewer when quick).
std::vector<GemmShape> DefaultGemmShapes(bool quick);

/// The forward GEMMs of one transformer layer of `model` at tensor parallelism `tp`, for
/// `tokens` tokens per micro-batch (m = tokens; projections split as in Megatron: QKV and FC1
/// by output columns, O and FC2 by input rows), plus the LM head.
std::vector<GemmShape> ModelGemmShapes(const ModelSpec& model, int64_t tp, int64_t tokens);

/// Attention, norms, activations, cross-entropy and Adam at sizes of 7B-70B models.
std::vector<KernelCase> DefaultKernelCases(bool quick);

/// min, min*f, min*f^2, ... <= max (nccl-tests -b -e -f).
std::vector<double> CollectiveSizes(double min_bytes, double max_bytes, double factor);

/// 2, 4, 8, ... up to max_ranks, plus max_ranks itself; {1} on a one-GPU host.
std::vector<int> CollectiveGroupSizes(int max_ranks);

/// The hardware-db GPU a device is: SM count equal, memory within 10% (devices report usable
/// bytes, datasheets marketing GB), a model number shared by both names ("h100", "4090"), and
/// the most name tokens in common. "" when none matches or several tie.
std::string MatchGpuId(const GpuDeviceInfo& device, const HardwareDb& db);

/// Receives sweep progress (one call per measurement).
class ProfileProgress {
 public:
  virtual ~ProfileProgress() = default;
  virtual void Update(std::string_view phase, int64_t done, int64_t total) = 0;
};

/// Runs the sweep on `backends` (null members are skipped and noted in Profile::skipped).
/// A measurement that fails for a reason of that case (unsupported precision, out of memory) is
/// noted and skipped; kUnavailable only when the devices cannot be listed.
Expected<Profile> RunProfile(const ProfileOptions& options, ProfileBackends& backends,
                             const HardwareDb& db, ProfileProgress* progress);

}  // namespace gpuplan

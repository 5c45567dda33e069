// The profile: everything `gpuplan profile` measured on one machine, as raw samples plus the
// device description. Versioned JSON, specified in docs/PROFILE.md. Derived figures (TFLOP/s,
// GB/s, algbw, busbw) are written for readers but recomputed from the raw samples when read.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware.h"
#include "profiler/backends.h"
#include "profiler/gpu_probe.h"
#include "profiler/kernel_cases.h"
#include "simulator/collective.h"

namespace gpuplan {

/// The "format" string and the version this build reads and writes. A file with another major
/// version is rejected with a message naming both.
inline constexpr const char* kProfileFormat = "gpuplan-profile";
inline constexpr int kProfileVersion = 1;

/// One timed GEMM (mean seconds per call).
struct GemmSample {
  Precision dtype = Precision::kBf16;
  GemmShape shape;
  double seconds = 0;
  double Flops() const;  ///< 2*m*n*k*batch
};

/// One timed kernel of kernels/.
struct KernelSample {
  KernelCase kernel;
  double seconds = 0;
};

/// What a bandwidth sample measured. Order indexes the name table in profile.cpp.
enum class BandwidthKind { kDeviceCopy = 0, kHostToDevice, kDeviceToHost, kPeer };
std::string_view BandwidthKindName(BandwidthKind kind);

/// One timed copy of `bytes`. device copy counts bytes read + written (2 x bytes) per second.
struct BandwidthSample {
  BandwidthKind kind = BandwidthKind::kDeviceCopy;
  int from = 0;  ///< device index (host->device: the destination device)
  int to = 0;    ///< device index (peer copies); = from otherwise
  double bytes = 0;
  double seconds = 0;
  double BytesPerSecond() const;
};

/// One timed collective, nccl-tests style: `bytes` is nccl-tests' "size".
struct CollectiveSample {
  Collective kind = Collective::kAllReduce;
  int ranks = 0;
  double bytes = 0;
  double seconds = 0;
  double AlgBytesPerSecond() const { return bytes / seconds; }  ///< algbw
  double BusBytesPerSecond() const;                             ///< algbw x busfactor(ranks)
};

/// Corrections fitted from validation reports by `gpuplan calibrate` (MeasuredRates has the
/// meaning of the factors); absent from a fresh profile.
struct ProfileCorrections {
  double compute_time_factor = 1;
  double communication_time_factor = 1;
  std::vector<std::string> reports;  ///< the validation reports they were fitted to
  std::string created_utc;
  bool Any() const { return compute_time_factor != 1 || communication_time_factor != 1; }
};

/// A whole profile.
struct Profile {
  int version = kProfileVersion;
  std::string created_utc;  ///< ISO 8601, "2026-11-21T10:00:00Z"
  std::string tool;         ///< "gpuplan 0.1.0"
  std::string host;         ///< host name
  bool quick = false;       ///< measured with --quick (smaller grids, shorter loops)
  /// hardware-db GPU id the devices are (MatchGpuId), "" when none matched; `simulate --profile`
  /// applies the profile to jobs on this GPU type.
  std::string gpu_id;
  std::string source;  ///< who/what measured it: "gpuplan profile on <host>" or a citation
  SoftwareVersions versions;
  std::vector<GpuDeviceInfo> devices;
  std::vector<GpuLinkInfo> links;
  std::vector<GemmSample> gemm;
  std::vector<KernelSample> kernels;
  std::vector<BandwidthSample> bandwidth;
  std::vector<CollectiveSample> collectives;
  /// Parts not measured and why ("fp8 GEMM: compute capability 8.0 < 8.9").
  std::vector<std::string> skipped;
  ProfileCorrections corrections;
};

nlohmann::json ProfileToJson(const Profile& profile);
/// Parses and validates a profile; errors name `origin`, the section, the entry index and field.
Expected<Profile> ProfileFromJson(const nlohmann::json& json, const std::string& origin);
Expected<Profile> ReadProfile(const std::string& path);
/// Writes the profile atomically (nothing half-written on failure).
Status WriteProfile(const std::string& path, const Profile& profile);

}  // namespace gpuplan

// Finding the local GPUs. The real probe asks the CUDA runtime; tests use a fake.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace gpuplan {

/// What the CUDA runtime reports about one device.
struct GpuDeviceInfo {
  int index = 0;
  std::string name;
  std::string pci_bus_id;
  int sm_count = 0;
  int compute_capability_major = 0;
  int compute_capability_minor = 0;
  double memory_bytes = 0;
  double clock_hz = 0;  ///< SM clock
  double memory_clock_hz = 0;
  int memory_bus_width_bits = 0;
  double power_limit_watts = 0;  ///< NVML enforced power limit; 0 when NVML is absent
};

/// How two local GPUs reach each other (cudaDeviceCanAccessPeer, cudaDeviceGetP2PAttribute,
/// NVML). One entry per ordered pair (from != to).
struct GpuLinkInfo {
  int from = 0;
  int to = 0;
  bool peer_access = false;     ///< cudaDeviceCanAccessPeer
  int performance_rank = -1;    ///< cudaDevP2PAttrPerformanceRank (lower is better), -1 unknown
  bool native_atomics = false;  ///< cudaDevP2PAttrNativeAtomicSupported
  /// Active NVLinks over which `from` reaches `to` (NVML): links ending at `to`, plus, when both
  /// GPUs hang off an NVSwitch, all of `from`'s switch links; 0 none, -1 when NVML is absent.
  int nvlinks = -1;
};

/// Versions of the software the measurements ran on; "" when unknown.
struct SoftwareVersions {
  std::string cuda_runtime;  ///< "13.0"
  std::string cuda_driver;   ///< CUDA version the driver supports, "13.0"
  std::string driver;        ///< NVIDIA driver, "580.65.06" (NVML)
  std::string nccl;          ///< "2.27.7"
  std::string cublas;        ///< "13.0.0"
  /// The CPU backend's GEMM library and threads: "Eigen 3.4.0, 1 thread (built without OpenMP)".
  std::string cpu_gemm;
  /// The MPI library the CPU backend's collectives ran on: MPI_Get_library_version's first line.
  std::string mpi;
};

/// Side-effect boundary for GPU discovery.
class GpuProbe {
 public:
  virtual ~GpuProbe() = default;
  /// The devices present, or kUnavailable with the reason (no driver, no device, CPU-only build).
  virtual Expected<std::vector<GpuDeviceInfo>> ListDevices() = 0;
  /// "CUDA runtime 13.0, driver 13.0" or why that is unknown.
  virtual std::string VersionString() = 0;
  /// Every ordered pair of local GPUs; empty with one GPU.
  virtual Expected<std::vector<GpuLinkInfo>> ListLinks() = 0;
  /// Software versions (runtime, driver, NCCL, cuBLAS); fields the probe cannot learn stay "".
  virtual SoftwareVersions Versions() = 0;
};

/// The CUDA-runtime probe when built with CUDA; otherwise one that reports the build lacks it.
std::unique_ptr<GpuProbe> MakeSystemGpuProbe();

}  // namespace gpuplan

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
  double clock_hz = 0;           ///< SM clock
  double memory_clock_hz = 0;
  int memory_bus_width_bits = 0;
};

/// Side-effect boundary for GPU discovery.
class GpuProbe {
 public:
  virtual ~GpuProbe() = default;
  /// The devices present, or kUnavailable with the reason (no driver, no device, CPU-only build).
  virtual Expected<std::vector<GpuDeviceInfo>> ListDevices() = 0;
  /// "CUDA runtime 13.0, driver 13.0" or why that is unknown.
  virtual std::string VersionString() = 0;
};

/// The CUDA-runtime probe when built with CUDA; otherwise one that reports the build lacks it.
std::unique_ptr<GpuProbe> MakeSystemGpuProbe();

}  // namespace gpuplan

// NVML (the NVIDIA management library) loaded at run time with dlopen, so gpuplan needs neither
// nvml.h nor libnvidia-ml at build time; machines without the driver simply have no NVML.
#pragma once

#include <memory>
#include <string>

#include "common/status.h"

namespace gpuplan {

/// An initialised NVML session (nvmlInit_v2 .. nvmlShutdown). GPUs are named by PCI bus id as
/// cudaDeviceGetPCIBusId writes it ("0000:3B:00.0").
class Nvml {
 public:
  /// NVML from libnvidia-ml.so.1, or null when the library or one of its functions is missing
  /// or nvmlInit_v2 fails (normal on machines without an NVIDIA driver).
  static std::unique_ptr<Nvml> Load();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  /// The driver version, "580.65.06" (nvmlSystemGetDriverVersion).
  Expected<std::string> DriverVersion() const;
  /// The enforced power limit of the GPU at `pci_bus_id`, watts
  /// (nvmlDeviceGetEnforcedPowerLimit reports milliwatts).
  Expected<double> PowerLimitWatts(const std::string& pci_bus_id) const;
  /// How many active NVLinks of the GPU at `from_bus_id` end at the GPU at `to_bus_id`
  /// (nvmlDeviceGetNvLinkState, nvmlDeviceGetNvLinkRemotePciInfo_v2); 0 when none (links through
  /// an NVSwitch end at the switch, not at the peer GPU).
  Expected<int> NvLinksBetween(const std::string& from_bus_id, const std::string& to_bus_id) const;

 private:
  struct Api;
  explicit Nvml(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

}  // namespace gpuplan

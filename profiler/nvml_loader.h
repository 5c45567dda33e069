// NVML (the NVIDIA management library) loaded at run time with dlopen, so gpuplan needs neither
// nvml.h nor libnvidia-ml at build time; machines without the driver simply have no NVML.
#pragma once

#include <memory>
#include <string>
#include <vector>

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
  /// How many active NVLinks the GPU at `from_bus_id` reaches the GPU at `to_bus_id` over
  /// (nvmlDeviceGetNvLinkState, nvmlDeviceGetNvLinkRemotePciInfo_v2): its links that end at `to`
  /// directly, plus, when both GPUs have links ending at a device that is none of the local
  /// GPUs (`gpu_bus_ids`: an NVSwitch, as on HGX/DGX boards), all of `from`'s switch links.
  /// 0 when neither.
  Expected<int> NvLinksBetween(const std::string& from_bus_id, const std::string& to_bus_id,
                               const std::vector<std::string>& gpu_bus_ids) const;

 private:
  struct Api;
  explicit Nvml(std::unique_ptr<Api> api);
  std::unique_ptr<Api> api_;
};

}  // namespace gpuplan

#include "profiler/nvml_loader.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

namespace gpuplan {
namespace {

// The subset of nvml.h gpuplan uses, declared here so that no NVML header is needed. Types,
// constants and signatures from the NVML API reference
// (https://docs.nvidia.com/deploy/nvml-api/) and nvml.h of the CUDA 12/13 toolkits.
using nvmlReturn_t = int;                 // enum nvmlReturn_enum
constexpr nvmlReturn_t kNvmlSuccess = 0;  // NVML_SUCCESS
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlEnableState_t = int;                         // enum nvmlEnableState_enum
constexpr nvmlEnableState_t kNvmlFeatureEnabled = 1;   // NVML_FEATURE_ENABLED
constexpr unsigned kNvmlNvLinkMaxLinks = 18;           // NVML_NVLINK_MAX_LINKS
constexpr unsigned kNvmlDriverVersionBufferSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

// nvmlPciInfo_t as nvml.h declares it since the _v2/_v3 PCI queries.
struct nvmlPciInfo_t {
  char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
};
static_assert(sizeof(nvmlPciInfo_t) == 68, "nvmlPciInfo_t layout of nvml.h");

// A PCI address, compared without the function number (NVML reports GPUs as function 0).
struct PciAddress {
  unsigned domain = 0;
  unsigned bus = 0;
  unsigned device = 0;
  bool operator==(const PciAddress&) const = default;
};

// Parses "domain:bus:device.function" in hex as CUDA and NVML write it.
bool ParsePciBusId(const std::string& text, PciAddress* out) {
  unsigned function = 0;
  return std::sscanf(text.c_str(), "%x:%x:%x.%x", &out->domain, &out->bus, &out->device,
                     &function) == 4;
}

}  // namespace

// Entry points resolved from libnvidia-ml.so.1 (signatures from the NVML API reference).
struct Nvml::Api {
  void* library = nullptr;
  nvmlReturn_t (*init_v2)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*system_get_driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*device_get_handle_by_pci_bus_id_v2)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*device_get_enforced_power_limit)(nvmlDevice_t, unsigned*) = nullptr;
  nvmlReturn_t (*device_get_nvlink_state)(nvmlDevice_t, unsigned, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*device_get_nvlink_remote_pci_info_v2)(nvmlDevice_t, unsigned,
                                                       nvmlPciInfo_t*) = nullptr;

  // Ok, or kUnavailable naming the NVML call and its error string.
  Status Check(nvmlReturn_t result, const char* call) const {
    if (result == kNvmlSuccess) return Status::Ok();
    return Status::Unavailable(std::string("NVML ") + call + " failed: " + error_string(result));
  }

  Expected<nvmlDevice_t> Device(const std::string& pci_bus_id) const {
    nvmlDevice_t device = nullptr;
    GPUPLAN_RETURN_IF_ERROR(Check(device_get_handle_by_pci_bus_id_v2(pci_bus_id.c_str(), &device),
                                  "nvmlDeviceGetHandleByPciBusId_v2"));
    return device;
  }
};

namespace {

// Resolves `name` into `*fn`; false when the library lacks it.
template <typename Fn>
bool Resolve(void* library, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(library, name));
  return *fn != nullptr;
}

}  // namespace

std::unique_ptr<Nvml> Nvml::Load() {
  auto api = std::make_unique<Api>();
  api->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (api->library == nullptr) return nullptr;
  void* lib = api->library;
  const bool resolved =
      Resolve(lib, "nvmlInit_v2", &api->init_v2) && Resolve(lib, "nvmlShutdown", &api->shutdown) &&
      Resolve(lib, "nvmlErrorString", &api->error_string) &&
      Resolve(lib, "nvmlSystemGetDriverVersion", &api->system_get_driver_version) &&
      Resolve(lib, "nvmlDeviceGetHandleByPciBusId_v2", &api->device_get_handle_by_pci_bus_id_v2) &&
      Resolve(lib, "nvmlDeviceGetEnforcedPowerLimit", &api->device_get_enforced_power_limit) &&
      Resolve(lib, "nvmlDeviceGetNvLinkState", &api->device_get_nvlink_state) &&
      Resolve(lib, "nvmlDeviceGetNvLinkRemotePciInfo_v2",
              &api->device_get_nvlink_remote_pci_info_v2);
  if (!resolved || api->init_v2() != kNvmlSuccess) {
    dlclose(lib);
    return nullptr;
  }
  return std::unique_ptr<Nvml>(new Nvml(std::move(api)));
}

Nvml::Nvml(std::unique_ptr<Api> api) : api_(std::move(api)) {}

Nvml::~Nvml() {
  api_->shutdown();
  dlclose(api_->library);
}

Expected<std::string> Nvml::DriverVersion() const {
  char buffer[kNvmlDriverVersionBufferSize] = {};
  GPUPLAN_RETURN_IF_ERROR(api_->Check(api_->system_get_driver_version(buffer, sizeof(buffer)),
                                      "nvmlSystemGetDriverVersion"));
  return std::string(buffer);
}

Expected<double> Nvml::PowerLimitWatts(const std::string& pci_bus_id) const {
  Expected<nvmlDevice_t> device = api_->Device(pci_bus_id);
  if (!device.ok()) return device.status();
  unsigned milliwatts = 0;
  GPUPLAN_RETURN_IF_ERROR(api_->Check(api_->device_get_enforced_power_limit(*device, &milliwatts),
                                      "nvmlDeviceGetEnforcedPowerLimit"));
  return milliwatts * 1e-3;
}

Expected<int> Nvml::NvLinksBetween(const std::string& from_bus_id, const std::string& to_bus_id,
                                   const std::vector<std::string>& gpu_bus_ids) const {
  std::vector<PciAddress> gpus;
  for (const std::string& id : gpu_bus_ids) {
    PciAddress a;
    if (!ParsePciBusId(id, &a)) return Status::Invalid("not a PCI bus id: '" + id + "'");
    gpus.push_back(a);
  }
  PciAddress to;
  if (!ParsePciBusId(to_bus_id, &to)) {
    return Status::Invalid("not a PCI bus id: '" + to_bus_id + "'");
  }
  auto is_gpu = [&](const PciAddress& a) {
    return std::find(gpus.begin(), gpus.end(), a) != gpus.end();
  };
  // Where each active NVLink of the GPU at `bus_id` ends.
  auto link_ends = [this](const std::string& bus_id) -> Expected<std::vector<PciAddress>> {
    Expected<nvmlDevice_t> device = api_->Device(bus_id);
    if (!device.ok()) return device.status();
    std::vector<PciAddress> ends;
    for (unsigned link = 0; link < kNvmlNvLinkMaxLinks; ++link) {
      // Links the GPU lacks answer NVML_ERROR_NOT_SUPPORTED / INVALID_ARGUMENT: not active.
      nvmlEnableState_t active = 0;
      if (api_->device_get_nvlink_state(*device, link, &active) != kNvmlSuccess ||
          active != kNvmlFeatureEnabled) {
        continue;
      }
      nvmlPciInfo_t remote{};
      GPUPLAN_RETURN_IF_ERROR(
          api_->Check(api_->device_get_nvlink_remote_pci_info_v2(*device, link, &remote),
                      "nvmlDeviceGetNvLinkRemotePciInfo_v2"));
      ends.push_back({remote.domain, remote.bus, remote.device});
    }
    return ends;
  };
  Expected<std::vector<PciAddress>> from_ends = link_ends(from_bus_id);
  if (!from_ends.ok()) return from_ends.status();
  Expected<std::vector<PciAddress>> to_ends = link_ends(to_bus_id);
  if (!to_ends.ok()) return to_ends.status();
  const auto direct = std::count(from_ends->begin(), from_ends->end(), to);
  const auto from_switch = std::count_if(from_ends->begin(), from_ends->end(),
                                         [&](const PciAddress& a) { return !is_gpu(a); });
  const bool to_switch = std::any_of(to_ends->begin(), to_ends->end(),
                                     [&](const PciAddress& a) { return !is_gpu(a); });
  return static_cast<int>(direct + (to_switch ? from_switch : 0));
}

}  // namespace gpuplan

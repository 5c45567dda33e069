// GpuProbe over the CUDA runtime API, with NVML for what CUDA does not report (power limit,
// NVLink wiring, driver version); compiled only when the CUDA toolkit is found.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "profiler/cuda_check.h"
#include "profiler/gpu_probe.h"
#include "profiler/library_versions.h"
#include "profiler/nvml_loader.h"

namespace gpuplan {
namespace {

Status ReadDevice(int index, const Nvml* nvml, GpuDeviceInfo* out) {
  cudaDeviceProp prop{};
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&prop, index));
  int clock_khz = 0, mem_clock_khz = 0;
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, index));
  GPUPLAN_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, index));
  char bus_id[32] = {0};
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), index));
  out->index = index;
  out->name = prop.name;
  out->pci_bus_id = bus_id;
  out->sm_count = prop.multiProcessorCount;
  out->compute_capability_major = prop.major;
  out->compute_capability_minor = prop.minor;
  out->memory_bytes = static_cast<double>(prop.totalGlobalMem);
  out->clock_hz = clock_khz * 1e3;
  out->memory_clock_hz = mem_clock_khz * 1e3;
  out->memory_bus_width_bits = prop.memoryBusWidth;
  if (nvml != nullptr) {
    Expected<double> watts = nvml->PowerLimitWatts(out->pci_bus_id);
    if (watts.ok()) out->power_limit_watts = *watts;
  }
  return Status::Ok();
}

// cudaDeviceGetP2PAttribute, or `unknown` when the runtime cannot say.
int P2PAttribute(cudaDeviceP2PAttr attr, int from, int to, int unknown) {
  int value = 0;
  if (cudaDeviceGetP2PAttribute(&value, attr, from, to) != cudaSuccess) {
    cudaGetLastError();
    return unknown;
  }
  return value;
}

// PCI bus id of device `index`, as CUDA and NVML write it.
Expected<std::string> BusId(int index) {
  char bus[32] = {0};
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaDeviceGetPCIBusId(bus, sizeof(bus), index));
  return std::string(bus);
}

// `bus_ids`: every local GPU's PCI bus id, by device index.
Status ReadLink(int from, int to, const Nvml* nvml, const std::vector<std::string>& bus_ids,
                GpuLinkInfo* out) {
  out->from = from;
  out->to = to;
  int can_access = 0;
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaDeviceCanAccessPeer(&can_access, from, to));
  out->peer_access = can_access != 0;
  out->performance_rank = P2PAttribute(cudaDevP2PAttrPerformanceRank, from, to, -1);
  out->native_atomics = P2PAttribute(cudaDevP2PAttrNativeAtomicSupported, from, to, 0) != 0;
  if (nvml != nullptr) {
    Expected<int> links = nvml->NvLinksBetween(bus_ids[static_cast<size_t>(from)],
                                               bus_ids[static_cast<size_t>(to)], bus_ids);
    if (links.ok()) out->nvlinks = *links;
  }
  return Status::Ok();
}

class CudaGpuProbe : public GpuProbe {
 public:
  Expected<std::vector<GpuDeviceInfo>> ListDevices() override {
    Expected<int> count = DeviceCount();
    if (!count.ok()) return count.status();
    std::vector<GpuDeviceInfo> devices(static_cast<size_t>(*count));
    for (int i = 0; i < *count; ++i) {
      GPUPLAN_RETURN_IF_ERROR(ReadDevice(i, LoadedNvml(), &devices[static_cast<size_t>(i)]));
    }
    return devices;
  }

  std::string VersionString() override {
    const std::string runtime = CudaRuntimeVersion(), driver = CudaDriverVersion();
    return "CUDA runtime " + (runtime.empty() ? "unknown" : runtime) + ", driver " +
           (driver.empty() ? "unknown" : driver);
  }

  Expected<std::vector<GpuLinkInfo>> ListLinks() override {
    Expected<int> count = DeviceCount();
    if (!count.ok()) return count.status();
    std::vector<std::string> bus_ids;
    for (int i = 0; i < *count; ++i) {
      Expected<std::string> bus = BusId(i);
      if (!bus.ok()) return bus.status();
      bus_ids.push_back(*bus);
    }
    std::vector<GpuLinkInfo> links;
    for (int from = 0; from < *count; ++from) {
      for (int to = 0; to < *count; ++to) {
        if (from == to) continue;
        GPUPLAN_RETURN_IF_ERROR(ReadLink(from, to, LoadedNvml(), bus_ids, &links.emplace_back()));
      }
    }
    return links;
  }

  SoftwareVersions Versions() override {
    SoftwareVersions v;
    v.cuda_runtime = CudaRuntimeVersion();
    v.cuda_driver = CudaDriverVersion();
    if (const Nvml* nvml = LoadedNvml()) {
      Expected<std::string> driver = nvml->DriverVersion();
      if (driver.ok()) v.driver = *driver;
    }
    v.nccl = NcclVersion();
    v.cublas = CublasLtVersion();
    return v;
  }

 private:
  static Expected<int> DeviceCount() {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
        (err == cudaSuccess && count == 0)) {
      return Status::Unavailable(std::string("no CUDA GPU found (") + cudaGetErrorString(err) +
                                 ")");
    }
    GPUPLAN_RETURN_IF_ERROR(CudaStatus(err, "cudaGetDeviceCount", __FILE__, __LINE__));
    return count;
  }

  // NVML, loaded on first use; null when the machine has none.
  const Nvml* LoadedNvml() {
    if (!nvml_tried_) {
      nvml_ = Nvml::Load();
      nvml_tried_ = true;
    }
    return nvml_.get();
  }

  bool nvml_tried_ = false;
  std::unique_ptr<Nvml> nvml_;
};

}  // namespace

std::unique_ptr<GpuProbe> MakeSystemGpuProbe() { return std::make_unique<CudaGpuProbe>(); }

}  // namespace gpuplan

// GpuProbe over the CUDA runtime API (compiled only when the CUDA toolkit is found).
#include <cstdio>

#include <cuda_runtime_api.h>

#include "profiler/cuda_check.h"
#include "profiler/gpu_probe.h"

namespace gpuplan {
namespace {

Status ReadDevice(int index, GpuDeviceInfo* out) {
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
  return Status::Ok();
}

class CudaGpuProbe : public GpuProbe {
 public:
  Expected<std::vector<GpuDeviceInfo>> ListDevices() override {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver ||
        (err == cudaSuccess && count == 0)) {
      return Status::Unavailable(std::string("no CUDA GPU found (") + cudaGetErrorString(err) +
                                 ")");
    }
    GPUPLAN_RETURN_IF_ERROR(CudaStatus(err, "cudaGetDeviceCount", __FILE__, __LINE__));
    std::vector<GpuDeviceInfo> devices(static_cast<size_t>(count));
    for (int i = 0; i < count; ++i) {
      GPUPLAN_RETURN_IF_ERROR(ReadDevice(i, &devices[static_cast<size_t>(i)]));
    }
    return devices;
  }

  std::string VersionString() override {
    int runtime = 0, driver = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&driver);
    char buf[96];
    std::snprintf(buf, sizeof(buf), "CUDA runtime %d.%d, driver %d.%d", runtime / 1000,
                  (runtime % 1000) / 10, driver / 1000, (driver % 1000) / 10);
    return buf;
  }
};

}  // namespace

std::unique_ptr<GpuProbe> MakeSystemGpuProbe() { return std::make_unique<CudaGpuProbe>(); }

}  // namespace gpuplan

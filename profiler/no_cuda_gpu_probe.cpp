// GpuProbe of a build without the CUDA toolkit: it can only say so.
#include "profiler/gpu_probe.h"

namespace gpuplan {
namespace {

class NoCudaGpuProbe : public GpuProbe {
 public:
  Expected<std::vector<GpuDeviceInfo>> ListDevices() override {
    return Status::Unavailable(
        "this gpuplan was built without CUDA (GPUPLAN_CUDA=OFF or no toolkit found); "
        "rebuild with the CUDA toolkit to profile GPUs");
  }
  std::string VersionString() override { return "CUDA not built in"; }
};

}  // namespace

std::unique_ptr<GpuProbe> MakeSystemGpuProbe() { return std::make_unique<NoCudaGpuProbe>(); }

}  // namespace gpuplan

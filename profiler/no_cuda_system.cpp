// The machine backends of a build without the CUDA toolkit: they can only say so.
#include "profiler/backends.h"
#include "profiler/gpu_probe.h"

namespace gpuplan {
namespace {

constexpr const char* kNoCuda =
    "this gpuplan was built without CUDA (GPUPLAN_CUDA=OFF or no toolkit found); rebuild with "
    "the CUDA toolkit at /usr/local/cuda to use GPUs";

class NoCudaGpuProbe : public GpuProbe {
 public:
  Expected<std::vector<GpuDeviceInfo>> ListDevices() override {
    return Status::Unavailable(kNoCuda);
  }
  std::string VersionString() override { return "CUDA not built in"; }
  Expected<std::vector<GpuLinkInfo>> ListLinks() override { return Status::Unavailable(kNoCuda); }
  SoftwareVersions Versions() override { return {}; }
};

}  // namespace

std::unique_ptr<GpuProbe> MakeSystemGpuProbe() { return std::make_unique<NoCudaGpuProbe>(); }

Expected<ProfileBackends> MakeSystemBackends(int) { return Status::Unavailable(kNoCuda); }

}  // namespace gpuplan

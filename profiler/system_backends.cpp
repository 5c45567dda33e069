// The machine backends of a CUDA build: CUDA runtime + NVML probe, cuBLASLt GEMMs, the kernels/
// runner, copy bandwidths and NCCL collectives.
#include <cuda_runtime_api.h>

#include <string>
#include <utility>

#include "profiler/backends.h"
#include "profiler/bandwidth_runner.h"
#include "profiler/cublaslt_gemm_runner.h"
#include "profiler/cuda_check.h"
#include "profiler/cuda_kernel_runner.h"
#include "profiler/nccl_collective_runner.h"

namespace gpuplan {

Expected<ProfileBackends> MakeSystemBackends(int device) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    return Status::Unavailable(
        std::string("no CUDA GPU found: ") +
        (err != cudaSuccess ? cudaGetErrorString(err) : "the CUDA runtime reports 0 devices"));
  }
  if (device < 0 || device >= count) {
    return Status::Invalid("GPU " + std::to_string(device) + " does not exist: this machine has " +
                           std::to_string(count) + " (0 to " + std::to_string(count - 1) + ")");
  }
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  ProfileBackends backends;
  backends.probe = MakeSystemGpuProbe();
  Expected<std::unique_ptr<GemmRunner>> gemm = MakeCublasLtGemmRunner(device);
  if (!gemm.ok()) return gemm.status().WithPrefix("cuBLASLt GEMM runner");
  backends.gemm = std::move(*gemm);
  Expected<std::unique_ptr<KernelRunner>> kernels = MakeCudaKernelRunner(device);
  if (!kernels.ok()) return kernels.status().WithPrefix("CUDA kernel runner");
  backends.kernels = std::move(*kernels);
  backends.bandwidth = MakeCudaBandwidthRunner();
  Expected<std::unique_ptr<CollectiveRunner>> collectives = MakeNcclCollectiveRunner();
  if (!collectives.ok()) return collectives.status().WithPrefix("NCCL runner");
  backends.collectives = std::move(*collectives);
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
  return backends;
}

}  // namespace gpuplan

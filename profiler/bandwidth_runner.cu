#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "profiler/bandwidth_runner.h"
#include "profiler/cuda_check.h"
#include "profiler/cuda_resources.h"
#include "profiler/cuda_timing.h"

namespace gpuplan {
namespace {

// STREAM-style copy: 16-byte vectors over the aligned bulk (cudaMalloc returns 256-byte aligned
// pointers), then single bytes for the tail, grid-stride so any grid covers any size.
__global__ void CopyKernel(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                           size_t bytes) {
  const size_t vectors = bytes / sizeof(uint4);
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t first = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const auto* src4 = reinterpret_cast<const uint4*>(src);
  auto* dst4 = reinterpret_cast<uint4*>(dst);
  for (size_t i = first; i < vectors; i += stride) dst4[i] = src4[i];
  for (size_t i = vectors * sizeof(uint4) + first; i < bytes; i += stride) dst[i] = src[i];
}

constexpr unsigned kCopyThreads = 256;
// Resident 256-thread blocks per SM for full occupancy on sm_80/sm_90 (2048 threads per SM,
// CUDA C++ Programming Guide, compute capability table).
constexpr int kCopyBlocksPerSm = 8;

// `bytes` as a whole positive byte count, or kInvalidInput.
Expected<size_t> ByteCount(double bytes) {
  if (!std::isfinite(bytes) || bytes < 1) {
    return Status::Invalid("copy size must be at least 1 byte, got " + std::to_string(bytes));
  }
  return static_cast<size_t>(bytes);
}

// Enables access from `from` to `to`'s memory; already enabled is fine.
Status EnablePeerAccess(int from, int to) {
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(from));
  const cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
  if (err == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // not an error here; clear it
    return Status::Ok();
  }
  return CudaStatus(err, "cudaDeviceEnablePeerAccess", __FILE__, __LINE__);
}

class CudaBandwidthRunner : public BandwidthRunner {
 public:
  Expected<double> DeviceCopySeconds(int device, double bytes,
                                     const TimingPolicy& timing) override {
    Expected<size_t> n = ByteCount(bytes);
    if (!n.ok()) return n.status();
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    int sms = 0;
    GPUPLAN_CUDA_RETURN_IF_ERROR(
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    Expected<DeviceMemory> src = AllocateDevice(*n, "device copy source");
    if (!src.ok()) return src.status();
    Expected<DeviceMemory> dst = AllocateDevice(*n, "device copy destination");
    if (!dst.ok()) return dst.status();
    Expected<CudaStream> stream = CreateStream();
    if (!stream.ok()) return stream.status();
    const size_t needed = (*n / sizeof(uint4) + kCopyThreads - 1) / kCopyThreads;
    const auto blocks = static_cast<unsigned>(
        std::clamp<size_t>(needed, 1, static_cast<size_t>(sms) * kCopyBlocksPerSm));
    const auto* from = static_cast<const unsigned char*>(src->get());
    auto* to = static_cast<unsigned char*>(dst->get());
    return TimeOnStream(stream->get(), timing, [&]() {
      CopyKernel<<<blocks, kCopyThreads, 0, stream->get()>>>(from, to, *n);
      return CudaStatus(cudaGetLastError(), "CopyKernel launch", __FILE__, __LINE__);
    });
  }

  Expected<double> HostToDeviceSeconds(int device, double bytes,
                                       const TimingPolicy& timing) override {
    return HostCopySeconds(device, bytes, cudaMemcpyHostToDevice, timing);
  }

  Expected<double> DeviceToHostSeconds(int device, double bytes,
                                       const TimingPolicy& timing) override {
    return HostCopySeconds(device, bytes, cudaMemcpyDeviceToHost, timing);
  }

  Expected<double> PeerCopySeconds(int src, int dst, double bytes,
                                   const TimingPolicy& timing) override {
    Expected<size_t> n = ByteCount(bytes);
    if (!n.ok()) return n.status();
    if (src == dst)
      return Status::Invalid("peer copy needs two devices, got " + std::to_string(src) + " twice");
    int src_to_dst = 0, dst_to_src = 0;
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaDeviceCanAccessPeer(&src_to_dst, src, dst));
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaDeviceCanAccessPeer(&dst_to_src, dst, src));
    if (src_to_dst == 0) {
      return Status::Unavailable("GPU " + std::to_string(src) + " has no peer access to GPU " +
                                 std::to_string(dst));
    }
    // Both directions where possible, as the CUDA p2pBandwidthLatencyTest sample does.
    GPUPLAN_RETURN_IF_ERROR(EnablePeerAccess(src, dst));
    if (dst_to_src != 0) GPUPLAN_RETURN_IF_ERROR(EnablePeerAccess(dst, src));
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(dst));
    Expected<DeviceMemory> to = AllocateDevice(*n, "peer copy destination");
    if (!to.ok()) return to.status();
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(src));
    Expected<DeviceMemory> from = AllocateDevice(*n, "peer copy source");
    if (!from.ok()) return from.status();
    Expected<CudaStream> stream = CreateStream();
    if (!stream.ok()) return stream.status();
    return TimeOnStream(stream->get(), timing, [&]() {
      return CudaStatus(cudaMemcpyPeerAsync(to->get(), dst, from->get(), src, *n, stream->get()),
                        "cudaMemcpyPeerAsync", __FILE__, __LINE__);
    });
  }

 private:
  // Pinned host <-> device copies of `bytes`, direction `kind`.
  static Expected<double> HostCopySeconds(int device, double bytes, cudaMemcpyKind kind,
                                          const TimingPolicy& timing) {
    Expected<size_t> n = ByteCount(bytes);
    if (!n.ok()) return n.status();
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(device));
    Expected<PinnedMemory> host = AllocatePinned(*n, "host copy buffer");
    if (!host.ok()) return host.status();
    Expected<DeviceMemory> dev = AllocateDevice(*n, "host copy buffer");
    if (!dev.ok()) return dev.status();
    Expected<CudaStream> stream = CreateStream();
    if (!stream.ok()) return stream.status();
    const bool to_device = kind == cudaMemcpyHostToDevice;
    void* dst = to_device ? dev->get() : host->get();
    const void* src = to_device ? host->get() : dev->get();
    return TimeOnStream(stream->get(), timing, [&]() {
      return CudaStatus(cudaMemcpyAsync(dst, src, *n, kind, stream->get()), "cudaMemcpyAsync",
                        __FILE__, __LINE__);
    });
  }
};

}  // namespace

std::unique_ptr<BandwidthRunner> MakeCudaBandwidthRunner() {
  return std::make_unique<CudaBandwidthRunner>();
}

}  // namespace gpuplan

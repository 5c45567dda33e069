// RAII owners of CUDA runtime resources (device and pinned memory, streams, events, the current
// device), so that every error path frees what it allocated.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"
#include "profiler/cuda_check.h"

namespace gpuplan {

struct CudaFreeDeleter {
  void operator()(void* p) const { cudaFree(p); }
};
struct CudaFreeHostDeleter {
  void operator()(void* p) const { cudaFreeHost(p); }
};
struct CudaStreamDeleter {
  void operator()(cudaStream_t s) const { cudaStreamDestroy(s); }
};
struct CudaEventDeleter {
  void operator()(cudaEvent_t e) const { cudaEventDestroy(e); }
};

/// cudaMalloc memory; freed with cudaFree, which finds the owning device by unified addressing.
using DeviceMemory = std::unique_ptr<void, CudaFreeDeleter>;
/// cudaMallocHost (page-locked) host memory.
using PinnedMemory = std::unique_ptr<void, CudaFreeHostDeleter>;
/// A stream of the device that was current when it was created.
using CudaStream = std::unique_ptr<CUstream_st, CudaStreamDeleter>;
/// A timing event of the device that was current when it was created.
using CudaEvent = std::unique_ptr<CUevent_st, CudaEventDeleter>;

/// `bytes` of memory on the current device, or kUnavailable naming `what` and the bytes (the
/// allocation error is cleared so that a later cudaGetLastError does not report it again).
inline Expected<DeviceMemory> AllocateDevice(size_t bytes, std::string_view what) {
  void* p = nullptr;
  const cudaError_t err = cudaMalloc(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return Status::Unavailable("cannot allocate " + std::to_string(bytes) +
                               " bytes of device memory for " + std::string(what) + ": " +
                               cudaGetErrorString(err));
  }
  return DeviceMemory(p);
}

/// `bytes` of page-locked host memory, or kUnavailable naming `what` and the bytes.
inline Expected<PinnedMemory> AllocatePinned(size_t bytes, std::string_view what) {
  void* p = nullptr;
  const cudaError_t err = cudaMallocHost(&p, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return Status::Unavailable("cannot allocate " + std::to_string(bytes) +
                               " bytes of pinned host memory for " + std::string(what) + ": " +
                               cudaGetErrorString(err));
  }
  return PinnedMemory(p);
}

/// A non-blocking stream (no implicit synchronisation with the legacy default stream) on the
/// current device.
inline Expected<CudaStream> CreateStream() {
  cudaStream_t s = nullptr;
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return CudaStream(s);
}

/// A timing event on the current device.
inline Expected<CudaEvent> CreateEvent() {
  cudaEvent_t e = nullptr;
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaEventCreate(&e));
  return CudaEvent(e);
}

/// Restores the calling thread's current device when the scope ends.
class DeviceGuard {
 public:
  DeviceGuard() { cudaGetDevice(&device_); }
  ~DeviceGuard() { cudaSetDevice(device_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int device_ = 0;
};

}  // namespace gpuplan

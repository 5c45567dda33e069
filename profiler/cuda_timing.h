// The one timing loop of every CUDA measurement: warm up, then repeat a launch until the timed
// loop is long enough (TimingPolicy), timed with CUDA events on one stream, or on one stream per
// device for operations that span several GPUs (NCCL collectives).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>
#include <span>

#include "common/status.h"
#include "profiler/backends.h"

namespace gpuplan {

/// A stream to time and the device it belongs to.
struct DeviceStream {
  int device = 0;
  cudaStream_t stream = nullptr;
};

/// Mean seconds of one `launch` on `stream` of the current device. `launch` enqueues exactly one
/// operation on `stream` and returns its launch status. Runs timing.warmup_iterations untimed
/// launches, then a probe batch to estimate the duration, then one timed batch of
/// clamp(min_seconds / estimate, min_iterations, max_iterations) launches between two events.
Expected<double> TimeOnStream(cudaStream_t stream, const TimingPolicy& timing,
                              const std::function<Status()>& launch);

/// TimeOnStream for an operation spanning several devices: `launch` enqueues one operation on
/// every stream of `streams` (e.g. one NCCL group). Each batch is bracketed by an event pair on
/// every stream and takes the longest of the per-device elapsed times, as nccl-tests reports
/// the slowest rank. The calling thread's current device is restored on return.
Expected<double> TimeOnStreams(std::span<const DeviceStream> streams, const TimingPolicy& timing,
                               const std::function<Status()>& launch);

}  // namespace gpuplan

#include "profiler/cuda_timing.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "profiler/cuda_check.h"
#include "profiler/cuda_resources.h"

namespace gpuplan {
namespace {

// The events bracketing one batch on one stream.
struct EventPair {
  CudaEvent start;
  CudaEvent stop;
};

// Seconds of `iterations` back-to-back launches: the longest of the per-stream times between
// an event recorded before the first launch and one recorded after the last.
Expected<double> TimeBatch(std::span<const DeviceStream> streams, int iterations,
                           const std::function<Status()>& launch) {
  std::vector<EventPair> events;
  events.reserve(streams.size());
  for (const DeviceStream& s : streams) {
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(s.device));  // events belong to s.device
    Expected<CudaEvent> start = CreateEvent();
    if (!start.ok()) return start.status();
    Expected<CudaEvent> stop = CreateEvent();
    if (!stop.ok()) return stop.status();
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaEventRecord(start->get(), s.stream));
    events.push_back({std::move(*start), std::move(*stop)});
  }
  for (int i = 0; i < iterations; ++i) GPUPLAN_RETURN_IF_ERROR(launch());
  for (size_t i = 0; i < streams.size(); ++i) {
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(streams[i].device));
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaEventRecord(events[i].stop.get(), streams[i].stream));
  }
  float longest_ms = 0;
  for (size_t i = 0; i < streams.size(); ++i) {
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaSetDevice(streams[i].device));
    GPUPLAN_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(events[i].stop.get()));
    float ms = 0;
    GPUPLAN_CUDA_RETURN_IF_ERROR(
        cudaEventElapsedTime(&ms, events[i].start.get(), events[i].stop.get()));
    longest_ms = std::max(longest_ms, ms);
  }
  return static_cast<double>(longest_ms) * 1e-3;
}

}  // namespace

Expected<double> TimeOnStream(cudaStream_t stream, const TimingPolicy& timing,
                              const std::function<Status()>& launch) {
  DeviceStream s;
  s.stream = stream;
  GPUPLAN_CUDA_RETURN_IF_ERROR(cudaGetDevice(&s.device));
  return TimeOnStreams(std::span<const DeviceStream>(&s, 1), timing, launch);
}

Expected<double> TimeOnStreams(std::span<const DeviceStream> streams, const TimingPolicy& timing,
                               const std::function<Status()>& launch) {
  if (streams.empty()) return Status::Internal("TimeOnStreams: no stream to time");
  const DeviceGuard restore_device;
  for (int i = 0; i < timing.warmup_iterations; ++i) GPUPLAN_RETURN_IF_ERROR(launch());
  const int probe_iterations = std::max(1, timing.min_iterations);
  Expected<double> probe = TimeBatch(streams, probe_iterations, launch);
  if (!probe.ok()) return probe.status();
  const double estimate = std::max(*probe / probe_iterations, 1e-9);
  const double wanted = std::ceil(timing.min_seconds / estimate);
  const int most = std::max(probe_iterations, timing.max_iterations);
  const int iterations = static_cast<int>(
      std::clamp(wanted, static_cast<double>(probe_iterations), static_cast<double>(most)));
  if (iterations == probe_iterations) return *probe / probe_iterations;
  Expected<double> total = TimeBatch(streams, iterations, launch);
  if (!total.ok()) return total.status();
  return *total / iterations;
}

}  // namespace gpuplan

// The measurements the profiler needs from a machine, each behind a small interface so the sweep
// (sweep.h) runs the same against the real CUDA/cuBLASLt/NCCL backends and against fakes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware.h"
#include "profiler/gpu_probe.h"
#include "profiler/kernel_cases.h"
#include "simulator/collective.h"

namespace gpuplan {

/// How long each timed loop should run: a runner warms up `warmup_iterations` times, then
/// repeats the operation until the timed loop covers at least `min_seconds` (and at least
/// `min_iterations`, at most `max_iterations` times) and reports the mean seconds per iteration.
struct TimingPolicy {
  int warmup_iterations = 2;
  int min_iterations = 3;
  int max_iterations = 1000;
  double min_seconds = 0.02;
};

/// One (batched) GEMM C[m x n] = A[m x k] * B[k x n], `batch` times, column-major as cuBLAS.
struct GemmShape {
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  int64_t batch = 1;
};

/// Dense matrix multiply throughput (cuBLASLt on a GPU).
class GemmRunner {
 public:
  virtual ~GemmRunner() = default;
  /// Whether the device and library can run GEMMs in `p` (fp8 needs compute capability >= 8.9).
  virtual bool Supports(Precision p) const = 0;
  /// Mean seconds of one GEMM of `shape` in `p` (inputs and output in `p`, fp32 accumulation;
  /// fp8 writes bf16 output) on `device`, or why it could not run (unsupported, out of memory).
  virtual Expected<double> Seconds(Precision p, const GemmShape& shape,
                                   const TimingPolicy& timing) = 0;
};

/// The transformer kernels of kernels/ (attention, norms, activations, cross-entropy, Adam).
class KernelRunner {
 public:
  virtual ~KernelRunner() = default;
  /// Mean seconds of one launch of `c`, or why it could not run.
  virtual Expected<double> Seconds(const KernelCase& c, const TimingPolicy& timing) = 0;
};

/// Copy bandwidths. `bytes` is the size of one copy; results are mean seconds per copy.
class BandwidthRunner {
 public:
  virtual ~BandwidthRunner() = default;
  /// Device memory: a kernel reading `bytes` and writing `bytes` (STREAM copy; 2 x bytes moved).
  virtual Expected<double> DeviceCopySeconds(int device, double bytes,
                                             const TimingPolicy& timing) = 0;
  /// Pinned host memory -> device (cudaMemcpyAsync).
  virtual Expected<double> HostToDeviceSeconds(int device, double bytes,
                                               const TimingPolicy& timing) = 0;
  /// Device -> pinned host memory.
  virtual Expected<double> DeviceToHostSeconds(int device, double bytes,
                                               const TimingPolicy& timing) = 0;
  /// `src` -> `dst` with peer access enabled (cudaMemcpyPeerAsync); kUnavailable when the pair
  /// has no peer access.
  virtual Expected<double> PeerCopySeconds(int src, int dst, double bytes,
                                           const TimingPolicy& timing) = 0;
};

/// Collectives over the first `ranks` ranks: NCCL over the local GPUs (one communicator per group
/// size), or MPI over the CPU backend's ranks of one host (validator/mpi_collective_runner.h).
class CollectiveRunner {
 public:
  virtual ~CollectiveRunner() = default;
  /// Ranks the runner can use (NCCL: the local device count; MPI: the launch's ranks).
  virtual int MaxRanks() const = 0;
  /// "2.27.7", or "" when unknown.
  virtual std::string Version() const = 0;
  /// Bytes of one element: every size is a whole number of elements per rank (the sweep rounds
  /// down, see sweep.h). NCCL: 2 (bf16); the CPU backend's MPI ranks exchange 64-bit integers: 8.
  virtual double ElementBytes() const = 0;
  /// Whether the runner times `c` at all (the CPU backend's ranks run no broadcast).
  virtual bool Runs(Collective c) const = 0;
  /// Mean seconds of one out-of-place collective of nccl-tests "size" `bytes` (all_reduce: the
  /// buffer; all_gather: the gathered output; reduce_scatter: the input; alltoall: the per-rank
  /// total; broadcast and sendrecv: the buffer) over `ranks` ranks, the slowest rank's time as
  /// nccl-tests reports it.
  virtual Expected<double> Seconds(Collective c, int ranks, double bytes,
                                   const TimingPolicy& timing) = 0;
};

/// Everything a profile run measures with. Any member may be null: that part is skipped and the
/// profile says so.
struct ProfileBackends {
  std::unique_ptr<GpuProbe> probe;
  std::unique_ptr<GemmRunner> gemm;
  std::unique_ptr<KernelRunner> kernels;
  std::unique_ptr<BandwidthRunner> bandwidth;
  std::unique_ptr<CollectiveRunner> collectives;
  /// Why `collectives` is null, for the profile's skipped list ("" = no NCCL backend).
  std::string no_collectives_reason;
};

/// The real backends on `device` (CUDA, cuBLASLt, NCCL, NVML), or kUnavailable with the reason
/// (a build without CUDA, no driver, no GPU). Defined in the CUDA or the no-CUDA system file.
Expected<ProfileBackends> MakeSystemBackends(int device);

}  // namespace gpuplan

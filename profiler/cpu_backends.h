// The profiler's CPU backend (issue 19): this host measured the way the validator's CPU ranks
// compute, one thread per rank and float32, so that a plan on the `cpu` device
// (hardware-db/data/gpus.json) is predicted from what its ranks will execute. GEMMs run through
// Eigen (built without OpenMP: one thread), the transformer kernels are the reference
// implementations of kernels/ in float32 (as the executor runs them), copies are memcpy.
// Collectives are not measured here: they need the MPI ranks of a launch, which `gpuplan profile
// --backend cpu --ranks N` starts (validator/mpi_collective_runner.h; docs/PROFILE.md).
#pragma once

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "profiler/backends.h"
#include "profiler/sweep.h"

namespace gpuplan {

/// The hardware-db id a CPU profile calibrates.
inline constexpr const char* kCpuDeviceId = "cpu";

/// Why MakeCpuBackends has no collectives (ProfileBackends::no_collectives_reason).
inline constexpr const char* kCpuCollectivesNeedALaunch =
    "the CPU backend's collectives run over MPI between the ranks of a launch, which one "
    "profile process does not have (--ranks N, N >= 2, measures those of an N-rank launch)";
/// Largest `gpuplan profile --backend cpu --ranks` (the measured rank and its busy neighbours).
inline constexpr int kMaxCpuProfileRanks = 1024;

/// Probe (this host's CPU as one rank's device), Eigen GEMMs (fp32 only), the reference kernels
/// and memcpy; no collectives (the sweep notes why).
ProfileBackends MakeCpuBackends();

/// What `gpuplan profile --backend cpu` measures: fp32 GEMMs from 64 to 1024 (the shapes of the
/// small plans the CPU backend runs), kernels at sizes one core times in well under a second,
/// shorter timed loops when `quick`.
ProfileOptions CpuProfileOptions(bool quick);

/// Keeps `threads` more threads of this host busy with fp32 Eigen GEMMs (512^3, one thread
/// each) from construction to destruction, so that a CPU profile measures one rank as it runs
/// beside the other ranks of a launch: sharing the host's caches, memory bandwidth and, on SMT
/// or oversubscribed hosts, its cores (`gpuplan profile --backend cpu --ranks N` keeps N - 1 busy).
/// `threads` >= 0.
class CpuNeighbourLoad {
 public:
  explicit CpuNeighbourLoad(int threads);
  ~CpuNeighbourLoad();
  CpuNeighbourLoad(const CpuNeighbourLoad&) = delete;
  CpuNeighbourLoad& operator=(const CpuNeighbourLoad&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

/// "Eigen 3.4.0, 1 thread (built without OpenMP)": the GEMM library as the profile states it.
std::string CpuGemmLibrary();

}  // namespace gpuplan

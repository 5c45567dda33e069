// The profiler's CPU backend (issue 19): this host measured the way the validator's CPU ranks
// compute, one thread per rank and float32, so that a plan on the `cpu` device
// (hardware-db/data/gpus.json) is predicted from what its ranks will execute. GEMMs run through
// Eigen (built without OpenMP: one thread), the transformer kernels are the reference
// implementations of kernels/ in float32 (as the executor runs them), copies are memcpy.
// Collectives are not measured here: they need the MPI ranks of a launch (docs/PROFILE.md).
#pragma once

#include <string>
#include <vector>

#include "profiler/backends.h"
#include "profiler/sweep.h"

namespace gpuplan {

/// The hardware-db id a CPU profile calibrates.
inline constexpr const char* kCpuDeviceId = "cpu";

/// Probe (this host's CPU as one rank's device), Eigen GEMMs (fp32 only), the reference kernels
/// and memcpy; no collectives (the sweep notes why).
ProfileBackends MakeCpuBackends();

/// What `gpuplan profile --backend cpu` measures: fp32 GEMMs from 64 to 1024 (the shapes of the
/// small plans the CPU backend runs), kernels at sizes one core times in well under a second,
/// shorter timed loops when `quick`.
ProfileOptions CpuProfileOptions(bool quick);

/// "Eigen 3.4.0, 1 thread (built without OpenMP)": the GEMM library as the profile states it.
std::string CpuGemmLibrary();

}  // namespace gpuplan

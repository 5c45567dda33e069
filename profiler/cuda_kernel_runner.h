// KernelRunner over the CUDA kernels of kernels/ (built only with the CUDA toolkit).
#pragma once

#include <memory>

#include "common/status.h"
#include "profiler/backends.h"

namespace gpuplan {

/// A runner that allocates inputs for each KernelCase on `device`, fills them with random values
/// and times one launch with TimeOnStream. kUnavailable when the device cannot be used.
Expected<std::unique_ptr<KernelRunner>> MakeCudaKernelRunner(int device);

}  // namespace gpuplan

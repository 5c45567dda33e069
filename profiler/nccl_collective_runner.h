// CollectiveRunner over NCCL, one process driving all local GPUs (built only with CUDA).
#pragma once

#include <memory>

#include "common/status.h"
#include "profiler/backends.h"

namespace gpuplan {

/// A runner that times NCCL collectives as nccl-tests does with `-g ranks`: one thread, the
/// first `ranks` local GPUs, one communicator per rank from ncclCommInitAll (kept per group
/// size for the runner's lifetime), one stream per GPU, every rank's call inside one
/// ncclGroupStart/End. bf16 elements, out-of-place buffers. kUnavailable without a GPU.
Expected<std::unique_ptr<CollectiveRunner>> MakeNcclCollectiveRunner();

}  // namespace gpuplan

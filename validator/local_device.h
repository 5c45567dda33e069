// Which CUDA device a rank of the GPU backend uses, from what the ranks on its node see: a pure
// rule, so that it is tested without GPUs (LocalDevice in validator/nccl_transport.h gathers its
// inputs).
#pragma once

#include <span>
#include <string>

#include "common/status.h"

namespace gpuplan {

/// The device of the rank at `local_rank` of the `local_size` ranks on its node, each of which
/// sees `visible_gpus` CUDA devices (this rank's count) and names its first one by PCI bus id in
/// `first_gpu_bus_ids` (one per local rank, in local-rank order):
/// - every rank sees the same GPUs (mpirun; srun without GPU binding): its place on the node,
///   `local_rank`, when there are as many GPUs as ranks;
/// - each rank was given GPUs of its own (Slurm's --gpus-per-task or --gpu-bind, a
///   CUDA_VISIBLE_DEVICES per rank): their first GPUs differ, and each rank takes its device 0.
/// Unavailable "no CUDA GPU: cudaGetDeviceCount reports 0 devices" without one, and "N ranks on
/// this node and M GPUs: NCCL needs one GPU per rank" when ranks would share a GPU.
Expected<int> ChooseLocalDevice(int local_rank, int local_size, int visible_gpus,
                                std::span<const std::string> first_gpu_bus_ids);

}  // namespace gpuplan

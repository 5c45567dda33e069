#include "validator/local_device.h"

#include <set>

#include "common/str_format.h"

namespace gpuplan {

Expected<int> ChooseLocalDevice(int local_rank, int local_size, int visible_gpus,
                                std::span<const std::string> first_gpu_bus_ids) {
  if (visible_gpus <= 0) {
    return Status::Unavailable("no CUDA GPU: cudaGetDeviceCount reports 0 devices");
  }
  if (local_rank < 0 || local_rank >= local_size ||
      first_gpu_bus_ids.size() != static_cast<size_t>(local_size)) {
    return Status::Invalid(StrFormat("local rank %d of %d with %zu bus ids", local_rank, local_size,
                                     first_gpu_bus_ids.size()));
  }
  // Ranks bound to GPUs of their own see different first GPUs; ranks that share the node's GPUs
  // all see the node's GPU 0 first.
  const std::set<std::string> distinct(first_gpu_bus_ids.begin(), first_gpu_bus_ids.end());
  if (local_size > 1 && distinct.size() == static_cast<size_t>(local_size)) return 0;
  if (local_size <= visible_gpus) return local_rank;
  return Status::Unavailable(StrFormat(
      "%d ranks on this node and %d GPUs: NCCL needs one GPU per rank", local_size, visible_gpus));
}

}  // namespace gpuplan

// The device side of the NCCL transport's checks (issue 19: every collective and every send/recv
// is checked, as nccl-tests' #wrong column does): kernels that fill a send buffer with the values
// of validator/check_patterns.h and count the elements of a received buffer that differ from
// what they must be. The same functions as the MPI transport's host checks, so that both backends
// check the same thing. Buffers are 64-bit integers in device memory of the current device.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/status.h"

namespace gpuplan {

/// Which values of check_patterns.h a buffer carries.
enum class CheckPattern {
  kAllReduce,      ///< send AllReduceSend(rank, j); want AllReduceWant(ranks, j)
  kAllGather,      ///< send AllGatherSend(rank, j); want AllGatherWant(count, j)
  kReduceScatter,  ///< send ReduceScatterSend(rank, j); want ReduceScatterWant(rank, ranks, count,
                   ///< j)
  kAllToAll,       ///< send AllToAllSend(rank, count, j); want AllToAllWant(rank, count, j)
  kRing,           ///< send RingSend(rank, j); want RingSend(sender, j) (sender: previous rank)
  kMessage,        ///< send and want Message(tag, sender, j) (sender: the world rank sending)
};

/// A pattern and the parameters its functions take (those it does not take are ignored).
struct CheckSpec {
  CheckPattern pattern = CheckPattern::kAllReduce;
  int64_t rank = 0;    ///< this rank's place in the communicator
  int64_t ranks = 1;   ///< the communicator's size
  int64_t count = 1;   ///< elements per rank's block (all-gather, reduce-scatter, all-to-all)
  int64_t tag = 0;     ///< the message's tag
  int64_t sender = 0;  ///< the rank whose values arrive (ring: previous rank; message: world rank)
};

/// Enqueues on `stream` a kernel writing element j of `data` (`elements` >= 0 of them, device
/// memory) as the send value of `spec` at j. Does not synchronise; Unavailable when the launch
/// fails.
Status FillCheckSend(int64_t* data, int64_t elements, const CheckSpec& spec, cudaStream_t stream);

/// Enqueues on `stream` a kernel adding to `*wrong` (one device int64, which the caller zeroes
/// first) how many of the `elements` values at `data` differ from the value `spec` wants at
/// their index. Does not synchronise; Unavailable when the launch fails.
Status CountCheckWrong(const int64_t* data, int64_t elements, const CheckSpec& spec, int64_t* wrong,
                       cudaStream_t stream);

}  // namespace gpuplan

// What the event simulator (and, later, a real validation run) recorded: ops on the streams of
// each simulated GPU, pipeline flows between them, and an activation-memory counter per GPU.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan {

/// The streams of one GPU; each becomes one trace thread. Order indexes StreamName.
enum class SimStream : uint8_t {
  kCompute = 0,  ///< kernels: forward, backward, recompute, weight gradients, optimizer
  kTp,           ///< tensor-parallel collectives
  kCp,           ///< context-parallel K/V ring
  kEp,           ///< expert-parallel all-to-all
  kPpSend,       ///< pipeline sends of this GPU
  kPpRecv,       ///< pipeline receives (mirror of the sender's transfer)
  kDpGather,     ///< ZeRO-3/FSDP weight all-gathers
  kDpReduce,     ///< gradient all-reduce / reduce-scatter buckets
};
inline constexpr int kSimStreamCount = 8;

/// Name of a stream as the trace shows it ("compute", "tp comm", ...).
std::string_view StreamName(SimStream stream);

/// One op on one stream. Times in seconds from the start of the step.
struct TimelineOp {
  int32_t rank = 0;  ///< index into Timeline::ranks
  SimStream stream = SimStream::kCompute;
  std::string_view name;  ///< static text: "forward", "backward", "all-reduce", ...
  double start_s = 0;
  double end_s = 0;
  int32_t microbatch = -1;  ///< -1: not tied to a micro-batch
  int32_t chunk = -1;       ///< model chunk on the stage; -1: none
  int32_t layer = -1;       ///< global layer index; -1: a whole pass or no layer
  double bytes = 0;         ///< nccl-tests size of a collective (or a transfer); 0 for kernels
  double flops = 0;         ///< FLOPs of a kernel op; 0 for communication
};

/// A pipeline transfer: `from` (a send on the sender) feeds `to` (the receiver's recv).
struct TimelineFlow {
  int32_t from = 0;  ///< index into Timeline::ops
  int32_t to = 0;
};

/// Stored activation bytes of one GPU from `time_s` on.
struct CounterSample {
  int32_t rank = 0;
  double time_s = 0;
  double bytes = 0;
};

/// A simulated GPU: one representative of the GPUs that behave the same.
struct TimelineRank {
  std::string name;         ///< e.g. "stage 3 (rank 96)"
  int64_t global_rank = 0;  ///< Megatron order: tp fastest, then cp, dp, pp
  int64_t stage = 0;
  int64_t represents = 1;  ///< GPUs whose timeline this one stands for
};

struct Timeline {
  std::vector<TimelineRank> ranks;
  std::vector<TimelineOp> ops;
  std::vector<TimelineFlow> flows;
  std::vector<CounterSample> activation_memory;
};

}  // namespace gpuplan

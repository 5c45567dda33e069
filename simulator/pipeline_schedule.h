// Pipeline schedules as pass orders: for each stage, the sequence of forward, backward and
// (zero-bubble) weight-gradient passes it runs, one row of a table per schedule.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "simulator/job.h"

namespace gpuplan {

/// What one pass of one micro-batch through one model chunk does.
enum class PassKind : uint8_t {
  kForward,
  kBackward,    ///< the whole backward, or only input gradients (B) when the schedule splits W
  kWeightGrad,  ///< weight gradients (W) of a schedule that splits backward
};

struct PipelinePass {
  PassKind kind;
  int32_t microbatch;  ///< 0-based
  int32_t chunk;       ///< model chunk on this stage, 0-based (< vpp)
};

/// One schedule: its name in job specs, its source, and its pass-order generator.
struct ScheduleInfo {
  Schedule kind;
  std::string_view name;
  std::string_view source;
  bool splits_backward;  ///< backward runs as separate B and W passes
  bool uses_chunks;      ///< runs vpp > 1 model chunks per stage
  /// Pass order of stage `stage` for p stages, m micro-batches and v chunks per stage.
  std::vector<PipelinePass> (*order)(int64_t p, int64_t m, int64_t v, int64_t stage);
};

/// All schedules (the one table of them).
std::span<const ScheduleInfo> Schedules();
const ScheduleInfo& GetScheduleInfo(Schedule schedule);
/// nullopt when `name` is none of the table's names.
std::optional<Schedule> ParseScheduleName(std::string_view name);
std::string_view ScheduleName(Schedule schedule);

/// Interleaved 1F1B (Narayanan et al. 2021 Sec. 2.2.2; Megatron-LM get_schedule_table): the
/// micro-batch and model chunk of the k-th forward pass (0-based, < m*v) of every stage.
/// Micro-batches run in groups of p; inside a group, chunk by chunk. The k-th backward pass
/// takes the same micro-batch through chunk v-1-chunk. The micro-batch count m must be a
/// multiple of p (ValidateJob; Megatron-LM refuses other counts), so every group is full.
struct ChunkSlot {
  int64_t microbatch = 0;
  int64_t chunk = 0;
};
ChunkSlot InterleavedForwardSlot(int64_t p, int64_t v, int64_t k);

/// Interleaved 1F1B: the warm-up forwards stage `stage` runs before its first backward,
/// (p-stage-1)*2 + (v-1)*p (Megatron-LM forward_backward_pipelining_with_interleaving), capped
/// at all m*v of them.
int64_t InterleavedWarmup(int64_t p, int64_t m, int64_t v, int64_t stage);

/// The pass order of one stage (0-based) of a p-stage pipeline running m micro-batches over v
/// model chunks (interleaved: m a multiple of p, as ValidateJob requires). Every
/// (micro-batch, chunk) appears once per pass kind the schedule has.
std::vector<PipelinePass> PassOrder(Schedule schedule, int64_t p, int64_t m, int64_t v,
                                    int64_t stage);

}  // namespace gpuplan

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

/// The pass order of one stage (0-based) of a p-stage pipeline running m micro-batches over v
/// model chunks. Every (micro-batch, chunk) appears once per pass kind the schedule has.
std::vector<PipelinePass> PassOrder(Schedule schedule, int64_t p, int64_t m, int64_t v,
                                    int64_t stage);

}  // namespace gpuplan

// Building hand-made timelines in tests.
#pragma once

#include <cstdint>
#include <string_view>

#include "simulator/timeline.h"

namespace gpuplan {

/// An op of `rank` on `stream` from `start_s` to `end_s` (seconds), optionally of a micro-batch.
inline TimelineOp Op(int32_t rank, SimStream stream, std::string_view name, double start_s,
                     double end_s, int32_t microbatch = -1) {
  TimelineOp op;
  op.rank = rank;
  op.stream = stream;
  op.name = name;
  op.start_s = start_s;
  op.end_s = end_s;
  op.microbatch = microbatch;
  return op;
}

}  // namespace gpuplan

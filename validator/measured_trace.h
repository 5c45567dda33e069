// The measured step as a timeline (`gpuplan validate --trace`): every op a rank ran in its last
// measured step, timed on its own clock, set beside the event simulation of the same plan in one
// Chrome/Perfetto trace (simulator/trace_json.h), measured ranks first.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "simulator/timeline.h"
#include "validator/rank_layout.h"
#include "validator/rank_program.h"

namespace gpuplan {

/// One op of a rank's step as RunStep ran it (StepOptions::record).
struct MeasuredOp {
  std::string name;  ///< the RankOp's name: "gemm qkv", "all_reduce", "send activations", ...
  SimStream stream = SimStream::kCompute;  ///< MeasuredStream of the op
  double start_s = 0;  ///< seconds from the start of the rank's step (steady clock)
  double end_s = 0;
  int32_t microbatch = -1;  ///< the pass's micro-batch; -1: the optimizer step
  int32_t chunk = -1;       ///< the pass's model chunk; -1: the optimizer step
  int32_t layer = -1;       ///< the layer of an op inside a layer run; -1: none
  double bytes = 0;         ///< a collective's or message's bytes (all repeats); 0 for compute
  int32_t peer = -1;        ///< a pipeline send's or receive's other world rank; -1: not a message
  int32_t tag = -1;         ///< its message tag (direction, micro-batch, receiving virtual stage)
};

/// The trace stream an op of a rank's program belongs to: compute ops (the optimizer's too) on
/// compute; collectives by group (tp, cp, ep; dp and expert-dp all-gathers on dp gather, their
/// other collectives on dp reduce); sends on pp send, receives on pp recv.
SimStream MeasuredStream(const RankOp& op);

/// One line per op, tab-separated (stream, start, end, micro-batch, chunk, layer, bytes, peer,
/// tag, name), times at nanosecond precision: the text a rank sends to rank 0. Tabs and line
/// breaks in a name become spaces.
std::string SerializeMeasuredOps(const std::vector<MeasuredOp>& ops);

/// The ops of SerializeMeasuredOps' text; Invalid naming the line for anything else.
Expected<std::vector<MeasuredOp>> ParseMeasuredOps(std::string_view text);

/// A timeline of `measured` (one vector per world rank of `layout`, in rank order; process
/// "measured rank R (stage S)") followed by the ranks of `simulated` (process "simulated " + its
/// name), with its flows and activation counters. Each measured pipeline message is a flow from
/// its send to its receive (the receive on rank `peer` of the send whose peer is the receiving
/// rank, with the same tag); a message with one side missing has none. Measured ops keep their
/// names by reference: `measured` must outlive the timeline. Each process starts its step at 0.
Timeline ComparisonTimeline(const RankLayout& layout,
                            const std::vector<std::vector<MeasuredOp>>& measured,
                            const Timeline& simulated);

}  // namespace gpuplan

// What both Gantt charts of a Timeline share (the SVG of planner/timeline_svg.h and the GUI's
// GanttView): which rows a rank gets, how an op is classified, and the colour of each kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "simulator/timeline.h"

namespace gpuplan {

/// What colours a bar: six kinds of compute op, then one per communication stream (in SimStream
/// order). The order is the order of the legend.
enum class OpKind : uint8_t {
  kForward = 0,
  kBackward,
  kWeightGradient,
  kRecompute,
  kOptimizer,
  kOtherCompute,
  kTpComm,
  kCpComm,
  kEpComm,
  kPpSend,
  kPpRecv,
  kDpGather,
  kDpReduce,
};
inline constexpr int kOpKindCount = 13;

/// The kind of `op`: a compute op by the prefix of its name ("forward", "backward", "wgrad" or
/// "weight grad", "recompute", "optimizer", anything else kOtherCompute), any other op by its
/// stream. `op.stream` must be a SimStream (see IsDrawableOp).
OpKind ClassifyOp(const TimelineOp& op);

/// Legend label: "forward", "backward", "weight gradient", "recompute", "optimizer", "other
/// compute", and StreamName of the stream for the communication kinds. Static text.
std::string_view OpKindLabel(OpKind kind);

/// Bar colour as "#rrggbb": compute in strong Tableau 10 colours, communication in the light
/// Tableau 20 ones. Static text.
const char* OpKindColor(OpKind kind);

/// Whether a Gantt chart draws `op`: its rank indexes one of `rank_count` ranks, its stream is a
/// SimStream and both of its times are finite.
bool IsDrawableOp(const TimelineOp& op, size_t rank_count);

/// The streams that get a row, per rank of `timeline` (bit `1 << stream`): the compute row
/// always, even with no ops, and each other stream with a drawable op unless `compute_only`.
/// Rows are drawn rank by rank in the order of Timeline::ranks, streams in SimStream order.
std::vector<uint32_t> RowStreams(const Timeline& timeline, bool compute_only);

/// Whether `op` carries a micro-batch label on a run of its bars: a forward or backward op of a
/// micro-batch (microbatch >= 0).
bool IsLabelledPass(const TimelineOp& op);

/// Whether `next`, following `first` on a compute row, belongs to the same run of bars: the
/// same kind, micro-batch and chunk (each chart adds its own adjacency rule).
bool SameRun(const TimelineOp& first, const TimelineOp& next);

}  // namespace gpuplan

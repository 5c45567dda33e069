#include "planner/timeline_style.h"

#include <array>
#include <cmath>

namespace gpuplan {
namespace {

constexpr int kComputeKinds = 6;

// The communication entries take their label from StreamName.
constexpr std::array<std::string_view, kComputeKinds> kComputeLabels = {
    "forward", "backward", "weight gradient", "recompute", "optimizer", "other compute",
};

constexpr std::array<const char*, kOpKindCount> kColors = {
    "#4e79a7",  // forward
    "#f28e2b",  // backward
    "#59a14f",  // weight gradient
    "#b07aa1",  // recompute
    "#e15759",  // optimizer
    "#9c755f",  // other compute
    "#a0cbe8",  // tp comm
    "#ffbe7d",  // cp comm
    "#8cd17d",  // ep comm
    "#86bcb6",  // pp send
    "#f1ce63",  // pp recv
    "#d4a6c8",  // dp gather
    "#bab0ac",  // dp reduce
};

}  // namespace

OpKind ClassifyOp(const TimelineOp& op) {
  if (op.stream != SimStream::kCompute) {
    return static_cast<OpKind>(kComputeKinds + static_cast<int>(op.stream) - 1);
  }
  const std::string_view name = op.name;
  if (name.starts_with("forward")) return OpKind::kForward;
  if (name.starts_with("backward")) return OpKind::kBackward;
  if (name.starts_with("wgrad") || name.starts_with("weight grad")) return OpKind::kWeightGradient;
  if (name.starts_with("recompute")) return OpKind::kRecompute;
  if (name.starts_with("optimizer")) return OpKind::kOptimizer;
  return OpKind::kOtherCompute;
}

std::string_view OpKindLabel(OpKind kind) {
  const int k = static_cast<int>(kind);
  if (k < kComputeKinds) return kComputeLabels[static_cast<size_t>(k)];
  return StreamName(static_cast<SimStream>(k - kComputeKinds + 1));
}

const char* OpKindColor(OpKind kind) { return kColors[static_cast<size_t>(kind)]; }

bool IsDrawableOp(const TimelineOp& op, size_t rank_count) {
  return op.rank >= 0 && static_cast<size_t>(op.rank) < rank_count &&
         static_cast<int>(op.stream) < kSimStreamCount && std::isfinite(op.start_s) &&
         std::isfinite(op.end_s);
}

std::vector<uint32_t> RowStreams(const Timeline& timeline, bool compute_only) {
  std::vector<uint32_t> shown(timeline.ranks.size(), 1u << static_cast<int>(SimStream::kCompute));
  if (compute_only) return shown;
  for (const TimelineOp& op : timeline.ops) {
    if (IsDrawableOp(op, shown.size())) {
      shown[static_cast<size_t>(op.rank)] |= 1u << static_cast<int>(op.stream);
    }
  }
  return shown;
}

bool IsLabelledPass(const TimelineOp& op) {
  const OpKind kind = ClassifyOp(op);
  return op.microbatch >= 0 && (kind == OpKind::kForward || kind == OpKind::kBackward);
}

bool SameRun(const TimelineOp& first, const TimelineOp& next) {
  return ClassifyOp(first) == ClassifyOp(next) && first.microbatch == next.microbatch &&
         first.chunk == next.chunk;
}

}  // namespace gpuplan

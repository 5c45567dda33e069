// The exhaustive layout search on one hardware point (GPU type x node template x GPU count),
// and its multi-threaded driver over many points. docs/PLANNER.md lists the space and the
// pruning rules; each rule only drops layouts that another searched layout provably beats.
#pragma once

#include <cstdint>
#include <vector>

#include "common/progress.h"
#include "hardware-db/hardware.h"
#include "planner/plan.h"

namespace gpuplan {

/// Where a plan runs: one GPU type in one node template, num_gpus of them.
struct HardwarePoint {
  const GpuSpec* gpu = nullptr;
  const NodeTemplate* node = nullptr;
  const NetworkSpec* network = nullptr;  ///< the node template's scale-out network
  int64_t num_gpus = 0;
};

/// GPU counts searched in [min_gpus, max_gpus]: powers of two up to one node, then whole nodes
/// in 2^k and 3 x 2^k node counts (the allocations clusters are rented in). Always includes the
/// powers of two (the scaling table's rows). Empty when the range holds none.
std::vector<int64_t> CandidateGpuCounts(int64_t min_gpus, int64_t max_gpus, int gpus_per_node);

/// Layouts kept per hardware point (the fastest, for alternatives and explanations).
inline constexpr int kKeepPerPoint = 3;
/// Context-parallel degrees are searched while each rank keeps at least this many tokens of
/// the sequence: shorter chunks leave too little attention work to hide the K/V ring exchange
/// (Megatron-LM recommends CP for long sequences only; docs/PLANNER.md).
inline constexpr int64_t kMinContextParallelChunkTokens = 1024;
/// Largest micro-batch searched (sequences); larger ones only grow activation memory once the
/// GEMMs are large enough to reach their efficiency plateau.
inline constexpr int64_t kMaxMicroBatch = 64;

/// The answer for one hardware point.
struct PointResult {
  HardwarePoint point;
  /// Up to kKeepPerPoint layouts that fit in memory, shortest failure-free time-to-train first.
  /// Each Plan has job, node, step and econ.steps/tokens/compute_time_s filled (no price yet).
  std::vector<Plan> best;
  bool any_layout = false;  ///< at least one layout was enumerated (fitting or not)
  Plan smallest;            ///< the layout with the smallest peak memory per GPU
  SearchStats stats;
};

/// Searches every layout of `point` for `req` (TP, CP, PP, VPP, DP, EP, micro-batch, recompute,
/// ZeRO stage, CPU offload, precision, global batch). Thread-safe; no I/O.
PointResult SearchPoint(const PlanRequest& req, const HardwarePoint& point);

/// Searches all `points` on `threads` worker threads (>= 1). Results are in `points` order.
/// `progress` counts finished hardware points; its Cancelled() is polled before each point.
/// When `progress` reports Cancelled(), no further point is started and the points not searched
/// stay empty (any_layout false): the caller checks Cancelled() and discards the result.
std::vector<PointResult> SearchPoints(const PlanRequest& req,
                                      const std::vector<HardwarePoint>& points, int threads,
                                      ProgressSink* progress);

}  // namespace gpuplan

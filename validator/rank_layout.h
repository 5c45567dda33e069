// Where every rank of a plan runs and which communicators it joins: the process layout the
// validator launches (one process per GPU) and that `gpuplan validate --dry-run` prints.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "simulator/job.h"

namespace gpuplan {

/// The communicator kinds of a plan. Order indexes GroupKindName and RankLayout::groups.
enum class GroupKind { kTp = 0, kCp, kDp, kPp, kEp, kExpertDp, kExpertTp, kCount };
inline constexpr int kGroupKindCount = static_cast<int>(GroupKind::kCount);

/// "tp", "cp", "dp", "pp", "ep", "expert_dp", "expert_tp".
std::string_view GroupKindName(GroupKind kind);

/// One rank's place. Ranks are ordered as Megatron-LM orders them (parallel_state.py
/// RankGenerator with order "tp-cp-ep-dp-pp"): tp varies fastest, then cp, then dp, then pp.
/// Expert layers regroup each stage's tp x cp x dp ranks as etp x ep x expert-dp, etp fastest
/// (the expert RankGenerator of MoE Parallel Folding).
struct RankCoord {
  int64_t rank = 0;
  int64_t node = 0;       ///< rank / gpus_per_node
  int64_t local_gpu = 0;  ///< rank % gpus_per_node (CUDA device index on its node)
  int64_t tp = 0, cp = 0, dp = 0, pp = 0;
  int64_t expert_tp = 0;  ///< position in its expert tensor-parallel group
  int64_t ep = 0;         ///< position in its expert-parallel group
  int64_t expert_dp = 0;  ///< position in its expert-data-parallel group
};

/// A plan's ranks and communicators.
struct RankLayout {
  int64_t world_size = 0;
  int64_t gpus_per_node = 0;
  std::vector<RankCoord> ranks;  ///< indexed by rank
  /// groups[kind]: every communicator of that kind, each the list of its ranks in
  /// communicator-rank order. The gradient group "dp" spans dp x cp as Megatron's
  /// data-parallel group with context parallelism does (gradients are averaged over both).
  std::vector<std::vector<std::vector<int64_t>>> groups;

  const std::vector<std::vector<int64_t>>& Groups(GroupKind kind) const {
    return groups[static_cast<size_t>(kind)];
  }
  /// Index into Groups(kind) of the communicator `rank` belongs to.
  int64_t GroupOf(GroupKind kind, int64_t rank) const;
};

/// The layout of `job` (validated: tp*cp*dp*pp = num_gpus, etp*ep divides tp*cp*dp).
RankLayout MakeRankLayout(const JobSpec& job);

}  // namespace gpuplan

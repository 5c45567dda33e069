#include "validator/rank_layout.h"

#include <array>

namespace gpuplan {
namespace {

constexpr std::array<std::string_view, kGroupKindCount> kNames = {
    "tp", "cp", "dp", "pp", "ep", "expert_dp", "expert_tp"};

// Key of the communicator of `kind` that coordinate `c` belongs to: every coordinate except the
// ones the group spans. Groups are numbered by first appearance in rank order.
int64_t GroupKey(GroupKind kind, const RankCoord& c, const ParallelSpec& p) {
  switch (kind) {
    case GroupKind::kTp:  // spans tp
      return c.cp + p.cp * (c.dp + p.dp * c.pp);
    case GroupKind::kCp:  // spans cp
      return c.tp + p.tp * (c.dp + p.dp * c.pp);
    case GroupKind::kDp:  // spans dp and cp (gradient group)
      return c.tp + p.tp * c.pp;
    case GroupKind::kPp:  // spans pp
      return c.tp + p.tp * (c.cp + p.cp * c.dp);
    case GroupKind::kEp:  // spans ep at one expert TP and expert-DP position
      return c.expert_tp + p.ExpertTp() * (c.expert_dp + p.ExpertDp() * c.pp);
    case GroupKind::kExpertDp:  // spans expert_dp at one expert TP and ep position
      return c.expert_tp + p.ExpertTp() * (c.ep + p.ep * c.pp);
    case GroupKind::kExpertTp:  // spans expert_tp at one ep and expert-DP position
      return c.ep + p.ep * (c.expert_dp + p.ExpertDp() * c.pp);
    case GroupKind::kCount:
      break;
  }
  return 0;
}

}  // namespace

std::string_view GroupKindName(GroupKind kind) { return kNames[static_cast<size_t>(kind)]; }

int64_t RankLayout::GroupOf(GroupKind kind, int64_t rank) const {
  const auto& gs = Groups(kind);
  for (size_t g = 0; g < gs.size(); ++g) {
    for (int64_t r : gs[g])
      if (r == rank) return static_cast<int64_t>(g);
  }
  return -1;
}

RankLayout MakeRankLayout(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  RankLayout l;
  l.world_size = p.tp * p.cp * p.dp * p.pp;
  l.gpus_per_node = job.cluster.gpus_per_node;
  l.ranks.resize(static_cast<size_t>(l.world_size));
  for (int64_t r = 0; r < l.world_size; ++r) {
    RankCoord& c = l.ranks[static_cast<size_t>(r)];
    c.rank = r;
    c.node = r / l.gpus_per_node;
    c.local_gpu = r % l.gpus_per_node;
    c.tp = r % p.tp;
    c.cp = (r / p.tp) % p.cp;
    c.dp = (r / (p.tp * p.cp)) % p.dp;
    c.pp = r / (p.tp * p.cp * p.dp);
    // Expert layers regroup the stage's tp x cp x dp ranks as etp x ep x expert-dp.
    const int64_t in_stage = r % (p.tp * p.cp * p.dp);
    c.expert_tp = in_stage % p.ExpertTp();
    c.ep = (in_stage / p.ExpertTp()) % p.ep;
    c.expert_dp = in_stage / (p.ExpertTp() * p.ep);
  }
  l.groups.resize(kGroupKindCount);
  for (int k = 0; k < kGroupKindCount; ++k) {
    const auto kind = static_cast<GroupKind>(k);
    std::vector<std::vector<int64_t>>& gs = l.groups[static_cast<size_t>(k)];
    std::vector<int64_t> index_of_key;  // key -> group index, -1 unseen
    for (const RankCoord& c : l.ranks) {
      const int64_t key = GroupKey(kind, c, p);
      if (key >= static_cast<int64_t>(index_of_key.size()))
        index_of_key.resize(static_cast<size_t>(key + 1), -1);
      int64_t& index = index_of_key[static_cast<size_t>(key)];
      if (index < 0) {
        index = static_cast<int64_t>(gs.size());
        gs.emplace_back();
      }
      gs[static_cast<size_t>(index)].push_back(c.rank);
    }
  }
  return l;
}

}  // namespace gpuplan

// The process layout: Megatron-LM's rank order and the communicators each rank joins.
#include "validator/rank_layout.h"

#include <gtest/gtest.h>

#include <set>

#include "tests/validator/test_job.h"

namespace gpuplan {
namespace {

TEST(RankLayout, MegatronOrderTpFastestThenCpDpPp) {
  const RankLayout l = MakeRankLayout(TestJob({.tp = 2, .dp = 4, .pp = 2}));
  ASSERT_EQ(l.world_size, 16);
  const RankCoord& r13 = l.ranks[13];  // 13 = tp 1 + 2*(dp 2 + 4*pp 1)
  EXPECT_EQ(r13.tp, 1);
  EXPECT_EQ(r13.dp, 2);
  EXPECT_EQ(r13.pp, 1);
  EXPECT_EQ(r13.node, 1);
  EXPECT_EQ(r13.local_gpu, 5);
  EXPECT_EQ(l.Groups(GroupKind::kTp).front(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(l.Groups(GroupKind::kDp).front(), (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(l.Groups(GroupKind::kPp).front(), (std::vector<int64_t>{0, 8}));
  EXPECT_EQ(l.Groups(GroupKind::kPp)[3], (std::vector<int64_t>{3, 11}));
}

TEST(RankLayout, EveryRankIsInExactlyOneGroupOfEachKindOfTheRightSize) {
  const JobSpec job = TestJob({.tp = 2,
                               .cp = 2,
                               .dp = 8,
                               .pp = 2,
                               .ep = 4,
                               .model = "mixtral-8x7b",
                               .seq_len = 4096,
                               .sequence_parallel = true});
  const RankLayout l = MakeRankLayout(job);
  // tp cp dp(x cp) pp ep expert_dp expert_tp
  const int64_t sizes[kGroupKindCount] = {2, 2, 16, 2, 4, 4, 2};
  for (int k = 0; k < kGroupKindCount; ++k) {
    const auto kind = static_cast<GroupKind>(k);
    std::multiset<int64_t> seen;
    for (const auto& g : l.Groups(kind)) {
      EXPECT_EQ(static_cast<int64_t>(g.size()), sizes[k]) << GroupKindName(kind);
      seen.insert(g.begin(), g.end());
    }
    EXPECT_EQ(static_cast<int64_t>(seen.size()), l.world_size) << GroupKindName(kind);
    for (int64_t r = 0; r < l.world_size; ++r) EXPECT_EQ(seen.count(r), 1u) << GroupKindName(kind);
  }
  // Expert layers regroup a stage's tp x cp x dp ranks as etp x ep x expert-dp, etp (= tp)
  // fastest: an ep group takes every etp-th rank (stride 2), across cp and then dp, as the
  // simulator places it (step_costs.cpp PlaceGroup(ep, etp)); expert-dp strides etp x ep.
  EXPECT_EQ(l.Groups(GroupKind::kEp).front(), (std::vector<int64_t>{0, 2, 4, 6}));
  EXPECT_EQ(l.Groups(GroupKind::kExpertDp).front(), (std::vector<int64_t>{0, 8, 16, 24}));
  // TP stays inside a node.
  for (const auto& g : l.Groups(GroupKind::kTp)) {
    EXPECT_EQ(l.ranks[static_cast<size_t>(g.front())].node,
              l.ranks[static_cast<size_t>(g.back())].node);
  }
  EXPECT_EQ(l.GroupOf(GroupKind::kTp, 5), 2);
  // With etp = tp the expert TP groups are the TP groups.
  EXPECT_EQ(l.Groups(GroupKind::kExpertTp), l.Groups(GroupKind::kTp));
}

// Expert TP below TP (MoE Parallel Folding): TP4 with ETP1 over EP8 on 32 ranks (dp 8). Each
// expert rank is its own expert TP group; an EP group takes 8 consecutive ranks, two TP groups.
TEST(RankLayout, ExpertTensorParallelismFoldsBelowTheTpGroup) {
  const RankLayout l = MakeRankLayout(FoldedMoeJob(1));
  EXPECT_EQ(l.Groups(GroupKind::kExpertTp).size(), 32u);
  EXPECT_EQ(l.Groups(GroupKind::kEp).front(), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(l.Groups(GroupKind::kExpertDp).front(), (std::vector<int64_t>{0, 8, 16, 24}));
  const RankLayout two = MakeRankLayout(FoldedMoeJob(2));
  EXPECT_EQ(two.Groups(GroupKind::kExpertTp).front(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(two.Groups(GroupKind::kEp).front(), (std::vector<int64_t>{0, 2, 4, 6, 8, 10, 12, 14}));
}

}  // namespace
}  // namespace gpuplan

// Where a token's routed copies go, and DeepEP's dispatch time against DeepEP's published table.
#include "simulator/moe_dispatch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "simulator/presets.h"

namespace gpuplan {
namespace {

ModelSpec DeepSeekV3() { return FindModelPreset("deepseek-v3").value(); }

ExpertRouting Routing(double experts, double top_k, double groups = 1, double group_topk = 1) {
  ExpertRouting r;
  r.experts = experts;
  r.top_k = top_k;
  r.groups = groups;
  r.group_topk = group_topk;
  return r;
}

TEST(MoeDispatchTest, UnitsReachedWithoutGroups) {
  // One expert per unit: the top_k copies reach top_k distinct units; one unit of all: 1.
  EXPECT_DOUBLE_EQ(ExpectedUnitsReached(Routing(64, 6), 1), 6.0);
  EXPECT_DOUBLE_EQ(ExpectedUnitsReached(Routing(64, 6), 64), 1.0);
  // Mixtral's 8 experts, top-2, on 2 ranks of 4: 2 x (1 - C(4,2)/C(8,2)).
  EXPECT_NEAR(ExpectedUnitsReached(Routing(8, 2), 4), 2.0 * (1.0 - 6.0 / 28.0), 1e-12);
}

TEST(MoeDispatchTest, UnitsReachedMatchesEnumerationForUnalignedGroups) {
  // 12 experts in 4 groups of 3, top-2 groups then top-2 experts; units of 2 experts straddle
  // the groups. Enumerate the 6 x 15 equally likely choices.
  double total = 0.0;
  int cases = 0;
  for (int g1 = 0; g1 < 4; ++g1) {
    for (int g2 = g1 + 1; g2 < 4; ++g2) {
      const int pool[6] = {3 * g1, 3 * g1 + 1, 3 * g1 + 2, 3 * g2, 3 * g2 + 1, 3 * g2 + 2};
      for (int i = 0; i < 6; ++i) {
        for (int j = i + 1; j < 6; ++j) {
          std::set<int> units = {pool[i] / 2, pool[j] / 2};
          total += static_cast<double>(units.size());
          ++cases;
        }
      }
    }
  }
  EXPECT_NEAR(ExpectedUnitsReached(Routing(12, 2, 4, 2), 2), total / cases, 1e-12);
}

TEST(MoeDispatchTest, DeepSeekV3NodeLimitedRouting) {
  // 256 experts in 8 groups, top-4 groups, top-8: on 8 nodes a token reaches each node with
  // probability 4/8 x (1 - C(96,8)/C(128,8)), at most 4 nodes.
  const ExpertRouting r = RoutingOf(DeepSeekV3());
  double none = 1.0;
  for (int i = 0; i < 8; ++i) none *= (96.0 - i) / (128.0 - i);
  EXPECT_NEAR(ExpectedUnitsReached(r, 32), 8.0 * 0.5 * (1.0 - none), 1e-12);
  EXPECT_LE(ExpectedUnitsReached(r, 32), 4.0);
}

// DeepEP's published normal-kernel table (deepseek-ai/DeepEP docs/legacy.md): H800 (NVLink
// 200 GB/s per direction), CX7 400 Gb/s NICs, 4096 tokens of hidden 7168, top-8 of 256 experts;
// its tests (tests/test_intranode.py, test_internode.py) route without groups inside a node and
// with one group per node, top min(nodes, 4) groups, across nodes. The table's "bottleneck
// bandwidth" is logical: every copy a rank receives over NVLink (intranode), every (token, node)
// pair including the sender's own node (internode), over the kernel time.
struct DeepEpRow {
  int ep;
  double dispatch_gbps;
};

TEST(MoeDispatchTest, DeepEpMatchesPublishedBandwidth) {
  const double tokens = 4096;
  const double bytes_per_token = 7168 * 2.0;
  for (const DeepEpRow row : {DeepEpRow{8, 153}, {16, 43}, {32, 58}, {64, 51}}) {
    GroupLink link;
    link.ranks = row.ep;
    link.ranks_per_node = 8;
    link.intra_bytes_per_s = 200e9 * 0.812;  // NVLink busbw efficiency of gpus.json's H100
    link.inter_bytes_per_s = 50e9 * 0.925;   // networks.json ib-ndr-400
    const double nodes = row.ep / 8.0;
    const ExpertRouting r =
        nodes > 1 ? Routing(256, 8, nodes, std::min(nodes, 4.0)) : Routing(256, 8);
    const double seconds = DeepEpSeconds(r, tokens, bytes_per_token, 1.0, link);
    const double logical_units = ExpectedUnitsReached(r, nodes > 1 ? 256 / nodes : 256 / 8.0);
    const double gbps = tokens * logical_units * bytes_per_token / seconds / 1e9;
    // EP8 fits kDeepEpNvlinkEfficiency; EP16 (NVLink-bound), 32 and 64 (network-bound) check it:
    // 47.1, 61.7 and 52.9 GB/s, 4-10% faster than measured.
    EXPECT_NEAR(gbps / row.dispatch_gbps, 1.0, 0.10) << "EP" << row.ep << ": " << gbps;
  }
}

TEST(MoeDispatchTest, ImbalanceScalesAndIsCappedByEp) {
  GroupLink link;
  link.ranks = 16;
  link.ranks_per_node = 8;
  link.intra_bytes_per_s = 300e9;
  link.inter_bytes_per_s = 45e9;
  const ExpertRouting r = Routing(64, 4);
  // The busiest rank's bytes scale with the imbalance; the call's latency does not.
  const double latency = PointToPointLatencySeconds(link);
  EXPECT_NEAR(DeepEpSeconds(r, 1000, 1e4, 1.5, link) - latency,
              1.5 * (DeepEpSeconds(r, 1000, 1e4, 1, link) - latency), 1e-15);
  JobSpec job;
  job.model = DeepSeekV3();
  job.parallel.ep = 4;
  job.training.moe_load_imbalance = 1.3;
  EXPECT_DOUBLE_EQ(MoeRankImbalance(job), 1.3);
  job.training.moe_load_imbalance = 9.0;
  EXPECT_DOUBLE_EQ(MoeRankImbalance(job), 4.0);  // all copies on one of 4 ranks at most
  job.parallel.ep = 1;
  EXPECT_DOUBLE_EQ(MoeRankImbalance(job), 1.0);
}

}  // namespace
}  // namespace gpuplan

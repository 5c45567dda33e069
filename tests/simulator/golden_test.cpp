// Reference tests: each cost formula against golden numbers from its source.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iterator>

#include "hardware-db/hardware_db.h"
#include "simulator/collective.h"
#include "simulator/flops.h"
#include "simulator/gemm_time.h"
#include "simulator/memory.h"
#include "simulator/moe_dispatch.h"
#include "simulator/pipeline.h"
#include "simulator/presets.h"
#include "simulator/step_costs.h"
#include "simulator/topology.h"
#include "simulator/tp_overlap.h"
#include "tests/parse_job.h"

namespace gpuplan {
namespace {

ModelSpec Gpt(int64_t layers, int64_t h, int64_t heads, int64_t vocab) {
  ModelSpec m;
  m.name = "gpt";
  m.num_layers = layers;
  m.hidden_size = h;
  m.ffn_hidden_size = 4 * h;
  m.num_attention_heads = heads;
  m.num_kv_heads = heads;
  m.vocab_size = vocab;
  m.mlp = MlpKind::kGelu;
  return m;
}

// Narayanan et al. 2021, eq. (3) without the recompute pass: 72*B*s*l*h^2*(1 + s/6h + V/12lh).
TEST(Golden, MegatronFlopsFormula) {
  const ModelSpec m = Gpt(96, 12288, 96, 51200);
  const double s = 2048, batch = 1536;
  const double l = 96, h = 12288, V = 51200;
  const double megatron = 72 * batch * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h));
  EXPECT_NEAR(TrainingStepModelFlops(m, s, batch) / megatron, 1.0, 1e-12);
}

// Kaplan et al. 2020 / Brown et al. 2020 Table D.1: GPT-3 175B on 300B tokens = 3.14e23 FLOPs
// by 6*N*D. Our count adds attention (+2.8% at s=2048) and the LM head.
TEST(Golden, SixNDTrainingFlops) {
  Expected<ModelSpec> m = FindModelPreset("gpt3-175b");
  ASSERT_TRUE(m.ok()) << m.status().message();
  const double tokens = 300e9, s = 2048;
  const double flops = TrainingStepModelFlops(*m, s, tokens / s);
  const double six_nd = 6.0 * CountParameters(*m).total * tokens;
  EXPECT_NEAR(six_nd, 3.14e23, 0.01e23);
  EXPECT_GT(flops / six_nd, 1.0);
  EXPECT_LT(flops / six_nd, 1.05);
}

// LoRA: frozen weights skip weight-gradient GEMMs: backward = 1x forward for them.
TEST(Golden, LoraFrozenBaseFlops) {
  const ModelSpec m = Gpt(24, 2048, 16, 50000);
  const double full = TrainingStepModelFlops(m, 1024, 8, false);
  const double lora = TrainingStepModelFlops(m, 1024, 8, true);
  EXPECT_LT(lora / full, 0.70);
  EXPECT_GT(lora / full, 0.66);
}

JobSpec KorthikantiJob(Recompute rc, bool sp) {
  JobSpec j;
  j.model = Gpt(96, 12288, 96, 51200);
  j.training.seq_len = 2048;
  j.training.micro_batch_size = 1;
  j.training.global_batch_size = 64;
  j.training.precision = Precision::kFp16;
  j.training.recompute = rc;
  j.training.attention = AttentionImpl::kUnfused;
  j.training.dropout = true;  // GPT as in the paper
  j.parallel.tp = 8;
  j.parallel.sequence_parallel = sp;
  return j;
}

// Korthikanti et al. 2022, Table 2 (activation memory per transformer layer).
TEST(Golden, KorthikantiActivationBytesPerLayer) {
  const double s = 2048, b = 1, h = 12288, a = 96, t = 8;
  const double sbh = s * b * h;
  EXPECT_DOUBLE_EQ(
      LayerActivationBytes(KorthikantiJob(Recompute::kNone, false), false, Recompute::kNone),
      sbh * (10 + 24 / t + 5 * a * s / (h * t)));
  EXPECT_DOUBLE_EQ(
      LayerActivationBytes(KorthikantiJob(Recompute::kNone, true), false, Recompute::kNone),
      sbh * (34 / t + 5 * a * s / (h * t)));
  EXPECT_DOUBLE_EQ(LayerActivationBytes(KorthikantiJob(Recompute::kSelective, true), false,
                                        Recompute::kSelective),
                   sbh * 34 / t);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(KorthikantiJob(Recompute::kSelective, false), false,
                                        Recompute::kSelective),
                   sbh * (10 + 24 / t));
  EXPECT_DOUBLE_EQ(
      LayerActivationBytes(KorthikantiJob(Recompute::kFull, false), false, Recompute::kFull),
      2 * sbh);
  // No parallelism: 34sbh + 5as^2b (Sec. 4.1, eq. 1).
  JobSpec single = KorthikantiJob(Recompute::kNone, false);
  single.parallel.tp = 1;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(single, false, Recompute::kNone),
                   sbh * (34 + 5 * a * s / h));
}

// Rajbhandari et al. 2020 (ZeRO), Fig. 1: 7.5B parameters, 64-way DP, K = 12, fp16 mixed
// precision (2-byte gradients).
TEST(Golden, ZeroMemoryPerStage) {
  const double psi = 7.5e9, nd = 64;
  auto gb = [&](int stage) {
    return ZeroModelStateBytes(psi, nd, stage, Precision::kFp16, false, 2.0).Total() / 1e9;
  };
  EXPECT_NEAR(gb(0), 120.0, 0.05);
  EXPECT_NEAR(gb(1), 31.4, 0.05);
  EXPECT_NEAR(gb(2), 16.6, 0.05);
  EXPECT_NEAR(gb(3), 1.9, 0.05);
  EXPECT_EQ(ZeroModelStateBytes(psi, nd, 1, Precision::kBf16, true, 4.0).optimizer, 0.0);
}

// Megatron-LM docs/source/distrib_optimizer.md, bytes per parameter: "bf16 param, fp32 grads"
// 18 without the distributed optimizer, 6 + 12/d with it (d = data-parallel size).
TEST(Golden, MegatronBf16MainGradBytes) {
  const double d = 16;
  EXPECT_DOUBLE_EQ(MainGradBytesPerParam(Precision::kBf16), 4.0);
  EXPECT_DOUBLE_EQ(MainGradBytesPerParam(Precision::kFp8), 4.0);
  EXPECT_DOUBLE_EQ(MainGradBytesPerParam(Precision::kFp16), 2.0);
  EXPECT_DOUBLE_EQ(ZeroModelStateBytes(1.0, d, 0, Precision::kBf16, false, 4.0).Total(), 18.0);
  EXPECT_DOUBLE_EQ(ZeroModelStateBytes(1.0, d, 1, Precision::kBf16, false, 4.0).Total(),
                   6 + 12 / d);
}

// nccl-tests doc/PERFORMANCE.md bus bandwidth factors.
TEST(Golden, BusBandwidthFactors) {
  const double n = 8;
  EXPECT_DOUBLE_EQ(GetCollectiveInfo(Collective::kAllReduce).bus_factor(n), 2 * (n - 1) / n);
  EXPECT_DOUBLE_EQ(GetCollectiveInfo(Collective::kAllGather).bus_factor(n), (n - 1) / n);
  EXPECT_DOUBLE_EQ(GetCollectiveInfo(Collective::kReduceScatter).bus_factor(n), (n - 1) / n);
  EXPECT_DOUBLE_EQ(GetCollectiveInfo(Collective::kAllToAll).bus_factor(n), (n - 1) / n);
  EXPECT_DOUBLE_EQ(GetCollectiveInfo(Collective::kBroadcast).bus_factor(n), 1.0);
  EXPECT_DOUBLE_EQ(GetCollectiveInfo(Collective::kSendRecv).bus_factor(n), 1.0);
  EXPECT_EQ(GetCollectiveInfo(Collective::kAllReduce).name, "all_reduce");
}

// Large all-reduce on 8 A100 (NVSwitch): nccl-tests measured 229 GB/s busbw at 1 GiB
// (hardware-db/calibration/collectives.json mle_a100_8gpu_allreduce_1073741824).
TEST(Golden, IntraNodeAllReduceMatchesNcclTests) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const ClusterLinks links =
      ResolveLinks(*db->FindGpu("a100-sxm4-80gb"), *db->FindNetwork("ib-hdr-200"), 8);
  const GroupLink g = PlaceGroup(links, 8, 1);
  const double bytes = 1073741824.0;
  const double t = CollectiveSeconds(Collective::kAllReduce, bytes, g);
  const double busbw = bytes / t * 2 * 7 / 8;
  EXPECT_NEAR(busbw / 229.04e9, 1.0, 0.05);
}

// NVLS inside an NVSwitch gen-3 node: 8x H200 measured 463.6 GB/s busbw at 1 GiB with NVLS on
// and 365.6 with it off (collectives.json mle_h200_8gpu_allreduce_nvls_1GiB,
// mle_h200_8gpu_allreduce_8GiB notes); 5 GPUs 414.2 (mle_h200_5gpu_allreduce_8GiB): the switch
// keeps algbw, not busbw, nearly constant. Up to 1 MiB NCCL runs the ring; A100's NVSwitch has
// no NVLS.
TEST(Golden, NvlsAllReduceInsideAnNvswitchNode) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const ClusterLinks h200 =
      ResolveLinks(*db->FindGpu("h200-sxm-141gb"), *db->FindNetwork("ib-ndr-400"), 8);
  auto busbw = [](const GroupLink& g, double bytes) {
    return bytes / CollectiveSeconds(Collective::kAllReduce, bytes, g) *
           GetCollectiveInfo(Collective::kAllReduce).bus_factor(g.ranks);
  };
  const GroupLink eight = PlaceGroup(h200, 8, 1);
  EXPECT_NEAR(busbw(eight, 1073741824.0) / 463.58e9, 1.0, 0.05);
  // Measured algbw: 258.9 GB/s on 5 GPUs, 270.3 on 8; the model keeps the 8-GPU figure.
  EXPECT_NEAR(busbw(PlaceGroup(h200, 5, 1), 8589934592.0) / 414.2e9, 1.0, 0.06);
  const double mib = 1048576.0;
  GroupLink ring_only = eight;
  ring_only.intra_nvls_bytes_per_s = 0;
  EXPECT_EQ(CollectiveSeconds(Collective::kAllReduce, mib, eight),
            CollectiveSeconds(Collective::kAllReduce, mib, ring_only));
  EXPECT_LT(CollectiveSeconds(Collective::kAllReduce, 64 * mib, eight),
            CollectiveSeconds(Collective::kAllReduce, 64 * mib, ring_only));
  // Reduce-scatter and all-gather keep the ring; so does a group that spans nodes.
  EXPECT_EQ(CollectiveSeconds(Collective::kReduceScatter, 64 * mib, eight),
            CollectiveSeconds(Collective::kReduceScatter, 64 * mib, ring_only));
  const GroupLink two_nodes = PlaceGroup(h200, 16, 1);
  GroupLink two_nodes_ring = two_nodes;
  two_nodes_ring.intra_nvls_bytes_per_s = 0;
  EXPECT_EQ(CollectiveSeconds(Collective::kAllReduce, 64 * mib, two_nodes),
            CollectiveSeconds(Collective::kAllReduce, 64 * mib, two_nodes_ring));
  const ClusterLinks a100 =
      ResolveLinks(*db->FindGpu("a100-sxm4-80gb"), *db->FindNetwork("ib-hdr-200"), 8);
  EXPECT_EQ(PlaceGroup(a100, 8, 1).intra_nvls_bytes_per_s, 0.0);
}

// The CPU backend's ranks on one host (hardware-db cpu: scaleup shared-memory, 2 GB/s per rank at
// collective efficiency 0.5, no PCIe): a group inside the host runs at the shared-memory busbw,
// 1 GB/s, with PCIe's per-step latency, and no NVLS.
TEST(Golden, CpuRanksExchangeThroughSharedMemory) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const GpuSpec& cpu = *db->FindGpu("cpu");
  EXPECT_TRUE(cpu.HostDevice());
  const ClusterLinks links = ResolveLinks(cpu, *db->FindNetwork("eth-25"), 4);
  const GroupLink g = PlaceGroup(links, 4, 1);
  EXPECT_DOUBLE_EQ(g.intra_bytes_per_s, 1e9);
  EXPECT_DOUBLE_EQ(g.intra_latency_s, kPcieStepLatencySeconds);
  EXPECT_EQ(g.intra_nvls_bytes_per_s, 0.0);
  EXPECT_EQ(TpOverlapMaxRanks(cpu, 4), 1);  // no userbuffers between processes
}

// Multi-node: 4 nodes x 8 B200 with 8x 50 GB/s EFA: 362 GB/s busbw at 1 GiB (collectives.json
// mle_b200_4node_allreduce_1GiB, measured with NCCL via all_reduce_bench.py).
TEST(Golden, InterNodeAllReduceMatchesMeasurement) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const ClusterLinks links = ResolveLinks(*db->FindGpu("b200"), *db->FindNetwork("efa-p5"), 8);
  const GroupLink g = PlaceGroup(links, 32, 1);
  EXPECT_EQ(g.ranks_per_node, 8);
  const double bytes = 1073741824.0;
  const double busbw = bytes / CollectiveSeconds(Collective::kAllReduce, bytes, g) * 2 * 31 / 32;
  EXPECT_NEAR(busbw / 361.99e9, 1.0, 0.10);
}

// Golden: latency as NCCL's tuning model counts it (NVIDIA/nccl src/graph/tuning.cc). A ring
// of 512 ranks (64 nodes x 8) takes 511 hops, 63 of them through the network, so the 1.7 MB
// shard of an all-gather is latency-bound; an all-reduce across nodes takes the faster of that
// ring (both ways) and a tree of 2(7 intra + 6 inter) steps at 0.9 of the ring's bus bandwidth.
// Each network hop costs the network's hop latency, and a collective that spans nodes pays the
// rest of the two-hop latency once (2 x (latency - hop), NCCL's baseLat), or
// kCollectiveBaseLatencySeconds where that is larger (inside a node, always). Each runs with the
// faster protocol: LL at the steps' latency and kLlBusbwFraction of the bus bandwidth, or Simple
// at kSimpleLatencyFactor times the steps' latency and the full bandwidth; the once-per-collective
// part is the same for both.
TEST(Golden, RingLatencyGrowsWithTheRingAndAllReduceTakesTheFasterAlgorithm) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const ClusterLinks links =
      ResolveLinks(*db->FindGpu("h100-sxm5-80gb"), *db->FindNetwork("ib-ndr-400"), 8);
  const GroupLink g = PlaceGroup(links, 512, 1);
  ASSERT_EQ(g.nodes(), 64);
  const double intra = g.intra_latency_s;
  const double hop = g.inter_hop_latency_s;
  const double base = 2 * (g.inter_latency_s - hop);
  ASSERT_GT(base, kCollectiveBaseLatencySeconds);  // InfiniBand's base is the larger
  const double bw = GroupBusBandwidth(g);
  auto faster_protocol = [](double once, double steps, double transfer) {
    return std::min(once + steps + transfer / kLlBusbwFraction,
                    once + kSimpleLatencyFactor * steps + transfer);
  };
  const double ring_steps = 448 * intra + 63 * hop;
  const double ring_hops = base + ring_steps;
  const double small = 1.7e6;
  const double gather = CollectiveSeconds(Collective::kAllGather, small, g);
  EXPECT_NEAR(gather, faster_protocol(base, ring_steps, small * 511 / 512 / bw), 1e-12);
  EXPECT_NEAR(gather, ring_hops + small * 511 / 512 / bw / kLlBusbwFraction, 1e-12);  // LL
  EXPECT_GT(ring_hops, small * 511 / 512 / bw / kLlBusbwFraction);  // latency-bound
  const double tree_steps = 2 * (7 * intra + 6 * hop);
  const double tree = base + tree_steps;
  auto all_reduce = [&](double bytes) {
    const double transfer = bytes * 2 * 511 / 512 / bw;
    return std::min(faster_protocol(base, 2 * ring_steps, transfer),
                    faster_protocol(base, tree_steps, transfer / kTreeBusbwFraction));
  };
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllReduce, small, g), all_reduce(small), 1e-12);
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllReduce, small, g),
              tree + small * 2 * 511 / 512 / (kTreeBusbwFraction * bw) / kLlBusbwFraction,
              1e-12);  // the tree, with LL
  const double large = 16.0 * 1024 * 1024 * 1024;
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllReduce, large, g), all_reduce(large), 1e-9);
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllReduce, large, g),
              base + kSimpleLatencyFactor * 2 * ring_steps + large * 2 * 511 / 512 / bw,
              1e-9);  // the ring, with Simple
  // Inside one node the ring is the whole story: 7 hops after the once-per-collective base.
  const GroupLink node = PlaceGroup(links, 8, 1);
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllGather, small, node),
              faster_protocol(kCollectiveBaseLatencySeconds, 7 * node.intra_latency_s,
                              small * 7 / 8 / GroupBusBandwidth(node)),
              1e-12);
  // A group of two pays the base too: a collective is never cheaper than one call.
  const GroupLink pair = PlaceGroup(links, 2, 1);
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllReduce, 8, pair),
              kCollectiveBaseLatencySeconds + 2 * pair.intra_latency_s, 1e-9);
  EXPECT_NEAR(CollectiveSeconds(Collective::kSendRecv, 8, pair),
              kCollectiveBaseLatencySeconds + pair.intra_latency_s, 1e-9);
}

// Golden: PAT (NVIDIA/nccl src/graph/tuning.cc, NCCL 2.23+). A data-parallel group of TP8 on
// 8-GPU nodes has one rank per node, so NCCL may run its reduce-scatter and all-gather with PAT:
// 8 us + log2i(nodes) x interLat / 3.5 + 2.8 us per rank, Simple at 0.75 of the ring's bus
// bandwidth. Small shards take it (a ring over 48 nodes pays 47 network hops), large ones stay
// on the ring; an all-reduce, or a group with two ranks per node, never runs PAT.
TEST(Golden, PatServesSmallShardsOverOneRankPerNode) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const ClusterLinks links =
      ResolveLinks(*db->FindGpu("h100-sxm5-80gb"), *db->FindNetwork("ib-ndr-400"), 8);
  const GroupLink g = PlaceGroup(links, 48, 8);
  ASSERT_EQ(g.ranks_per_node, 1);
  const double hop = g.inter_hop_latency_s;
  const double base = 2 * (g.inter_latency_s - hop);
  const double bw = GroupBusBandwidth(g);
  const double pat = 8e-6 + 5 * hop / 3.5 + 48 * 2.8e-6;  // log2i(48) = 5
  const double ring = base + 47 * hop;
  auto ring_seconds = [&](double transfer) {
    return std::min(ring + transfer / kLlBusbwFraction,
                    base + kSimpleLatencyFactor * 47 * hop + transfer);
  };
  const double small = 1.0e6;
  const double small_transfer = small * 47 / 48 / bw;
  EXPECT_NEAR(CollectiveSeconds(Collective::kReduceScatter, small, g),
              pat + small_transfer / kPatBusbwFraction, 1e-12);
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllGather, small, g),
              pat + small_transfer / kPatBusbwFraction, 1e-12);
  EXPECT_LT(pat + small_transfer / kPatBusbwFraction, ring_seconds(small_transfer));
  const double large = 4.0 * 1024 * 1024 * 1024;
  const double large_transfer = large * 47 / 48 / bw;
  EXPECT_NEAR(CollectiveSeconds(Collective::kReduceScatter, large, g), ring_seconds(large_transfer),
              1e-9);
  // Two ranks per node: no PAT, the ring's 94 hops (47 through the network).
  const GroupLink two = PlaceGroup(links, 96, 4);
  ASSERT_EQ(two.ranks_per_node, 2);
  const double two_steps = 48 * two.intra_latency_s + 47 * hop;
  const double two_transfer = small * 95 / 96 / GroupBusBandwidth(two);
  EXPECT_NEAR(CollectiveSeconds(Collective::kReduceScatter, small, two),
              std::min(base + two_steps + two_transfer / kLlBusbwFraction,
                       base + kSimpleLatencyFactor * two_steps + two_transfer),
              1e-12);
}

// Golden: a network's latency as a once-per-collective part plus one per hop. InfiniBand: 9.5 us
// a crossing end to end (nccl-tests all_reduce of 8 B between 2 nodes of 1 A100 took 18.96 us,
// NVIDIA/nccl-tests issue #150) and 2.7 us a hop (NCCL tuning.cc hwLat[NET][Ring][LL]): the
// two-node all-reduce keeps 2 x 9.5 us, and each further hop adds 2.7 us, as going from 2 to 4
// nodes of 8 H100 on NDR adds ~10 us to a 16 B all-reduce (24.96 -> 34.82 us, nccl-tests issue
// #309) where 9.5 us per hop would add 19 us (tree) to 38 us (ring). A send/recv pays one
// crossing, and no call less than kCollectiveBaseLatencySeconds. EFA, which gives no hop
// latency, pays its latency per hop after that base.
TEST(Golden, NetworkLatencyIsPaidOncePlusPerHop) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const NetworkSpec& ib = *db->FindNetwork("ib-ndr-400");
  EXPECT_DOUBLE_EQ(ib.latency_s, 9.5e-6);
  EXPECT_DOUBLE_EQ(ib.hop_latency_s, 2.7e-6);
  const GpuSpec& h100 = *db->FindGpu("h100-sxm5-80gb");
  const ClusterLinks links = ResolveLinks(h100, ib, 8);
  const double tiny = 8;
  auto small_all_reduce = [&](int64_t ranks, int64_t stride) {
    return CollectiveSeconds(Collective::kAllReduce, tiny, PlaceGroup(links, ranks, stride));
  };
  // One rank on each of 2 nodes: two network hops, 2 x 9.5 us (LL; the 8 B transfer is ~0).
  EXPECT_NEAR(small_all_reduce(2, 8), 19e-6, 1e-8);
  // One rank on each of 4 nodes: the tree's 2 levels both ways, base + 4 hops.
  EXPECT_NEAR(small_all_reduce(4, 8), 2 * (9.5e-6 - 2.7e-6) + 4 * 2.7e-6, 1e-8);
  // 8 GPUs a node, 2 -> 4 nodes: one more tree level both ways, 2 x 2.7 us.
  EXPECT_NEAR(small_all_reduce(32, 1) - small_all_reduce(16, 1), 2 * 2.7e-6, 1e-8);
  EXPECT_NEAR(CollectiveSeconds(Collective::kSendRecv, tiny, PlaceGroup(links, 2, 8)),
              std::max(9.5e-6, kCollectiveBaseLatencySeconds), 1e-8);
  const NetworkSpec& efa = *db->FindNetwork("efa-p5");
  EXPECT_DOUBLE_EQ(efa.hop_latency_s, efa.latency_s);
  const ClusterLinks efa_links = ResolveLinks(h100, efa, 8);
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllReduce, tiny, PlaceGroup(efa_links, 4, 8)),
              kCollectiveBaseLatencySeconds + 4 * efa.latency_s, 1e-8);
}

// A network with measured busbw by node count (the Ultra-Scale Playbook's cluster, figure
// "Communication Bandwidth by Number of Nodes (size=256MB)"): a full-node group reproduces the
// measured busbw at each node count, and any group spanning nodes runs at the rate of the
// measured ring with as many ranks.
TEST(Golden, MeasuredNetworkBusbwByNodeCount) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const GpuSpec& h100 = *db->FindGpu("h100-sxm5-80gb");
  const NetworkSpec& net = *db->FindNetwork("hf-playbook-h100");
  const double bytes = 268435456.0;
  const ClusterLinks links = ResolveLinks(h100, net, 8);
  auto busbw = [&](Collective c, const GroupLink& g) {
    return bytes / CollectiveSeconds(c, bytes, g) * GetCollectiveInfo(c).bus_factor(g.ranks);
  };
  struct Point {
    Collective c;
    int nodes;
    double busbw_gbps;
  };
  // (The 2-node all_reduce, 361.7 GB/s, is above the intra-node ring busbw the model caps a
  // node's part at: NCCL ran NVLS there.)
  for (const Point& p :
       {Point{Collective::kAllReduce, 4, 160.1}, Point{Collective::kAllReduce, 64, 32.9},
        Point{Collective::kAllGather, 8, 69.0}, Point{Collective::kAllGather, 64, 11.0},
        Point{Collective::kReduceScatter, 16, 54.5}}) {
    const GroupLink g = PlaceGroup(links, 8 * p.nodes, 1);
    // Exact: the latency the measurement contained is taken out of the rate and added back.
    EXPECT_NEAR(busbw(p.c, g) / (p.busbw_gbps * 1e9), 1.0, 1e-9)
        << GetCollectiveInfo(p.c).name << " over " << p.nodes << " nodes";
  }
  // A ring spanning nodes (all-gather): the measured ring with as many ranks took volume / busbw,
  // of which its latency (NVLink hops inside its nodes, network hops between them) is taken out;
  // the group's transfer runs at that per-GPU rate on each of its ranks_per_node NICs, and its own
  // latency (every hop of a one-per-node ring is a network hop) is added.
  auto expected = [&](const GroupLink& g, double measured_nodes, double measured_gbps) {
    const double n = 8 * measured_nodes;
    const double volume = bytes * (n - 1) / n;
    // 256 MB runs the Simple protocol: the once-per-collective base, then kSimpleLatencyFactor
    // times the hops' latency.
    const double base =
        std::max(kCollectiveBaseLatencySeconds, 2 * (g.inter_latency_s - g.inter_hop_latency_s));
    const double measured_latency =
        base + kSimpleLatencyFactor * ((n - measured_nodes) * g.intra_latency_s +
                                       (measured_nodes - 1) * g.inter_hop_latency_s);
    const double per_gpu = volume / (volume / (measured_gbps * 1e9) - measured_latency) / 8;
    const double latency =
        base + kSimpleLatencyFactor * ((g.ranks - g.nodes()) * g.intra_latency_s +
                                       (g.nodes() - 1) * g.inter_hop_latency_s);
    return latency + bytes * (g.ranks - 1) / g.ranks / (g.ranks_per_node * per_gpu);
  };
  // DP across TP8 groups over 32 nodes: a 32-rank ring, one member per node, at the 4-node
  // measurement's rate (all_gather 119.0 GB/s).
  const GroupLink dp = PlaceGroup(links, 32, 8);
  ASSERT_EQ(dp.ranks_per_node, 1);
  ASSERT_EQ(dp.nodes(), 32);
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllGather, bytes, dp) / expected(dp, 4, 119.0), 1.0,
              1e-9);
  // DP across TP4 groups over 64 nodes (ZeRO-1's all-gather): a 128-rank ring, two members per
  // node, at the 16-node measurement's rate (all_gather 55.0 GB/s).
  const GroupLink dp2 = PlaceGroup(links, 128, 4);
  ASSERT_EQ(dp2.ranks_per_node, 2);
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllGather, bytes, dp2) / expected(dp2, 16, 55.0), 1.0,
              1e-9);
  // A ring shorter than the first measured one (2 ranks on 2 nodes) takes the 2-node rate.
  const GroupLink pair = PlaceGroup(links, 2, 8);
  EXPECT_NEAR(CollectiveSeconds(Collective::kAllGather, bytes, pair) / expected(pair, 2, 184.6),
              1.0, 1e-9);
}

// Interpolation: a power law between measured node counts, the first value below them, the last
// segment's decline beyond them, and never a rise beyond the largest count.
TEST(Golden, MeasuredNetworkInterpolation) {
  MeasuredNetworkBusbw m;
  m.gpus_per_node = 8;
  m.nodes = {2, 8, 32};
  m.busbw_bytes_per_s = {{"all_gather", {160e9, 80e9, 40e9}},
                         {"all_reduce", {100e9, 120e9, 150e9}}};
  EXPECT_DOUBLE_EQ(MeasuredNetworkBytesPerSecond(m, "all_gather", 2), 20e9);
  EXPECT_NEAR(MeasuredNetworkBytesPerSecond(m, "all_gather", 4), std::sqrt(160e9 * 80e9) / 8, 1e3);
  EXPECT_NEAR(MeasuredNetworkBytesPerSecond(m, "all_gather", 128), 20e9 / 8, 1e3);
  EXPECT_DOUBLE_EQ(MeasuredNetworkBytesPerSecond(m, "all_gather", 1.5), 20e9);
  EXPECT_DOUBLE_EQ(MeasuredNetworkBytesPerSecond(m, "all_reduce", 256), 150e9 / 8);
  EXPECT_EQ(MeasuredNetworkBytesPerSecond(m, "sendrecv", 8), 0.0);
}

// Placement: TP=8 inside a node, DP across nodes with one member per node.
TEST(Golden, MegatronPlacement) {
  ClusterLinks links;
  links.gpus_per_node = 8;
  links.scaleup_kind = "nvswitch";
  links.scaleup_domain_gpus = 8;
  links.scaleup_busbw = 230e9;
  links.pcie_busbw = 20e9;
  links.network_bytes_per_s = 24e9;
  EXPECT_EQ(PlaceGroup(links, 8, 1).nodes(), 1);
  EXPECT_EQ(PlaceGroup(links, 16, 8).ranks_per_node, 1);
  EXPECT_EQ(PlaceGroup(links, 16, 2).ranks_per_node, 4);
  EXPECT_DOUBLE_EQ(GroupBusBandwidth(PlaceGroup(links, 16, 2)), 4 * 24e9);
  EXPECT_DOUBLE_EQ(GroupBusBandwidth(PlaceGroup(links, 4, 1)), 230e9);
}

// Narayanan et al. 2021 Sec. 2.2: bubble fractions.
TEST(Golden, PipelineBubbles) {
  EXPECT_DOUBLE_EQ(PipelineBubbleFraction(Schedule::k1F1B, 8, 64, 1), 7.0 / 71.0);
  EXPECT_DOUBLE_EQ(PipelineBubbleFraction(Schedule::kGpipe, 4, 16, 1), 3.0 / 19.0);
  EXPECT_DOUBLE_EQ(PipelineBubbleFraction(Schedule::kInterleaved, 8, 64, 3), 7.0 / 199.0);
  // Equal stages: total = (m + (p-1)/v) t and bubble / total = the fraction above.
  const PipelineTime t = PipelineStepTime(Schedule::k1F1B, 8, 64, 1, 1.0, 8.0, 0.0);
  EXPECT_DOUBLE_EQ(t.total_s, 71.0);
  EXPECT_DOUBLE_EQ(t.bubble_s / t.total_s, 7.0 / 71.0);
  const PipelineTime vi = PipelineStepTime(Schedule::kInterleaved, 8, 64, 3, 1.0, 8.0, 0.0);
  EXPECT_NEAR(vi.bubble_s / vi.total_s, 7.0 / 199.0, 1e-12);
}

// 1F1B keeps p micro-batches in flight on the first stage, 1 on the last (Narayanan 2021);
// interleaving adds (p-1)/v on the first (Korthikanti 2022 Sec. 4.2.3) and, after Megatron's
// 2(p-s-1) + (v-1)p warm-up forwards, keeps (warm-up + 1)/v on stage s; GPipe keeps all m.
TEST(Golden, MicrobatchesInFlight) {
  EXPECT_DOUBLE_EQ(MicrobatchesInFlight(Schedule::k1F1B, 8, 64, 1, 0), 8.0);
  EXPECT_DOUBLE_EQ(MicrobatchesInFlight(Schedule::k1F1B, 8, 64, 1, 7), 1.0);
  EXPECT_DOUBLE_EQ(MicrobatchesInFlight(Schedule::k1F1B, 8, 4, 1, 0), 4.0);
  EXPECT_DOUBLE_EQ(MicrobatchesInFlight(Schedule::kInterleaved, 8, 64, 2, 0), 8.0 + 3.5);
  EXPECT_DOUBLE_EQ(MicrobatchesInFlight(Schedule::kInterleaved, 8, 64, 2, 3), (8 + 8 + 1) / 2.0);
  EXPECT_DOUBLE_EQ(MicrobatchesInFlight(Schedule::kInterleaved, 8, 64, 2, 7), (0 + 8 + 1) / 2.0);
  EXPECT_DOUBLE_EQ(MicrobatchesInFlight(Schedule::kInterleaved, 16, 16, 4, 1), 16.0);
  EXPECT_DOUBLE_EQ(MicrobatchesInFlight(Schedule::kGpipe, 8, 64, 1, 0), 64.0);
}

// The TP-overlap tests' GPU: 100 TFLOP/s on 32 SMs, no launch cost or fill depth, memory never
// the bound; and its TP group: 4 ranks in one node at 100 GB/s, no per-step latency.
DeviceRates TpOverlapTestRates() {
  DeviceRates r;
  r.matmul_flops_per_s = 100e12;
  r.memory_bytes_per_s = 1e30;
  r.sm_count = 32;
  r.kernel_overhead_s = 0;
  r.gemm_fill_depth = 0;
  return r;
}
GroupLink TpOverlapTestLink() {
  GroupLink tp;
  tp.ranks = 4;
  tp.ranks_per_node = 4;
  tp.intra_bytes_per_s = 100e9;
  return tp;
}

// Transformer Engine's userbuffers overlap (initialize_ub defaults, TE pytorch/module/base.py):
// ring exchange = tp row chunks, chunk i + 1 copied while chunk i is multiplied; pipeline = 4
// row chunks on the SMs 16 reduce-scatter SMs leave, chunk i reduce-scattered while chunk i + 1
// is multiplied; bulk = the collective beside a whole GEMM on those SMs. Shapes are chosen so that
// every GEMM and every chunk fills whole waves of 32 (or, narrowed, 16) SMs: its time is
// FLOPs / rate (the next test prices chunks that do not).
TEST(Golden, TransformerEngineTpOverlap) {
  const DeviceRates r = TpOverlapTestRates();
  const GroupLink tp = TpOverlapTestLink();
  const double T = 4096, h = 4096, e = 2;
  const TpOverlapGemms g{T, h, 1536, 1024, 4096, 2048};
  const double full = 100e12, narrow = 50e12;  // 16 of 32 SMs left to the GEMM
  auto gemm = [](double m, double n, double k, double rate) { return 2 * m * n * k / rate; };
  // Each transfer is a call of its own: kCollectiveBaseLatencySeconds (tp.intra_latency_s is 0).
  const double call = kCollectiveBaseLatencySeconds;
  const double copy = call + T / 4 * h * e / 100e9;                // one ring-exchange step
  const double rs_chunk = call + T / 4 * h * e * 3.0 / 4 / 100e9;  // reduce-scatter of a quarter
  const double collective = call + T * h * e * 3.0 / 4 / 100e9;    // all-gather or reduce-scatter

  auto ring = [&](double n, double k) {
    const double chunk = gemm(T / 4, n, k, full);
    return 3 * std::max(chunk, copy) + chunk;
  };
  auto pipeline = [&](double k) {
    const double chunk = gemm(T / 4, h, k, narrow);
    return chunk + 3 * std::max(chunk, rs_chunk) + rs_chunk;
  };
  const TpOverlapPass fwd = TpOverlapForward(r, g, tp, e);
  EXPECT_NEAR(fwd.overlapped, ring(1536, h) + pipeline(1024) + ring(4096, h) + pipeline(2048),
              1e-12);
  EXPECT_NEAR(fwd.gemms,
              gemm(T, 1536, h, full) + gemm(T, h, 1024, full) + gemm(T, 4096, h, full) +
                  gemm(T, h, 2048, full),
              1e-12);
  // Here the copies hide behind the chunks: the forward pays the narrowed reduce-scatter GEMMs
  // (twice as long on half the SMs) and the last reduce-scatter chunk of each.
  EXPECT_NEAR(fwd.Extra(), gemm(T, h, 1024, full) + gemm(T, h, 2048, full) + 2 * rs_chunk, 1e-12);

  auto bulk = [&](double width) {
    return std::max(gemm(T, h, width, narrow), collective) +
           std::max(gemm(width, h, T, narrow), collective);
  };
  const TpOverlapPass bwd = TpOverlapBackward(r, g, tp, e);
  EXPECT_NEAR(bwd.overlapped, ring(1024, h) + bulk(1536) + ring(2048, h) + bulk(4096), 1e-12);
  EXPECT_GT(bwd.Extra(), 0);

  // Without the MLP (a mixture-of-experts layer) only the attention GEMMs overlap.
  const TpOverlapGemms attention{T, h, 1536, 1024, 0, 0};
  EXPECT_NEAR(TpOverlapForward(r, attention, tp, e).overlapped, ring(1536, h) + pipeline(1024),
              1e-12);
  EXPECT_DOUBLE_EQ(TpOverlapBufferBytes(kTpOverlapUserBuffers, T, h, e), 12 * T * h * e);
}

// Without userbuffers, Megatron-LM's column-parallel linear
// (megatron/core/tensor_parallel/layers.py, LinearWithGradAccumulationAndAsyncCommunication.
// backward) and Transformer Engine's _Linear.backward issue their backward collectives with
// async_op=True: under sequence parallelism the input's all-gather beside the data-gradient GEMM
// and the data gradient's reduce-scatter beside the weight-gradient GEMM; without it the data
// gradient's all-reduce beside the weight-gradient GEMM. The row-parallel layers' output-gradient
// all-gather (sequence parallelism) stays in line. Each pair costs exposed(comm, window) =
// max(comm - window, 0.15 min(comm, window)) (docs/COST_MODEL.md, "Overlap").
TEST(Golden, MegatronAsyncTpBackward) {
  const DeviceRates r = TpOverlapTestRates();
  GroupLink tp = TpOverlapTestLink();
  const double T = 4096, h = 4096, e = 2;
  const TpOverlapGemms g{T, h, 1536, 1024, 4096, 2048};
  auto gemm = [](double m, double n, double k) { return 2 * m * n * k / 100e12; };
  auto exposed = [](double comm, double window) {
    return std::max(comm - window, 0.15 * std::min(comm, window));
  };
  const double call = kCollectiveBaseLatencySeconds;
  const double gather = call + T * h * e * 3.0 / 4 / 100e9;  // all-gather = reduce-scatter
  const double reduce = call + 2 * T * h * e * 3.0 / 4 / 100e9;
  auto block = [&](double width, bool sp) {
    const double dgrad = gemm(T, h, width);
    const double wgrad = gemm(width, h, T);
    return sp ? gather + exposed(gather, dgrad) + exposed(gather, wgrad) : exposed(reduce, wgrad);
  };
  // Here every collective hides behind its GEMM (FC1's data gradient: 1.37 ms; an all-gather of
  // 32 MiB at 100 GB/s: 0.26 ms): each pair costs 15% of its collective.
  ASSERT_LT(gather, gemm(T, h, 1536));
  const double sp = TpAsyncBackwardSeconds(r, g, tp, e, true);
  EXPECT_NEAR(sp, block(1536, true) + block(4096, true), 1e-12);
  EXPECT_NEAR(sp, 2 * gather + 4 * 0.15 * gather, 1e-12);
  const double no_sp = TpAsyncBackwardSeconds(r, g, tp, e, false);
  EXPECT_NEAR(no_sp, 2 * 0.15 * reduce, 1e-12);
  // The in-line backward pays an all-gather and a reduce-scatter (an all-reduce) per block.
  EXPECT_LT(sp, 4 * gather);
  EXPECT_LT(no_sp, 2 * reduce);
  // On a slow link the collectives outlast the GEMMs and show beyond them.
  tp.intra_bytes_per_s = 1e9;
  const double slow_gather = call + T * h * e * 3.0 / 4 / 1e9;
  EXPECT_NEAR(
      TpAsyncBackwardSeconds(r, g, tp, e, true),
      2 * slow_gather + 2 * (slow_gather - gemm(T, h, 1536)) + 2 * (slow_gather - gemm(T, h, 4096)),
      1e-9);
  // Without the MLP (a mixture-of-experts layer's experts stay in line) only the attention.
  const TpOverlapGemms attention{T, h, 1536, 1024, 0, 0};
  tp.intra_bytes_per_s = 100e9;
  EXPECT_NEAR(TpAsyncBackwardSeconds(r, attention, tp, e, true), block(1536, true), 1e-12);
}

// The chunk GEMMs of a ring exchange or a pipeline run on TE's three compute streams, chunk i on
// stream i mod 3 (comm_gemm_overlap.cpp split_overlap_ag / split_overlap_rs), so a chunk too small
// to fill the SMs shares its waves with the next one: the chunks together take what the whole
// GEMM takes. At 512 tokens on TP4 a QKV chunk is 128 x 1536, 12 tiles of 128 x 128 on 32 SMs
// (a wave 37.5% full); the four chunks' 48 tiles fill two waves 75%, half the time of four
// chunks a wave each.
TEST(Golden, TransformerEngineTpOverlapChunksShareTheWaves) {
  const DeviceRates r = TpOverlapTestRates();
  const GroupLink tp = TpOverlapTestLink();
  const double T = 512, h = 4096, e = 2;
  const double call = kCollectiveBaseLatencySeconds;
  const double copy = call + T / 4 * h * e / 100e9;                // 20.5 us
  const double rs_chunk = call + T / 4 * h * e * 3.0 / 4 / 100e9;  // 17.9 us
  const double qkv = 2 * T * 1536 * h / (100e12 * 0.75);           // 48 tiles in 2 waves of 32
  ASSERT_GT(qkv / 4, copy);  // the copies hide behind the chunks
  // The projection on 16 SMs (half the rate): 4 x 32 tiles, whole waves.
  const double proj = 2 * T * h * 1024 / 50e12;
  ASSERT_GT(proj / 4, rs_chunk);
  const TpOverlapGemms attention{T, h, 1536, 1024, 0, 0};
  const TpOverlapPass fwd = TpOverlapForward(r, attention, tp, e);
  EXPECT_NEAR(fwd.overlapped, qkv + proj + rs_chunk, 1e-12);
  // The ring exchange adds nothing to the un-split QKV GEMM; the projection pays its narrowed
  // SMs and its last reduce-scatter chunk.
  EXPECT_NEAR(fwd.Extra(), proj - 2 * T * h * 1024 / 100e12 + rs_chunk, 1e-12);
}

// FlashAttention-3 paper (Shah et al. 2024), "Attention forward speed, head dim 128 (H100 80GB
// SXM5)", causal, 16k tokens per launch: TFLOP/s at 512 ... 16,384 tokens. The length factor
// follows FlashAttention-2 and cuDNN, the kernels it was fitted on, within 4% of their rate
// relative to 4,096 tokens; FlashAttention-3 falls faster on short sequences (0.50 at 512).
TEST(Golden, AttentionRateFollowsTheSequenceLength) {
  const double tokens[] = {512, 1024, 2048, 4096, 8192, 16384};
  const double fa2[] = {191, 260, 298, 319, 333, 335};
  const double cudnn[] = {315, 410, 484, 518, 529, 539};
  for (size_t i = 0; i < std::size(tokens); ++i) {
    const double factor = AttentionLengthFactor(tokens[i]);
    EXPECT_NEAR(factor / (fa2[i] / fa2[3]), 1.0, 0.04) << tokens[i];
    EXPECT_NEAR(factor / (cudnn[i] / cudnn[3]), 1.0, 0.04) << tokens[i];
  }
  EXPECT_DOUBLE_EQ(AttentionLengthFactor(kAttentionReferenceTokens), 1.0);
  // Half the asymptotic rate at s0 tokens.
  const double asymptote =
      (kAttentionReferenceTokens + kAttentionHalfRateTokens) / kAttentionReferenceTokens;
  EXPECT_NEAR(AttentionLengthFactor(kAttentionHalfRateTokens), asymptote / 2, 1e-12);
}

// fp8 GEMMs reach less of their peak than 16-bit ones: ml-engineering's MAMF (hardware-db/
// calibration/gemm.json) gives the H100 SXM 1402.6 of 1979 TFLOP/s in fp8 e4m3 against 794.5 of
// 989.5 in bf16, 1.77x and not 2x; gpuplan's cuBLASLt profile of an H200 found 1374.8 against
// 785.4. fp8 attention stays bf16. A GPU without a measured fp8 fraction keeps the 16-bit one.
TEST(Golden, Fp8GemmsRunAtTheirMeasuredFraction) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const GpuSpec& h100 = *db->FindGpu("h100-sxm5-80gb");
  const DeviceRates fp8 = DatasheetRates(h100, Precision::kFp8);
  const DeviceRates bf16 = DatasheetRates(h100, Precision::kBf16);
  EXPECT_NEAR(fp8.matmul_flops_per_s, 1402.6e12 * kSustainedGemmFraction, 0.1e12);
  EXPECT_NEAR(bf16.matmul_flops_per_s, 794.5e12 * kSustainedGemmFraction, 0.1e12);
  EXPECT_NEAR(fp8.matmul_flops_per_s / bf16.matmul_flops_per_s, 1402.6 / 794.5, 1e-3);
  EXPECT_DOUBLE_EQ(fp8.attention_flops_per_s, bf16.attention_flops_per_s);
  const GpuSpec& l40s = *db->FindGpu("l40s");
  ASSERT_EQ(l40s.gemm_efficiency_fp8, 0);
  EXPECT_DOUBLE_EQ(DatasheetRates(l40s, Precision::kFp8).matmul_flops_per_s,
                   l40s.PeakFlops(Precision::kFp8) * l40s.gemm_efficiency * kSustainedGemmFraction);
}

// The host device's attention is the reference kernel of kernels/, whose rate does not follow the
// length (measured on a 2-core host: 7.5 GFLOP/s forward at 256 and at 512 tokens); its GEMMs
// and measured attention run alone on their core, at the rate the profile times (gpus.json:
// sustained_gemm_fraction 1). A profile's fp32 attention samples stand for fp32 jobs, its 16-bit
// ones for bf16/fp16/fp8 jobs only.
TEST(Golden, HostDeviceRatesAreTheProfiles) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  const GpuSpec& cpu = *db->FindGpu("cpu");
  const GpuSpec& h100 = *db->FindGpu("h100-sxm5-80gb");
  EXPECT_DOUBLE_EQ(AttentionLengthFactor(256, AttentionHalfRateTokens(cpu)), 1.0);
  EXPECT_DOUBLE_EQ(AttentionHalfRateTokens(h100), kAttentionHalfRateTokens);
  EXPECT_DOUBLE_EQ(SustainedGemmFraction(cpu), 1.0);
  EXPECT_DOUBLE_EQ(SustainedGemmFraction(h100), kSustainedGemmFraction);
  EXPECT_DOUBLE_EQ(SustainedGemmFraction(h100, RateCalibration{0.7, 0.4}), 0.7);

  MeasuredRates measured;
  measured.gpu_id = "cpu";
  measured.gemm_flops_per_s[static_cast<int>(Precision::kFp32)] = 46e9;
  measured.attention_forward_flops_per_s = 7.5e9;
  measured.attention_backward_flops_per_s = 6e9;
  measured.attention_precision = Precision::kFp32;
  const DeviceRates r = CalibratedRates(cpu, Precision::kFp32, &measured);
  EXPECT_DOUBLE_EQ(r.matmul_flops_per_s, 46e9);
  EXPECT_DOUBLE_EQ(r.attention_flops_per_s, 7.5e9);
  EXPECT_DOUBLE_EQ(r.attention_backward_flops_per_s, 6e9);

  measured.gpu_id = h100.id;
  const DeviceRates datasheet = DatasheetRates(h100, Precision::kBf16);
  EXPECT_DOUBLE_EQ(CalibratedRates(h100, Precision::kBf16, &measured).attention_flops_per_s,
                   datasheet.attention_flops_per_s);
  measured.attention_precision = Precision::kBf16;
  EXPECT_DOUBLE_EQ(CalibratedRates(h100, Precision::kBf16, &measured).attention_flops_per_s,
                   7.5e9 * kSustainedGemmFraction);
  EXPECT_DOUBLE_EQ(CalibratedRates(h100, Precision::kFp32, &measured).attention_flops_per_s,
                   DatasheetRates(h100, Precision::kFp32).attention_flops_per_s);
}
// The host device's norms, activation, cross-entropy and AdamW run the reference kernels of
// kernels/, bound by their arithmetic: a CPU profile's times per element price them (the
// per-element costs of HostKernelTimes) instead of their bytes at the copy bandwidth; the residual
// adds stay priced by their bytes (tiny-llama of examples/cpu: hidden 256, SwiGLU 688, vocabulary
// 8,192, 256 tokens per micro-batch, no dropout, no rotary bytes beyond q and k). A GPU keeps the
// bandwidth model whatever the profile holds.
TEST(Golden, HostElementwiseKernelsAreTheProfilesPerElement) {
  const JobSpec job = ParseTestJob(nlohmann::json::parse(R"({
    "model": {"name": "tiny-llama", "num_layers": 4, "hidden_size": 256, "ffn_hidden_size": 688,
              "num_attention_heads": 8, "num_kv_heads": 4, "vocab_size": 8192, "mlp": "swiglu"},
    "cluster": {"gpu": "cpu", "num_gpus": 2},
    "training": {"seq_len": 256, "micro_batch_size": 1, "global_batch_size": 4,
                 "precision": "fp32"},
    "parallelism": {"dp": 2}})"));
  const GpuSpec& cpu = GpuOf(job);
  const NetworkSpec& net = *BuiltinDb().FindNetwork(job.cluster.inter_node);
  MeasuredRates measured;
  measured.gpu_id = "cpu";
  measured.memory_bytes_per_s = 24e9;
  measured.host_kernels.rmsnorm = {0.85e-9, 1.0e-9};
  measured.host_kernels.swiglu = {4.6e-9, 4.4e-9};
  measured.host_kernels.cross_entropy_s = 8.0e-9;
  measured.host_kernels.adam_s = 3.9e-9;
  const DeviceRates r = CalibratedRates(cpu, Precision::kFp32, &measured);
  const StepCosts costs = ComputeStepCosts(job, cpu, net, r);
  measured.host_kernels = {};
  const DeviceRates bytes_only = CalibratedRates(cpu, Precision::kFp32, &measured);
  const StepCosts bytes_costs = ComputeStepCosts(job, cpu, net, bytes_only);

  const double T = 256, h = 256, f = 688, V = 8192;
  const double norm_elements = 2 * h * T;  // two RMSNorms over h per token
  const double act_outputs = f * T;        // SwiGLU's outputs
  // Residual adds (6h per token) and rotary on q and k (2 x (256 + 128)), 4 bytes each, in
  // 6 - 3 kernels.
  const double rest_s = MemoryBoundSeconds(r, 4.0 * (6 * h * T + 2 * (256 + 128) * T), 3);
  EXPECT_NEAR(costs.dense.fwd_other, 0.85e-9 * norm_elements + 4.6e-9 * act_outputs + rest_s,
              1e-12);
  EXPECT_NEAR(
      costs.dense.bwd - bytes_costs.dense.bwd,
      1.0e-9 * norm_elements + 4.4e-9 * act_outputs + 2 * rest_s - 2 * bytes_costs.dense.fwd_other,
      1e-12);
  EXPECT_NEAR(costs.dense.mlp_fwd - bytes_costs.dense.mlp_fwd,
              4.6e-9 * act_outputs -
                  bytes_costs.dense.fwd_other * 3 * f / (10 * h + 3 * f + 2 * (256 + 128)),
              1e-12);
  // Cross-entropy: the loss and the logits' gradient in one kernel, half in each pass.
  const double ce = 8.0e-9 * T * V;
  const double ce_bytes = MemoryBoundSeconds(r, 16.0 * T * V, 4);
  EXPECT_NEAR(costs.head_fwd - bytes_costs.head_fwd, 0.5 * (ce - ce_bytes), 1e-12);
  EXPECT_NEAR(costs.head_bwd - bytes_costs.head_bwd, 0.5 * (ce - ce_bytes), 1e-12);
  EXPECT_DOUBLE_EQ(OptimizerSeconds(costs, job, cpu, r, 1e6), 3.9e-3);
  EXPECT_DOUBLE_EQ(OptimizerSeconds(bytes_costs, job, cpu, bytes_only, 1e6),
                   MemoryBoundSeconds(bytes_only, kAdamBytesPerParam * 1e6, 10));

  // A validation correction scales them with the other kernels.
  measured.host_kernels.cross_entropy_s = 8.0e-9;
  measured.compute_time_factor = 1.5;
  EXPECT_DOUBLE_EQ(CalibratedRates(cpu, Precision::kFp32, &measured).host_kernels.cross_entropy_s,
                   12.0e-9);
  // GPUs: not used.
  const GpuSpec& h100 = *BuiltinDb().FindGpu("h100-sxm5-80gb");
  measured.gpu_id = h100.id;
  EXPECT_EQ(CalibratedRates(h100, Precision::kBf16, &measured).host_kernels.cross_entropy_s, 0.0);
}
// Megatron-Core runs a rank's routed experts with --moe-grouped-gemm as Transformer Engine's
// GroupedLinear: one cuBLAS GEMM per local expert over the copies routed to it
// (general_grouped_gemm, several streams), not top_k GEMMs over all the rank's tokens.
// Qwen3-30B-A3B's expert FC1 (hidden 2,048 -> SwiGLU 2 x 768) on an H100 at 4,096 tokens x top-8:
// at EP 8 the rank's 16 experts take 2,048 rows each; at EP 1 its 128 experts 256 each, and reading
// their weights (128 x 2,048 x 1,536 x 2 bytes) outlasts the arithmetic.
TEST(Golden, GroupedExpertGemmsRunOneGemmPerLocalExpert) {
  const GpuSpec& h100 = *BuiltinDb().FindGpu("h100-sxm5-80gb");
  const DeviceRates r = DatasheetRates(h100, Precision::kBf16);
  ASSERT_EQ(r.sm_count, 132);
  const double fill = r.gemm_fill_depth;

  // One expert is one GEMM.
  const GemmPasses one = GroupedGemmPasses(r, 1, 4096, 1536, 2048);
  EXPECT_DOUBLE_EQ(one.forward_s, GemmSeconds(r, 4096, 1536, 2048));
  EXPECT_DOUBLE_EQ(one.dgrad_s, GemmSeconds(r, 4096, 2048, 1536));
  EXPECT_DOUBLE_EQ(one.wgrad_s, GemmSeconds(r, 1536, 2048, 4096));

  // EP 8: 16 x 12 tiles per expert, 3,072 in all over 24 waves of 132 SMs; compute-bound.
  const GemmPasses ep8 = GroupedGemmPasses(r, 16, 2048, 1536, 2048);
  const double flops = 2.0 * 2048 * 1536 * 2048 * 16;
  const double ep8_forward =
      flops / (r.matmul_flops_per_s * (3072.0 / (24 * 132)) * (2048.0 / (2048 + fill))) +
      16 * r.kernel_overhead_s;
  EXPECT_NEAR(ep8.forward_s, ep8_forward, 1e-12);
  EXPECT_NEAR(ep8.forward_s, 0.00040, 0.00005);

  // EP 1: the same FLOPs, tiles and waves, but 1.04 GB of weights and rows to read, and 128
  // kernels.
  const GemmPasses ep1 = GroupedGemmPasses(r, 128, 256, 1536, 2048);
  const double bytes = 2.0 * 128 * (256 * 2048 + 2048 * 1536 + 256 * 1536);
  EXPECT_NEAR(ep1.forward_s, bytes / r.memory_bytes_per_s + 128 * r.kernel_overhead_s, 1e-12);
  EXPECT_GT(ep1.forward_s, 1.5 * ep8.forward_s);
  // Its weight gradient reduces over 256 rows per expert: 256 / (256 + fill) of the main loop.
  const double wgrad_compute =
      flops / (r.matmul_flops_per_s * (12.0 * 16 * 128 / (std::ceil(12.0 * 16 * 128 / 132) * 132)) *
               (256 / (256 + fill)));
  EXPECT_NEAR(ep1.wgrad_s,
              std::max(wgrad_compute, bytes / r.memory_bytes_per_s) + 128 * r.kernel_overhead_s,
              1e-12);

  // In a layer: the MLP's forward follows the local experts, where top_k GEMMs over all of the
  // rank's tokens would cost the same at every EP degree.
  auto moe_layer = [](int ep) {
    const JobSpec job =
        ParseTestJob(nlohmann::json{{"model",
                                     {{"name", "qwen3-30b-a3b-like"},
                                      {"num_layers", 4},
                                      {"hidden_size", 2048},
                                      {"ffn_hidden_size", 6144},
                                      {"num_attention_heads", 32},
                                      {"num_kv_heads", 4},
                                      {"head_dim", 128},
                                      {"vocab_size", 151936},
                                      {"mlp", "swiglu"},
                                      {"moe_num_experts", 128},
                                      {"moe_top_k", 8},
                                      {"moe_ffn_hidden_size", 768}}},
                                    {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 8}}},
                                    {"training",
                                     {{"seq_len", 4096},
                                      {"micro_batch_size", 1},
                                      {"global_batch_size", 64},
                                      {"precision", "bf16"}}},
                                    {"parallelism", {{"dp", 8}, {"ep", ep}}}});
    const GpuSpec& gpu = GpuOf(job);
    const StepCosts costs =
        ComputeStepCosts(job, gpu, *BuiltinDb().FindNetwork(job.cluster.inter_node),
                         DatasheetRates(gpu, Precision::kBf16));
    return costs.moe;
  };
  const LayerCosts at_ep1 = moe_layer(1);
  const LayerCosts at_ep8 = moe_layer(8);
  EXPECT_GT(at_ep1.mlp_fwd, 1.4 * at_ep8.mlp_fwd);
  EXPECT_GT(at_ep1.mlp_wgrad, 1.4 * at_ep8.mlp_wgrad);
  EXPECT_DOUBLE_EQ(at_ep1.fwd_flops, at_ep8.fwd_flops);
}

// Megatron-Core's all-to-all dispatcher permutes each local token to its top_k slots before the
// dispatch, sorts the received rows by local expert after it and restores them before the
// combine (when the rank holds more than one expert), and sums each token's top_k rows after
// the combine (token_dispatcher.py: permute, sort_chunks_by_idxs, unpermute). Qwen3-30B-A3B
// (hidden 2,048, top-8) at 4,096 tokens per rank, bf16: with 16 local experts 2 x 8 x 4,096 +
// 2 x 2 x 32,768 + 9 x 4,096 = 233,472 rows of 4 KiB, 956 MB per pass; with one local expert no
// sort, 102,400 rows.
TEST(Golden, MoePermutationCopiesEveryRoutedRow) {
  const MoePermutation sixteen = MoePermutationOf(8, 4096, 32768, 16, 2048, 2);
  EXPECT_DOUBLE_EQ(sixteen.bytes, 233472.0 * 2048 * 2);
  EXPECT_DOUBLE_EQ(sixteen.kernels, 4);
  const MoePermutation one = MoePermutationOf(8, 4096, 32768, 1, 2048, 2);
  EXPECT_DOUBLE_EQ(one.bytes, 102400.0 * 2048 * 2);
  EXPECT_DOUBLE_EQ(one.kernels, 2);
}

}  // namespace
}  // namespace gpuplan

// The measured step as a timeline: the text ranks send to rank 0 reads back, the streams ops
// belong to, and the trace that puts measured ranks before the simulated ones.
#include "validator/measured_trace.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "tests/validator/test_job.h"

namespace gpuplan {
namespace {

TEST(MeasuredTrace, OpsReadBackFromTheirText) {
  const std::vector<MeasuredOp> ops = {
      {"gemm qkv", SimStream::kCompute, 0.000125, 0.001, 3, 1, 7, 0},
      {"all_reduce grads", SimStream::kDpReduce, 0.5, 0.75, -1, -1, -1, 1.5e9},
      {"recv activations", SimStream::kPpRecv, 1e-9, 2e-9, 0, 0, -1, 4096, 3, 129}};
  Expected<std::vector<MeasuredOp>> back = ParseMeasuredOps(SerializeMeasuredOps(ops));
  ASSERT_TRUE(back.ok()) << back.status().message();
  ASSERT_EQ(back->size(), ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ((*back)[i].name, ops[i].name);
    EXPECT_EQ((*back)[i].stream, ops[i].stream);
    EXPECT_NEAR((*back)[i].start_s, ops[i].start_s, 1e-9);
    EXPECT_NEAR((*back)[i].end_s, ops[i].end_s, 1e-9);
    EXPECT_EQ((*back)[i].microbatch, ops[i].microbatch);
    EXPECT_EQ((*back)[i].chunk, ops[i].chunk);
    EXPECT_EQ((*back)[i].layer, ops[i].layer);
    EXPECT_DOUBLE_EQ((*back)[i].bytes, ops[i].bytes);
    EXPECT_EQ((*back)[i].peer, ops[i].peer);
    EXPECT_EQ((*back)[i].tag, ops[i].tag);
  }
  MeasuredOp tabbed = ops[0];
  tabbed.name = "a\tb\nc";
  EXPECT_EQ((*ParseMeasuredOps(SerializeMeasuredOps({tabbed})))[0].name, "a b c");
  EXPECT_TRUE(ParseMeasuredOps("")->empty());
  EXPECT_EQ(ParseMeasuredOps("0\t1\t2\t0\t0\t-1\t0\t-1\t-1\tok\n9\t1\t2\t0\t0\t-1\t0\t-1\t-1\tx\n")
                .status()
                .message(),
            "measured ops, line 2: '9\t1\t2\t0\t0\t-1\t0\t-1\t-1\tx' is not 'stream, start, end, "
            "micro-batch, chunk, layer, bytes, peer, tag, name' (tabs)");
  EXPECT_FALSE(ParseMeasuredOps("0\tnan\t2\t0\t0\t-1\t0\t-1\t-1\tx\n").ok());
  EXPECT_FALSE(ParseMeasuredOps("0\t1\t2\t0\t0\t-1\t0\tx\n").ok());  // no peer and tag
}

TEST(MeasuredTrace, OpsGoToTheStreamsOfTheSimulatedTimeline) {
  RankOp op;
  op.kind = RankOpKind::kCompute;
  EXPECT_EQ(MeasuredStream(op), SimStream::kCompute);
  op.kind = RankOpKind::kCollective;
  const std::pair<GroupKind, SimStream> groups[] = {{GroupKind::kTp, SimStream::kTp},
                                                    {GroupKind::kCp, SimStream::kCp},
                                                    {GroupKind::kEp, SimStream::kEp},
                                                    {GroupKind::kDp, SimStream::kDpReduce},
                                                    {GroupKind::kExpertDp, SimStream::kDpReduce}};
  for (const auto& [group, stream] : groups) {
    op.group = group;
    op.name = "all_reduce";
    EXPECT_EQ(MeasuredStream(op), stream) << GroupKindName(group);
  }
  op.group = GroupKind::kDp;
  op.name = "all_gather params";
  EXPECT_EQ(MeasuredStream(op), SimStream::kDpGather);
  op.kind = RankOpKind::kSend;
  EXPECT_EQ(MeasuredStream(op), SimStream::kPpSend);
  op.kind = RankOpKind::kRecv;
  EXPECT_EQ(MeasuredStream(op), SimStream::kPpRecv);
}

// Two measured ranks of a PP2 plan, then the simulated timeline's ranks with their ops, flows
// and counters renumbered after them.
TEST(MeasuredTrace, ComparisonPutsMeasuredRanksFirst) {
  const JobSpec job = TestJob({.pp = 2});
  const RankLayout layout = MakeRankLayout(job);
  const std::vector<std::vector<MeasuredOp>> measured = {
      {{"forward", SimStream::kCompute, 0, 1, 0, 0, -1, 0}},
      {{"recv activations", SimStream::kPpRecv, 0, 1, 0, 0, -1, 8},
       {"forward", SimStream::kCompute, 1, 2, 0, 0, -1, 0}}};
  Timeline simulated;
  simulated.ranks = {{"stage 0 (rank 0)", 0, 0, 1}, {"stage 1 (rank 1)", 1, 1, 1}};
  simulated.ops = {{0, SimStream::kPpSend, "send", 0, 1}, {1, SimStream::kPpRecv, "recv", 0, 1}};
  simulated.flows = {{0, 1}};
  simulated.activation_memory = {{1, 0.5, 1e9}};
  const Timeline tl = ComparisonTimeline(layout, measured, simulated);
  ASSERT_EQ(tl.ranks.size(), 4u);
  EXPECT_EQ(tl.ranks[0].name, "measured rank 0 (stage 0)");
  EXPECT_EQ(tl.ranks[1].name, "measured rank 1 (stage 1)");
  EXPECT_EQ(tl.ranks[1].stage, 1);
  EXPECT_EQ(tl.ranks[3].name, "simulated stage 1 (rank 1)");
  ASSERT_EQ(tl.ops.size(), 5u);
  EXPECT_EQ(tl.ops[1].rank, 1);
  EXPECT_EQ(tl.ops[1].name, "recv activations");
  EXPECT_EQ(tl.ops[4].rank, 3);
  ASSERT_EQ(tl.flows.size(), 1u);
  EXPECT_EQ(tl.flows[0].from, 3);
  EXPECT_EQ(tl.flows[0].to, 4);
  EXPECT_EQ(tl.activation_memory[0].rank, 3);
}

// Each measured message is a flow from its send to its receive: the receive on the send's peer
// whose peer is the sender, with the same tag, k-th with k-th when a tag repeats; a send whose
// receive is missing has none.
TEST(MeasuredTrace, MeasuredMessagesAreFlowsFromSendToReceive) {
  const JobSpec job = TestJob({.pp = 2});
  const RankLayout layout = MakeRankLayout(job);
  const std::vector<std::vector<MeasuredOp>> measured = {
      {{"send activations", SimStream::kPpSend, 0, 1, 0, 0, -1, 8, 1, 5},
       {"send activations", SimStream::kPpSend, 1, 2, 1, 0, -1, 8, 1, 6},
       {"send activations", SimStream::kPpSend, 2, 3, 128, 0, -1, 8, 1, 5},
       {"recv gradients", SimStream::kPpRecv, 3, 4, 0, 0, -1, 8, 1, 7}},
      {{"recv activations", SimStream::kPpRecv, 0, 1, 0, 0, -1, 8, 0, 5},
       {"recv activations", SimStream::kPpRecv, 2, 3, 128, 0, -1, 8, 0, 5},
       {"send gradients", SimStream::kPpSend, 3, 4, 0, 0, -1, 8, 0, 7},
       {"forward", SimStream::kCompute, 1, 2, 0, 0, -1, 0}}};
  const Timeline tl = ComparisonTimeline(layout, measured, Timeline{});
  ASSERT_EQ(tl.ops.size(), 8u);
  std::vector<std::pair<int32_t, int32_t>> flows;
  for (const TimelineFlow& f : tl.flows) flows.emplace_back(f.from, f.to);
  std::sort(flows.begin(), flows.end());
  // Tag 5 twice (micro-batches 0 and 128), tag 7 backward; tag 6 was never received.
  EXPECT_EQ(flows, (std::vector<std::pair<int32_t, int32_t>>{{0, 4}, {2, 5}, {6, 3}}));
}

}  // namespace
}  // namespace gpuplan

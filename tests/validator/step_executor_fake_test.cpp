// The step executor over a fake transport, without MPI or NCCL: which collectives and messages a
// rank's program asks its transport for, with which element counts, and how a transport's wrong
// elements and failures reach the result.
#include <gtest/gtest.h>

#include <map>

#include "tests/validator/test_job.h"
#include "validator/step_executor.h"

namespace gpuplan {
namespace {

// Records every call; every element arrives right unless `wrong_per_receive` says otherwise.
class FakeTransport : public StepTransport {
 public:
  FakeTransport(const RankLayout& layout, int64_t rank)
      : layout_(layout), coord_(layout.ranks[static_cast<size_t>(rank)]) {}
  const RankCoord& Coord() const override { return coord_; }
  const std::vector<int64_t>& Members(GroupKind kind) const override {
    return layout_.Groups(kind)[static_cast<size_t>(layout_.GroupOf(kind, coord_.rank))];
  }
  Expected<CollectiveCheck> Collective(CollectiveKind kind, GroupKind group, int64_t count,
                                       const Watchdog& watchdog) override {
    ++calls[{kind, group}];
    whats.push_back(watchdog.what);
    counts.push_back(count);
    return CollectiveCheck{count, 0};
  }
  Status Send(int64_t, int tag, int64_t) override {
    ++sends;
    tags.push_back(tag);
    return Status::Ok();
  }
  Expected<CollectiveCheck> Receive(int64_t peer, int, int64_t count,
                                    const Watchdog& watchdog) override {
    if (fail_receive) {
      return Status::Unavailable(watchdog.what + " from " + std::to_string(peer) + ": timed out");
    }
    return CollectiveCheck{count, wrong_per_receive};
  }
  Status FinishSends(const Watchdog&) override {
    ++finished;
    return Status::Ok();
  }

  std::map<std::pair<CollectiveKind, GroupKind>, int64_t> calls;
  std::vector<std::string> whats;
  std::vector<int64_t> counts;
  std::vector<int> tags;
  int64_t sends = 0, finished = 0, wrong_per_receive = 0;
  bool fail_receive = false;

 private:
  const RankLayout& layout_;
  RankCoord coord_;
};

TEST(StepExecutor, CollectiveKindsComeFromTheOpNames) {
  EXPECT_EQ(*CollectiveKindOf("all_reduce grad buckets"), CollectiveKind::kAllReduce);
  EXPECT_EQ(*CollectiveKindOf("all_gather params"), CollectiveKind::kAllGather);
  EXPECT_EQ(*CollectiveKindOf("reduce_scatter"), CollectiveKind::kReduceScatter);
  EXPECT_EQ(*CollectiveKindOf("alltoall dispatch"), CollectiveKind::kAllToAll);
  EXPECT_EQ(*CollectiveKindOf("ring send/recv kv"), CollectiveKind::kRing);
  EXPECT_EQ(CollectiveKindOf("broadcast").status().message(),
            "collective 'broadcast': not one the executor runs (all_reduce, all_gather, "
            "reduce_scatter, alltoall, ring send/recv)");
}

// TP2 with sequence parallelism: the layers' all-gathers and reduce-scatters over tp carry each
// rank's block (half the op's bytes), the gradients' all-reduce over dp none (dp 1: no call).
TEST(StepExecutor, AsksTheTransportForEachCollectiveOfTheProgram) {
  const JobSpec job = TestJob({.tp = 2, .seq_len = 1024, .sequence_parallel = true});
  const RankLayout layout = MakeRankLayout(job);
  const std::vector<ProgramStep> program = RankProgram(job, layout, 1);
  int64_t expected = 0;
  for (const ProgramStep& step : program) {
    for (const RankOp& op : step.ops) {
      if (op.kind == RankOpKind::kCollective) expected += op.count;
      if (op.kind != RankOpKind::kLayers) continue;
      for (const LayerOp& inner : ExpandLayers(job, 0, step, op)) {
        if (inner.op.kind == RankOpKind::kCollective) expected += inner.op.count;
      }
    }
  }
  FakeTransport transport(layout, 1);
  StepOptions options;
  options.max_bytes_per_op = 1 << 20;
  Expected<StepRunResult> run = RunStep(job, program, transport, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->collectives, expected);
  EXPECT_GT(expected, 0);
  EXPECT_GT((transport.calls[{CollectiveKind::kAllGather, GroupKind::kTp}]), 0);
  EXPECT_GT((transport.calls[{CollectiveKind::kReduceScatter, GroupKind::kTp}]), 0);
  // 1 MiB caps every op: an all-gather's block is half of 131,072 elements.
  for (size_t i = 0; i < transport.counts.size(); ++i) {
    EXPECT_LE(transport.counts[i], 131072) << transport.whats[i];
  }
  EXPECT_NE(transport.whats.front().find("over tp ranks [0, 1]"), std::string::npos)
      << transport.whats.front();
  EXPECT_EQ(run->wrong, 0);
  EXPECT_EQ(transport.finished, 1);
}

// PP2: stage 0 sends activations and receives gradients; a wrong element and a failed receive
// reach the caller.
TEST(StepExecutor, PipelineMessagesAreCheckedAndFailuresReturn) {
  const JobSpec job = TestJob({.pp = 2, .seq_len = 1024});
  const RankLayout layout = MakeRankLayout(job);
  const std::vector<ProgramStep> program = RankProgram(job, layout, 0);
  FakeTransport transport(layout, 0);
  transport.wrong_per_receive = 1;
  Expected<StepRunResult> run = RunStep(job, program, transport, StepOptions{});
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(run->sends, 8);  // one activation per micro-batch
  EXPECT_EQ(run->receives, 8);
  EXPECT_EQ(run->wrong, 8);
  for (int tag : transport.tags) EXPECT_EQ(tag & (1 << 14), 0) << "stage 0 sends activations";

  FakeTransport failing(layout, 0);
  failing.fail_receive = true;
  run = RunStep(job, program, failing, StepOptions{});
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("from rank 1"), std::string::npos)
      << run.status().message();
}

// With StepOptions::record every op of the step is timed, in program order, on its stream: the
// pipeline's sends and receives, the layers' compute with their layer and micro-batch, the
// gradients' collectives after the last backward.
TEST(StepExecutor, RecordsEveryOpOfTheStep) {
  const JobSpec job = TestJob({.dp = 2, .pp = 2, .seq_len = 1024});
  const RankLayout layout = MakeRankLayout(job);
  const std::vector<ProgramStep> program = RankProgram(job, layout, 0);
  FakeTransport transport(layout, 0);
  std::vector<MeasuredOp> ops;
  StepOptions options;
  options.record = &ops;
  Expected<StepRunResult> run = RunStep(job, program, transport, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  size_t expected = 1;  // "finish sends"
  for (const ProgramStep& step : program) {
    for (const RankOp& op : step.ops) {
      expected += op.kind == RankOpKind::kLayers ? ExpandLayers(job, 0, step, op).size() : 1;
    }
  }
  ASSERT_EQ(ops.size(), expected);
  int sends = 0, receives = 0, layer_ops = 0, dp = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    const MeasuredOp& op = ops[i];
    EXPECT_LE(op.start_s, op.end_s) << op.name;
    if (i > 0) {
      EXPECT_GE(op.start_s, ops[i - 1].end_s) << op.name;  // one after another
    }
    sends += op.stream == SimStream::kPpSend ? 1 : 0;
    receives += op.stream == SimStream::kPpRecv ? 1 : 0;
    // Messages name their peer (rank 2: stage 1 of data-parallel replica 0) and tag.
    const bool message = op.stream == SimStream::kPpRecv ||
                         (op.stream == SimStream::kPpSend && op.name != "finish sends");
    EXPECT_EQ(op.peer, message ? 2 : -1) << op.name;
    EXPECT_EQ(op.tag >= 0, message) << op.name;
    dp += op.stream == SimStream::kDpReduce ? 1 : 0;
    if (op.layer >= 0) {
      ++layer_ops;
      EXPECT_GE(op.microbatch, 0) << op.name;
    }
  }
  EXPECT_EQ(sends, 9);  // 8 activations and the final wait
  EXPECT_EQ(receives, 8);
  EXPECT_GT(layer_ops, 8 * 2 * 16);  // forward and backward of 16 layers, 8 micro-batches
  EXPECT_GE(dp, 1);
  EXPECT_EQ(ops.back().name, "finish sends");
  EXPECT_EQ(ops.back().microbatch, -1);
}

}  // namespace
}  // namespace gpuplan

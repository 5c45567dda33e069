// Rank replay without MPI (issue 19): the replay transport charges the cost model's collective
// times to the phases of their groups, and a replayed rank's steps add them and the predicted
// bubble to its measured compute.
#include "validator/rank_replay.h"

#include <gtest/gtest.h>

#include "tests/builtin_db.h"
#include "tests/validator/test_job.h"
#include "validator/cpu_compute.h"
#include "validator/replay_transport.h"

namespace gpuplan {
namespace {

TEST(ReplayTransport, ChargesTheModelledTimeToTheGroupsPhase) {
  const JobSpec job = TestJob({.tp = 2, .pp = 2, .seq_len = 1024});
  const RankLayout layout = MakeRankLayout(job);
  const HardwareDb& db = BuiltinDb();
  const GpuSpec& gpu = *db.FindGpu(job.cluster.gpu);
  const NetworkSpec& net = *db.FindNetwork(job.cluster.inter_node);
  ReplayTransport t(job, layout, 2, gpu, net, nullptr);  // tp 0, stage 1
  EXPECT_EQ(t.Coord().pp, 1);
  EXPECT_EQ(t.Members(GroupKind::kTp), (std::vector<int64_t>{2, 3}));
  const ClusterLinks links = ResolveLinks(gpu, net, job.cluster.gpus_per_node, nullptr);
  Expected<CollectiveCheck> c = t.Collective(CollectiveKind::kAllGather, GroupKind::kTp, 1000, {});
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->elements, 0);
  // An all-gather's count is each rank's block: nccl-tests' size is the gathered 2 x 8,000 bytes.
  EXPECT_DOUBLE_EQ(t.Predicted().tp_comm,
                   CollectiveSeconds(Collective::kAllGather, 16000, PlaceGroup(links, 2, 1)));
  ASSERT_TRUE(t.Receive(0, 0, 500, {}).ok());
  EXPECT_DOUBLE_EQ(t.Predicted().pp_comm,
                   CollectiveSeconds(Collective::kSendRecv, 4000, PlaceGroup(links, 2, 2)));
  ASSERT_TRUE(t.Send(0, 1, 500).ok());
  EXPECT_EQ(t.Predicted().dp_comm, 0);
  t.Reset();
  EXPECT_EQ(t.Predicted().tp_comm, 0);
}

// Stage 1 of a tiny PP2 plan on the cpu device: its compute runs, its communication is
// predicted, the bubble is the cost model's.
TEST(RankReplay, AddsThePredictedCommunicationAndBubbleToTheMeasuredCompute) {
  const JobSpec job = TinyCpuJob({.pp = 2, .seq_len = 128}, 2);
  const RankLayout layout = MakeRankLayout(job);
  const std::vector<ProgramStep> program = RankProgram(job, layout, 1);
  Expected<std::unique_ptr<CpuCompute>> compute = CpuCompute::Create(job, program, 1, 0);
  ASSERT_TRUE(compute.ok()) << compute.status().message();
  const HardwareDb& db = BuiltinDb();
  const GpuSpec& gpu = *db.FindGpu(job.cluster.gpu);
  const NetworkSpec& net = *db.FindNetwork(job.cluster.inter_node);
  RunOptions options;
  options.warmup_steps = 0;
  options.steps = 2;
  Expected<RunMeasurement> run =
      ReplayRank(job, layout, 1, program, **compute, gpu, net, nullptr, options);
  ASSERT_TRUE(run.ok()) << run.status().message();
  ASSERT_EQ(run->step_seconds.size(), 2u);
  const TimeBreakdown& p = run->phases;
  EXPECT_DOUBLE_EQ(p.bubble, EvaluateStep(job, gpu, net, nullptr).breakdown_s.bubble);
  EXPECT_GT(p.pp_comm, 0);  // the activations it receives
  EXPECT_GT(p.compute, 0);
  EXPECT_GT(run->step_seconds[0], p.bubble + p.pp_comm);
  EXPECT_EQ(run->elements, 0);
  EXPECT_GT(run->peak_memory_bytes, 0);
  const ValidationReport report = MeasuredValidationReport(job, gpu, net, nullptr, *run, options,
                                                           ReplayNote(1, "cpu", *run), 1);
  EXPECT_EQ(report.mode, ValidationMode::kRankReplay);
  EXPECT_EQ(report.replayed_rank, 1);
  EXPECT_EQ(
      ReplayRank(job, layout, 2, program, **compute, gpu, net, nullptr, options).status().message(),
      "--rank: 2 is not a rank of this plan (0..1)");
}

}  // namespace
}  // namespace gpuplan

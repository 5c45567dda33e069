// The GPU backend's communication under a real MPI launch (issue 19): run by ctest as
// `mpirun -np 1` and `-np 2` (tests/validator/CMakeLists.txt), one GPU per rank. Every rank runs
// every test. LocalDevice runs everywhere: without a GPU it must say so. The others need a CUDA
// GPU per rank on the node and skip with the reason otherwise: every collective kind over the
// plan's dp group delivers every element right, the pipeline links carry 1F1B's messages without
// deadlock and check them (a message matched out of order arrives wrong), a step program runs over
// the transport, and a receive whose sender never comes is reported by the watchdog.
#include "validator/nccl_transport.h"

#include <cuda_runtime_api.h>
#include <gtest/gtest.h>
#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "tests/validator/mpi_world.h"
#include "tests/validator/test_job.h"
#include "validator/rank_program.h"
#include "validator/step_executor.h"

namespace gpuplan {
namespace {

constexpr double kWatchdogSeconds = 60;

// This rank's device when every rank of the world has one; else why not (the same on every rank,
// so that all of them skip together and none waits in NCCL for a rank that skipped).
struct Gpu {
  int device = -1;
  std::string skip;  // empty: usable
};

Gpu WorldGpu() {
  Expected<int> device = LocalDevice(MPI_COMM_WORLD);
  int ok = device.ok() ? 1 : 0;
  int all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all == 1) return {*device, ""};
  if (device.ok()) return {-1, "no CUDA GPU: another rank's node has none, or too few"};
  const std::string& why = device.status().message();
  return {-1, why.rfind("no CUDA GPU", 0) == 0 ? why : "needs one GPU per rank: " + why};
}

#define SKIP_WITHOUT_GPUS(gpu)                           \
  do {                                                   \
    if (!(gpu).skip.empty()) GTEST_SKIP() << (gpu).skip; \
  } while (0)

struct PlanTransport {
  JobSpec job;
  RankLayout layout;
  std::unique_ptr<PlanCommunicators> mpi;
  std::unique_ptr<NcclTransport> nccl;
};

// The plan's MPI communicators and the NCCL transport over them; failures are test failures.
void MakePlanTransport(const JobSpec& job, int device, PlanTransport* setup) {
  setup->job = job;
  setup->layout = MakeRankLayout(job);
  Expected<PlanCommunicators> comms = PlanCommunicators::Split(setup->layout, MPI_COMM_WORLD);
  ASSERT_TRUE(comms.ok()) << comms.status().message();
  setup->mpi = std::make_unique<PlanCommunicators>(std::move(*comms));
  Expected<std::unique_ptr<NcclTransport>> nccl =
      NcclTransport::Create(*setup->mpi, MPI_COMM_WORLD, device);
  ASSERT_TRUE(nccl.ok()) << nccl.status().message();
  setup->nccl = std::move(*nccl);
}

// The world rank of the other stage of a PP2 plan.
int64_t OtherStage(const PlanTransport& s) {
  return s.nccl->Members(GroupKind::kPp)[static_cast<size_t>(1 - s.nccl->Coord().pp)];
}

// Without a GPU LocalDevice says so; with one per rank it is the rank's place on its node.
TEST(NcclTransport, LocalDevice) {
  int gpus = 0;
  const cudaError_t err = cudaGetDeviceCount(&gpus);
  if (err != cudaSuccess) cudaGetLastError();
  MPI_Comm node = MPI_COMM_NULL;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, WorldRank(), MPI_INFO_NULL, &node);
  int local_rank = 0;
  int local_size = 0;
  MPI_Comm_rank(node, &local_rank);
  MPI_Comm_size(node, &local_size);
  MPI_Comm_free(&node);
  Expected<int> device = LocalDevice(MPI_COMM_WORLD);
  if (err != cudaSuccess || gpus == 0) {
    ASSERT_FALSE(device.ok());
    EXPECT_EQ(device.status().kind(), ErrorKind::kUnavailable);
    EXPECT_EQ(device.status().message().rfind("no CUDA GPU: ", 0), 0u) << device.status().message();
  } else if (local_size > gpus) {
    ASSERT_FALSE(device.ok());
    EXPECT_NE(device.status().message().find("NCCL needs one GPU per rank"), std::string::npos)
        << device.status().message();
  } else {
    ASSERT_TRUE(device.ok()) << device.status().message();
    EXPECT_EQ(*device, local_rank);
  }
}

// Every collective kind over the dp group of a DP plan of the whole world (and over its 1-rank tp
// group), at several sizes and twice each (the second time on reused buffers).
TEST(NcclTransport, CollectivesAreChecked) {
  const Gpu gpu = WorldGpu();
  SKIP_WITHOUT_GPUS(gpu);
  PlanTransport s;
  ASSERT_NO_FATAL_FAILURE(MakePlanTransport(TestJob({.dp = WorldSize()}), gpu.device, &s));
  const CollectiveKind kinds[] = {CollectiveKind::kAllReduce, CollectiveKind::kAllGather,
                                  CollectiveKind::kReduceScatter, CollectiveKind::kAllToAll,
                                  CollectiveKind::kRing};
  for (GroupKind group : {GroupKind::kDp, GroupKind::kTp}) {
    const auto n = static_cast<int64_t>(s.nccl->Members(group).size());
    for (int64_t count : {int64_t{1}, int64_t{1000}, int64_t{1} << 20}) {
      for (int repeat = 0; repeat < 2; ++repeat) {
        for (CollectiveKind kind : kinds) {
          const std::string what = std::string(GroupKindName(group)) + " collective " +
                                   std::to_string(static_cast<int>(kind)) + " of " +
                                   std::to_string(count);
          Expected<CollectiveCheck> check =
              s.nccl->Collective(kind, group, count, {kWatchdogSeconds, what});
          ASSERT_TRUE(check.ok()) << what << ": " << check.status().message();
          const bool blocks =
              kind == CollectiveKind::kAllGather || kind == CollectiveKind::kAllToAll;
          EXPECT_EQ(check->elements, blocks ? n * count : count) << what;
          EXPECT_EQ(check->wrong, 0) << what;
        }
      }
    }
  }
}

// PP2: 1F1B's crossing messages (stage 0 sends activation 1 while stage 1 sends gradient 0), the
// wrap-around links of interleaved schedules, and a message received under another tag, which
// must arrive wholly wrong.
TEST(NcclTransport, PipelineMessagesAreChecked) {
  const Gpu gpu = WorldGpu();
  SKIP_WITHOUT_GPUS(gpu);
  if (WorldSize() != 2) GTEST_SKIP() << "a plan of 2 ranks, launched on " << WorldSize();
  PlanTransport s;
  ASSERT_NO_FATAL_FAILURE(MakePlanTransport(TestJob({.pp = 2, .seq_len = 1024}), gpu.device, &s));
  const int64_t stage = s.nccl->Coord().pp;
  const int64_t peer = OtherStage(s);
  constexpr int64_t kCount = 4096;
  const Watchdog watchdog{kWatchdogSeconds, "a pipeline message"};
  auto receive = [&](int tag, int64_t count) {
    Expected<CollectiveCheck> check = s.nccl->Receive(peer, tag, count, watchdog);
    EXPECT_TRUE(check.ok()) << check.status().message();
    return check.ok() ? *check : CollectiveCheck{-1, -1};
  };
  for (int repeat = 0; repeat < 2; ++repeat) {
    if (stage == 0) {
      ASSERT_TRUE(s.nccl->Send(peer, MessageTag(false, 0, 1), kCount).ok());
      ASSERT_TRUE(s.nccl->Send(peer, MessageTag(false, 1, 1), kCount).ok());
      EXPECT_EQ(receive(MessageTag(true, 0, 0), kCount).wrong, 0);
      EXPECT_EQ(receive(MessageTag(true, 1, 0), kCount).wrong, 0);
      // The wrap-around links: activation 1 -> 0, gradient 0 -> 1.
      EXPECT_EQ(receive(MessageTag(false, 0, 2), kCount).wrong, 0);
      ASSERT_TRUE(s.nccl->Send(peer, MessageTag(true, 0, 1), kCount).ok());
      // Sent as micro-batch 3, received as micro-batch 2.
      ASSERT_TRUE(s.nccl->Send(peer, MessageTag(false, 3, 1), kCount).ok());
    } else {
      ASSERT_TRUE(s.nccl->Send(peer, MessageTag(true, 0, 0), kCount).ok());
      EXPECT_EQ(receive(MessageTag(false, 0, 1), kCount).wrong, 0);
      EXPECT_EQ(receive(MessageTag(false, 1, 1), kCount).wrong, 0);
      ASSERT_TRUE(s.nccl->Send(peer, MessageTag(true, 1, 0), kCount).ok());
      ASSERT_TRUE(s.nccl->Send(peer, MessageTag(false, 0, 2), kCount).ok());
      EXPECT_EQ(receive(MessageTag(true, 0, 1), kCount).wrong, 0);
      const CollectiveCheck mismatched = receive(MessageTag(false, 2, 1), kCount);
      EXPECT_EQ(mismatched.elements, kCount);
      EXPECT_EQ(mismatched.wrong, kCount) << "a message matched out of order arrived right";
    }
    const Status finished = s.nccl->FinishSends(watchdog);
    ASSERT_TRUE(finished.ok()) << finished.message();
  }
}

// A rank program's whole step over NCCL: DP over the world, and PP2 1F1B on 2 ranks.
TEST(NcclTransport, StepRuns) {
  const Gpu gpu = WorldGpu();
  SKIP_WITHOUT_GPUS(gpu);
  TestLayout l = WorldSize() == 2 ? TestLayout{.pp = 2} : TestLayout{.dp = WorldSize()};
  l.seq_len = 1024;
  PlanTransport s;
  ASSERT_NO_FATAL_FAILURE(MakePlanTransport(TestJob(l), gpu.device, &s));
  StepOptions options;
  options.max_bytes_per_op = 1 << 20;
  options.watchdog_s = kWatchdogSeconds;
  const std::vector<ProgramStep> program = RankProgram(s.job, s.layout, WorldRank());
  for (int step = 0; step < 2; ++step) {
    Expected<StepRunResult> run = RunStep(s.job, program, *s.nccl, options);
    ASSERT_TRUE(run.ok()) << run.status().message();
    EXPECT_EQ(run->wrong, 0) << run->wrong << " of " << run->elements << " elements wrong";
    EXPECT_GT(run->elements, 0);
    if (l.pp > 1) {
      EXPECT_GT(run->sends, 0);
      EXPECT_EQ(run->sends, run->receives);
    }
  }
}

// Both stages of PP2 wait for a message the other never sends: each watchdog fires after 1 s,
// names the rank and the op, and aborts the link.
TEST(NcclTransport, WatchdogNamesTheRankAndTheOp) {
  const Gpu gpu = WorldGpu();
  SKIP_WITHOUT_GPUS(gpu);
  if (WorldSize() != 2) GTEST_SKIP() << "a plan of 2 ranks, launched on " << WorldSize();
  PlanTransport s;
  ASSERT_NO_FATAL_FAILURE(MakePlanTransport(TestJob({.pp = 2, .seq_len = 1024}), gpu.device, &s));
  const int64_t stage = s.nccl->Coord().pp;
  const int64_t peer = OtherStage(s);
  const Watchdog watchdog{1.0, "'recv activation' from rank " + std::to_string(peer)};
  Expected<CollectiveCheck> check =
      s.nccl->Receive(peer, MessageTag(false, 0, stage), 1024, watchdog);
  ASSERT_FALSE(check.ok());
  EXPECT_EQ(check.status().kind(), ErrorKind::kUnavailable);
  EXPECT_EQ(check.status().message(), WatchdogExpired(WorldRank(), watchdog).message());
  EXPECT_NE(check.status().message().find("rank " + std::to_string(WorldRank()) +
                                          ": 'recv activation' from rank " + std::to_string(peer) +
                                          " did not complete within 1 s"),
            std::string::npos)
      << check.status().message();
  MPI_Barrier(MPI_COMM_WORLD);  // both have aborted before either destroys the rest
}

}  // namespace
}  // namespace gpuplan

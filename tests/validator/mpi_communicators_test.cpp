// The CPU backend's communicators under a real MPI launch (issue 19): run by ctest as
// `mpirun -np 2` and `mpirun -np 4` (tests/validator/CMakeLists.txt). Every rank runs every test;
// a plan whose rank count differs from the launch is skipped. Each group of the plan's
// RankLayout becomes an MPI communicator of its size, and a collective over it delivers every
// element right (an all-reduce over tp, cp, dp x cp and expert-dp groups, the all-to-all over ep,
// the send/recv ring over pp).
#include "validator/mpi_communicators.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include "tests/validator/mpi_world.h"
#include "tests/validator/test_job.h"

namespace gpuplan {
namespace {

// Splits the world by the plan and runs the group's collective over each communicator of more
// than one rank; every element must arrive right.
void CheckPlan(const TestLayout& l) {
  const JobSpec job = TestJob(l);
  if (job.cluster.num_gpus != WorldSize()) {
    GTEST_SKIP() << "a plan of " << job.cluster.num_gpus << " ranks, launched on " << WorldSize();
  }
  const RankLayout layout = MakeRankLayout(job);
  Expected<PlanCommunicators> comms = PlanCommunicators::Split(layout, MPI_COMM_WORLD);
  ASSERT_TRUE(comms.ok()) << comms.status().message();
  int checked = 0;
  for (int k = 0; k < kGroupKindCount; ++k) {
    const GroupKind kind = static_cast<GroupKind>(k);
    MPI_Comm comm = comms->Get(kind);
    int size = 0;
    MPI_Comm_size(comm, &size);
    if (size < 2) continue;
    constexpr int64_t kCount = 1 << 16;
    Expected<CollectiveCheck> check = kind == GroupKind::kPp   ? CheckedSendRecvRing(comm, kCount)
                                      : kind == GroupKind::kEp ? CheckedAllToAll(comm, kCount)
                                                               : CheckedAllReduce(comm, kCount);
    ASSERT_TRUE(check.ok()) << GroupKindName(kind) << ": " << check.status().message();
    EXPECT_EQ(check->wrong, 0) << GroupKindName(kind) << ": " << check->wrong << " of "
                               << check->elements << " elements wrong";
    ++checked;
  }
  EXPECT_GT(checked, 0) << "no communicator of more than one rank";
}

TEST(MpiCommunicators, Dp2) { CheckPlan({.dp = 2}); }
TEST(MpiCommunicators, Tp2SequenceParallel) { CheckPlan({.tp = 2, .sequence_parallel = true}); }
TEST(MpiCommunicators, Pp2) { CheckPlan({.pp = 2}); }
TEST(MpiCommunicators, Cp2) { CheckPlan({.cp = 2}); }
TEST(MpiCommunicators, Ep2Moe) { CheckPlan({.dp = 2, .ep = 2, .model = "mixtral-8x7b"}); }
TEST(MpiCommunicators, Tp2Dp2) { CheckPlan({.tp = 2, .dp = 2, .sequence_parallel = true}); }
TEST(MpiCommunicators, Pp2Dp2) { CheckPlan({.dp = 2, .pp = 2}); }
TEST(MpiCommunicators, Cp2Dp2) { CheckPlan({.cp = 2, .dp = 2}); }
TEST(MpiCommunicators, Pp2Vpp2Dp2) {
  CheckPlan({.dp = 2, .pp = 2, .vpp = 2, .schedule = Schedule::kInterleaved});
}
TEST(MpiCommunicators, Ep4Moe) { CheckPlan({.dp = 4, .ep = 4, .model = "mixtral-8x7b"}); }

// A launch that does not match the plan is refused with both counts, on every rank.
TEST(MpiCommunicators, RankCountMismatchIsAnError) {
  const RankLayout layout = MakeRankLayout(TestJob({.dp = 8}));
  Expected<PlanCommunicators> comms = PlanCommunicators::Split(layout, MPI_COMM_WORLD);
  ASSERT_FALSE(comms.ok());
  EXPECT_NE(comms.status().message().find("the plan has 8 ranks"), std::string::npos)
      << comms.status().message();
}

}  // namespace
}  // namespace gpuplan

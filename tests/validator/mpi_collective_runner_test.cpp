// The CPU profile's collectives under a real launch (tests/validator/CMakeLists.txt: 2 and 4
// ranks): rank 0 times every collective the validator's ranks run through MpiCollectiveRunner,
// the other ranks serve until it is gone.
#include "validator/mpi_collective_runner.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cmath>

namespace gpuplan {
namespace {

int WorldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

TEST(MpiCollectiveRunner, TimesWhatTheValidatorsRanksRun) {
  if (WorldRank() != 0) {
    EXPECT_TRUE(ServeMpiCollectives(MPI_COMM_WORLD).ok());
    return;
  }
  MpiCollectiveRunner runner(MPI_COMM_WORLD);
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  EXPECT_EQ(runner.MaxRanks(), world);
  EXPECT_EQ(runner.ElementBytes(), 8);
  EXPECT_FALSE(runner.Version().empty());
  EXPECT_EQ(runner.Version().find_first_of(std::string("\n\0", 2)), std::string::npos);
  EXPECT_FALSE(runner.Runs(Collective::kBroadcast));
  TimingPolicy quick;
  quick.warmup_iterations = 1;
  quick.min_seconds = 0.001;
  for (Collective c : {Collective::kAllReduce, Collective::kAllGather, Collective::kReduceScatter,
                       Collective::kAllToAll, Collective::kSendRecv}) {
    EXPECT_TRUE(runner.Runs(c));
    for (int ranks : {2, world}) {
      Expected<double> t = runner.Seconds(c, ranks, 64 * 1024, quick);
      ASSERT_TRUE(t.ok()) << t.status().message();
      EXPECT_TRUE(std::isfinite(*t) && *t > 0) << *t;
    }
  }
  // A bigger all-reduce takes longer than a one-element one (whole elements: 16 B over 2 ranks).
  Expected<double> small = runner.Seconds(Collective::kAllReduce, 2, 16, quick);
  Expected<double> big = runner.Seconds(Collective::kAllReduce, 2, 64 << 20, quick);
  ASSERT_TRUE(small.ok() && big.ok());
  EXPECT_LT(*small, *big);
  // Refused before any rank is involved: no broadcast, no more ranks than the launch.
  EXPECT_FALSE(runner.Seconds(Collective::kBroadcast, 2, 1024, quick).ok());
  EXPECT_FALSE(runner.Seconds(Collective::kAllReduce, world + 1, 1024, quick).ok());
}

}  // namespace
}  // namespace gpuplan

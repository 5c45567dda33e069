// The watchdog under a real launch (issue 19: failures are reported, never hangs), run by ctest
// through tests/cli/expect_exit.sh (tests/validator/CMakeLists.txt). Two ranks of a DP2 plan
// start the gradient all-reduce; rank 1 does not arrive: it hangs (`hang`) or is killed
// mid-step (`kill`, SIGKILL to itself). Rank 0's watchdog fires after 2 s, it prints the report
// naming the op, the group's ranks and itself, and aborts the job (MPI_Abort with 3).
#include <mpi.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include "simulator/presets.h"
#include "validator/mpi_communicators.h"

int main(int argc, char** argv) {
  using namespace gpuplan;
  MPI_Init(&argc, &argv);
  const std::string mode = argc > 1 ? argv[1] : "hang";
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  JobSpec job;
  job.model = *FindModelPreset("llama3-8b");
  job.cluster.num_gpus = size;
  job.cluster.gpus_per_node = size;
  job.parallel.dp = size;
  const RankLayout layout = MakeRankLayout(job);
  Expected<PlanCommunicators> comms = PlanCommunicators::Split(layout, MPI_COMM_WORLD);
  if (!comms.ok()) {
    std::printf("split failed: %s\n", comms.status().message().c_str());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (rank == 1) {
    if (mode == "kill") std::raise(SIGKILL);
    std::this_thread::sleep_for(std::chrono::seconds(60));
  }
  const Expected<CollectiveCheck> check =
      CheckedAllReduce(comms->Get(GroupKind::kDp), 1024,
                       Watchdog{2.0, "'all_reduce grad buckets' over dp ranks [0, 1]"});
  if (check.ok()) {
    std::printf("rank %d: the all-reduce completed, which it cannot without rank 1\n", rank);
    MPI_Finalize();
    return 0;
  }
  std::printf("gpuplan validate: %s\n", check.status().message().c_str());
  std::fflush(stdout);
  MPI_Abort(MPI_COMM_WORLD, 3);
  return 3;
}

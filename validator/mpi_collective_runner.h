// The CPU backend's collectives as a profile measures them (`gpuplan profile --backend cpu
// --ranks N`): the checked collectives the validator's ranks run (validator/mpi_communicators.h:
// 64-bit integers filled, exchanged with a non-blocking MPI collective polled by MPI_Testall, and
// checked), timed over the ranks mpirun started on this host. World rank 0 drives the profile's
// sweep through MpiCollectiveRunner; every other rank serves it (ServeMpiCollectives) until rank
// 0's runner is destroyed.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>

#include "common/status.h"
#include "profiler/backends.h"

namespace gpuplan {

/// Seconds a rank waits for its peers in one measured collective before the profile gives up
/// (the whole launch is aborted, MPI_Abort, so that no rank is left waiting).
inline constexpr double kMpiProfileWatchdogSeconds = 120;

/// CollectiveRunner over `world`'s ranks; only world rank 0 may hold one. Each Seconds call
/// broadcasts the case to every rank, the first `ranks` ranks of `world` run it in a communicator
/// of their own, and the result is the slowest rank's mean. A failed or wrong collective aborts
/// the launch (MPI_Abort) after printing why. The destructor releases the serving ranks.
class MpiCollectiveRunner : public CollectiveRunner {
 public:
  explicit MpiCollectiveRunner(MPI_Comm world);
  ~MpiCollectiveRunner() override;
  MpiCollectiveRunner(const MpiCollectiveRunner&) = delete;
  MpiCollectiveRunner& operator=(const MpiCollectiveRunner&) = delete;

  int MaxRanks() const override;
  /// MPI_Get_library_version's first line ("Open MPI v4.1.4, ...").
  std::string Version() const override;
  double ElementBytes() const override { return 8; }
  /// Everything but broadcast, which the validator's ranks do not run.
  bool Runs(Collective c) const override;
  Expected<double> Seconds(Collective c, int ranks, double bytes,
                           const TimingPolicy& timing) override;

 private:
  MPI_Comm world_;
};

/// On every world rank but 0: take part in the cases rank 0's MpiCollectiveRunner broadcasts,
/// until it is destroyed. Returns Ok then; a failure aborts the launch (MPI_Abort).
Status ServeMpiCollectives(MPI_Comm world);

}  // namespace gpuplan

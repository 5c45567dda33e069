// The CPU backend's communicators: every group of a plan's RankLayout (tp, cp, dp x cp, pp, ep,
// expert-dp) as an MPI communicator of the ranks `mpirun` started, and collectives over them that
// check every element they deliver, as nccl-tests' #wrong column does (issue 19); the step
// transport over them.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "validator/rank_layout.h"
#include "validator/step_executor.h"
#include "validator/step_transport.h"

namespace gpuplan {

/// Ok when `world` has layout.world_size ranks; else Invalid naming both and how to launch.
Status CheckWorldSize(const RankLayout& layout, MPI_Comm world);

/// This rank's communicators of a plan: for each GroupKind, the MPI communicator of the group the
/// rank belongs to (MPI_Comm_split of `world` by group, keyed by the rank's place in it, so the
/// communicator ranks follow RankLayout's order). Errors return (MPI_ERRORS_RETURN) instead of
/// aborting. Move-only; frees its communicators.
class PlanCommunicators {
 public:
  /// Splits `world`, whose size must be layout.world_size (CheckWorldSize). Every
  /// rank of `world` must call it (MPI_Comm_split is collective). Checks that each communicator
  /// has its group's size.
  static Expected<PlanCommunicators> Split(const RankLayout& layout, MPI_Comm world);

  PlanCommunicators(PlanCommunicators&& other) noexcept;
  PlanCommunicators& operator=(PlanCommunicators&& other) noexcept;
  PlanCommunicators(const PlanCommunicators&) = delete;
  PlanCommunicators& operator=(const PlanCommunicators&) = delete;
  ~PlanCommunicators();

  /// The communicator of `kind` this rank belongs to.
  MPI_Comm Get(GroupKind kind) const { return comms_[static_cast<size_t>(kind)]; }
  /// This rank's place in the plan (RankLayout::ranks of its world rank).
  const RankCoord& Coord() const { return coord_; }
  /// Its members, as world ranks in communicator order.
  const std::vector<int64_t>& Members(GroupKind kind) const {
    return members_[static_cast<size_t>(kind)];
  }

 private:
  PlanCommunicators();
  std::array<MPI_Comm, kGroupKindCount> comms_;
  std::array<std::vector<int64_t>, kGroupKindCount> members_;
  RankCoord coord_;
};

/// Waits for `requests` to complete, polling; Unavailable after `watchdog.timeout_s`: "rank R:
/// <what> did not complete within T s: a peer did not arrive (it died, hangs, or runs another
/// op)". The requests are left pending: the caller reports and aborts the job (MPI_Abort).
Status WaitWithWatchdog(std::span<MPI_Request> requests, const Watchdog& watchdog);

/// The checked collectives below run non-blocking and wait under `watchdog`.

/// A sum all-reduce of `count` 64-bit integers over `comm`: rank r of the communicator contributes
/// element i = (r + 1) * (i + 1), and every element must come back as (i + 1) n(n + 1)/2 for n
/// ranks. Integers, so the sum is exact whatever order MPI adds in.
Expected<CollectiveCheck> CheckedAllReduce(MPI_Comm comm, int64_t count,
                                           const Watchdog& watchdog = {});

/// An all-gather over `comm`: every rank contributes `count` 64-bit integers, block r holding
/// r * 1e6 + i, and checks all n blocks it receives.
Expected<CollectiveCheck> CheckedAllGather(MPI_Comm comm, int64_t count,
                                           const Watchdog& watchdog = {});

/// A sum reduce-scatter over `comm` (MPI_Reduce_scatter_block): every rank contributes n blocks of
/// `count` integers, element j = (r + 1)(j + 1), and checks that its block r sums to
/// (j + 1) n(n + 1)/2.
Expected<CollectiveCheck> CheckedReduceScatter(MPI_Comm comm, int64_t count,
                                               const Watchdog& watchdog = {});

/// An all-to-all of `count` 64-bit integers per peer over `comm` (the expert dispatch): rank r
/// sends peer p the block r * 1e6 + p * 1e3 + i, and checks every block it receives.
Expected<CollectiveCheck> CheckedAllToAll(MPI_Comm comm, int64_t count,
                                          const Watchdog& watchdog = {});

/// A ring of point-to-point transfers over `comm` (the pipeline's send/recv): every rank sends
/// `count` integers r * 1e6 + i to the next rank and checks those it receives from the previous.
Expected<CollectiveCheck> CheckedSendRecvRing(MPI_Comm comm, int64_t count,
                                              const Watchdog& watchdog = {});

/// The checked collective of `kind` above over `comm` (`count` as each of them takes it).
Expected<CollectiveCheck> CheckedCollective(CollectiveKind kind, MPI_Comm comm, int64_t count,
                                            const Watchdog& watchdog);

/// The step executor's transport over MPI: collectives on `comms`' communicators (the Checked*
/// functions above), pipeline messages as MPI_Isend/MPI_Irecv over `world` tagged by `tag`, so
/// that a message matched out of order arrives wrong, not silently right. Both must outlive it.
class MpiTransport : public StepTransport {
 public:
  MpiTransport(const PlanCommunicators& comms, MPI_Comm world) : comms_(comms), world_(world) {}
  const RankCoord& Coord() const override { return comms_.Coord(); }
  const std::vector<int64_t>& Members(GroupKind kind) const override {
    return comms_.Members(kind);
  }
  Expected<CollectiveCheck> Collective(CollectiveKind kind, GroupKind group, int64_t count,
                                       const Watchdog& watchdog) override;
  Status Send(int64_t peer, int tag, int64_t count) override;
  Expected<CollectiveCheck> Receive(int64_t peer, int tag, int64_t count,
                                    const Watchdog& watchdog) override;
  Status FinishSends(const Watchdog& watchdog) override;

 private:
  const PlanCommunicators& comms_;
  MPI_Comm world_;
  std::deque<std::vector<int64_t>> send_buffers_;  // alive until their sends complete
  std::vector<MPI_Request> sends_;
};

/// Every rank's result gathered on rank 0 of `world`, indexed by rank (MPI_Gather, collective);
/// empty on the other ranks.
Expected<std::vector<StepRunResult>> GatherStepResults(const StepRunResult& mine, MPI_Comm world);

/// Every rank's `mine` gathered on rank 0 of `world`, indexed by rank (MPI_Gather of the sizes,
/// then MPI_Gatherv, collective); empty on the other ranks. Invalid when the texts together
/// exceed 2^31 - 1 bytes (MPI's int counts).
Expected<std::vector<std::string>> GatherText(const std::string& mine, MPI_Comm world);

}  // namespace gpuplan

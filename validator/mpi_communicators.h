// The CPU backend's communicators: every group of a plan's RankLayout (tp, cp, dp x cp, pp, ep,
// expert-dp) as an MPI communicator of the ranks `mpirun` started, and collectives over them that
// check every element they deliver, as nccl-tests' #wrong column does (issue 19).
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "validator/rank_layout.h"

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

/// How long a collective or message waits for its peers before the validator gives up on it
/// and reports which op and which group (issue 19: failures are reported, never hangs).
inline constexpr double kDefaultWatchdogSeconds = 300;

/// What a watchdog names when it fires, and when.
struct Watchdog {
  double timeout_s = kDefaultWatchdogSeconds;
  std::string what = "a collective";  ///< e.g. "all_reduce grad buckets over dp ranks [0, 1]"
};

/// Waits for `requests` to complete, polling; Unavailable after `watchdog.timeout_s`: "rank R:
/// <what> did not complete within T s: a peer did not arrive (it died, hangs, or runs another
/// op)". The requests are left pending: the caller reports and aborts the job (MPI_Abort).
Status WaitWithWatchdog(std::span<MPI_Request> requests, const Watchdog& watchdog);

/// The checked collectives below run non-blocking and wait under `watchdog`.

/// What a checked collective found: elements delivered and how many differ from the known pattern.
struct CollectiveCheck {
  int64_t elements = 0;  ///< elements this rank received and checked
  int64_t wrong = 0;     ///< of them, how many differ from the expected value (nccl-tests #wrong)
};

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

}  // namespace gpuplan

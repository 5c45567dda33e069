// What carries a rank's step communication (issue 19): the checked collectives over the plan's
// groups and the pipeline's messages, behind one interface that the step executor drives
// (validator/step_executor.h). Implementations: MPI on the CPU backend (MpiTransport,
// validator/mpi_communicators.h), NCCL on the GPU backend (NcclTransport,
// validator/nccl_transport.h); tests use a fake. Every element delivered is checked against the
// values of validator/check_patterns.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "validator/rank_layout.h"

namespace gpuplan {

/// How long a collective or message waits for its peers before the validator gives up on it
/// and reports which op and which group (issue 19: failures are reported, never hangs).
inline constexpr double kDefaultWatchdogSeconds = 300;

/// What a watchdog names when it fires, and when.
struct Watchdog {
  double timeout_s = kDefaultWatchdogSeconds;
  std::string what = "a collective";  ///< e.g. "all_reduce grad buckets over dp ranks [0, 1]"
};

/// The Status of a collective or message whose peers did not all arrive within
/// `watchdog.timeout_s` (Unavailable): "rank R: <what> did not complete within T s: a peer did not
/// arrive (it died, hangs, or runs another op)", R being this rank's world rank. One form for
/// every transport.
Status WatchdogExpired(int64_t rank, const Watchdog& watchdog);

/// What a checked collective or message found: elements delivered and how many were wrong.
struct CollectiveCheck {
  int64_t elements = 0;  ///< elements this rank received and checked
  int64_t wrong = 0;     ///< of them, how many differ from the expected value (nccl-tests #wrong)
};

/// The collectives the executor runs.
enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kRing };

/// The collective a RankProgram op runs, by the start of its name: "all_reduce", "all_gather",
/// "reduce_scatter", "alltoall", "ring send/recv" (the CP ring); Invalid naming the op otherwise.
Expected<CollectiveKind> CollectiveKindOf(const std::string& op_name);

/// A pipeline message's direction bit: set for gradients (backward), clear for activations.
inline constexpr int kGradientTagBit = 1 << 14;

/// The tag of a pipeline message: kGradientTagBit for a gradient, the micro-batch (mod 128) in
/// bits 7-13 and the receiving virtual stage (mod 128) in bits 0-6.
inline int MessageTag(bool gradient, int64_t microbatch, int64_t receiver_virtual_stage) {
  return (gradient ? kGradientTagBit : 0) | static_cast<int>((microbatch & 127) << 7) |
         static_cast<int>(receiver_virtual_stage & 127);
}

class StepTransport {
 public:
  virtual ~StepTransport() = default;
  /// This rank's place in the plan.
  virtual const RankCoord& Coord() const = 0;
  /// The members of this rank's group of `kind`, as world ranks in communicator order.
  virtual const std::vector<int64_t>& Members(GroupKind kind) const = 0;
  /// One collective of `kind` over this rank's `group`, waiting at most `watchdog` (Unavailable
  /// naming it and this rank when a peer does not arrive), with the values of check_patterns.h.
  /// `count` 64-bit elements (at least 1): the whole buffer for all-reduce and the ring, each
  /// rank's block for all-gather, reduce-scatter and all-to-all.
  virtual Expected<CollectiveCheck> Collective(CollectiveKind kind, GroupKind group, int64_t count,
                                               const Watchdog& watchdog) = 0;
  /// Starts sending `count` elements check::Message(tag, this rank, i) to world rank `peer`
  /// (a pipeline neighbour); it completes by FinishSends, so a send never waits for its
  /// receiver (Megatron batches its pipeline sends and receives).
  virtual Status Send(int64_t peer, int tag, int64_t count) = 0;
  /// Receives `count` elements with `tag` from world rank `peer`, waiting at most `watchdog`,
  /// and checks them against check::Message(tag, peer, i).
  virtual Expected<CollectiveCheck> Receive(int64_t peer, int tag, int64_t count,
                                            const Watchdog& watchdog) = 0;
  /// Waits, at most `watchdog`, for every send started since the last call.
  virtual Status FinishSends(const Watchdog& watchdog) = 0;
};

}  // namespace gpuplan

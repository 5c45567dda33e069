// The GPU backend's communication (issue 19): every group of a plan's RankLayout as an NCCL
// communicator, bootstrapped as nccl-tests does (rank 0 of the group's MPI communicator makes the
// ncclUniqueId and broadcasts it over MPI), and the step transport over them. Every element a
// collective or message delivers is checked on the device against validator/check_patterns.h
// (validator/nccl_check_kernels.h), and every wait has a watchdog that aborts the communicators
// involved and names the rank and the op when a peer does not arrive.
#pragma once

#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "validator/mpi_communicators.h"
#include "validator/nccl_check_kernels.h"
#include "validator/rank_layout.h"
#include "validator/step_transport.h"

namespace gpuplan {

/// The CUDA device this process uses (ChooseLocalDevice, validator/local_device.h): its rank among
/// the processes of `world` on its node (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED) when they
/// all see the node's GPUs, device 0 when each was given GPUs of its own (their first GPUs' PCI
/// bus ids, gathered over the node, differ); collective over `world`. Unavailable "no CUDA GPU:
/// ..." when cudaGetDeviceCount fails or reports 0 devices, and "N ranks on this node and M GPUs:
/// NCCL needs one GPU per rank" when ranks would share a GPU.
Expected<int> LocalDevice(MPI_Comm world);

/// The step transport over NCCL, one process per GPU. Collectives run on the NCCL communicator of
/// their group, each on its own non-blocking CUDA stream. Pipeline messages (NCCL has no tags, and
/// one communicator runs its operations in order, so one point-to-point communicator could
/// deadlock a 1F1B schedule) each take a *link*: for the activation direction, link s carries
/// stage s -> stage (s + 1) % pp; for the gradient direction, stage (s + 1) % pp -> stage s; each
/// link is a 2-rank communicator (ncclCommSplit of the pp group's) with its own stream, so that
/// pp 2 has 4 links (the wrap-around ones serve interleaved schedules) and pp 1 none. A message's
/// direction is kGradientTagBit of its tag (MessageTag, validator/step_transport.h); its sender's
/// and receiver's stages are their places in the pp group. The tag is in every element
/// (check::Message), so a message matched out of order arrives wrong, never silently right.
///
/// Device buffers (send, receive and the wrong-element counter, per communicator) grow on demand
/// and are reused: after the first step no call allocates. Every call must come from a thread
/// whose current CUDA device is the one given to Create (Create makes it current). After a
/// watchdog or an NCCL error the communicators involved are aborted and later calls on them
/// return Unavailable; the caller reports and aborts the job. Not copyable or movable (owned
/// through unique_ptr); the destructor destroys every communicator (aborts them after an error or
/// with sends still in flight), then frees its streams and buffers.
class NcclTransport : public StepTransport {
 public:
  /// Collective over `world`: every rank of it calls Create with the communicators of the same
  /// plan (`mpi`, split from `world`). Makes `device` (a CUDA device index of this node, e.g.
  /// LocalDevice) current, then for each GroupKind in enum order (tp, cp, dp, pp, ep, expert_dp)
  /// creates this rank's group communicator: rank 0 of mpi.Get(kind) calls ncclGetUniqueId and
  /// broadcasts it over that MPI communicator, every member calls ncclCommInitRank with its rank
  /// in the group. Then every pp member splits the pp communicator into the pipeline links
  /// (activation links 0..pp-1, then gradient links 0..pp-1; key 0 the sender, 1 the receiver).
  /// Every rank creates in the same order, so no two ranks wait on different communicators. Each
  /// link then carries one checked element, in link order, so that NCCL connects every pair here
  /// and not in the order of the step's first messages.
  /// Unavailable naming the call when CUDA, NCCL or MPI fails.
  static Expected<std::unique_ptr<NcclTransport>> Create(const PlanCommunicators& mpi,
                                                         MPI_Comm world, int device);

  NcclTransport(const NcclTransport&) = delete;
  NcclTransport& operator=(const NcclTransport&) = delete;
  ~NcclTransport() override;

  const RankCoord& Coord() const override { return coord_; }
  const std::vector<int64_t>& Members(GroupKind kind) const override {
    return members_[static_cast<size_t>(kind)];
  }
  /// On `group`'s stream: fills the send buffer with the pattern of `kind`, runs ncclAllReduce
  /// (sum), ncclAllGather (`count` per rank), ncclReduceScatter (`count` per rank of n x `count`),
  /// an all-to-all (grouped ncclSend/ncclRecv of `count` to and from every member, as nccl-tests
  /// does) or the ring (grouped ncclSend to the next member, ncclRecv from the previous), all on
  /// 64-bit integers, counts the wrong elements on the device, and waits under `watchdog`.
  /// `elements` of the result: `count` for all-reduce, reduce-scatter and the ring, n x `count`
  /// for all-gather and all-to-all (as the MPI transport). Invalid when `count` < 1.
  Expected<CollectiveCheck> Collective(CollectiveKind kind, GroupKind group, int64_t count,
                                       const Watchdog& watchdog) override;
  /// Fills a device buffer with check::Message(tag, this rank, i) for `count` >= 1 elements and
  /// enqueues ncclSend on the link to pipeline neighbour `peer` (world rank) for the tag's
  /// direction; the host does not wait, the buffer lives until FinishSends. Invalid when no link
  /// goes from this rank to `peer` in that direction.
  Status Send(int64_t peer, int tag, int64_t count) override;
  /// Receives `count` >= 1 elements on the link from `peer` for the tag's direction into a buffer
  /// set to -1 first, counts those differing from check::Message(tag, peer, i) on the device, and
  /// waits under `watchdog`.
  Expected<CollectiveCheck> Receive(int64_t peer, int tag, int64_t count,
                                    const Watchdog& watchdog) override;
  /// Waits under `watchdog` for every link stream with sends since the last call; their buffers
  /// are then reused.
  Status FinishSends(const Watchdog& watchdog) override;

 private:
  struct Channel;  // one communicator, its stream and its scratch buffers
  struct Buffer;   // a device buffer of 64-bit integers that grows on demand

  NcclTransport();
  // The overrides' work; the overrides mark the transport failed when it returns an error other
  // than Invalid (a communicator may then be in an error state).
  Expected<CollectiveCheck> RunCollective(CollectiveKind kind, GroupKind group, int64_t count,
                                          const Watchdog& watchdog);
  Status StartSend(int64_t peer, int tag, int64_t count);
  Expected<CollectiveCheck> RunReceive(int64_t peer, int tag, int64_t count,
                                       const Watchdog& watchdog);
  void NoteFailure(const Status& status);
  // The link carrying a message of `tag` from world rank `sender` to world rank `receiver`.
  Expected<Channel*> Link(int64_t sender, int64_t receiver, int tag);
  // Waits for the streams of `channels` under `watchdog`, watching their communicators' async
  // errors; aborts them on a timeout or an error.
  Status Wait(const std::vector<Channel*>& channels, const Watchdog& watchdog);
  void Abort(const std::vector<Channel*>& channels);
  // Counts the elements of `recv` (`count`, on `c`'s stream after what it received) that differ
  // from `spec`'s pattern, and waits for the stream under `watchdog`: {count, wrong}.
  Expected<CollectiveCheck> CheckAndWait(Channel& c, const int64_t* recv, int64_t count,
                                         const CheckSpec& spec, const Watchdog& watchdog);
  // A free send buffer of at least `count` elements, from the pool or newly allocated.
  Expected<Buffer> TakeSendBuffer(int64_t count);

  RankCoord coord_;
  std::array<std::vector<int64_t>, kGroupKindCount> members_;
  int64_t pp_ = 1;
  std::array<std::unique_ptr<Channel>, kGroupKindCount> groups_;
  // Index direction * pp + s (direction 0 activation, 1 gradient); null where this rank is not
  // one of the link's two members.
  std::vector<std::unique_ptr<Channel>> links_;
  std::vector<Buffer> free_sends_;  // send buffers whose sends completed
  bool failed_ = false;             // an error was seen: the destructor aborts
};

}  // namespace gpuplan

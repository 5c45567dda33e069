#include "validator/mpi_communicators.h"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/str_format.h"
#include "validator/check_patterns.h"
#include "validator/mpi_check.h"

namespace gpuplan {

PlanCommunicators::PlanCommunicators() { comms_.fill(MPI_COMM_NULL); }

PlanCommunicators::PlanCommunicators(PlanCommunicators&& other) noexcept
    : comms_(other.comms_), members_(std::move(other.members_)), coord_(other.coord_) {
  other.comms_.fill(MPI_COMM_NULL);
}

PlanCommunicators& PlanCommunicators::operator=(PlanCommunicators&& other) noexcept {
  std::swap(comms_, other.comms_);
  std::swap(members_, other.members_);
  std::swap(coord_, other.coord_);
  return *this;
}

Status WaitWithWatchdog(std::span<MPI_Request> requests, const Watchdog& watchdog) {
  const double start = MPI_Wtime();
  for (;;) {
    int done = 0;
    GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Testall(static_cast<int>(requests.size()), requests.data(),
                                            &done, MPI_STATUSES_IGNORE));
    if (done) return Status::Ok();
    if (MPI_Wtime() - start > watchdog.timeout_s) {
      int rank = 0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      return WatchdogExpired(rank, watchdog);
    }
    // MPI_Testall drives progress; ranks sharing cores (mpirun --oversubscribe) yield inside it.
  }
}

PlanCommunicators::~PlanCommunicators() {
  for (MPI_Comm& c : comms_) {
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  }
}

Status CheckWorldSize(const RankLayout& layout, MPI_Comm world) {
  int size = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_size(world, &size));
  if (size != layout.world_size) {
    return Status::Invalid(
        StrFormat("the plan has %lld ranks and MPI started %d; run mpirun -np "
                  "%lld (or --launch local)",
                  static_cast<long long>(layout.world_size), size,
                  static_cast<long long>(layout.world_size)));
  }
  return Status::Ok();
}

Expected<PlanCommunicators> PlanCommunicators::Split(const RankLayout& layout, MPI_Comm world) {
  int rank = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(world, &rank));
  GPUPLAN_RETURN_IF_ERROR(CheckWorldSize(layout, world));
  PlanCommunicators out;
  out.coord_ = layout.ranks[static_cast<size_t>(rank)];
  for (int k = 0; k < kGroupKindCount; ++k) {
    const GroupKind kind = static_cast<GroupKind>(k);
    const int64_t group = layout.GroupOf(kind, rank);
    const std::vector<int64_t>& members = layout.Groups(kind)[static_cast<size_t>(group)];
    int key = 0;
    while (members[static_cast<size_t>(key)] != rank) ++key;
    out.members_[static_cast<size_t>(k)] = members;
    MPI_Comm& comm = out.comms_[static_cast<size_t>(k)];
    GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_split(world, static_cast<int>(group), key, &comm));
    GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
    int comm_size = 0;
    int comm_rank = 0;
    GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_size(comm, &comm_size));
    GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(comm, &comm_rank));
    if (comm_size != static_cast<int>(members.size()) || comm_rank != key) {
      return Status::Internal(StrFormat(
          "rank %d: the %s communicator has %d ranks (this rank %d), the plan's group %lld has %zu "
          "(this rank %d)",
          rank, std::string(GroupKindName(kind)).c_str(), comm_size, comm_rank,
          static_cast<long long>(group), members.size(), key));
    }
  }
  return out;
}

namespace {

struct CommShape {
  int64_t rank = 0;
  int64_t size = 0;
};

Expected<CommShape> ShapeOf(MPI_Comm comm) {
  int rank = 0;
  int size = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(comm, &rank));
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_size(comm, &size));
  return CommShape{rank, size};
}

// `size` elements, element j = value(j).
template <typename F>
std::vector<int64_t> Filled(int64_t size, F value) {
  std::vector<int64_t> v(static_cast<size_t>(size));
  for (int64_t j = 0; j < size; ++j) v[static_cast<size_t>(j)] = value(j);
  return v;
}

// Every element of `got` against expected(j).
template <typename F>
CollectiveCheck Check(const std::vector<int64_t>& got, F expected) {
  CollectiveCheck check{static_cast<int64_t>(got.size()), 0};
  for (int64_t j = 0; j < check.elements; ++j) {
    if (got[static_cast<size_t>(j)] != expected(j)) ++check.wrong;
  }
  return check;
}

int Count(int64_t count) { return static_cast<int>(count); }

}  // namespace

Expected<CollectiveCheck> CheckedAllReduce(MPI_Comm comm, int64_t count, const Watchdog& watchdog) {
  Expected<CommShape> s = ShapeOf(comm);
  if (!s.ok()) return s.status();
  const int64_t r = s->rank;
  const int64_t n = s->size;
  const std::vector<int64_t> send =
      Filled(count, [&](int64_t i) { return check::AllReduceSend(r, i); });
  std::vector<int64_t> recv(static_cast<size_t>(count), -1);
  MPI_Request request = MPI_REQUEST_NULL;
  GPUPLAN_MPI_RETURN_IF_ERROR(
      MPI_Iallreduce(send.data(), recv.data(), Count(count), MPI_INT64_T, MPI_SUM, comm, &request));
  GPUPLAN_RETURN_IF_ERROR(WaitWithWatchdog({&request, 1}, watchdog));
  return Check(recv, [&](int64_t i) { return check::AllReduceWant(n, i); });
}

Expected<CollectiveCheck> CheckedAllGather(MPI_Comm comm, int64_t count, const Watchdog& watchdog) {
  Expected<CommShape> s = ShapeOf(comm);
  if (!s.ok()) return s.status();
  const int64_t r = s->rank;
  const std::vector<int64_t> send =
      Filled(count, [&](int64_t i) { return check::AllGatherSend(r, i); });
  std::vector<int64_t> recv(static_cast<size_t>(count * s->size), -1);
  MPI_Request request = MPI_REQUEST_NULL;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Iallgather(send.data(), Count(count), MPI_INT64_T, recv.data(),
                                             Count(count), MPI_INT64_T, comm, &request));
  GPUPLAN_RETURN_IF_ERROR(WaitWithWatchdog({&request, 1}, watchdog));
  return Check(recv, [&](int64_t j) { return check::AllGatherWant(count, j); });
}

Expected<CollectiveCheck> CheckedReduceScatter(MPI_Comm comm, int64_t count,
                                               const Watchdog& watchdog) {
  Expected<CommShape> s = ShapeOf(comm);
  if (!s.ok()) return s.status();
  const int64_t r = s->rank;
  const int64_t n = s->size;
  const std::vector<int64_t> send =
      Filled(count * n, [&](int64_t j) { return check::ReduceScatterSend(r, j); });
  std::vector<int64_t> recv(static_cast<size_t>(count), -1);
  MPI_Request request = MPI_REQUEST_NULL;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Ireduce_scatter_block(send.data(), recv.data(), Count(count),
                                                        MPI_INT64_T, MPI_SUM, comm, &request));
  GPUPLAN_RETURN_IF_ERROR(WaitWithWatchdog({&request, 1}, watchdog));
  return Check(recv, [&](int64_t i) { return check::ReduceScatterWant(r, n, count, i); });
}

Expected<CollectiveCheck> CheckedAllToAll(MPI_Comm comm, int64_t count, const Watchdog& watchdog) {
  Expected<CommShape> s = ShapeOf(comm);
  if (!s.ok()) return s.status();
  const int64_t r = s->rank;
  const std::vector<int64_t> send =
      Filled(count * s->size, [&](int64_t j) { return check::AllToAllSend(r, count, j); });
  std::vector<int64_t> recv(static_cast<size_t>(count * s->size), -1);
  MPI_Request request = MPI_REQUEST_NULL;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Ialltoall(send.data(), Count(count), MPI_INT64_T, recv.data(),
                                            Count(count), MPI_INT64_T, comm, &request));
  GPUPLAN_RETURN_IF_ERROR(WaitWithWatchdog({&request, 1}, watchdog));
  return Check(recv, [&](int64_t j) { return check::AllToAllWant(r, count, j); });
}

Expected<CollectiveCheck> CheckedSendRecvRing(MPI_Comm comm, int64_t count,
                                              const Watchdog& watchdog) {
  Expected<CommShape> s = ShapeOf(comm);
  if (!s.ok()) return s.status();
  const int64_t r = s->rank;
  const int64_t n = s->size;
  const int64_t prev = (r + n - 1) % n;
  const std::vector<int64_t> send = Filled(count, [&](int64_t i) { return check::RingSend(r, i); });
  std::vector<int64_t> recv(static_cast<size_t>(count), -1);
  constexpr int kTag = 19;
  MPI_Request requests[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Irecv(recv.data(), Count(count), MPI_INT64_T,
                                        static_cast<int>(prev), kTag, comm, &requests[0]));
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Isend(send.data(), Count(count), MPI_INT64_T,
                                        static_cast<int>((r + 1) % n), kTag, comm, &requests[1]));
  GPUPLAN_RETURN_IF_ERROR(WaitWithWatchdog(requests, watchdog));
  return Check(recv, [&](int64_t i) { return check::RingSend(prev, i); });
}

Expected<CollectiveCheck> CheckedCollective(CollectiveKind kind, MPI_Comm comm, int64_t count,
                                            const Watchdog& watchdog) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return CheckedAllReduce(comm, count, watchdog);
    case CollectiveKind::kAllGather:
      return CheckedAllGather(comm, count, watchdog);
    case CollectiveKind::kReduceScatter:
      return CheckedReduceScatter(comm, count, watchdog);
    case CollectiveKind::kAllToAll:
      return CheckedAllToAll(comm, count, watchdog);
    case CollectiveKind::kRing:
      return CheckedSendRecvRing(comm, count, watchdog);
  }
  return Status::Internal("unknown collective kind");
}

Expected<CollectiveCheck> MpiTransport::Collective(CollectiveKind kind, GroupKind group,
                                                   int64_t count, const Watchdog& watchdog) {
  return CheckedCollective(kind, comms_.Get(group), count, watchdog);
}

Status MpiTransport::Send(int64_t peer, int tag, int64_t count) {
  const int64_t me = comms_.Coord().rank;
  std::vector<int64_t>& buffer = send_buffers_.emplace_back(
      Filled(count, [&](int64_t i) { return check::Message(tag, me, i); }));
  MPI_Request request = MPI_REQUEST_NULL;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Isend(buffer.data(), Count(count), MPI_INT64_T,
                                        static_cast<int>(peer), tag, world_, &request));
  sends_.push_back(request);
  return Status::Ok();
}

Expected<CollectiveCheck> MpiTransport::Receive(int64_t peer, int tag, int64_t count,
                                                const Watchdog& watchdog) {
  std::vector<int64_t> buffer(static_cast<size_t>(count), -1);
  MPI_Request request = MPI_REQUEST_NULL;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Irecv(buffer.data(), Count(count), MPI_INT64_T,
                                        static_cast<int>(peer), tag, world_, &request));
  GPUPLAN_RETURN_IF_ERROR(WaitWithWatchdog({&request, 1}, watchdog));
  return Check(buffer, [&](int64_t i) { return check::Message(tag, peer, i); });
}

Status MpiTransport::FinishSends(const Watchdog& watchdog) {
  GPUPLAN_RETURN_IF_ERROR(WaitWithWatchdog(sends_, watchdog));
  sends_.clear();
  send_buffers_.clear();
  return Status::Ok();
}

Expected<std::vector<std::string>> GatherText(const std::string& mine, MPI_Comm world) {
  int rank = 0;
  int size = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(world, &rank));
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_size(world, &size));
  constexpr int64_t kMaxBytes = std::numeric_limits<int>::max();
  const int64_t bytes = static_cast<int64_t>(mine.size());
  std::vector<int64_t> sizes(rank == 0 ? static_cast<size_t>(size) : 0);
  GPUPLAN_MPI_RETURN_IF_ERROR(
      MPI_Gather(&bytes, 1, MPI_INT64_T, sizes.data(), 1, MPI_INT64_T, 0, world));
  std::vector<int> counts, displacements;
  int64_t total = 0;
  for (int64_t n : sizes) {
    displacements.push_back(static_cast<int>(std::min(total, kMaxBytes)));
    counts.push_back(static_cast<int>(std::min(n, kMaxBytes)));
    total += n;
  }
  // Every rank learns whether rank 0 can take the texts, so that all skip the Gatherv together.
  int fits = total <= kMaxBytes ? 1 : 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Bcast(&fits, 1, MPI_INT, 0, world));
  if (fits == 0) {
    return Status::Invalid(
        StrFormat("the ranks' texts hold %lld bytes, more than MPI gathers "
                  "at once (%lld)",
                  static_cast<long long>(total), static_cast<long long>(kMaxBytes)));
  }
  std::string all(static_cast<size_t>(total), '\0');
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Gatherv(mine.data(), static_cast<int>(bytes), MPI_CHAR,
                                          all.data(), counts.data(), displacements.data(), MPI_CHAR,
                                          0, world));
  std::vector<std::string> out;
  for (size_t r = 0; r < sizes.size(); ++r) {
    out.push_back(
        all.substr(static_cast<size_t>(displacements[r]), static_cast<size_t>(counts[r])));
  }
  return out;
}

Expected<std::vector<StepRunResult>> GatherStepResults(const StepRunResult& mine, MPI_Comm world) {
  int rank = 0;
  int size = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(world, &rank));
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_size(world, &size));
  const TimeBreakdown& p = mine.phases;
  constexpr int kFields = 14;
  const double row[kFields] = {static_cast<double>(mine.collectives),
                               static_cast<double>(mine.sends),
                               static_cast<double>(mine.receives),
                               static_cast<double>(mine.elements),
                               static_cast<double>(mine.wrong),
                               mine.seconds,
                               p.compute,
                               p.tp_comm,
                               p.cp_comm,
                               p.pp_comm,
                               p.dp_comm,
                               p.ep_comm,
                               p.bubble,
                               p.optimizer};
  std::vector<double> all(rank == 0 ? static_cast<size_t>(kFields * size) : 0);
  GPUPLAN_MPI_RETURN_IF_ERROR(
      MPI_Gather(row, kFields, MPI_DOUBLE, all.data(), kFields, MPI_DOUBLE, 0, world));
  std::vector<StepRunResult> out;
  for (size_t i = 0; i + kFields <= all.size(); i += kFields) {
    const double* x = all.data() + i;
    StepRunResult r{static_cast<int64_t>(x[0]),
                    static_cast<int64_t>(x[1]),
                    static_cast<int64_t>(x[2]),
                    static_cast<int64_t>(x[3]),
                    static_cast<int64_t>(x[4]),
                    x[5],
                    TimeBreakdown{x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13]}};
    out.push_back(r);
  }
  return out;
}

}  // namespace gpuplan

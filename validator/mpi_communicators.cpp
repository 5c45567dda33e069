#include "validator/mpi_communicators.h"

#include <string>
#include <utility>
#include <vector>

#include "common/str_format.h"
#include "validator/mpi_check.h"

namespace gpuplan {

PlanCommunicators::PlanCommunicators() { comms_.fill(MPI_COMM_NULL); }

PlanCommunicators::PlanCommunicators(PlanCommunicators&& other) noexcept : comms_(other.comms_) {
  other.comms_.fill(MPI_COMM_NULL);
}

PlanCommunicators& PlanCommunicators::operator=(PlanCommunicators&& other) noexcept {
  std::swap(comms_, other.comms_);
  return *this;
}

PlanCommunicators::~PlanCommunicators() {
  for (MPI_Comm& c : comms_) {
    if (c != MPI_COMM_NULL) MPI_Comm_free(&c);
  }
}

Expected<PlanCommunicators> PlanCommunicators::Split(const RankLayout& layout, MPI_Comm world) {
  int size = 0;
  int rank = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_size(world, &size));
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(world, &rank));
  if (size != layout.world_size) {
    return Status::Invalid(
        StrFormat("the plan has %lld ranks and MPI started %d; run mpirun -np "
                  "%lld (or --launch local)",
                  static_cast<long long>(layout.world_size), size,
                  static_cast<long long>(layout.world_size)));
  }
  PlanCommunicators out;
  for (int k = 0; k < kGroupKindCount; ++k) {
    const GroupKind kind = static_cast<GroupKind>(k);
    const int64_t group = layout.GroupOf(kind, rank);
    const std::vector<int64_t>& members = layout.Groups(kind)[static_cast<size_t>(group)];
    int key = 0;
    while (members[static_cast<size_t>(key)] != rank) ++key;
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
  int rank = 0;
  int size = 0;
};

Expected<CommShape> ShapeOf(MPI_Comm comm) {
  CommShape s;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(comm, &s.rank));
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_size(comm, &s.size));
  return s;
}

}  // namespace

Expected<CollectiveCheck> CheckedAllReduce(MPI_Comm comm, int64_t count) {
  Expected<CommShape> shape = ShapeOf(comm);
  if (!shape.ok()) return shape.status();
  const int64_t r = shape->rank;
  const int64_t n = shape->size;
  std::vector<int64_t> send(static_cast<size_t>(count));
  std::vector<int64_t> recv(static_cast<size_t>(count), -1);
  for (int64_t i = 0; i < count; ++i) send[static_cast<size_t>(i)] = (r + 1) * (i + 1);
  GPUPLAN_MPI_RETURN_IF_ERROR(
      MPI_Allreduce(send.data(), recv.data(), static_cast<int>(count), MPI_INT64_T, MPI_SUM, comm));
  CollectiveCheck check{count, 0};
  for (int64_t i = 0; i < count; ++i) {
    if (recv[static_cast<size_t>(i)] != (i + 1) * n * (n + 1) / 2) ++check.wrong;
  }
  return check;
}

Expected<CollectiveCheck> CheckedAllToAll(MPI_Comm comm, int64_t count) {
  Expected<CommShape> shape = ShapeOf(comm);
  if (!shape.ok()) return shape.status();
  const int64_t r = shape->rank;
  const int64_t n = shape->size;
  std::vector<int64_t> send(static_cast<size_t>(count * n));
  std::vector<int64_t> recv(static_cast<size_t>(count * n), -1);
  for (int64_t p = 0; p < n; ++p) {
    for (int64_t i = 0; i < count; ++i) {
      send[static_cast<size_t>(p * count + i)] = r * 1000000 + p * 1000 + i;
    }
  }
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Alltoall(send.data(), static_cast<int>(count), MPI_INT64_T,
                                           recv.data(), static_cast<int>(count), MPI_INT64_T,
                                           comm));
  CollectiveCheck check{count * n, 0};
  for (int64_t p = 0; p < n; ++p) {
    for (int64_t i = 0; i < count; ++i) {
      if (recv[static_cast<size_t>(p * count + i)] != p * 1000000 + r * 1000 + i) ++check.wrong;
    }
  }
  return check;
}

Expected<CollectiveCheck> CheckedSendRecvRing(MPI_Comm comm, int64_t count) {
  Expected<CommShape> shape = ShapeOf(comm);
  if (!shape.ok()) return shape.status();
  const int r = shape->rank;
  const int n = shape->size;
  const int next = (r + 1) % n;
  const int prev = (r + n - 1) % n;
  std::vector<int64_t> send(static_cast<size_t>(count));
  std::vector<int64_t> recv(static_cast<size_t>(count), -1);
  for (int64_t i = 0; i < count; ++i) send[static_cast<size_t>(i)] = r * int64_t{1000000} + i;
  constexpr int kTag = 19;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Sendrecv(send.data(), static_cast<int>(count), MPI_INT64_T, next,
                                           kTag, recv.data(), static_cast<int>(count), MPI_INT64_T,
                                           prev, kTag, comm, MPI_STATUS_IGNORE));
  CollectiveCheck check{count, 0};
  for (int64_t i = 0; i < count; ++i) {
    if (recv[static_cast<size_t>(i)] != prev * int64_t{1000000} + i) ++check.wrong;
  }
  return check;
}

}  // namespace gpuplan

#include "validator/mpi_collective_runner.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "common/str_format.h"
#include "validator/mpi_check.h"
#include "validator/mpi_communicators.h"

namespace gpuplan {
namespace {

// One case, as rank 0 broadcasts it: the collective (kStop releases the serving ranks), the
// group size, the nccl-tests size and the timing policy.
constexpr double kStop = -1;
struct Case {
  double collective = kStop;
  double ranks = 0;
  double bytes = 0;
  double warmup = 0;
  double min_iterations = 0;
  double max_iterations = 0;
  double min_seconds = 0;
};
constexpr int kCaseFields = 7;

std::array<double, kCaseFields> Pack(const Case& c) {
  return {c.collective,     c.ranks,          c.bytes,      c.warmup,
          c.min_iterations, c.max_iterations, c.min_seconds};
}

Case Unpack(const std::array<double, kCaseFields>& a) {
  return {a[0], a[1], a[2], a[3], a[4], a[5], a[6]};
}

// The executor's kind of a profiled collective (no broadcast: the validator's ranks run none).
Expected<CollectiveKind> KindOf(Collective c) {
  switch (c) {
    case Collective::kAllReduce:
      return CollectiveKind::kAllReduce;
    case Collective::kAllGather:
      return CollectiveKind::kAllGather;
    case Collective::kReduceScatter:
      return CollectiveKind::kReduceScatter;
    case Collective::kAllToAll:
      return CollectiveKind::kAllToAll;
    case Collective::kSendRecv:
      return CollectiveKind::kRing;
    default:
      return Status::Invalid(std::string(GetCollectiveInfo(c).name) +
                             ": not run by the validator's CPU ranks");
  }
}

// One collective as the executor runs it (StepExecutor: nccl-tests' size over 8-byte elements,
// the gathered, scattered and exchanged buffers holding one block per rank).
Status RunOnce(Collective c, MPI_Comm comm, int ranks, double bytes) {
  Expected<CollectiveKind> kind = KindOf(c);
  if (!kind.ok()) return kind.status();
  const int64_t total = std::max<int64_t>(1, static_cast<int64_t>(bytes / 8));
  const bool blocks = *kind == CollectiveKind::kAllGather ||
                      *kind == CollectiveKind::kReduceScatter || *kind == CollectiveKind::kAllToAll;
  const Watchdog watchdog{kMpiProfileWatchdogSeconds,
                          StrFormat("the profile's %s of %.0f bytes over %d ranks",
                                    std::string(GetCollectiveInfo(c).name).c_str(), bytes, ranks)};
  Expected<CollectiveCheck> check = CheckedCollective(
      *kind, comm, blocks ? std::max<int64_t>(1, total / ranks) : total, watchdog);
  if (!check.ok()) return check.status();
  if (check->wrong > 0) {
    return Status::Internal(StrFormat("%s: %lld of %lld elements arrived wrong",
                                      watchdog.what.c_str(), static_cast<long long>(check->wrong),
                                      static_cast<long long>(check->elements)));
  }
  return Status::Ok();
}

// Times `c` on a rank of its group `comm` (every member calls it): warm-up calls, one probe call
// whose slowest time sets the count (min_seconds / probe, within the policy's bounds, the same
// on every member), then that many calls. Returns this rank's mean seconds per call.
Expected<double> TimeOnMember(const Case& c, MPI_Comm comm) {
  const auto kind = static_cast<Collective>(static_cast<int>(c.collective));
  const int ranks = static_cast<int>(c.ranks);
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Barrier(comm));
  for (int i = 0; i < static_cast<int>(c.warmup); ++i) {
    GPUPLAN_RETURN_IF_ERROR(RunOnce(kind, comm, ranks, c.bytes));
  }
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Barrier(comm));
  double probe = MPI_Wtime();
  GPUPLAN_RETURN_IF_ERROR(RunOnce(kind, comm, ranks, c.bytes));
  probe = MPI_Wtime() - probe;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Allreduce(MPI_IN_PLACE, &probe, 1, MPI_DOUBLE, MPI_MAX, comm));
  const double wanted = std::ceil(c.min_seconds / std::max(probe, 1e-9));
  const int n = static_cast<int>(std::clamp(wanted, c.min_iterations, c.max_iterations));
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Barrier(comm));
  const double start = MPI_Wtime();
  for (int i = 0; i < n; ++i) GPUPLAN_RETURN_IF_ERROR(RunOnce(kind, comm, ranks, c.bytes));
  return (MPI_Wtime() - start) / n;
}

// Every world rank's part in case `c`: the first c.ranks ranks split off a communicator and time
// it; the slowest member's mean reaches world rank 0 (the group's rank 0). Aborts the launch on
// failure, so that no rank waits for one that gave up.
double RunCase(const Case& c, MPI_Comm world) {
  int rank = 0;
  MPI_Comm_rank(world, &rank);
  const bool member = rank < static_cast<int>(c.ranks);
  MPI_Comm comm = MPI_COMM_NULL;
  Status st = MpiStatus(MPI_Comm_split(world, member ? 0 : MPI_UNDEFINED, rank, &comm),
                        "MPI_Comm_split", __FILE__, __LINE__);
  double slowest = 0;
  if (st.ok() && member) {
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const Expected<double> mean = TimeOnMember(c, comm);
    st = mean.status();
    if (st.ok()) {
      double mine = *mean;
      st = MpiStatus(MPI_Reduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, comm), "MPI_Reduce",
                     __FILE__, __LINE__);
    }
    MPI_Comm_free(&comm);
  }
  if (!st.ok()) {
    std::fprintf(stderr, "gpuplan: error: rank %d: profile collectives: %s\n", rank,
                 st.message().c_str());
    std::fflush(stderr);
    MPI_Abort(world, 1);
  }
  return slowest;
}

}  // namespace

MpiCollectiveRunner::MpiCollectiveRunner(MPI_Comm world) : world_(world) {}

MpiCollectiveRunner::~MpiCollectiveRunner() {
  std::array<double, kCaseFields> stop = Pack(Case{});
  MPI_Bcast(stop.data(), kCaseFields, MPI_DOUBLE, 0, world_);
}

int MpiCollectiveRunner::MaxRanks() const {
  int size = 0;
  MPI_Comm_size(world_, &size);
  return size;
}

std::string MpiCollectiveRunner::Version() const {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<size_t>(std::max(length, 0)));
  version = version.substr(0, version.find_first_of(std::string("\r\n\0", 3)));
  return version.substr(0, version.find_last_not_of(" \t") + 1);
}

bool MpiCollectiveRunner::Runs(Collective c) const { return KindOf(c).ok(); }

Expected<double> MpiCollectiveRunner::Seconds(Collective c, int ranks, double bytes,
                                              const TimingPolicy& timing) {
  const std::string name(GetCollectiveInfo(c).name);
  if (Expected<CollectiveKind> kind = KindOf(c); !kind.ok()) return kind.status();
  if (ranks < 1 || ranks > MaxRanks()) {
    return Status::Invalid(
        StrFormat("%s: %d ranks, the launch has %d", name.c_str(), ranks, MaxRanks()));
  }
  // MPI counts are ints: at most 2^31 - 1 elements of 8 bytes.
  if (!std::isfinite(bytes) || bytes < 0 || bytes / 8 > 2147483647.0) {
    return Status::Invalid(
        StrFormat("%s: size must be 0 to 16 GiB, got %g bytes", name.c_str(), bytes));
  }
  const Case k{static_cast<double>(static_cast<int>(c)),
               static_cast<double>(ranks),
               bytes,
               static_cast<double>(timing.warmup_iterations),
               static_cast<double>(std::max(1, timing.min_iterations)),
               static_cast<double>(std::max(timing.min_iterations, timing.max_iterations)),
               timing.min_seconds};
  std::array<double, kCaseFields> packed = Pack(k);
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Bcast(packed.data(), kCaseFields, MPI_DOUBLE, 0, world_));
  return RunCase(k, world_);
}

Status ServeMpiCollectives(MPI_Comm world) {
  for (;;) {
    std::array<double, kCaseFields> packed{};
    GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Bcast(packed.data(), kCaseFields, MPI_DOUBLE, 0, world));
    const Case c = Unpack(packed);
    if (c.collective == kStop) return Status::Ok();
    RunCase(c, world);
  }
}

}  // namespace gpuplan

#include "validator/comm_executor.h"

#include <algorithm>
#include <deque>
#include <string>
#include <string_view>

#include "common/str_format.h"
#include "simulator/shard.h"
#include "validator/mpi_check.h"

namespace gpuplan {
namespace {

// 64-bit elements an op of `bytes` carries, capped at `max_bytes`, at least 1.
int64_t Elements(double bytes, double max_bytes) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::min(bytes, max_bytes) / 8.0));
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// One collective op (its `count` repeats) over `comm`, checked, each under `watchdog`.
Expected<CollectiveCheck> RunCollective(const RankOp& op, MPI_Comm comm, double max_bytes,
                                        const Watchdog& watchdog) {
  int n = 1;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_size(comm, &n));
  const int64_t total = Elements(op.bytes, max_bytes);
  // Gathered, scattered and exchanged buffers hold n blocks: nccl-tests' size is the whole one.
  const int64_t block = std::max<int64_t>(1, total / n);
  CollectiveCheck sum;
  for (int64_t i = 0; i < op.count; ++i) {
    Expected<CollectiveCheck> one = Status::Invalid(
        "collective '" + op.name +
        "': not one the executor runs (all_reduce, all_gather, reduce_scatter, alltoall, ring "
        "send/recv)");
    if (StartsWith(op.name, "all_reduce")) {
      one = CheckedAllReduce(comm, total, watchdog);
    } else if (StartsWith(op.name, "all_gather")) {
      one = CheckedAllGather(comm, block, watchdog);
    } else if (StartsWith(op.name, "reduce_scatter")) {
      one = CheckedReduceScatter(comm, block, watchdog);
    } else if (StartsWith(op.name, "alltoall")) {
      one = CheckedAllToAll(comm, block, watchdog);
    } else if (StartsWith(op.name, "ring send/recv")) {
      one = CheckedSendRecvRing(comm, total, watchdog);
    }
    if (!one.ok()) return one.status();
    sum.elements += one->elements;
    sum.wrong += one->wrong;
  }
  return sum;
}

// Pipeline messages: tagged by direction (activation 0, gradient 1), micro-batch and the
// receiving virtual stage; element i of a message from `sender` is Pattern(tag, sender, i).
int Tag(bool gradient, int64_t microbatch, int64_t receiver_virtual_stage) {
  return (gradient ? 1 << 14 : 0) | static_cast<int>((microbatch & 127) << 7) |
         static_cast<int>(receiver_virtual_stage & 127);
}

int64_t Pattern(int tag, int64_t sender, int64_t i) {
  return (static_cast<int64_t>(tag) << 40) | (sender << 24) | (i & 0xFFFFFF);
}

}  // namespace

Expected<CommRunResult> RunCommunication(const JobSpec& job,
                                         const std::vector<ProgramStep>& program,
                                         const PlanCommunicators& comms, MPI_Comm world,
                                         double max_bytes_per_op, double watchdog_s) {
  const double max_bytes = std::max(8.0, max_bytes_per_op);
  int rank = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(world, &rank));
  const int64_t pp = job.parallel.pp;
  const int64_t stage = comms.Coord().pp;
  CommRunResult result;
  std::deque<std::vector<int64_t>> send_buffers;  // alive until their sends complete
  std::vector<MPI_Request> sends;
  const double start = MPI_Wtime();

  auto collective = [&](const RankOp& op) -> Status {
    std::string members;
    for (int64_t m : comms.Members(op.group)) {
      members += (members.empty() ? "" : ", ") + std::to_string(m);
    }
    const Watchdog watchdog{watchdog_s, "'" + op.name + "' over " +
                                            std::string(GroupKindName(op.group)) + " ranks [" +
                                            members + "]"};
    Expected<CollectiveCheck> check = RunCollective(op, comms.Get(op.group), max_bytes, watchdog);
    if (!check.ok()) return check.status();
    result.collectives += op.count;
    result.elements += check->elements;
    result.wrong += check->wrong;
    return Status::Ok();
  };

  for (const ProgramStep& step : program) {
    const int64_t vs = step.pass.chunk * pp + stage;
    const bool backward = step.pass.kind == PassKind::kBackward;
    for (const RankOp& op : step.ops) {
      switch (op.kind) {
        case RankOpKind::kCompute:
          break;
        case RankOpKind::kCollective:
          GPUPLAN_RETURN_IF_ERROR(collective(op));
          break;
        case RankOpKind::kLayers: {
          const int64_t first = ChunkFirstLayer(job, stage, step.pass.chunk);
          for (int64_t layer = first; layer < first + op.count; ++layer) {
            const bool moe = job.model.is_moe() && layer >= job.model.moe_first_dense_layers;
            for (const RankOp& inner : LayerProgram(job, step.pass.kind, moe)) {
              if (inner.kind == RankOpKind::kCollective) GPUPLAN_RETURN_IF_ERROR(collective(inner));
            }
          }
          break;
        }
        case RankOpKind::kSend: {
          // A forward sends to virtual stage vs + 1, a backward to vs - 1.
          const int tag = Tag(backward, step.pass.microbatch, backward ? vs - 1 : vs + 1);
          const int64_t n = Elements(op.bytes, max_bytes);
          std::vector<int64_t>& buffer = send_buffers.emplace_back(static_cast<size_t>(n));
          for (int64_t i = 0; i < n; ++i) buffer[static_cast<size_t>(i)] = Pattern(tag, rank, i);
          MPI_Request request = MPI_REQUEST_NULL;
          GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Isend(buffer.data(), static_cast<int>(n), MPI_INT64_T,
                                                static_cast<int>(op.peer), tag, world, &request));
          sends.push_back(request);
          ++result.sends;
          break;
        }
        case RankOpKind::kRecv: {
          const int tag = Tag(backward, step.pass.microbatch, vs);
          const int64_t n = Elements(op.bytes, max_bytes);
          std::vector<int64_t> buffer(static_cast<size_t>(n), -1);
          MPI_Request request = MPI_REQUEST_NULL;
          GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Irecv(buffer.data(), static_cast<int>(n), MPI_INT64_T,
                                                static_cast<int>(op.peer), tag, world, &request));
          GPUPLAN_RETURN_IF_ERROR(WaitWithWatchdog(
              {&request, 1}, {watchdog_s, "'" + op.name + "' (" + step.label + ") from rank " +
                                              std::to_string(op.peer)}));
          for (int64_t i = 0; i < n; ++i) {
            if (buffer[static_cast<size_t>(i)] != Pattern(tag, op.peer, i)) ++result.wrong;
          }
          result.elements += n;
          ++result.receives;
          break;
        }
      }
    }
  }
  GPUPLAN_RETURN_IF_ERROR(WaitWithWatchdog(sends, {watchdog_s, "the step's pipeline sends"}));
  result.seconds = MPI_Wtime() - start;
  return result;
}

Expected<std::vector<CommRunResult>> GatherCommResults(const CommRunResult& mine, MPI_Comm world) {
  int rank = 0;
  int size = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(world, &rank));
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_size(world, &size));
  const double row[6] = {static_cast<double>(mine.collectives), static_cast<double>(mine.sends),
                         static_cast<double>(mine.receives),    static_cast<double>(mine.elements),
                         static_cast<double>(mine.wrong),       mine.seconds};
  std::vector<double> all(rank == 0 ? static_cast<size_t>(6 * size) : 0);
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Gather(row, 6, MPI_DOUBLE, all.data(), 6, MPI_DOUBLE, 0, world));
  std::vector<CommRunResult> out;
  for (size_t i = 0; i + 6 <= all.size(); i += 6) {
    out.push_back(CommRunResult{static_cast<int64_t>(all[i]), static_cast<int64_t>(all[i + 1]),
                                static_cast<int64_t>(all[i + 2]), static_cast<int64_t>(all[i + 3]),
                                static_cast<int64_t>(all[i + 4]), all[i + 5]});
  }
  return out;
}

std::string FormatCommResults(const std::vector<CommRunResult>& results) {
  std::string out = StrFormat("%6s %12s %8s %8s %14s %8s %10s\n", "rank", "collectives", "sends",
                              "receives", "elements", "#wrong", "time (s)");
  CommRunResult total;
  for (size_t r = 0; r < results.size(); ++r) {
    const CommRunResult& x = results[r];
    out += StrFormat("%6zu %12lld %8lld %8lld %14lld %8lld %10.3f\n", r,
                     static_cast<long long>(x.collectives), static_cast<long long>(x.sends),
                     static_cast<long long>(x.receives), static_cast<long long>(x.elements),
                     static_cast<long long>(x.wrong), x.seconds);
    total.collectives += x.collectives;
    total.sends += x.sends;
    total.receives += x.receives;
    total.elements += x.elements;
    total.wrong += x.wrong;
    total.seconds = std::max(total.seconds, x.seconds);
  }
  out += StrFormat("%6s %12lld %8lld %8lld %14lld %8lld %10.3f\n", "all",
                   static_cast<long long>(total.collectives), static_cast<long long>(total.sends),
                   static_cast<long long>(total.receives), static_cast<long long>(total.elements),
                   static_cast<long long>(total.wrong), total.seconds);
  return out;
}

}  // namespace gpuplan

#include "validator/step_executor.h"

#include <algorithm>
#include <chrono>
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

// The phase a collective over `group` is timed into.
double& CommPhase(GroupKind group, TimeBreakdown* phases) {
  switch (group) {
    case GroupKind::kTp:
      return phases->tp_comm;
    case GroupKind::kCp:
      return phases->cp_comm;
    case GroupKind::kEp:
      return phases->ep_comm;
    case GroupKind::kPp:
      return phases->pp_comm;
    default:
      return phases->dp_comm;
  }
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

Expected<StepRunResult> RunStep(const JobSpec& job, const std::vector<ProgramStep>& program,
                                const PlanCommunicators& comms, MPI_Comm world,
                                const StepOptions& options) {
  const double max_bytes = std::max(8.0, options.max_bytes_per_op);
  const double watchdog_s = options.watchdog_s;
  int rank = 0;
  GPUPLAN_MPI_RETURN_IF_ERROR(MPI_Comm_rank(world, &rank));
  const int64_t pp = job.parallel.pp;
  const int64_t stage = comms.Coord().pp;
  StepRunResult result;
  TimeBreakdown& phases = result.phases;
  std::deque<std::vector<int64_t>> send_buffers;  // alive until their sends complete
  std::vector<MPI_Request> sends;
  const double start = Now();

  auto collective = [&](const RankOp& op) -> Status {
    std::string members;
    for (int64_t m : comms.Members(op.group)) {
      members += (members.empty() ? "" : ", ") + std::to_string(m);
    }
    const Watchdog watchdog{watchdog_s, "'" + op.name + "' over " +
                                            std::string(GroupKindName(op.group)) + " ranks [" +
                                            members + "]"};
    const double t0 = Now();
    Expected<CollectiveCheck> check = RunCollective(op, comms.Get(op.group), max_bytes, watchdog);
    if (!check.ok()) return check.status();
    CommPhase(op.group, &phases) += Now() - t0;
    result.collectives += op.count;
    result.elements += check->elements;
    result.wrong += check->wrong;
    return Status::Ok();
  };
  auto compute = [&](const RankOp& op, const OpSite& site, double* phase) -> Status {
    if (options.compute == nullptr) return Status::Ok();
    const double t0 = Now();
    const Status st = options.compute->Run(op, site);
    if (!st.ok()) return st;
    *phase += Now() - t0;
    return Status::Ok();
  };

  for (const ProgramStep& step : program) {
    const int64_t vs = step.pass.chunk * pp + stage;
    const bool backward = step.pass.kind == PassKind::kBackward;
    double* compute_phase = step.is_pass ? &phases.compute : &phases.optimizer;
    for (const RankOp& op : step.ops) {
      switch (op.kind) {
        case RankOpKind::kCompute:
          GPUPLAN_RETURN_IF_ERROR(compute(op, OpSite{step.pass}, compute_phase));
          break;
        case RankOpKind::kCollective:
          GPUPLAN_RETURN_IF_ERROR(collective(op));
          break;
        case RankOpKind::kLayers:
          for (const LayerOp& inner : ExpandLayers(job, stage, step, op)) {
            if (inner.op.kind == RankOpKind::kCollective) {
              GPUPLAN_RETURN_IF_ERROR(collective(inner.op));
            } else if (inner.op.kind == RankOpKind::kCompute) {
              const OpSite site{step.pass, inner.layer, op.layers_pass};
              GPUPLAN_RETURN_IF_ERROR(compute(inner.op, site, compute_phase));
            }
          }
          break;
        case RankOpKind::kSend: {
          const double t0 = Now();
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
          phases.pp_comm += Now() - t0;
          break;
        }
        case RankOpKind::kRecv: {
          const double t0 = Now();
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
          phases.pp_comm += Now() - t0;
          break;
        }
      }
    }
    if (step.is_pass && options.compute != nullptr) options.compute->EndPass(step.pass);
  }
  const double t0 = Now();
  GPUPLAN_RETURN_IF_ERROR(WaitWithWatchdog(sends, {watchdog_s, "the step's pipeline sends"}));
  phases.pp_comm += Now() - t0;
  result.seconds = Now() - start;
  return result;
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

std::string FormatStepResults(const std::vector<StepRunResult>& results) {
  std::string out = StrFormat("%6s %12s %8s %8s %14s %8s %10s\n", "rank", "collectives", "sends",
                              "receives", "elements", "#wrong", "time (s)");
  StepRunResult total;
  for (size_t r = 0; r < results.size(); ++r) {
    const StepRunResult& x = results[r];
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

#include "validator/step_executor.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <string_view>

#include "common/str_format.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

// 64-bit elements an op of `bytes` carries, capped at `max_bytes`, at least 1.
int64_t Elements(double bytes, double max_bytes) {
  return std::max<int64_t>(1, static_cast<int64_t>(std::min(bytes, max_bytes) / 8.0));
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

double& CommPhase(GroupKind group, TimeBreakdown* phases) {
  switch (group) {
    case GroupKind::kTp:
    case GroupKind::kExpertTp:  // the cost model charges expert TP as TP time
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

Expected<CollectiveKind> CollectiveKindOf(const std::string& op_name) {
  static constexpr struct {
    std::string_view prefix;
    CollectiveKind kind;
  } kKinds[] = {{"all_reduce", CollectiveKind::kAllReduce},
                {"all_gather", CollectiveKind::kAllGather},
                {"reduce_scatter", CollectiveKind::kReduceScatter},
                {"alltoall", CollectiveKind::kAllToAll},
                {"ring send/recv", CollectiveKind::kRing}};
  for (const auto& k : kKinds) {
    if (StartsWith(op_name, k.prefix)) return k.kind;
  }
  return Status::Invalid("collective '" + op_name +
                         "': not one the executor runs (all_reduce, all_gather, reduce_scatter, "
                         "alltoall, ring send/recv)");
}

Status WatchdogExpired(int64_t rank, const Watchdog& watchdog) {
  return Status::Unavailable(StrFormat(
      "rank %lld: %s did not complete within %g s: a peer did not arrive (it died, hangs, or runs "
      "another op)",
      static_cast<long long>(rank), watchdog.what.c_str(), watchdog.timeout_s));
}

Expected<StepRunResult> RunStep(const JobSpec& job, const std::vector<ProgramStep>& program,
                                StepTransport& transport, const StepOptions& options) {
  const double max_bytes = std::max(8.0, options.max_bytes_per_op);
  const double watchdog_s = options.watchdog_s;
  const int64_t pp = job.parallel.pp;
  const int64_t stage = transport.Coord().pp;
  StepRunResult result;
  TimeBreakdown& phases = result.phases;
  const double start = Now();
  // Appends `op` of program step `step` (of `layer`, or -1), run from t0 until now, to the
  // record (StepOptions::record); `tag` is the tag of the pipeline message it sent or received,
  // -1 for other ops.
  auto record = [&](const RankOp& op, const ProgramStep& step, int64_t layer, double t0, int tag) {
    if (options.record == nullptr) return;
    MeasuredOp m;
    m.name = op.name;
    m.stream = MeasuredStream(op);
    m.start_s = t0 - start;
    m.end_s = Now() - start;
    if (step.is_pass) {
      m.microbatch = step.pass.microbatch;
      m.chunk = step.pass.chunk;
    }
    m.layer = static_cast<int32_t>(layer);
    m.bytes = op.kind == RankOpKind::kCompute ? 0 : op.bytes * static_cast<double>(op.count);
    if (tag >= 0) {
      m.peer = static_cast<int32_t>(op.peer);
      m.tag = tag;
    }
    options.record->push_back(std::move(m));
  };

  auto collective = [&](const RankOp& op) -> Status {
    Expected<CollectiveKind> kind = CollectiveKindOf(op.name);
    if (!kind.ok()) return kind.status();
    const std::vector<int64_t>& members = transport.Members(op.group);
    std::string names;
    for (int64_t m : members) names += (names.empty() ? "" : ", ") + std::to_string(m);
    const Watchdog watchdog{watchdog_s, "'" + op.name + "' over " +
                                            std::string(GroupKindName(op.group)) + " ranks [" +
                                            names + "]"};
    // Gathered, scattered and exchanged buffers hold n blocks: nccl-tests' size is the whole one.
    const int64_t total = Elements(op.bytes, max_bytes);
    const bool blocks = *kind == CollectiveKind::kAllGather ||
                        *kind == CollectiveKind::kReduceScatter ||
                        *kind == CollectiveKind::kAllToAll;
    const int64_t count =
        blocks ? std::max<int64_t>(1, total / static_cast<int64_t>(members.size())) : total;
    const double t0 = Now();
    for (int64_t i = 0; i < op.count; ++i) {
      Expected<CollectiveCheck> check = transport.Collective(*kind, op.group, count, watchdog);
      if (!check.ok()) return check.status();
      result.elements += check->elements;
      result.wrong += check->wrong;
    }
    CommPhase(op.group, &phases) += Now() - t0;
    result.collectives += op.count;
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
      const double op_start = Now();
      // A forward sends to virtual stage vs + 1, a backward to vs - 1; a receive arrives at vs.
      const int tag = op.kind == RankOpKind::kSend
                          ? MessageTag(backward, step.pass.microbatch, backward ? vs - 1 : vs + 1)
                      : op.kind == RankOpKind::kRecv
                          ? MessageTag(backward, step.pass.microbatch, vs)
                          : -1;
      switch (op.kind) {
        case RankOpKind::kCompute:
          GPUPLAN_RETURN_IF_ERROR(compute(op, OpSite{step.pass}, compute_phase));
          break;
        case RankOpKind::kCollective:
          GPUPLAN_RETURN_IF_ERROR(collective(op));
          break;
        case RankOpKind::kLayers:
          for (const LayerOp& inner : ExpandLayers(job, stage, step, op)) {
            const double t0 = Now();
            if (inner.op.kind == RankOpKind::kCollective) {
              GPUPLAN_RETURN_IF_ERROR(collective(inner.op));
            } else if (inner.op.kind == RankOpKind::kCompute) {
              const OpSite site{step.pass, inner.layer, inner.layer_program};
              GPUPLAN_RETURN_IF_ERROR(compute(inner.op, site, compute_phase));
            }
            record(inner.op, step, inner.layer, t0, -1);
          }
          break;
        case RankOpKind::kSend: {
          const double t0 = Now();
          GPUPLAN_RETURN_IF_ERROR(transport.Send(op.peer, tag, Elements(op.bytes, max_bytes)));
          ++result.sends;
          phases.pp_comm += Now() - t0;
          break;
        }
        case RankOpKind::kRecv: {
          const double t0 = Now();
          Expected<CollectiveCheck> check =
              transport.Receive(op.peer, tag, Elements(op.bytes, max_bytes),
                                {watchdog_s, "'" + op.name + "' (" + step.label + ") from rank " +
                                                 std::to_string(op.peer)});
          if (!check.ok()) return check.status();
          result.elements += check->elements;
          result.wrong += check->wrong;
          ++result.receives;
          phases.pp_comm += Now() - t0;
          break;
        }
      }
      if (op.kind != RankOpKind::kLayers) record(op, step, -1, op_start, tag);
    }
    if (step.is_pass && options.compute != nullptr) options.compute->EndPass(step.pass);
  }
  const double t0 = Now();
  GPUPLAN_RETURN_IF_ERROR(transport.FinishSends({watchdog_s, "the step's pipeline sends"}));
  phases.pp_comm += Now() - t0;
  if (result.sends > 0) {
    RankOp finish;
    finish.kind = RankOpKind::kSend;
    finish.name = "finish sends";
    record(finish, ProgramStep{}, -1, t0, -1);
  }
  result.seconds = Now() - start;
  return result;
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

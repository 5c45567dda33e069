// A discrete-event engine for ops that share resources: a DAG of ops, each with the seconds it
// takes alone on its resource; ops that run at the same time on one link share its bandwidth,
// and computation slows while communication kernels of the same GPU run beside it.
#pragma once

#include <cstdint>
#include <vector>

#include "common/progress.h"
#include "common/status.h"

namespace gpuplan {

/// What an op occupies while it runs.
enum class ResourceKind : uint8_t {
  kCompute,  ///< the GPU's SMs: one op at a time (a stream), slowed while comm runs beside it
  kLink,     ///< a link or NIC of the GPU: concurrent ops share it equally (processor sharing)
};

/// The engine. Build the graph (AddResource, AddOp, AddDependency), then Run once.
///
/// Rates (fluid model, as ASTRA-sim's analytical network backend and SimAI treat bandwidth):
///  - a link op progresses at 1/n of its solo rate while n ops are active on its link;
///  - a compute op progresses at 1/(1 + interference) while any link op of the same GPU is
///    active (communication kernels occupy SMs and memory bandwidth).
/// An op starts when all its predecessors have finished; it finishes when its solo work is done.
class EventEngine {
 public:
  explicit EventEngine(double compute_interference) : interference_(compute_interference) {}

  /// A resource of GPU `gpu` (any small integer naming the GPU). Returns its index.
  int32_t AddResource(int32_t gpu, ResourceKind kind);
  /// An op taking `work_s` >= 0 seconds alone on `resource`. Returns its index.
  int32_t AddOp(int32_t resource, double work_s);
  /// `after` starts no earlier than `before` finishes. Indices from AddOp.
  void AddDependency(int32_t before, int32_t after);

  /// Runs the simulation. Fails (naming an op) when the graph has a cycle, i.e. ops that never
  /// become ready. `progress` (optional) counts finished ops of op_count(), at most 101 updates
  /// (ProgressThrottle); when it asks to stop, Run returns Cancelled. Time: the dependencies,
  /// plus per event (at most one per op) the ops running at that moment.
  Status Run(ProgressSink* progress = nullptr);

  size_t op_count() const { return ops_.size(); }
  double start_s(int32_t op) const { return ops_[static_cast<size_t>(op)].start; }
  double end_s(int32_t op) const { return ops_[static_cast<size_t>(op)].end; }
  /// Rate changes processed by Run (the engine's events).
  int64_t events() const { return events_; }

 private:
  struct Op {
    int32_t resource;
    double work;
    double remaining = 0;
    double start = -1;
    double end = -1;
    int32_t pending = 0;  // unfinished predecessors
  };
  struct Resource {
    int32_t gpu;
    ResourceKind kind;
    int32_t active = 0;
  };
  double interference_;
  std::vector<Op> ops_;
  std::vector<Resource> resources_;
  std::vector<std::pair<int32_t, int32_t>> edges_;
  int64_t events_ = 0;
};

}  // namespace gpuplan

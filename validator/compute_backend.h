// What executes the compute ops of a rank's step: the interface the step executor drives
// (validator/step_executor.h), with a CPU implementation (validator/cpu_compute.h) and, later,
// a GPU one. Tests use a fake.
#pragma once

#include <cstdint>

#include "common/status.h"
#include "simulator/pipeline_schedule.h"
#include "validator/rank_program.h"

namespace gpuplan {

/// Where a compute op runs in the step.
struct OpSite {
  PipelinePass pass{};  ///< the schedule pass (kind, micro-batch, chunk) the op belongs to
  int64_t layer = -1;   ///< model layer of an op of a layer run (kLayers); -1 outside layers
  /// The layer program the op comes from (a forward inside a backward pass is full recompute).
  PassKind layer_program = PassKind::kForward;
};

class ComputeBackend {
 public:
  virtual ~ComputeBackend() = default;
  /// Runs one kCompute op (its `count` repeats) at `site`, synchronously.
  virtual Status Run(const RankOp& op, const OpSite& site) = 0;
  /// `pass` is over: what its forward saved for the backward may be released.
  virtual void EndPass(const PipelinePass& pass) = 0;
};

}  // namespace gpuplan

// The analytic cost model: one training step of a JobSpec on a cluster, in microseconds of CPU.
#pragma once

#include <cstdint>

#include "hardware-db/hardware.h"
#include "simulator/gemm_time.h"
#include "simulator/job.h"
#include "simulator/memory.h"
#include "simulator/step_costs.h"

namespace gpuplan {

/// Where the step's time goes (seconds per step; exposed communication only: what overlaps
/// with computation is not counted). The parts add up to StepResult::step_time_s.
struct TimeBreakdown {
  double compute = 0;    ///< kernels of the slowest pipeline stage, all micro-batches
  double tp_comm = 0;    ///< tensor-parallel all-reduce / all-gather + reduce-scatter
  double cp_comm = 0;    ///< context-parallel K/V ring exchange not hidden by attention
  double pp_comm = 0;    ///< pipeline send/recv on the critical path
  double dp_comm = 0;    ///< gradient reduction, ZeRO/FSDP gathers not hidden by compute
  double ep_comm = 0;    ///< expert-parallel all-to-all
  double bubble = 0;     ///< pipeline fill and drain
  double optimizer = 0;  ///< optimizer step (and offload transfers)
  double Total() const {
    return compute + tp_comm + cp_comm + pp_comm + dp_comm + ep_comm + bubble + optimizer;
  }
  /// Adds `weight` times every phase of `other` to this one's (sums and means of measured steps).
  void Add(const TimeBreakdown& other, double weight = 1) {
    compute += weight * other.compute;
    tp_comm += weight * other.tp_comm;
    cp_comm += weight * other.cp_comm;
    pp_comm += weight * other.pp_comm;
    dp_comm += weight * other.dp_comm;
    ep_comm += weight * other.ep_comm;
    bubble += weight * other.bubble;
    optimizer += weight * other.optimizer;
  }
};

/// The answer for one job (docs/METRICS.md defines every field).
struct StepResult {
  double step_time_s = 0;
  double tokens_per_s = 0;
  double tokens_per_s_per_gpu = 0;
  double model_flops_per_step = 0;     ///< TrainingStepModelFlops: no recomputation
  double hardware_flops_per_step = 0;  ///< model FLOPs + recomputed forward FLOPs
  double model_tflops_per_gpu = 0;     ///< model FLOPs / step time / GPUs / 1e12
  double mfu = 0;                      ///< model FLOP/s per GPU / dense peak at the precision
  double hfu = 0;                      ///< hardware FLOP/s per GPU / dense peak
  int64_t microbatches = 0;            ///< per pipeline per step (gradient accumulation steps)
  TimeBreakdown breakdown_s;
  MemoryBreakdown memory;
};

/// Evaluates one step. `job` must have passed ValidateJob; `gpu`/`net` are its cluster's.
/// Pure arithmetic on the job's numbers: no allocation, no I/O (the planner's inner loop).
StepResult EvaluateStep(const JobSpec& job, const GpuSpec& gpu, const NetworkSpec& net,
                        const DeviceRates& rates);

/// Same with CalibratedRates(gpu, precision, measured): datasheet rates where `measured` is null
/// or taken on another GPU type.
StepResult EvaluateStep(const JobSpec& job, const GpuSpec& gpu, const NetworkSpec& net,
                        const MeasuredRates* measured = nullptr);

}  // namespace gpuplan

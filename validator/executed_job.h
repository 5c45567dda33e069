// What gpuplan's executor runs of a plan, and so what a validation compares with. Its backends
// time every op on its own: the CPU backend's ranks communicate on their compute thread, the GPU
// backend synchronises after every op (docs/VALIDATION.md, "What the executor runs"). No
// collective or pipeline message runs beside a computation, so the overlaps a plan asks for are
// not executed, and the prediction set beside the measurement must not credit them.
#pragma once

#include <string>

#include "hardware-db/hardware.h"
#include "simulator/calibration.h"
#include "simulator/job.h"

namespace gpuplan {

/// `plan` as the executor runs it: dp_overlap, tp_overlap, tp_backward_overlap, cp_overlap and
/// ep_overlap off (each
/// micro-batch's passes run on their own, not paired). Without dp_overlap the gradients are reduced
/// in one collective after the last backward (Megatron-LM without --overlap-grad-reduce) and, under
/// ZeRO-3/FSDP, every gather waits; the executor's op sequence (RankProgram) and the cost model
/// both read these fields. Idempotent.
JobSpec ExecutedJob(const JobSpec& plan);

/// A report note when `plan` asks for an overlap that ExecutedJob turns off: which fields, and
/// the step the cost model predicts for the plan as its stack runs it (with `rates`) against
/// `executed_step_s`, the executed job's. Empty when no overlap applies (dp_overlap with one
/// data-parallel rank, cp_overlap with cp 1).
std::string UnexecutedOverlapNote(const JobSpec& plan, const GpuSpec& gpu, const NetworkSpec& net,
                                  const MeasuredRates* rates, double executed_step_s);

}  // namespace gpuplan

// A rank's step, executed (issue 19): every op of its RankProgram in order, the collectives,
// sends and receives through a StepTransport (MPI or NCCL) with real buffers and every element
// checked, the compute ops through a ComputeBackend (none: communication only), each op timed
// into the phase it belongs to. What a run proves: the program's communication matches across
// ranks (same collectives in the same order on every member of a group, every receive met by
// its send, no deadlock); with a backend, how long the step takes and what memory it needs.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "common/status.h"
#include "simulator/cost_model.h"
#include "simulator/job.h"
#include "validator/compute_backend.h"
#include "validator/measured_trace.h"
#include "validator/rank_program.h"
#include "validator/step_transport.h"

namespace gpuplan {

struct StepRunResult {
  int64_t collectives = 0;  ///< collective calls made (an op with count n makes n)
  int64_t sends = 0;
  int64_t receives = 0;
  int64_t elements = 0;  ///< 64-bit elements received and checked
  int64_t wrong = 0;     ///< of them, how many differ from the sender's pattern (nccl-tests #wrong)
  double seconds = 0;    ///< wall time of the whole program
  /// Seconds this rank spent per phase (steady clock around each op): compute ops in `compute`
  /// (the optimizer step's in `optimizer`), collectives by group (tp, cp, dp and expert-dp in
  /// dp_comm, ep), pipeline sends and receives in pp_comm: a receive's wait includes the
  /// pipeline bubble, which is therefore not separated (bubble stays 0).
  TimeBreakdown phases;
};

struct StepOptions {
  /// Each collective or message carries its op's bytes, at most this (at least 8), so that a
  /// CPU host can run a large plan's schedule when only the communication is checked.
  double max_bytes_per_op = std::numeric_limits<double>::infinity();
  double watchdog_s = kDefaultWatchdogSeconds;
  ComputeBackend* compute = nullptr;  ///< runs the compute ops; nullptr: they are skipped
  /// When set, every op the step runs is appended to it, timed from the step's start
  /// (`validate --trace`; validator/measured_trace.h). The final wait for the step's sends is
  /// one op, "finish sends".
  std::vector<MeasuredOp>* record = nullptr;
};

/// The phase a collective over `group` is timed into: tp, cp, ep and pp to theirs, dp and
/// expert-dp to dp_comm.
double& CommPhase(GroupKind group, TimeBreakdown* phases);

/// Runs `program` (RankProgram of this rank of `job`) over `transport`. Layer runs (kLayers)
/// expand to LayerProgram of their layer program, MoE layers after the model's leading dense
/// ones. A collective of `count` repeats runs that many times, the kind by the op's name
/// (CollectiveKindOf; another name is Invalid). Sends complete at the end of the step (stages
/// never wait on a send); receives wait. Messages are tagged by direction, micro-batch and
/// receiving virtual stage, so an out-of-order match is a wrong element, not a silent pass. Every
/// collective and receive waits at most `watchdog_s`: a peer that died or hangs makes it return
/// Unavailable naming the op, its group's ranks or its peer, and the step; the caller reports and
/// aborts the job. Communication runs on the calling thread, between the compute ops (no
/// overlap).
Expected<StepRunResult> RunStep(const JobSpec& job, const std::vector<ProgramStep>& program,
                                StepTransport& transport, const StepOptions& options);

/// One line per rank (collectives, sends, receives, elements checked, #wrong, seconds), then the
/// totals, in the manner of nccl-tests' tables.
std::string FormatStepResults(const std::vector<StepRunResult>& results);

}  // namespace gpuplan

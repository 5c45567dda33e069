// The communication of a rank's step, executed (issue 19): every collective, send and receive of
// its RankProgram over the plan's MPI communicators, with real buffers and every element checked.
// Compute ops are not run here (the CPU compute backend is the next step); what this proves is
// that the program's communication matches across ranks: same collectives in the same order on
// every member of a group, every receive met by its send, no deadlock.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "simulator/job.h"
#include "validator/mpi_communicators.h"
#include "validator/rank_program.h"

namespace gpuplan {

struct CommRunResult {
  int64_t collectives = 0;  ///< collective calls made (an op with count n makes n)
  int64_t sends = 0;
  int64_t receives = 0;
  int64_t elements = 0;  ///< 64-bit elements received and checked
  int64_t wrong = 0;     ///< of them, how many differ from the sender's pattern (nccl-tests #wrong)
  double seconds = 0;    ///< wall time of the whole program
};

/// Runs the communication of `program` (RankProgram of this rank of `job`) over `comms` and
/// `world` (whose ranks are the layout's). Layer runs (kLayers) expand to LayerProgram of their
/// pass, MoE layers after the model's leading dense ones. Each collective or message carries
/// its op's bytes, at most `max_bytes_per_op` (at least 8) so that a CPU host can run a large
/// plan's schedule; a collective of `count` repeats runs that many times. Collectives by the
/// op's name: all_reduce..., all_gather..., reduce_scatter..., alltoall..., ring send/recv...
/// (the CP ring over its group); another name is Invalid. Sends are non-blocking and complete
/// at the end (Megatron batches its pipeline sends and receives, so stages never wait on a
/// send); receives wait. Messages are tagged by direction, micro-batch and receiving virtual
/// stage, so an out-of-order match is a wrong element, not a silent pass. Every collective and
/// receive waits at most `watchdog_s` (WaitWithWatchdog): a peer that died or hangs makes it
/// return Unavailable naming the op, its group's ranks or its peer, and the step; the caller
/// reports and aborts the job.
Expected<CommRunResult> RunCommunication(const JobSpec& job,
                                         const std::vector<ProgramStep>& program,
                                         const PlanCommunicators& comms, MPI_Comm world,
                                         double max_bytes_per_op,
                                         double watchdog_s = kDefaultWatchdogSeconds);

/// Every rank's result gathered on rank 0 of `world`, indexed by rank (MPI_Gather, collective);
/// empty on the other ranks.
Expected<std::vector<CommRunResult>> GatherCommResults(const CommRunResult& mine, MPI_Comm world);

/// One line per rank (collectives, sends, receives, elements checked, #wrong, seconds), then the
/// totals, in the manner of nccl-tests' tables.
std::string FormatCommResults(const std::vector<CommRunResult>& results);

}  // namespace gpuplan

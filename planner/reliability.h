// Reliability economics: how interruptions, checkpoints and restarts stretch a training run.
// Failures arrive as a Poisson process (exponential inter-arrival times) with the job's mean time
// between interruptions M; the job writes a checkpoint of duration delta every tau seconds of
// work and, after an interruption, loses the work since the last checkpoint and spends R
// restarting. docs/METRICS.md defines the printed numbers.
#pragma once

#include <cstdint>

#include "hardware-db/pricing.h"
#include "simulator/job.h"

namespace gpuplan {

/// Bytes of one checkpoint of `job`: every trainable parameter's 16-bit weight plus fp32 master
/// weight and Adam moments (2 + 12 = 14 bytes; fp32 training: 4 + 8 = 12), as Megatron-LM's
/// distributed checkpoint stores them. Under LoRA only the adapters and their optimizer state
/// are saved (PEFT checkpoints adapters; the frozen base is reloaded from the original weights).
double CheckpointBytes(const JobSpec& job);

/// Young (1974) / Daly (2006) optimum compute time between checkpoints, seconds: Daly's
/// higher-order estimate tau = sqrt(2 delta M) [1 + sqrt(delta/(2M))/3 + delta/(18M)] - delta for
/// delta < 2M, else tau = M (Daly, "A higher order estimate of the optimum checkpoint interval
/// for restart dumps", FGCS 22(3):303-312, 2006; its Figs. 3-5 give 117, 57 and 9.1 min for
/// delta = 5 min and M = 24 h, 6 h, 15 min). Its first term is Young's sqrt(2 delta M).
/// `checkpoint_s` > 0, `mtbf_s` > 0.
double OptimalCheckpointIntervalSeconds(double checkpoint_s, double mtbf_s);

/// Expected wall time to complete `solve_s` seconds of work with a checkpoint every
/// `interval_s` seconds of work, under exponential failures of mean `mtbf_s`:
/// T = M e^{R/M} (e^{(tau+delta)/M} - 1) solve/tau (Daly 2006, the complete cost function of the
/// perturbation model). An infinite `mtbf_s`
/// (no failures) gives solve + (solve/tau) delta. All arguments > 0 except restart_s >= 0.
double ExpectedWallSeconds(double solve_s, double interval_s, double checkpoint_s, double restart_s,
                           double mtbf_s);

/// Probability that a failed host of a rack-scale scale-up domain finds none of the domain's
/// `spare_hosts` free, i.e. that at least `spare_hosts` of its `other_hosts` are already being
/// repaired. Failed hosts wait out a repair of `repair_s` each, an M/G/infinity queue whose
/// number in repair is Poisson with mean other_hosts x host_failures_per_s x repair_s whatever
/// the repair-time distribution (Palm's theorem; Ross, Introduction to Probability Models, the
/// infinite-server queue): 1 - sum_{k < spare_hosts} e^-mu mu^k / k!. 1 when spare_hosts is 0.
/// All arguments >= 0.
double NoSpareHostProbability(int64_t spare_hosts, int64_t other_hosts, double host_failures_per_s,
                              double repair_s);

/// Inputs of one job's reliability outcome.
struct ReliabilityInputs {
  double solve_s = 0;           ///< failure-free time of the work (steps x step time), > 0
  double step_s = 0;            ///< one step; checkpoints happen on step boundaries, > 0
  double checkpoint_bytes = 0;  ///< CheckpointBytes
  int64_t num_gpus = 0;
  int64_t num_nodes = 0;  ///< hosts writing the checkpoint in parallel (servers, or trays)
  int64_t instances = 0;  ///< rented instances (spot preemptions are per instance)
  bool spot = false;
  double spot_preemptions_per_instance_hour = 0;
  /// Rack-scale templates (a GB200 NVL72 rack): the hosts (trays) of one physical scale-up
  /// domain and the GPUs of each. A failed host is replaced by one of the domain's spare hosts,
  /// those the job leaves unused, so that the job's ranks stay in one NVLink domain; with none
  /// free the job waits for a repair. 0 for server templates (HGX/DGX), whose failed server is
  /// swapped for any spare of the cluster within restart_s.
  int64_t hosts_per_domain = 0;
  int64_t gpus_per_host = 0;
  int64_t spare_hosts_per_domain = 0;  ///< hosts of each domain the job does not use, >= 0
};

/// The outcome: interval, wall time, goodput.
struct ReliabilityOutcome {
  double checkpoint_write_s = 0;
  double checkpoint_interval_s = 0;  ///< work between checkpoints, a whole number of steps
  double mtbf_s = 0;                 ///< of the whole job; +inf when no rate is known
  double expected_wall_s = 0;
  double expected_interruptions = 0;
  /// Rack-scale templates: the probability that a host failure finds no spare host free in its
  /// domain (NoSpareHostProbability), and the expected time the job waits for repairs over the
  /// whole run, seconds (part of expected_wall_s). 0 for server templates.
  double no_spare_probability = 0;
  double expected_repair_wait_s = 0;
  double goodput = 0;  ///< solve_s / expected_wall_s
};

/// Job MTBF = 1 / (GPUs x per-GPU interruption rate + instances x spot preemption rate); the
/// checkpoint is written by all nodes in parallel at the per-node bandwidth; the interval is
/// OptimalCheckpointIntervalSeconds rounded to whole steps (at least one step, at most the
/// whole job); the wall time is ExpectedWallSeconds plus, on rack-scale templates, the repair
/// waits: of the W / M interruptions of the running job, the host failures (GPUs x rate x
/// spec.host_repair_share of them) that find no spare host (NoSpareHostProbability, the domain's
/// hosts failing at gpus_per_host x that rate) each wait repair_s / (spares + 1), the expected
/// first return among the `spares` hosts already in repair (uniform residual repair times of the
/// M/G/infinity queue; the failed host's own repair_s when the domain has no spare). The job does
/// not run while it waits, so the wait adds no interruptions.
ReliabilityOutcome EvaluateReliability(const ReliabilityInputs& in, const ReliabilitySpec& spec);

}  // namespace gpuplan

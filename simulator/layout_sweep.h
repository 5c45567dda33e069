// Predictions against a measured layout sweep (hardware-db/calibration/ultrascale_sweep.csv: the
// nanotron runs of "The Ultra-Scale Playbook"): does the cost model rank layouts, pick a fast one,
// and predict peak memory and out-of-memory crashes? `gpuplan accuracy --sweep` prints the report;
// docs/ACCURACY.md defines every metric.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "simulator/cost_model.h"
#include "simulator/job.h"

namespace gpuplan {

/// GPU name of the sweep's `gpu` column and the database id it stands for.
inline constexpr const char* kSweepGpuName = "H100-80GB-SXM";
inline constexpr const char* kSweepGpuId = "h100-sxm5-80gb";
/// The network of the cluster that ran the sweep: the source measured its collectives' busbw at
/// 2-64 nodes (hardware-db/data/networks.json, measured_busbw).
inline constexpr const char* kSweepNetworkId = "hf-playbook-h100";
/// The training stack that ran the sweep (hardware-db/data/frameworks.json).
inline constexpr const char* kSweepFrameworkId = "nanotron";

/// One configuration of the sweep, turned into a job spec.
struct SweepRow {
  int line = 0;       ///< 1-based line of the file (the header is line 1)
  std::string model;  ///< the `model` column ("1B", "8B")
  int64_t nodes = 0;
  /// Model dimensions, cluster (kSweepNetworkId between nodes),
  /// training (seq_len, global batch dp*mbs*grad_acc, micro batch, precision, no recomputation)
  /// and parallelism (tp, pp, dp, cp, ep, zero_stage, sequence parallel from tp_mode, 1F1B).
  /// Not validated: ValidateJob decides whether gpuplan can express it.
  JobSpec job;
  bool ran = false;                          ///< status "ok" (else "crashed_or_oom")
  double measured_tokens_per_s_per_gpu = 0;  ///< tokens/s/GPU; 0 when it crashed
  /// Peak memory of world rank 0 (`gpu_mem_gb`); 0 when it crashed. nanotron's log_throughput
  /// (helpers.py), which wrote the sweep's rows, runs on world rank 0 only and prints
  /// torch.cuda.max_memory_allocated()/max_memory_reserved() divided by 1024**3: GiB, of the
  /// first pipeline stage (ParallelContext ranks are laid out (pp, dp, tp), so rank 0 has pipeline
  /// rank 0). Those counters count what PyTorch's caching allocator holds, not the CUDA context
  /// or NCCL's own buffers (line 573 of the sweep measures 1.0 GiB in all).
  double measured_memory_bytes = 0;
  /// The global batch the sweep states for its job (the optional `gbs` column, sequences); 0 when
  /// the file has no such column. The job is simulated with the batch the layout runs,
  /// dp*mbs*grad_acc, whatever this says.
  int64_t stated_global_batch = 0;
  /// Whether the layout runs the sweep's stated global batch (always, without a `gbs` column):
  /// the planner searches only layouts of the job's global batch, so a row that runs another is
  /// not a layout the planner could pick for the sweep's job (20 rows of ultrascale_sweep.csv
  /// state 256 sequences but run dp*mbs*grad_acc of 16 to 4,096).
  bool RunsStatedBatch() const {
    return stated_global_batch == 0 || job.training.global_batch_size == stated_global_batch;
  }
};

/// Parses the sweep CSV text. `origin` names it in errors, which give the line and the column:
/// "sweep.csv: line 3: column 'tp': must be a positive integer, got 'x'". The header must hold
/// every column read (extra columns are ignored; `gbs`, read when present, must be a positive
/// integer); `gpu` must be kSweepGpuName, `pp_schedule` 1F1B, `tp_mode` REDUCE_SCATTER(SP) or
/// ALL_REDUCE, `status` ok or crashed_or_oom, and an ok row needs tokens_per_s_per_gpu and
/// gpu_mem_gb of at least 1e-15 (so that every ratio with them as denominator is finite; at most
/// 1e15, as every measurement). `db` must hold kSweepGpuId, kSweepNetworkId and
/// kSweepFrameworkId.
Expected<std::vector<SweepRow>> ParseLayoutSweep(const std::string& text, const std::string& origin,
                                                 const HardwareDb& db);

/// Reads and parses a sweep file (errors name the path).
Expected<std::vector<SweepRow>> ReadLayoutSweepFile(const std::string& path, const HardwareDb& db);

/// The metrics of one (model, nodes) group or of the whole sweep (docs/ACCURACY.md).
struct SweepSummary {
  std::string label;        ///< "1B x 8 nodes", or "all" for the whole sweep
  int rows = 0;             ///< configurations in the sweep
  int simulated = 0;        ///< rows gpuplan can express (ValidateJob passes)
  int not_expressible = 0;  ///< rows it cannot (rows - simulated)
  int ran = 0;              ///< simulated rows with status ok
  int crashed = 0;          ///< simulated rows with status crashed_or_oom
  /// Groups: the planner's pick, the simulated row it would recommend (PlannerWouldPick) with
  /// the highest predicted tokens/s/GPU (0: none), and its verdicts. Whole sweep: how many groups
  /// have a pick, and how many of those picks ran and came within 10% of their group's measured
  /// best.
  int pick_line = 0;
  int picks = 0;
  int picks_ran = 0;
  int picks_within_10pct = 0;
  /// The same for the fastest row predicted to run with no margin
  /// (PlannerCouldPickWithoutMargin): how the ranking does where memory is filled to the last
  /// byte.
  int unmargined_picks_within_10pct = 0;
  double pick_measured = 0;  ///< groups: the pick's measured tokens/s/GPU (0 if it crashed)
  double best_measured = 0;  ///< groups: the best measured tokens/s/GPU of all rows that ran
  /// Spearman of predicted vs measured tokens/s/GPU over the simulated rows that ran, a row
  /// predicted to fail counting as predicted 0 tokens/s (last); for the whole sweep the median
  /// over the groups that have one. NaN when undefined.
  double spearman = 0;
  /// Median of |predicted - measured| / measured over simulated rows that ran: tokens/s/GPU,
  /// and peak memory (the first stage's predicted peak vs gpu_mem_gb). NaN when no row ran.
  double median_abs_throughput_error = 0;
  double median_abs_memory_error = 0;
  /// Rows predicted to fail: not to fit, or refused by the stack (SweepPrediction::refusal).
  int crashed_predicted_fail = 0;  ///< crashed rows predicted to fail
  int ran_predicted_fail = 0;      ///< rows that ran but are predicted to fail
  int crashed_refused = 0;         ///< of crashed_predicted_fail: refused although they fit
  /// Rows that ran with a stall (SweepStallSecondsPerMicroBatch >= kSweepStallSeconds), and how
  /// many of those have pp > 1. A diagnostic only: no metric leaves them out.
  int stalled = 0;
  int stalled_pp = 0;
  /// Simulated rows whose layout does not run the stated global batch (SweepRow::
  /// RunsStatedBatch): kept in every metric but the pick.
  int off_batch = 0;
  /// Repeatability, a diagnostic: pairs of simulated rows that ran and differ only in their
  /// ZeRO stage (SweepZeroTwins). The model predicts each pair's throughput ratio; the pair's
  /// departure is |ln(measured ratio) - ln(predicted ratio)|, run-to-run noise plus the model's
  /// error on the ZeRO stage alone.
  int zero_twin_pairs = 0;
  int zero_twin_pairs_off = 0;  ///< pairs whose ratios differ by more than kSweepTwinTolerance
  double zero_twin_median_departure = 0;  ///< median departure; NaN without a pair
  /// Groups: the row that ran with the pick's layout at the other ZeRO stage (0: none) and its
  /// measured tokens/s/GPU.
  int pick_twin_line = 0;
  double pick_twin_measured = 0;
};

/// A ZeRO-twin pair whose measured throughput ratio differs from the predicted one by more than
/// this fraction (either way) is counted as off (SweepSummary::zero_twin_pairs_off).
inline constexpr double kSweepTwinTolerance = 0.25;

/// The sweep's measured step times are bimodal against the prediction: most rows that ran
/// exceed it by 0-0.3 s per micro-batch, about a fifth by 1.1-1.6 s per micro-batch whatever
/// the model (1B or 8B) and the micro-batch size, almost all with pp > 1 and more of them the
/// more nodes (docs/ACCURACY.md). The source reports rewriting its pipeline code and cluster
/// trouble during the sweep. Between the two modes the histogram has its minimum near 1 s.
inline constexpr double kSweepStallSeconds = 1.0;

/// One simulated or rejected row.
struct SweepPrediction {
  const SweepRow* row = nullptr;
  bool expressible = false;
  std::string reason;  ///< ValidateJob's message when not expressible
  double tokens_per_s_per_gpu = 0;
  bool fits = false;  ///< EstimateMemory: the most loaded stage fits the GPU
  /// StackRunsLayout's message when nanotron cannot run the layout (empty when it can).
  std::string refusal;
  /// FitsWithMargin at kDefaultMemoryMargin: the planner would consider it.
  bool fits_with_margin = false;
  /// Predicted to run: it fits and the stack accepts it.
  bool PredictedToRun() const { return fits && refusal.empty(); }
  /// A layout the planner would recommend for the sweep's job: it runs the job's global batch
  /// (SweepRow::RunsStatedBatch) and is predicted to run with the planner's default memory margin
  /// left free.
  bool PlannerWouldPick() const { return PlannerCouldPickWithoutMargin() && fits_with_margin; }
  /// The same with no memory margin: a layout of the job's global batch predicted to run.
  bool PlannerCouldPickWithoutMargin() const { return row->RunsStatedBatch() && PredictedToRun(); }
  double peak_bytes = 0;  ///< EstimateMemory's peak (the most loaded stage)
  TimeBreakdown time_s;   ///< where the predicted step time goes (expressible rows)
  /// What the measurement is of: the first pipeline stage's memory (StageMemory(job, gpu, 0)).
  MemoryBreakdown rank0_memory;
  /// rank0_memory's peak without the job's framework_bytes (the CUDA context and NCCL's
  /// buffers): what PyTorch's allocator counters see. Compared with measured_memory_bytes.
  double rank0_allocator_bytes = 0;
};

/// (measured step - predicted step) / micro-batches per step of a row that ran and was
/// simulated: the time per micro-batch the model does not explain.
double SweepStallSecondsPerMicroBatch(const SweepPrediction& p);

/// Whether two rows of one group run the same layout at different ZeRO stages: the same dp, tp,
/// pp, cp, ep, TP mode, micro-batch and global batch (model and nodes are the group's).
bool SweepZeroTwins(const SweepRow& a, const SweepRow& b);

/// |ln(measured_a / measured_b) - ln(predicted_a / predicted_b)| of two simulated rows that ran.
double SweepTwinDeparture(const SweepPrediction& a, const SweepPrediction& b);

struct SweepReport {
  std::vector<SweepPrediction> rows;  ///< in file order
  std::vector<SweepSummary> groups;   ///< by model, then nodes ascending
  SweepSummary overall;
  std::string network;  ///< the inter-node network assumed (its id)
  /// Distinct not-expressible reasons with their counts, most frequent first.
  std::vector<std::pair<std::string, int>> reasons;
};

/// Validates and evaluates (analytic cost model, datasheet rates) every row. `rows` must outlive
/// the report.
SweepReport CompareWithLayoutSweep(const std::vector<SweepRow>& rows, const HardwareDb& db);

/// Plain-text table: one line per group and one for the whole sweep, then the assumptions and
/// the not-expressible reasons, then the repeatability table (ZeRO twins by group).
std::string FormatSweepTable(const SweepReport& report);

/// The same as Markdown (docs/ACCURACY.md).
std::string FormatSweepMarkdown(const SweepReport& report);

/// One CSV line per row of the sweep, in file order: its line, layout and status, measured and
/// predicted tokens/s/GPU and peak memory (GB), and the predicted step time and memory by part
/// (docs/ACCURACY.md lists the columns), then why the stack cannot run it (`stack_refusal`,
/// StackRunsLayout's message) or why gpuplan cannot express it (`not_expressible`; the predicted
/// columns are then empty), each quoted when not empty.
std::string FormatSweepRowsCsv(const SweepReport& report);

}  // namespace gpuplan

// Error bands: the range a measured step time is expected in, from how the model did on published
// runs it was not fitted on (the cross-validated residuals of simulator/cross_validation.h), by
// class of job. docs/ACCURACY.md, "Error bands".
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"

namespace gpuplan {

struct CrossValidationReport;       // simulator/cross_validation.h
struct SweepCrossValidationReport;  // simulator/sweep_cross_validation.h
class HardwareDb;                   // hardware-db/hardware_db.h
struct JobSpec;                     // simulator/job.h
struct PublishedRun;                // simulator/accuracy.h

/// Share of measured runs a band is meant to hold: the central 80%.
inline constexpr double kBandCentralShare = 0.80;
/// Fewest residuals a class needs before its own band is used; a smaller class falls back to the
/// next coarser one (docs/ACCURACY.md).
inline constexpr int kMinBandRuns = 5;
/// Fewest residuals a class needs before each side of its band is set by the class's own
/// quantiles (the 10th and 90th percentiles) instead of the median absolute deviation, which
/// assumes light, symmetric tails: the layout sweep's rows have a heavy slow tail (its stalls).
inline constexpr int kMinQuantileBandRuns = 30;
/// Fewest publications a class's runs must come from before its band stands on its own spread;
/// a class from fewer is widened by the spread between publications (docs/ACCURACY.md).
inline constexpr int kMinBandPublications = 2;

/// The `source` of the layout sweep's residuals (SweepBandResiduals).
inline constexpr const char* kSweepBandSource = "nanotron layout sweep";

/// One published run, or one row of the measured layout sweep, as its cross-validation fold
/// predicted it: what a band is built from.
struct BandResidual {
  std::string id;
  std::string source;        ///< the publication (each fold held one out)
  std::string stack;         ///< BandStack of the run's job
  std::string architecture;  ///< the GPU's architecture (GpuSpec::architecture)
  int64_t num_gpus = 0;
  /// Measured / predicted step time (= predicted / measured tokens/s), > 0.
  double step_time_ratio = 1;
  bool moe = false;  ///< the run's model is a mixture of experts (ModelSpec::is_moe)
  /// Non-empty for a row of the layout sweep: its model ("1B", "8B"), the fold that held it out.
  /// Such rows band their own stack's classes only: they are left out of the spread between
  /// publications and of the pool an untested stack falls back to, where 1,026 rows of one
  /// stack on one cluster would outweigh every published run (docs/ACCURACY.md, "Error bands").
  std::string sweep_model = {};
  /// A mixture-of-experts run of candidate_runs.json (CandidateMoeBandResiduals), predicted with
  /// the shipped constants, not cross-validated (the MoE host floor is fitted on these runs):
  /// it bands no class and counts in no pool, spread between publications or coverage; it only
  /// widens the band of an MoE job that no class covers (BandFor).
  bool candidate = false;
};

/// The classes a job falls in, finest first: stack x architecture x scale, then stack x
/// architecture. Scale bands of the GPU count: up to 64, 65-512, more than 512.
std::string ScaleBandName(int64_t num_gpus);

/// The stack a job's band is looked up by: its framework's name, with " FSDP/ZeRO-3" when the
/// weights are sharded (zero_stage 3 or fsdp). Sharded data parallelism is told apart because the
/// published runs show the model's error differs between the two styles (issue 18: FSDP layouts
/// over-predicted, Megatron tensor-parallel ones under-predicted on H100), and the runs' specs do
/// not name their real stack yet (llm-foundry's Composer FSDP runs are `megatron-core` + fsdp).
std::string BandStack(const JobSpec& job);

/// The band of one job: multiply its predicted step time (or divide its tokens/s) by the factors.
/// The measured / predicted step time is modelled as exp(log_centre + scale x T), T a Student t
/// variable with `df` degrees of freedom and scale log_scale_low below the centre, log_scale_high
/// above it (a two-piece distribution: a class's errors need not be symmetric); the band is its
/// central kBandCentralShare.
struct ErrorBand {
  double low_factor = 1;   ///< measured / predicted step time at the fast end (Factor(0.1))
  double high_factor = 1;  ///< same at the slow end (Factor(0.9))
  double log_centre = 0;
  double log_scale_low = 0;
  double log_scale_high = 0;
  double df = 1;
  int runs = 0;          ///< residuals behind the band
  int sweep_rows = 0;    ///< of them, rows of the measured layout sweep (BandResidual::sweep_model)
  int publications = 0;  ///< publications those residuals come from
  /// The class the band comes from ("megatron-core, hopper, > 512 GPUs"), or, for an untested
  /// class, what it was pooled from (the stack, or "all stacks").
  std::string basis;
  /// False when no class of the job has kMinBandRuns runs: the band is the pooled one widened by
  /// the spread between publications (docs/ACCURACY.md), and reports say so.
  bool validated = false;
  /// An MoE job's untested band widened to the candidate MoE runs (BandFor): how many, and the
  /// 10th and 90th percentiles of their measured / predicted step time; 0 and 1 otherwise.
  int moe_candidate_runs = 0;
  double moe_candidate_low_factor = 1;
  double moe_candidate_high_factor = 1;

  /// The measured / predicted step time that a share `quantile` (in (0, 1)) of runs of the class
  /// stay under: Factor(0.9) is the pessimistic end `plan --confidence 0.9` ranks by.
  double Factor(double quantile) const;
};

/// What a band rests on, in words: "7 published runs of megatron-core, ampere, > 512 GPUs,
/// cross-validated" ("595 rows of the layout sweep of nanotron, ..." when its residuals are the
/// sweep's rows) or "WIDE, no published run of this class: widened from 200 published runs of all
/// stacks in other classes", with ", all from one publication: widened by ..." for such a class,
/// and
/// "; their median ran 17% faster than predicted" when the median run is more than 5% off, and
/// "; widened to 8 MoE candidate runs, whose middle 80% ran 0.92-1.84x the predicted step
/// time" when the band of an MoE job was (ErrorBand::moe_candidate_runs).
std::string DescribeBand(const ErrorBand& band);

/// The `p` quantile (0 < p < 1) of Student's t with `df` >= 1 degrees of freedom: the normal
/// quantile (Acklam's rational approximation, relative error < 1.2e-9) corrected by the first two
/// Cornish-Fisher terms (Abramowitz & Stegun 26.7.5): within 0.3% of tabulated values for
/// df >= 4 and p in [0.5, 0.99].
double StudentTQuantile(double p, double df);

/// The band for a job of `stack` (BandStack) on `architecture` at `num_gpus`, of a mixture-of-
/// experts model when `moe`, from `residuals`. Mixture-of-experts and dense jobs are separate
/// classes: the all-to-all, router and expert costs of an MoE job are checked by no dense run.
/// Within a class of n >= kMinBandRuns residuals with logs x: centre c = median(x), spread
/// s = 1.4826 median|x - c| (robust to the heavy tails the runs have), half-width
/// h = t(0.9, n-1) s sqrt(1 + 1/n) (a normal prediction interval for one new run); the factors
/// are exp(c -/+ h). From kMinQuantileBandRuns residuals each side has its own spread,
/// s_low = (c - q10) / t(0.9, n-1) and s_high = (q90 - c) / t(0.9, n-1), q the empirical
/// quantiles of x (linear between order statistics), so that the band's ends before widening
/// are the class's own 10th and 90th percentiles. No such class: the stack's residuals (all
/// residuals if it has none) with h = t(0.9, n-1) sqrt(s^2 (1 + 1/n) + tau^2), tau the standard
/// deviation of the medians of the publications with >= kMinBandRuns runs: an untested class is as
/// biased as a new publication may be (an MoE job without MoE runs of its stack pools the stack's
/// dense runs, its basis saying "(dense models only)"). A class whose runs come from fewer than
/// kMinBandPublications publications gets the same tau: its centre is one publication's bias.
/// Layout-sweep residuals (sweep_model set) count in their stack's classes and its untested
/// pool only: tau and the all-stacks pool are the published runs'. Candidate residuals
/// (BandResidual::candidate) count in none of these: an MoE job's untested band, when there are
/// at least kMinBandRuns of them, has each side's scale raised where needed so that its 10% and
/// 90% ends reach at least the candidates' own 10th and 90th percentiles (their ratios of any
/// stack, architecture and scale: the only measured evidence on the model's MoE costs).
/// `residuals` must hold at least one published run.
ErrorBand BandFor(std::span<const BandResidual> residuals, const std::string& stack,
                  const std::string& architecture, int64_t num_gpus, bool moe);

/// The residuals of a cross-validation, one per run, with each run's class.
std::vector<BandResidual> BandResiduals(const CrossValidationReport& report,
                                        const std::vector<PublishedRun>& runs);

/// The residuals of the mixture-of-experts runs of `runs` (candidate_runs.json), candidate set:
/// measured / predicted step time with the shipped constants (EvaluatePublishedRuns). Dense runs
/// are left out.
std::vector<BandResidual> CandidateMoeBandResiduals(const std::vector<PublishedRun>& runs);

/// The layout sweep's residuals, one per held-out row of `report` (each row predicted with
/// nanotron's constants refitted on the other model's rows): id "sweep line N", source
/// kSweepBandSource, sweep_model its model. `report` and the rows it points into must be alive;
/// `db` holds their GPU.
std::vector<BandResidual> SweepBandResiduals(const SweepCrossValidationReport& report,
                                             const HardwareDb& db);

/// Coverage of the bands under cross-validation: each publication's runs against bands built
/// from the other publications' residuals only; the layout sweep's rows, model by model, against
/// bands built from every residual but their own model's rows (not counted in `runs`).
struct BandCoverage {
  int runs = 0;           ///< published runs
  int covered = 0;        ///< measured inside its band
  int untested_runs = 0;  ///< runs whose band came from no class of their own
  int untested_covered = 0;
  std::vector<std::pair<std::string, std::pair<int, int>>> by_source;       ///< covered, runs
  std::vector<std::pair<std::string, std::pair<int, int>>> sweep_by_model;  ///< covered, rows
};
BandCoverage CrossValidatedBandCoverage(std::span<const BandResidual> residuals);

/// The coverage as a table (per publication, untested classes, all runs) with the bar it is held
/// to; `markdown` for docs/ACCURACY.md.
std::string FormatBandCoverage(const BandCoverage& coverage, bool markdown);

/// The residuals file (hardware-db/calibration/cv_residuals.json, format in
/// hardware-db/calibration/README.md) as JSON text, and read back. Errors name the file, the
/// entry and the field.
std::string FormatBandResidualsJson(std::span<const BandResidual> residuals);
Expected<std::vector<BandResidual>> ReadBandResidualsFile(const std::string& path);

/// The shipped residuals file: BuiltinCalibrationDir() + "/cv_residuals.json".
std::string BuiltinBandResidualsPath();

/// The shipped candidate runs (published runs not yet in the calibration set, docs/ACCURACY.md):
/// BuiltinCalibrationDir() + "/candidate_runs.json".
std::string BuiltinCandidateRunsPath();

}  // namespace gpuplan

// Does knowing the training stack help? The stack-specific model (each run on the stack that
// produced it, training.framework) against the stack-agnostic one (every run on the default
// stack, FrameworkSpec{}: Megatron-Core's behaviour), on data neither was fitted on
// (`gpuplan accuracy --cross-validate`, docs/ACCURACY.md).
#pragma once

#include <string>
#include <vector>

#include "simulator/accuracy.h"
#include "simulator/cross_validation.h"
#include "simulator/sweep_cross_validation.h"

namespace gpuplan {

class HardwareDb;
struct SweepRow;

/// One source: a publication of published_runs.json, or the layout sweep.
struct StackComparisonRow {
  std::string source;
  std::string stacks;  ///< the stacks its runs name, in order of first appearance, "+"-joined
  int runs = 0;        ///< runs (published) or rows that ran and gpuplan can express (sweep)
  /// Publications: the cross-validated mean |error| of tokens/s/GPU. Sweep: the cross-validated
  /// median |error| (the sweep's own metric, docs/ACCURACY.md; each model held out).
  double agnostic_error = 0;
  double specific_error = 0;
  bool median = false;  ///< the errors are medians (the sweep)
  /// All runs of one stack that several publications ran (`source` says how many).
  bool per_stack = false;
};

/// `runs` with every job moved to the default stack (FrameworkSpec{}).
std::vector<PublishedRun> OnDefaultStack(std::vector<PublishedRun> runs);

/// Per publication, in order of its first run, then per stack that more than one publication ran
/// ("4 publications", in order of the stack's first run), then "all published runs": the
/// cross-validated error
/// of the stack-specific model (`specific`, CrossValidatePublishedRuns of `runs`) and of the
/// stack-agnostic one
/// (`agnostic`, of OnDefaultStack(runs)). Both reports must come from `runs`, in its order.
std::vector<StackComparisonRow> CompareStackModels(const std::vector<PublishedRun>& runs,
                                                   const CrossValidationReport& specific,
                                                   const CrossValidationReport& agnostic);

/// The layout sweep's row: the median |error| of tokens/s/GPU over the rows that ran, with the
/// sweep's stack (nanotron) as `specific` cross-validated it (each model held out), and with every
/// row on the default stack (which has no constant fitted on the sweep). `specific` must come
/// from `rows`.
StackComparisonRow CompareSweepStackModels(const std::vector<SweepRow>& rows,
                                           const SweepCrossValidationReport& specific,
                                           const HardwareDb& db);

/// The table: source, stacks, runs, stack-agnostic and stack-specific error and the change.
/// `markdown` for docs/ACCURACY.md, otherwise aligned text.
std::string FormatStackComparison(const std::vector<StackComparisonRow>& rows, bool markdown);

}  // namespace gpuplan

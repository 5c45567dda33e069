// Harness: a layout-sweep CSV (hardware-db/calibration/ultrascale_sweep.csv's format) as
// `gpuplan accuracy --sweep FILE` reads and reports it: ParseLayoutSweep, then (for up to
// kMaxComparedRows rows, each a cost-model evaluation) CompareWithLayoutSweep and the table,
// Markdown and per-row CSV it prints. Invariants: every row has a line number after the header and
// non-negative measurements; every expressible row's prediction is finite and positive; every
// summary number is finite, or NaN where the table prints "-" for it (a median or Spearman over
// nothing).
#include "simulator/layout_sweep.h"

#include <cmath>

#include "fuzz/fuzz_common.h"

using namespace gpuplan;

namespace {

constexpr size_t kMaxComparedRows = 32;

// Finite, or NaN (printed as "-"); never infinite.
bool FiniteOrUndefined(double v) { return std::isnan(v) || std::isfinite(v); }

// `group`: a (model, nodes) group's summary, whose pick and twin shares the table prints (the
// whole sweep's line prints counts).
void RequireSaneSummary(const SweepSummary& s, bool group) {
  fuzz::Require(FiniteOrUndefined(s.spearman) && FiniteOrUndefined(s.median_abs_throughput_error) &&
                    FiniteOrUndefined(s.median_abs_memory_error) &&
                    FiniteOrUndefined(s.zero_twin_median_departure),
                "a summary's medians and Spearman are finite or undefined");
  fuzz::Require(fuzz::IsAmount(s.best_measured), "the best measured is finite and >= 0");
  if (!group) return;
  if (s.picks_ran > 0) {
    fuzz::Require(std::isfinite(s.pick_measured / s.best_measured),
                  "a pick that ran is a finite share of the best");
  }
  if (s.pick_twin_line != 0) {
    fuzz::Require(std::isfinite(s.pick_twin_measured / s.best_measured),
                  "the pick's twin is a finite share of the best");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Expected<std::vector<SweepRow>> rows =
      ParseLayoutSweep(fuzz::Text(data, size), "<fuzz>", fuzz::BuiltinDb());
  if (!rows.ok()) return 0;
  for (const SweepRow& row : *rows) {
    fuzz::Require(row.line >= 2, "a row comes after the header");
    fuzz::Require(fuzz::IsAmount(row.measured_tokens_per_s_per_gpu) &&
                      fuzz::IsAmount(row.measured_memory_bytes),
                  "measurements are finite and >= 0");
  }
  if (rows->size() > kMaxComparedRows) return 0;
  const SweepReport report = CompareWithLayoutSweep(*rows, fuzz::BuiltinDb());
  for (const SweepPrediction& p : report.rows) {
    if (!p.expressible) continue;
    fuzz::Require(std::isfinite(p.tokens_per_s_per_gpu) && p.tokens_per_s_per_gpu > 0,
                  "an expressible row's predicted tokens/s is finite and > 0");
    fuzz::Require(fuzz::IsAmount(p.peak_bytes) && std::isfinite(p.rank0_allocator_bytes),
                  "an expressible row's predicted memory is finite");
  }
  for (const SweepSummary& s : report.groups) RequireSaneSummary(s, true);
  RequireSaneSummary(report.overall, false);
  // The printers run on every report (a crash or a sanitizer report is a finding).
  fuzz::Require(!FormatSweepTable(report).empty() && !FormatSweepMarkdown(report).empty() &&
                    !FormatSweepRowsCsv(report).empty(),
                "the report prints");
  return 0;
}

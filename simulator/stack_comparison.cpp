#include "simulator/stack_comparison.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <utility>

#include "common/str_format.h"
#include "simulator/layout_sweep.h"

namespace gpuplan {

std::vector<PublishedRun> OnDefaultStack(std::vector<PublishedRun> runs) {
  for (PublishedRun& r : runs) r.job.training.framework = FrameworkSpec{};
  return runs;
}

std::vector<StackComparisonRow> CompareStackModels(const std::vector<PublishedRun>& runs,
                                                   const CrossValidationReport& specific,
                                                   const CrossValidationReport& agnostic) {
  std::vector<StackComparisonRow> rows;
  std::map<std::string, size_t> index;
  // Per stack: its pooled row and the publications that ran it.
  std::map<std::string, std::pair<StackComparisonRow, std::set<std::string>>> by_stack;
  std::vector<std::string> stack_order;
  for (size_t i = 0; i < runs.size() && i < specific.runs.size() && i < agnostic.runs.size(); ++i) {
    const std::string& source = runs[i].source;
    auto [it, added] = index.emplace(source, rows.size());
    if (added) rows.push_back(StackComparisonRow{source, "", 0, 0, 0, false});
    const std::string& stack = runs[i].job.training.framework.id;
    auto [pooled, new_stack] = by_stack.try_emplace(stack);
    if (new_stack) stack_order.push_back(stack);
    pooled->second.second.insert(source);
    for (StackComparisonRow* row : {&rows[it->second], &pooled->second.first}) {
      if (("+" + row->stacks + "+").find("+" + stack + "+") == std::string::npos) {
        row->stacks += (row->stacks.empty() ? "" : "+") + stack;
      }
      ++row->runs;
      row->specific_error += std::fabs(specific.runs[i].error);
      row->agnostic_error += std::fabs(agnostic.runs[i].error);
    }
  }
  // A stack that more than one publication ran gets a row of its own: whether knowing the stack
  // helps is a question per stack, and one publication's row may differ from another's by the
  // refitted constants alone.
  for (const std::string& stack : stack_order) {
    auto& [row, sources] = by_stack.at(stack);
    if (sources.size() < 2) continue;
    row.source = StrFormat("%zu publications", sources.size());
    row.per_stack = true;
    rows.push_back(row);
  }
  StackComparisonRow all{"all published runs", "", 0, 0, 0, false};
  for (StackComparisonRow& row : rows) {
    if (!row.per_stack) {
      all.runs += row.runs;
      all.specific_error += row.specific_error;
      all.agnostic_error += row.agnostic_error;
    }
    row.specific_error /= row.runs;
    row.agnostic_error /= row.runs;
  }
  if (all.runs > 0) {
    all.stacks = "each its own";
    all.specific_error /= all.runs;
    all.agnostic_error /= all.runs;
    rows.push_back(all);
  }
  return rows;
}

StackComparisonRow CompareSweepStackModels(const std::vector<SweepRow>& rows,
                                           const SweepCrossValidationReport& specific,
                                           const HardwareDb& db) {
  std::vector<SweepRow> agnostic_rows = rows;
  for (SweepRow& r : agnostic_rows) r.job.training.framework = FrameworkSpec{};
  const SweepReport agnostic = CompareWithLayoutSweep(agnostic_rows, db);
  StackComparisonRow row;
  row.source = "layout sweep (ultrascale_sweep.csv)";
  row.stacks = rows.empty() ? "" : rows.front().job.training.framework.id;
  row.runs = specific.rows;
  row.specific_error = specific.cross_validated_median_abs_error;
  row.agnostic_error = agnostic.overall.median_abs_throughput_error;
  row.median = true;
  return row;
}

std::string FormatStackComparison(const std::vector<StackComparisonRow>& rows, bool markdown) {
  std::string out;
  if (markdown) {
    out +=
        "| source | stack | runs | stack-agnostic error | stack-specific error | change |\n"
        "|---|---|---:|---:|---:|---:|\n";
  } else {
    out += StrFormat("%-24s %-22s %5s %10s %10s %8s\n", "source", "stack", "runs", "agnostic",
                     "specific", "change");
  }
  for (const StackComparisonRow& r : rows) {
    const char* kind = r.median ? " (median)" : "";
    const double change = 100 * (r.specific_error - r.agnostic_error);
    if (markdown) {
      out += StrFormat("| %s | %s | %d | %.1f%%%s | %.1f%%%s | %+.1f pt |\n", r.source.c_str(),
                       r.stacks.c_str(), r.runs, 100 * r.agnostic_error, kind,
                       100 * r.specific_error, kind, change);
    } else {
      out += StrFormat("%-24.24s %-22.22s %5d %9.1f%% %9.1f%% %+5.1f pt%s\n", r.source.c_str(),
                       r.stacks.c_str(), r.runs, 100 * r.agnostic_error, 100 * r.specific_error,
                       change, kind);
    }
  }
  out +=
      "\nStack-agnostic: every run timed as if on the default stack (megatron-core); "
      "stack-specific: on the stack that ran it (training.framework, frameworks.json). "
      "Publications: cross-validated mean |error| of tokens/s/GPU; the layout sweep: "
      "cross-validated median |error| of the rows that ran (the two constants refitted for the "
      "publications are not fitted on it; nanotron's constants fitted on it are refitted with "
      "each model held out).\n";
  return out;
}

}  // namespace gpuplan

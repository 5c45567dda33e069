// The content of the human-readable reports (terminal text, Markdown, HTML), built once from a
// PlanResult and rendered by each format (planner/report.h), so all three show the same facts.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "planner/plan.h"
#include "simulator/job_spec_json.h"

namespace gpuplan {

/// The parallel layout in one short line: "TP8 PP16 DP8 mb1 selective bf16 ZeRO-1". An uneven
/// pipeline (first/last stage layers) shows its layers per stage: "PP16(7+14x8+7)",
/// "PP3(27+27+26)". CP, EP and VPP appear only above 1; "selective" / "full-recompute" only when
/// recomputing; "ZeRO-n" for stages 1-3 or "FSDP"; "offload" with CPU offload; "tp-overlap" /
/// "ep-overlap" with tp_overlap (tp > 1) / ep_overlap (ep > 1).
std::string LayoutSummary(const JobSpec& job);

/// Whether two plans are the same choice: GPU, count, node, layout and provider.
bool SamePlan(const Plan& a, const Plan& b);

/// The plan the memory chart shows: the recommendation, else the smallest-footprint plan of the
/// no-fit diagnosis; nullptr when neither exists.
const Plan* ChartedPlan(const PlanResult& result);

/// A table of preformatted cells. `numeric[i]` marks column i as right-aligned.
struct ReportTable {
  std::vector<std::string> header;
  std::vector<bool> numeric;
  std::vector<std::vector<std::string>> rows;
};

/// The SVG charts the HTML report draws (planner/report_charts.h).
enum class ChartKind { kPareto, kScaling, kMemory, kStepTime };

/// One titled part of a report; every member may be empty.
struct ReportSection {
  std::string title;
  std::vector<std::pair<std::string, std::string>> facts;  ///< label, value
  std::vector<std::string> paragraphs;
  ReportTable table;
  std::string table_note;  ///< one line under the table
  std::vector<std::string> bullets;
  std::vector<ChartKind> charts;  ///< drawn by the HTML report only
};

/// A report: a title, a one-line summary of the request, and its sections.
struct ReportDocument {
  std::string title;
  std::string request_line;
  std::vector<ReportSection> sections;
};

/// Found: Recommendation, Pareto front, Alternatives, Scaling, Warnings, Search. Not found:
/// No plan found (explanation, suggestions), Smallest memory footprint found (hardware, layout,
/// memory vs capacity), then the same tail. Sections with nothing to show are left out.
ReportDocument BuildReportDocument(const PlanResult& result);

}  // namespace gpuplan

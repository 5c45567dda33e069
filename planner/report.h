// Rendering the planner's answer for people and tools: terminal text, Markdown, one
// self-contained HTML page with SVG charts, CSV, and WriteReport for all of them on disk.
// docs/REPORTS.md describes each format; planner/plan_json.h is the JSON.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "planner/plan.h"

namespace gpuplan {

/// What `gpuplan plan` prints: the request in one line, then the recommendation (GPUs, node,
/// price, layout, step time, tokens/s, MFU, memory vs capacity, expected wall time, goodput,
/// checkpoints, expected cost, $/M tokens, bound, explanation), the Pareto front, alternatives,
/// the scaling table, warnings and search counters, in fixed-width aligned columns. When
/// nothing was found, the no-fit diagnosis takes the recommendation's place.
std::string FormatPlanResultText(const PlanResult& result);

/// The same content as Markdown headings, lists and tables.
std::string PlanResultToMarkdown(const PlanResult& result);

/// One self-contained HTML5 page (inline CSS, no scripts, no external resources): the same
/// content plus four inline SVG charts (Pareto front, scaling, memory, step time breakdown;
/// see planner/report_charts.h). Every text is escaped.
std::string PlanResultToHtml(const PlanResult& result);

/// One RFC 4180 row per plan (kind = recommendation, alternative, pareto or scaling; scaling
/// rows that do not fit are left out) under a header row; CRLF line ends. Columns in
/// docs/REPORTS.md.
std::string PlanResultToCsv(const PlanResult& result);

/// The report's file names: plan.md, plan.html, plan.json, plans.csv.
std::vector<std::string> ReportFileNames();

/// The report's files in `dir` (path, contents), in ReportFileNames' order.
std::vector<std::pair<std::string, std::string>> ReportFiles(const PlanResult& result,
                                                             const std::string& dir);

/// Creates `dir` (and its parents) for a report; kUnavailable naming it when it cannot.
Status CreateReportDirectory(const std::string& dir);

/// Writes plan.md, plan.html, plan.json and plans.csv into `dir`, creating it if missing, as
/// one set (WriteFilesAtomically): all four are written to temporary files in `dir` first and
/// renamed over the targets only when every write succeeded, so on any error the old files stay
/// as they were, no temporary file is left, and the Status (kUnavailable) names the path at fault.
Status WriteReport(const PlanResult& result, const std::string& dir);

}  // namespace gpuplan

#include "planner/compare_frameworks.h"

#include "common/str_format.h"
#include "planner/economics.h"
#include "planner/plan_json.h"
#include "planner/planner.h"
#include "planner/report_document.h"
#include "planner/units_format.h"

namespace gpuplan {

Expected<std::vector<FrameworkComparisonRow>> CompareFrameworks(const PlanRequest& req,
                                                                const HardwareDb& db,
                                                                ProgressSink* progress) {
  // The request's own stack first, the others in id order.
  std::vector<const FrameworkSpec*> stacks;
  const FrameworkSpec* own = db.FindFramework(req.framework.id);
  if (own != nullptr) stacks.push_back(own);
  for (const auto& [id, stack] : db.frameworks()) {
    if (&stack != own) stacks.push_back(&stack);
  }
  std::vector<FrameworkComparisonRow> rows;
  for (const FrameworkSpec* entry : stacks) {
    const FrameworkSpec& stack = *entry;
    const std::string& id = stack.id;
    PlanRequest under = req;
    under.framework = stack;
    // An export format launches the request's own stack: another stack's row is what switching
    // (and exporting for that stack) would buy, so its search is not kept to this format.
    if (id != req.framework.id) under.export_format.clear();
    Expected<PlanResult> r = MakePlan(under, db, progress);
    if (!r.ok()) return r.status().WithPrefix("--compare-frameworks: " + id);
    FrameworkComparisonRow row;
    row.framework = stack;
    row.found = r->found;
    if (r->found) row.plan = std::move(r->recommendation);
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string FormatFrameworkComparison(const std::vector<FrameworkComparisonRow>& rows,
                                      const std::string& baseline_id) {
  const FrameworkComparisonRow* base = nullptr;
  for (const FrameworkComparisonRow& r : rows) {
    if (r.framework.id == baseline_id && r.found) base = &r;
  }
  const std::string title =
      "Training stacks compared (the same request under each stack of frameworks.json)";
  std::string out = "\n" + title + "\n" + std::string(title.size(), '-') + "\n";
  const std::string versus_header = "vs " + baseline_id;
  out += StrFormat("  %-14s %-22s %-48s %-30s %-12s %s\n", "framework", "GPUs", "layout",
                   "wall time (80% band)", "cost", versus_header.c_str());
  for (const FrameworkComparisonRow& r : rows) {
    if (!r.found) {
      out +=
          StrFormat("  %-14s no plan meets the request under this stack\n", r.framework.id.c_str());
      continue;
    }
    const PlanEconomics& e = r.plan.econ;
    std::string wall = FormatDuration(e.expected_wall_s);
    if (r.plan.band.runs > 0) {
      wall += " (" + FormatDuration(e.expected_wall_s * r.plan.band.low_factor) + "-" +
              FormatDuration(e.expected_wall_s * r.plan.band.high_factor) +
              (r.plan.band.validated ? ")" : ", WIDE)");
    }
    const std::string cost = IsPriced(r.plan) ? FormatUsd(e.expected_cost_usd) : "n/a";
    std::string versus = "-";
    if (base != nullptr && &r != base) {
      versus = StrFormat("%+.1f%% time",
                         100 * (e.expected_wall_s / base->plan.econ.expected_wall_s - 1));
      if (IsPriced(r.plan) && IsPriced(base->plan)) {
        versus += StrFormat(", %+.1f%% cost",
                            100 * (e.expected_cost_usd / base->plan.econ.expected_cost_usd - 1));
      }
    }
    const std::string gpus =
        std::to_string(r.plan.job.cluster.num_gpus) + " x " + r.plan.job.cluster.gpu;
    out += StrFormat("  %-14s %-22s %-48s %-30s %-12s %s\n", r.framework.id.c_str(), gpus.c_str(),
                     LayoutSummary(r.plan.job).c_str(), wall.c_str(), cost.c_str(), versus.c_str());
  }
  out +=
      "  Each stack's search keeps to the layouts it runs and times them with its memory and host "
      "costs (docs/HARDWARE_DB.md, Training stacks); a WIDE band means no published run of that "
      "stack and class checks the estimate.\n";
  return out;
}

nlohmann::json FrameworkComparisonToJson(const std::vector<FrameworkComparisonRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const FrameworkComparisonRow& r : rows) {
    out.push_back({{"framework", r.framework.id},
                   {"found", r.found},
                   {"plan", r.found ? PlanToJson(r.plan) : nlohmann::json()}});
  }
  return out;
}

}  // namespace gpuplan

// What switching training stacks would buy (`plan --compare-frameworks`): the same request
// planned under every stack of the hardware database (frameworks.json).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/progress.h"
#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "planner/plan.h"

namespace gpuplan {

/// The request's answer under one stack.
struct FrameworkComparisonRow {
  FrameworkSpec framework;
  bool found = false;  ///< a plan satisfies every constraint under this stack
  Plan plan;           ///< the recommendation; valid when found
};

/// MakePlan of `req` with PlanRequest::framework set to each stack of `db`: the request's own
/// stack first (when `db` has it), then the others in id order. Each
/// stack's search keeps to what it runs (StackRunsLayout), so the rows differ in layout as well
/// as in time. Only the request's own stack keeps to `req.export_format` (the format launches
/// that stack). `progress` is passed to every search.
Expected<std::vector<FrameworkComparisonRow>> CompareFrameworks(const PlanRequest& req,
                                                                const HardwareDb& db,
                                                                ProgressSink* progress);

/// The rows as a text table: stack, GPUs and type, layout, expected wall time with its 80% band,
/// expected cost, and both relative to the row of `baseline_id` (the request's own stack); "no
/// plan" for a stack under which nothing meets the request.
std::string FormatFrameworkComparison(const std::vector<FrameworkComparisonRow>& rows,
                                      const std::string& baseline_id);

/// The rows as JSON: [{framework, found, plan (PlanToJson, or null)}].
nlohmann::json FrameworkComparisonToJson(const std::vector<FrameworkComparisonRow>& rows);

}  // namespace gpuplan

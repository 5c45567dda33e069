#include "planner/plan.h"

namespace gpuplan {

namespace {
struct ObjectiveRow {
  Objective objective;
  std::string_view name;
};
constexpr ObjectiveRow kObjectives[] = {
    {Objective::kTime, "time"},
    {Objective::kCost, "cost"},
    {Objective::kCostUnderDeadline, "cost-under-deadline"},
    {Objective::kTimeUnderBudget, "time-under-budget"},
};
}  // namespace

std::string_view ObjectiveName(Objective o) {
  for (const ObjectiveRow& row : kObjectives) {
    if (row.objective == o) return row.name;
  }
  return "?";
}

bool ParseObjective(std::string_view name, Objective* out) {
  for (const ObjectiveRow& row : kObjectives) {
    if (row.name == name) {
      *out = row.objective;
      return true;
    }
  }
  return false;
}

void FillSpeedups(std::vector<ScalingRow>* rows) {
  const ScalingRow* base = nullptr;
  for (ScalingRow& row : *rows) {
    if (!row.feasible) continue;
    if (base == nullptr) base = &row;
    row.speedup = base->plan.econ.expected_wall_s / row.plan.econ.expected_wall_s;
    row.scaling_efficiency =
        row.speedup / (static_cast<double>(row.gpus) / static_cast<double>(base->gpus));
  }
}

}  // namespace gpuplan

// Re-timing the planner's finalists with the event-driven step simulator.
#pragma once

#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "planner/plan.h"

namespace gpuplan {

/// Hardware points (GPU type x node template x GPU count) whose kept layouts are re-timed by the
/// event simulator: the best few under the objective. The analytic model ranks everything; the
/// simulator refines the order where schedules and overlap matter (docs/PLANNER.md).
inline constexpr int kEventSimFinalistPoints = 4;

/// Re-times `layouts` (fitting plans of one hardware point, econ.steps set, no price) with the
/// event simulator: step, econ.compute_time_s and analytic_step_s updated; returns them ordered
/// by simulated compute time x rank_factor, fastest first. Fails only on an internal simulator
/// error. `measured`: the profile's rates (PlanRequest::measured) or nullptr.
Status RetimeWithEventSim(const HardwareDb& db, const MeasuredRates* measured,
                          std::vector<Plan>* layouts);

}  // namespace gpuplan

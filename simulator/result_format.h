// Presenting a StepResult: the JSON object of `gpuplan simulate --json` and a readable table.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "simulator/cost_model.h"
#include "simulator/job.h"

namespace gpuplan {

/// The documented JSON result (docs/METRICS.md): step_time_s, tokens_per_s,
/// tokens_per_s_per_gpu, model_tflops_per_gpu, mfu, hfu, fits, memory{...}, breakdown_s{...}.
nlohmann::json StepResultToJson(const StepResult& r);

/// A human-readable report: the job in one line, then time, throughput, breakdown and memory.
std::string FormatStepResult(const JobSpec& job, const StepResult& r);

}  // namespace gpuplan

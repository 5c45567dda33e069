// Presenting a StepResult: the JSON object of `gpuplan simulate --json` and a readable table.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "simulator/cost_model.h"
#include "simulator/error_band.h"
#include "simulator/event_sim.h"
#include "simulator/job.h"

namespace gpuplan {

/// The documented JSON result (docs/METRICS.md): step_time_s, tokens_per_s,
/// tokens_per_s_per_gpu, model_tflops_per_gpu, mfu, hfu, fits, memory{... peak_stage},
/// breakdown_s{...}.
nlohmann::json StepResultToJson(const StepResult& r);

/// A human-readable report: the job in one line, then time, throughput, breakdown and memory;
/// with `band`, the step time and tokens/s per GPU carry their error band and a line says what
/// the band rests on.
std::string FormatStepResult(const JobSpec& job, const StepResult& r,
                             const ErrorBand* band = nullptr);

/// The band of `r` as JSON (docs/METRICS.md, "Error band"): share, step_time_s{low, high},
/// tokens_per_s_per_gpu{low, high}, runs, basis, validated.
nlohmann::json ErrorBandToJson(const ErrorBand& band, const StepResult& r);

/// The breakdown table ("time per step  seconds  share") of a step of `step_time_s`.
std::string FormatBreakdown(const TimeBreakdown& b, double step_time_s);

/// The event simulator's answer next to the analytic one (`gpuplan simulate --event`): step
/// time and difference, the critical GPU's breakdown, activations per stage.
std::string FormatEventSimResult(const EventSimResult& sim, const StepResult& analytic);

/// JSON of the same: step_time_s, analytic_step_time_s, relative_difference, pipeline_s,
/// critical_stage, simulated_gpus, ops, events, breakdown_s{...}, stages[{stage,
/// peak_activation_bytes, microbatches_in_flight}].
nlohmann::json EventSimResultToJson(const EventSimResult& sim, const StepResult& analytic);

}  // namespace gpuplan

// `gpuplan validate --dry-run`: read the plan to validate, and print its process layout, its
// communicators and the op sequence of chosen ranks without touching a GPU.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "simulator/job.h"
#include "validator/rank_layout.h"

namespace gpuplan {

/// The job to validate from `path`: a plan written by `gpuplan plan --json` (its
/// recommendation.job) or a job spec (docs/JOB_SPEC.md). Errors name the file and field.
Expected<JobSpec> ReadValidationJob(const std::string& path, const HardwareDb& db);

/// The same from parsed JSON: `origin` names it in errors, `base_dir` resolves a relative
/// {"hf_config": "path"} (ParseJobSpec).
Expected<JobSpec> ValidationJobFromJson(const nlohmann::json& doc, const std::string& origin,
                                        const std::string& base_dir, const HardwareDb& db);

/// The first rank of every pipeline stage (tp = cp = dp = 0): by symmetry the other ranks of a
/// stage run the same op sequence on other groups.
std::vector<int64_t> RepresentativeRanks(const JobSpec& job);

/// Ok when the step programs of `ranks` list at most kMaxDryRunPasses pipeline passes in all
/// (each rank: micro-batches x vpp x 2 passes, 3 with zb-h1's split weight gradients); else an
/// invalid-input error that names --plan and --rank. The programs grow with pp x micro-batches
/// and would otherwise run to gigabytes.
Status CheckDryRunSize(const JobSpec& job, std::span<const int64_t> ranks);

/// Text: launch summary, rank table (all ranks up to 64, else the first 16), every group kind
/// of size > 1 (up to 8 groups listed), then for each of `ranks` its groups and step program,
/// then the layer programs.
std::string FormatDryRun(const JobSpec& job, const RankLayout& layout,
                         std::span<const int64_t> ranks);

/// The same as JSON: world_size, gpus_per_node, ranks[] (every rank's coordinates), groups
/// (kind -> list of rank lists), programs[] (rank, steps[] with label and ops[]), layer_programs.
nlohmann::json DryRunToJson(const JobSpec& job, const RankLayout& layout,
                            std::span<const int64_t> ranks);

}  // namespace gpuplan

// Reading and checking job specs (docs/JOB_SPEC.md): the JSON shape of
// hardware-db/calibration/published_runs.json "spec" objects.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "simulator/job.h"

namespace gpuplan {

/// Command-line flags that filled fields of a spec (`gpuplan simulate`), so that errors name the
/// flag the user typed instead of a spec field. Keys are "section.field" ("cluster.num_gpus").
struct SpecFlags {
  /// The flag that can set each field ("--gpus"), given or not: used in hints.
  std::map<std::string, std::string, std::less<>> names;
  /// The flag and value that did set a field ("--gpus 100"; a switch alone: "--embedding-slot").
  std::map<std::string, std::string, std::less<>> given;
  /// No spec file: hints name `names` rather than spec fields.
  bool without_file = false;
};

/// Parses a job spec object. `origin` names it in errors (a path, or "flags" for a job given by
/// flags alone); `base_dir` is where a relative {"hf_config": "path"} is resolved. Omitted optional
/// fields take the documented defaults (training.seq_len kDefaultSeqLen; inter_node and
/// gpus_per_node from the GPU's default node, dp from the GPU count; an explicit gpus_per_node
/// above num_gpus is reduced to num_gpus; fsdp makes zero_stage default to 3). Unknown fields are
/// errors. Calls ValidateJob before returning. An error about a field in `flags.given` starts with
/// that flag and value
/// ("--gpus 100: ...") instead of "origin: section: field 'name'"; a GPU count that conflicts
/// with the parallel degrees is reported against whichever of them a flag set.
Expected<JobSpec> ParseJobSpec(const nlohmann::json& spec, const std::string& origin,
                               const std::string& base_dir, const HardwareDb& db,
                               const SpecFlags& flags = {});

/// "same", "bf16", "fp16", "fp8" or "nf4": the names of `training.lora.base` in job specs.
std::string_view BaseWeightsName(BaseWeights b);

/// "none", "selective" or "full": the names of `training.recompute` in job specs.
std::string_view RecomputeName(Recompute r);

/// The names of `training.recompute_modules` set in `modules` (RecomputeModule bits), joined by
/// `separator`: e.g. "layernorm+moe_act".
std::string RecomputeModulesName(uint32_t modules, std::string_view separator);

/// Parses a `training.lora` object ({"rank", "targets", "base"}; docs/JOB_SPEC.md) for a job
/// trained in `precision`. `context` prefixes errors.
Expected<LoraSpec> ParseLoraSpec(const nlohmann::json& lora, const std::string& context,
                                 Precision precision);

/// Reads and parses a job spec file.
Expected<JobSpec> ReadJobSpecFile(const std::string& path, const HardwareDb& db);

/// Cross-field checks; each error is one line naming the field:
/// dp*tp*pp*cp == num_gpus; num_gpus % gpus_per_node == 0 when above one node; heads % tp;
/// kv_heads % tp (or tp % kv_heads); layers % (pp*vpp); vpp > 1 needs the interleaved schedule;
/// global_batch % (micro_batch*dp); seq_len % cp; experts % ep; ep divides dp*cp (Megatron's rule);
/// zero stage in 0..3; known gpu and network ids; the precision supported by the GPU. Also:
/// ValidateModel; micro_batch <= global_batch; vpp > 1 needs pp > 1; ep > 1 needs an MoE model;
/// cpu_offload needs zero_stage >= 1 or fsdp; the limits of common/limits.h (docs/JOB_SPEC.md,
/// Limits): num_gpus, each parallel degree and tp*pp*dp*cp (overflow-checked) at most kMaxGpus,
/// vpp at most kMaxLayers, seq_len at most kMaxSeqLen, global_batch*seq_len at most
/// kMaxTokensPerStep, micro-batches per step at most kMaxMicroBatchesPerStep. Messages start with
/// the section ("parallelism: ...", "model: field 'num_layers': ..."); ParseJobSpec prefixes them
/// with the origin.
Status ValidateJob(const JobSpec& job, const HardwareDb& db);

/// The spec as JSON in the same shape ParseJobSpec reads (model always expanded to dimensions).
nlohmann::json JobSpecToJson(const JobSpec& job);

}  // namespace gpuplan

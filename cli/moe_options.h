// `--moe-dispatcher` and `--moe-load-imbalance` of simulate and plan (training.moe_dispatcher and
// training.moe_load_imbalance of the job spec, docs/JOB_SPEC.md).
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

namespace gpuplan {

struct MoeOptions {
  std::string dispatcher;                ///< empty: not given
  std::optional<double> load_imbalance;  ///< nullopt: not given
};

/// Adds both options to `sub`; `deepep_note` ends the help of deepep (what the command does
/// with it).
void AddMoeOptions(CLI::App* sub, MoeOptions* o, const std::string& deepep_note);

}  // namespace gpuplan

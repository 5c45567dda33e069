#include "cli/model_option.h"

#include "simulator/hf_config.h"
#include "simulator/presets.h"

namespace gpuplan {

Expected<ModelSpec> ResolveModel(const std::string& model) {
  if (model.empty()) {
    return Status::Invalid(
        "--model: required (a preset id from `gpuplan models` or a config.json)");
  }
  const bool is_file = model.size() > 5 && model.substr(model.size() - 5) == ".json";
  return is_file ? ReadHfConfigFile(model) : FindModelPreset(model);
}

}  // namespace gpuplan

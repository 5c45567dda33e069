#include "cli/model_option.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "simulator/hf_config.h"
#include "simulator/presets.h"

namespace gpuplan {

bool IsHfConfigPath(const std::string& model) {
  std::string suffix = model.size() > 5 ? model.substr(model.size() - 5) : std::string();
  std::transform(suffix.begin(), suffix.end(), suffix.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::error_code ec;
  return suffix == ".json" || model.find('/') != std::string::npos ||
         std::filesystem::is_directory(model, ec);
}

Expected<ModelSpec> ResolveModel(const std::string& model) {
  if (model.empty()) {
    return Status::Invalid(
        "--model: required (a preset id from `gpuplan models` or a config.json)");
  }
  return IsHfConfigPath(model) ? ReadHfConfigFile(model) : FindModelPreset(model);
}

}  // namespace gpuplan

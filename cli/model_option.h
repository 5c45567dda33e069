// `--model`: a preset id or a Hugging Face config.json path.
#pragma once

#include <string>

#include "common/status.h"
#include "simulator/model.h"

namespace gpuplan {

/// True when `--model` names a Hugging Face config rather than a preset id: a path ending in
/// ".json" (any case), a path with a folder separator, or an existing folder (a model snapshot
/// holding its config.json).
bool IsHfConfigPath(const std::string& model);

/// A HF config path (IsHfConfigPath) is read as one, anything else is a preset id. An empty
/// argument is an error naming --model.
Expected<ModelSpec> ResolveModel(const std::string& model);

}  // namespace gpuplan

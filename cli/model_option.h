// `--model`: a preset id or a Hugging Face config.json path.
#pragma once

#include <string>

#include "common/status.h"
#include "simulator/model.h"

namespace gpuplan {

/// A path ending in ".json" is read as a HF config, anything else is a preset id. An empty
/// argument is an error naming --model.
Expected<ModelSpec> ResolveModel(const std::string& model);

}  // namespace gpuplan

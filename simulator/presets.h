// Built-in model presets: the Megatron GPT family of the calibration runs, GPT-3, Llama 3/3.1,
// Mixtral, MPT, DeepSeek-V3. One table (presets.cpp), each entry with the source of its numbers.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "simulator/model.h"

namespace gpuplan {

struct ModelPreset {
  const char* id;      ///< e.g. "llama3-70b"
  const char* source;  ///< paper/config the dimensions come from
  ModelSpec spec;
};

/// All presets, in table order.
const std::vector<ModelPreset>& ModelPresets();

/// Looks a preset up by id (case-insensitive); the error lists the known ids.
Expected<ModelSpec> FindModelPreset(const std::string& id);

}  // namespace gpuplan

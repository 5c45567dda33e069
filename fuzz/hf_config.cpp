// Harness: a Hugging Face config.json as `--model path/config.json` reads it: ParseJson, then
// ModelFromHfConfig. Invariant: an accepted model passes ValidateModel.
#include "simulator/hf_config.h"

#include "fuzz/fuzz_common.h"

using namespace gpuplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<nlohmann::json> doc = fuzz::Json(data, size);
  if (!doc) return 0;
  Expected<ModelSpec> model = ModelFromHfConfig(*doc, "<fuzz>");
  if (model.ok()) {
    fuzz::Require(ValidateModel(*model, "<fuzz>").ok(), "an accepted config is a valid model");
  }
  return 0;
}

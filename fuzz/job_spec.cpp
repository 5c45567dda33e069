// Harness: a job spec (docs/JOB_SPEC.md) as `gpuplan simulate --spec` reads it: ParseJson, then
// ParseJobSpec against the built-in hardware database. Invariant: an accepted spec written back
// with JobSpecToJson reads again to the same spec.
#include "fuzz/fuzz_common.h"

using namespace gpuplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<nlohmann::json> doc = fuzz::Json(data, size);
  if (!doc) return 0;
  Expected<JobSpec> job = fuzz::ReadSpec(*doc, "<fuzz>");
  if (job.ok()) fuzz::RequireSpecRoundTrip(*job, "an accepted spec round-trips");
  return 0;
}

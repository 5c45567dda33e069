// Harness: a plan written by `gpuplan plan --json` (or a job spec) as `gpuplan validate --plan`
// reads it: ParseJson, then ValidationJobFromJson (the recommendation's job). Invariant: the job
// of an accepted plan written back with JobSpecToJson reads again to the same job.
#include "fuzz/fuzz_common.h"
#include "validator/dry_run.h"

using namespace gpuplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<nlohmann::json> doc = fuzz::Json(data, size);
  if (!doc) return 0;
  Expected<JobSpec> job =
      ValidationJobFromJson(*doc, "<fuzz>", fuzz::kNoBaseDir, fuzz::BuiltinDb());
  if (job.ok()) fuzz::RequireSpecRoundTrip(*job, "the job of an accepted plan round-trips");
  return 0;
}

// Harness: a profile (docs/PROFILE.md) as `simulate --profile FILE` reads it: ParseJson,
// ProfileFromJson, CalibrateFromProfile against the built-in database, then the cost model of a
// Llama 3 8B job on the profile's GPU with the fitted rates. Invariants: an accepted profile
// written back with ProfileToJson reads again; fitted rates are amounts; the step is sane
// (fuzz_common.h).
#include "profiler/profile.h"

#include "fuzz/fuzz_common.h"
#include "profiler/profile_rates.h"

using namespace gpuplan;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::optional<nlohmann::json> doc = fuzz::Json(data, size);
  if (!doc) return 0;
  Expected<Profile> profile = ProfileFromJson(*doc, "<fuzz>");
  if (!profile.ok()) return 0;
  fuzz::RequireRoundTrip(
      *profile, ProfileToJson,
      [](const nlohmann::json& j) { return ProfileFromJson(j, "<fuzz again>"); },
      "an accepted profile round-trips through ProfileToJson");
  const HardwareDb& db = fuzz::BuiltinDb();
  Expected<ProfileCalibration> cal =
      CalibrateFromProfile(*profile, db, "<fuzz>", ProfileUse::kGpuplanExecutor);
  if (!cal.ok()) return 0;
  const MeasuredRates& rates = cal->rates;
  for (double v : rates.gemm_flops_per_s) fuzz::Require(fuzz::IsAmount(v), "GEMM rate");
  for (double v :
       {rates.gemm_fill_depth, rates.kernel_overhead_s, rates.attention_forward_flops_per_s,
        rates.attention_backward_flops_per_s, rates.memory_bytes_per_s}) {
    fuzz::Require(fuzz::IsAmount(v), "fitted rates are finite and >= 0");
  }
  const nlohmann::json spec = {
      {"model", "llama3-8b"},
      {"cluster", {{"gpu", rates.gpu_id}, {"num_gpus", 16}}},
      {"training", {{"seq_len", 4096}, {"global_batch_size", 64}, {"micro_batch_size", 1}}},
      {"parallelism", {{"tp", 2}, {"pp", 2}}}};
  Expected<JobSpec> job = fuzz::ReadSpec(spec, "<fuzz job>");
  if (!job.ok()) return 0;  // e.g. a GPU without bf16, or with too little memory for a node
  const GpuSpec& gpu = *db.FindGpu(job->cluster.gpu);
  fuzz::RequireSaneStep(EvaluateStep(*job, gpu, *db.FindNetwork(job->cluster.inter_node), &rates));
  return 0;
}

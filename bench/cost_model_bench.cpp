// How long one analytic evaluation takes: the planner's inner loop and the GUI's sliders.
// Issue bar: <= 20 us for a 96-layer model on one core.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "hardware-db/hardware_db.h"
#include "simulator/cost_model.h"
#include "simulator/job_spec_json.h"

namespace gpuplan {
namespace {

JobSpec Gpt175bJob(const HardwareDb& db) {
  const nlohmann::json spec = {
      {"model",
       {{"name", "GPT 175B"}, {"num_layers", 96}, {"hidden_size", 12288},
        {"ffn_hidden_size", 49152}, {"num_attention_heads", 96}, {"num_kv_heads", 96},
        {"vocab_size", 51200}, {"mlp", "gelu"}}},
      {"cluster",
       {{"gpu", "a100-sxm4-80gb"}, {"num_gpus", 1024}, {"gpus_per_node", 8},
        {"inter_node", "ib-hdr-200"}}},
      {"training",
       {{"seq_len", 2048}, {"global_batch_size", 1536}, {"micro_batch_size", 1},
        {"precision", "bf16"}, {"recompute", "selective"}}},
      {"parallelism",
       {{"tp", 8}, {"pp", 16}, {"dp", 8}, {"sequence_parallel", true}, {"zero_stage", 1},
        {"schedule", "1f1b"}}}};
  Expected<JobSpec> job = ParseJobSpec(spec, "<bench>", ".", db);
  if (!job.ok()) {
    std::fprintf(stderr, "%s\n", job.status().message().c_str());
    std::exit(1);
  }
  return *job;
}

void BM_EvaluateStep96Layers(benchmark::State& state) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  if (!db.ok()) {
    state.SkipWithError(db.status().message().c_str());
    return;
  }
  JobSpec job = Gpt175bJob(*db);
  const GpuSpec& gpu = *db->FindGpu(job.cluster.gpu);
  const NetworkSpec& net = *db->FindNetwork(job.cluster.inter_node);
  const DeviceRates rates = DatasheetRates(gpu, job.training.precision);
  int64_t mb = 1;
  for (auto _ : state) {
    // Vary one knob so nothing is hoisted out of the loop, as a planner sweep would.
    job.training.micro_batch_size = mb;
    mb = mb == 1 ? 2 : 1;
    StepResult r = EvaluateStep(job, gpu, net, rates);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EvaluateStep96Layers);

}  // namespace
}  // namespace gpuplan

BENCHMARK_MAIN();

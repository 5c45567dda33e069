// How long one analytic evaluation takes: the planner's inner loop and the GUI's sliders.
// Issue bar: <= 20 us for a 96-layer model on one core. Also the event simulator's time on the
// largest published layout.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "common/json_reader.h"
#include "hardware-db/hardware_db.h"
#include "simulator/cost_model.h"
#include "simulator/event_sim.h"
#include "simulator/job_spec_json.h"
#include "simulator/trace_json.h"

namespace gpuplan {
namespace {

JobSpec Gpt175bJob(const HardwareDb& db) {
  const nlohmann::json spec = {{"model",
                                {{"name", "GPT 175B"},
                                 {"num_layers", 96},
                                 {"hidden_size", 12288},
                                 {"ffn_hidden_size", 49152},
                                 {"num_attention_heads", 96},
                                 {"num_kv_heads", 96},
                                 {"vocab_size", 51200},
                                 {"mlp", "gelu"}}},
                               {"cluster",
                                {{"gpu", "a100-sxm4-80gb"},
                                 {"num_gpus", 1024},
                                 {"gpus_per_node", 8},
                                 {"inter_node", "ib-hdr-200"}}},
                               {"training",
                                {{"seq_len", 2048},
                                 {"global_batch_size", 1536},
                                 {"micro_batch_size", 1},
                                 {"precision", "bf16"},
                                 {"recompute", "selective"}}},
                               {"parallelism",
                                {{"tp", 8},
                                 {"pp", 16},
                                 {"dp", 8},
                                 {"sequence_parallel", true},
                                 {"zero_stage", 1},
                                 {"schedule", "1f1b"}}}};
  Expected<JobSpec> job = ParseJobSpec(spec, "<bench>", ".", db);
  if (!job.ok()) {
    std::fprintf(stderr, "%s\n", job.status().message().c_str());
    std::exit(1);
  }
  return *job;
}

// One EvaluateStep of the GPT-3 175B layout, with datasheet rates (range 0) or with measured
// rates of a profile (range 1: GEMM fit and alpha-beta fits of all six collectives over 2, 4
// and 8 GPUs, the lookups CollectiveSeconds then does).
void BM_EvaluateStep96Layers(benchmark::State& state) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  if (!db.ok()) {
    state.SkipWithError(db.status().message().c_str());
    return;
  }
  JobSpec job = Gpt175bJob(*db);
  const GpuSpec& gpu = *db->FindGpu(job.cluster.gpu);
  const NetworkSpec& net = *db->FindNetwork(job.cluster.inter_node);
  MeasuredRates measured;
  measured.gpu_id = gpu.id;
  measured.gemm_flops_per_s[static_cast<int>(Precision::kBf16)] = 270e12;
  measured.gemm_fill_depth = 48;
  for (int c = 0; c < kCollectiveCount; ++c) {
    for (int n : {2, 4, 8})
      measured.collectives.push_back({static_cast<Collective>(c), n, 2e-5, 2.3e11, 0, 10, {}});
  }
  const DeviceRates rates =
      CalibratedRates(gpu, job.training.precision, state.range(0) == 1 ? &measured : nullptr);
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
BENCHMARK(BM_EvaluateStep96Layers)->Arg(0)->Arg(1);

// The event simulator on the Llama 3 405B layout (16,384 H100, TP8 PP16 VPP4 DP128, seq 8192,
// global batch 2048): issue bar < 1 s including the trace. Arg: 1 = with timeline + trace text.
void BM_EventSimLlama3_405B(benchmark::State& state) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  Expected<nlohmann::json> spec =
      ReadJsonFile(GPUPLAN_SOURCE_DIR "/examples/llama3-405b-h100.json");
  if (!db.ok() || !spec.ok()) {
    state.SkipWithError(db.ok() ? spec.status().message().c_str() : db.status().message().c_str());
    return;
  }
  Expected<JobSpec> job = ParseJobSpec(*spec, "llama3-405b-h100.json", ".", *db);
  if (!job.ok()) {
    state.SkipWithError(job.status().message().c_str());
    return;
  }
  const GpuSpec& gpu = *db->FindGpu(job->cluster.gpu);
  const NetworkSpec& net = *db->FindNetwork(job->cluster.inter_node);
  EventSimOptions options;
  options.record_timeline = state.range(0) == 1;
  int64_t ops = 0;
  for (auto _ : state) {
    Expected<EventSimResult> r = SimulateStepEvents(*job, gpu, net, options);
    if (options.record_timeline) {
      const nlohmann::json trace = TimelineToChromeTrace(r->timeline, {"bench", {}});
      benchmark::DoNotOptimize(trace);
    }
    ops = r->ops;
    benchmark::DoNotOptimize(r);
  }
  state.counters["ops"] = static_cast<double>(ops);
}
BENCHMARK(BM_EventSimLlama3_405B)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gpuplan

BENCHMARK_MAIN();

// Planner throughput: layouts enumerated (memory-checked, and timed when they fit) per second,
// and the headline query end to end. Issue bar: >= 200 000 configurations/s on 2 cores.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>

#include "hardware-db/hardware_db.h"
#include "planner/planner.h"
#include "planner/search.h"
#include "planner/what_if.h"
#include "simulator/job_spec_json.h"
#include "simulator/presets.h"

namespace gpuplan {
namespace {

const HardwareDb& Db() {
  static const HardwareDb db = [] {
    Expected<HardwareDb> loaded = LoadHardwareDb({});
    if (!loaded.ok()) {
      std::fprintf(stderr, "%s\n", loaded.status().message().c_str());
      std::exit(1);
    }
    return std::move(loaded).value();
  }();
  return db;
}

// `gpuplan plan --model llama3-70b --tokens 2T --gpu h100-sxm5-80gb,a100-sxm4-80gb,h200-sxm-141gb
//  --max-gpus 4096 --objective cost-under-deadline --deadline 60d` (seq 4096, batch 1024).
PlanRequest Llama70bRequest(int threads) {
  PlanRequest req;
  req.model = FindModelPreset("llama3-70b").value();
  req.train_tokens = 2e12;
  req.seq_len = 4096;
  req.global_batch_sizes = {1024};
  req.gpus = {"h100-sxm5-80gb", "a100-sxm4-80gb", "h200-sxm-141gb"};
  req.max_gpus = 4096;
  req.objective = Objective::kCostUnderDeadline;
  req.deadline_s = 60 * 86400.0;
  req.reliability = Db().reliability();
  req.threads = threads;
  return req;
}

// configs/s: layouts enumerated and memory-checked; evaluated/s: those that fit and were timed
// by the cost model. Rates are per wall-clock second.
void ReportRates(benchmark::State& state, const SearchStats& total) {
  state.counters["configs/s"] =
      benchmark::Counter(static_cast<double>(total.configurations), benchmark::Counter::kIsRate);
  state.counters["evaluated/s"] =
      benchmark::Counter(static_cast<double>(total.evaluated), benchmark::Counter::kIsRate);
}

// Every layout of `req`'s model on `gpus` H100s, one thread.
void SearchH100Point(benchmark::State& state, const PlanRequest& req, int64_t gpus) {
  const GpuSpec* gpu = Db().FindGpu("h100-sxm5-80gb");
  const NodeTemplate* node = Db().FindNode(gpu->default_node);
  const HardwarePoint point{gpu, node, Db().FindNetwork(node->network), gpus};
  SearchStats total;
  for (auto _ : state) {
    const PointResult r = SearchPoint(req, point);
    total.configurations += r.stats.configurations;
    total.evaluated += r.stats.evaluated;
    benchmark::DoNotOptimize(r.best.data());
  }
  ReportRates(state, total);
}

// Llama 3 70B on 512 H100s.
void BM_SearchPoint(benchmark::State& state) { SearchH100Point(state, Llama70bRequest(1), 512); }
BENCHMARK(BM_SearchPoint)->Unit(benchmark::kMillisecond)->UseRealTime();

// A mixture-of-experts model, whose search adds expert parallelism, expert TP, EP overlap and
// every set of Megatron-Core's recomputed modules: Mixtral 8x7B on 64 H100s, batch 256.
void BM_SearchPointMoe(benchmark::State& state) {
  PlanRequest req = Llama70bRequest(1);
  req.model = FindModelPreset("mixtral-8x7b").value();
  req.global_batch_sizes = {256};
  SearchH100Point(state, req, 64);
}
BENCHMARK(BM_SearchPointMoe)->Unit(benchmark::kMillisecond)->UseRealTime();

// The headline query end to end on `threads` threads (the bar is stated for 2 cores).
void BM_PlanLlama70b(benchmark::State& state) {
  const PlanRequest req = Llama70bRequest(static_cast<int>(state.range(0)));
  SearchStats total;
  for (auto _ : state) {
    Expected<PlanResult> r = MakePlan(req, Db(), nullptr);
    if (!r.ok()) {
      state.SkipWithError(r.status().message().c_str());
      return;
    }
    total.configurations += r->stats.configurations;
    total.evaluated += r->stats.evaluated;
  }
  ReportRates(state, total);
}
BENCHMARK(BM_PlanLlama70b)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// What the GUI computes on every change of an input: the what-if plan of Llama 3 405B on 16,384
// H100 (examples/llama3-405b-h100.json) and its data-parallel scaling up to 8x the GPUs.
void BM_WhatIf405B(benchmark::State& state) {
  Expected<JobSpec> job =
      ReadJobSpecFile(GPUPLAN_SOURCE_DIR "/examples/llama3-405b-h100.json", Db());
  if (!job.ok()) {
    state.SkipWithError(job.status().message().c_str());
    return;
  }
  PlanRequest req;
  req.train_tokens = 15.6e12;
  req.reliability = Db().reliability();
  for (auto _ : state) {
    const Plan plan = EvaluateFixedPlan(req, Db(), *job, "dgx-h100");
    const std::vector<ScalingRow> rows =
        DataParallelScaling(req, Db(), *job, "dgx-h100", 8 * job->cluster.num_gpus);
    benchmark::DoNotOptimize(plan.econ.expected_cost_usd);
    benchmark::DoNotOptimize(rows.data());
  }
}
BENCHMARK(BM_WhatIf405B)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpuplan

BENCHMARK_MAIN();

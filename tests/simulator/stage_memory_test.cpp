// Memory per pipeline stage: every stage is evaluated, the peak can be a middle one, uneven
// splits count each stage's own layers, and the analytic stored activations of each stage equal
// the event simulator's counter.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "simulator/event_sim.h"
#include "simulator/job_spec_json.h"
#include "simulator/memory.h"
#include "simulator/pipeline.h"
#include "simulator/shard.h"
#include "simulator/step_costs.h"
#include "tests/builtin_db.h"
#include "tests/parse_job.h"

namespace gpuplan {
namespace {

// A small mixture-of-experts model whose first 3 layers are dense.
nlohmann::json SmallMoe(int64_t num_layers) {
  return {{"name", "small MoE"},
          {"num_layers", num_layers},
          {"hidden_size", 1024},
          {"ffn_hidden_size", 4096},
          {"num_attention_heads", 16},
          {"vocab_size", 32000},
          {"mlp", "swiglu"},
          {"moe_num_experts", 8},
          {"moe_top_k", 2},
          {"moe_ffn_hidden_size", 1024},
          {"moe_first_dense_layers", 3}};
}

// SmallMoe(30) on 4 stages of one GPU each under `schedule` (interleaved: 2 chunks per stage),
// global batch 12 (m = 12: three groups of 4 micro-batches when interleaved), with `split`
// (slots or first/last stage layers) added to the parallelism.
JobSpec SmallMoeOnFourStages(const std::string& schedule, const nlohmann::json& split) {
  nlohmann::json parallelism = {
      {"pp", 4}, {"vpp", schedule == "interleaved" ? 2 : 1}, {"schedule", schedule}};
  parallelism.update(split);
  return ParseTestJob(
      {{"model", SmallMoe(30)},
       {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 4}, {"gpus_per_node", 1}}},
       {"training", {{"seq_len", 2048}, {"global_batch_size", 12}}},
       {"parallelism", parallelism}});
}

// The Llama 3 paper's 405B layout (examples/llama3-405b-h100.json): TP8 PP16 VPP4 DP128, seq
// 8192, 16 micro-batches, one layer slot each for the embedding and the loss (Dubey et al. 2024
// Sec. 3.3.2).
nlohmann::json Llama405bSpec() {
  return {{"model", "llama3-405b"},
          {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 16384}, {"inter_node", "roce-400"}}},
          {"training", {{"seq_len", 8192}, {"global_batch_size", 2048}}},
          {"parallelism",
           {{"tp", 8},
            {"pp", 16},
            {"dp", 128},
            {"vpp", 4},
            {"sequence_parallel", true},
            {"zero_stage", 1},
            {"account_for_embedding_in_pipeline_split", true},
            {"account_for_loss_in_pipeline_split", true}}}};
}

// The largest StageMemory over all stages, computed the long way.
MemoryBreakdown EveryStage(const JobSpec& job) {
  MemoryBreakdown peak;
  for (int64_t s = 0; s < job.parallel.pp; ++s) {
    const MemoryBreakdown m = StageMemory(job, GpuOf(job), s);
    if (s == 0 || m.peak_bytes > peak.peak_bytes) peak = m;
  }
  return peak;
}

// A job may use the GPU's memory as the driver reports it (an H100's 81,559 MiB) less the
// allocator headroom (kAllocatorHeadroom, fitted on the layout sweep's crashes); the host
// device's ranks count exact bytes and keep none.
TEST(StageMemory, CapacityIsTheDriversTotalLessTheAllocatorHeadroom) {
  JobSpec job = ParseTestJob(
      {{"model", "llama3-8b"},
       {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 8}}},
       {"training", {{"seq_len", 4096}, {"global_batch_size", 64}, {"micro_batch_size", 1}}},
       {"parallelism", {{"zero_stage", 1}}}});
  const GpuSpec& h100 = *BuiltinDb().FindGpu("h100-sxm5-80gb");
  const MemoryBreakdown m = EstimateMemory(job, h100);
  EXPECT_DOUBLE_EQ(m.capacity_bytes, 81559.0 * 1048576.0 * (1.0 - 0.0646));
  EXPECT_EQ(m.fits, m.peak_bytes <= m.capacity_bytes);
  job.overhead.allocator_headroom = 0;
  EXPECT_DOUBLE_EQ(EstimateMemory(job, h100).capacity_bytes, 81559.0 * 1048576.0);
  const GpuSpec& cpu = *BuiltinDb().FindGpu("cpu");
  EXPECT_DOUBLE_EQ(DefaultOverhead(cpu).allocator_headroom, 0.0);
}

TEST(StageMemory, WithSlotsTheLargestStageIsAMiddleOne) {
  const JobSpec job = ParseTestJob(Llama405bSpec());
  const MemoryBreakdown est = EstimateMemory(job, GpuOf(job));
  // Interleaving with 16 micro-batches keeps all of them on stages 0..7 (warm-up
  // 2(p-s-1) + (v-1)p >= m*v - 1); stage 0 has 7 layers, stages 1..14 have 8.
  EXPECT_EQ(est.peak_stage, 1);
  const MemoryBreakdown first = StageMemory(job, GpuOf(job), 0);
  const MemoryBreakdown middle = StageMemory(job, GpuOf(job), 1);
  EXPECT_NEAR(middle.activations_bytes / first.activations_bytes, 8.0 / 7.0, 1e-12);
  EXPECT_GT(est.peak_bytes, first.peak_bytes);
  EXPECT_DOUBLE_EQ(est.peak_bytes, EveryStage(job).peak_bytes);
  EXPECT_DOUBLE_EQ(est.peak_bytes, middle.peak_bytes);
  for (int64_t s = 2; s <= 7; ++s) {
    EXPECT_DOUBLE_EQ(StageMemory(job, GpuOf(job), s).peak_bytes, middle.peak_bytes) << s;
  }
  EXPECT_LT(StageMemory(job, GpuOf(job), 8).peak_bytes, middle.peak_bytes);
}

TEST(StageMemory, UnevenSplitCountsEachStagesLayers) {
  // Llama 3 8B: 32 layers + the embedding slot = 33 slots on 3 stages: 10, 11, 11 layers.
  // 1F1B with 8 micro-batches: stage s keeps min(3 - s, 8) of them.
  const JobSpec job = ParseTestJob(
      {{"model", "llama3-8b"},
       {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 3}, {"gpus_per_node", 3}}},
       {"training", {{"seq_len", 4096}, {"global_batch_size", 8}}},
       {"parallelism", {{"pp", 3}, {"account_for_embedding_in_pipeline_split", true}}}});
  const double layer = LayerActivationBytes(job, false, Recompute::kNone);
  const int64_t layers[3] = {10, 11, 11};
  const double in_flight[3] = {3, 2, 1};
  for (int64_t s = 0; s < 3; ++s) {
    EXPECT_EQ(StageLayers(job, s), layers[s]);
    const MemoryBreakdown m = StageMemory(job, GpuOf(job), s);
    EXPECT_DOUBLE_EQ(m.activations_bytes, static_cast<double>(layers[s]) * layer * in_flight[s]);
    EXPECT_EQ(m.peak_stage, s);
    // Only the last stage keeps the logits.
    EXPECT_EQ(m.logits_bytes > 0, s == 2);
  }
  EXPECT_DOUBLE_EQ(EstimateMemory(job, GpuOf(job)).peak_bytes, EveryStage(job).peak_bytes);
  EXPECT_EQ(EstimateMemory(job, GpuOf(job)).peak_stage, EveryStage(job).peak_stage);
}

// Sharded gradients (ZeRO-2, ZeRO-3/FSDP) are reduce-scattered layer by layer during backward:
// two unsharded layer gradients are live, the one being reduced in fp32 (4 B, bf16 training)
// and the one backward is producing in bf16 (2 B) (PyTorch FSDP _post_backward_hook, DeepSpeed
// ZeRO-2 buckets). ZeRO-1 keeps the full fp32 gradient buffer and nothing more.
TEST(StageMemory, ShardedGradientsKeepTwoLayersUnshardedDuringBackward) {
  nlohmann::json spec = {{"model", "llama3-8b"},
                         {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 16}}},
                         {"training", {{"seq_len", 4096}, {"global_batch_size", 16}}},
                         {"parallelism", {{"zero_stage", 1}}}};
  const JobSpec one = ParseTestJob(spec);
  const ShardParams p = ParamsPerGpu(one, 0);
  const double layers = static_cast<double>(StageLayers(one, 0));
  EXPECT_DOUBLE_EQ(StageMemory(one, GpuOf(one), 0).grads_bytes, 4.0 * p.trainable);
  for (int zero : {2, 3}) {
    spec["parallelism"]["zero_stage"] = zero;
    const JobSpec job = ParseTestJob(spec);
    EXPECT_DOUBLE_EQ(StageMemory(job, GpuOf(job), 0).grads_bytes,
                     4.0 * p.trainable / 16 + (4.0 + 2.0) * p.trainable / layers)
        << zero;
  }
  // Without data parallelism nothing is sharded or reduced.
  spec["cluster"]["num_gpus"] = 1;
  const JobSpec single = ParseTestJob(spec);
  EXPECT_DOUBLE_EQ(StageMemory(single, GpuOf(single), 0).grads_bytes, 4.0 * p.trainable);
}

// Golden: under pipelining torchtitan keeps each stage's weights gathered (apply_fsdp:
// reshard_after_forward = not pp_enabled) and PyTorch's pipelining runs every backward but the
// last without gradient sync, so FSDP2 accumulates each layer's unsharded gradient in the
// reduction dtype (post_backward: to_accumulated_grad_if_needed). A stage holds its whole
// gathered weights (2 B per parameter) and its whole unsharded gradients (4 B, fp32 reduction)
// beside the shards, where Megatron-Core's baseline holds two gathered layers and two unsharded
// layer gradients (4 + 2 B). Its shards are the fp32 master weights, so it keeps no 16-bit shard
// (2 B per parameter over the 16 shards) beside them as Megatron-FSDP does. Without pipelining
// torchtitan reshards like the baseline.
TEST(StageMemory, TorchtitanKeepsAPipelineStagesWeightsAndGradientsUnsharded) {
  nlohmann::json spec = {{"model", "llama3-8b"},
                         {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 32}}},
                         {"training", {{"seq_len", 4096}, {"global_batch_size", 64}}},
                         {"parallelism", {{"pp", 2}, {"dp", 16}, {"fsdp", true}}}};
  const JobSpec baseline = ParseTestJob(spec);
  spec["training"]["framework"] = "torchtitan";
  const JobSpec titan = ParseTestJob(spec);
  ASSERT_TRUE(FsdpKeepsStageGathered(titan));
  ASSERT_FALSE(FsdpKeepsStageGathered(baseline));
  const ShardParams p = ParamsPerGpu(titan, 0);
  const double layers = static_cast<double>(StageLayers(titan, 0));
  const MemoryBreakdown kept = StageMemory(titan, GpuOf(titan), 0);
  const MemoryBreakdown base = StageMemory(baseline, GpuOf(baseline), 0);
  EXPECT_DOUBLE_EQ(kept.weights_bytes - base.weights_bytes,
                   2.0 * p.Total() - 2.0 * 2.0 * p.Total() / layers - 2.0 * p.Total() / 16);
  EXPECT_DOUBLE_EQ(kept.grads_bytes - base.grads_bytes,
                   4.0 * p.trainable - 4.0 * p.trainable / layers);
  spec["parallelism"] = {{"dp", 32}, {"fsdp", true}};
  EXPECT_FALSE(FsdpKeepsStageGathered(ParseTestJob(spec)));
}

// Golden, measured: torchtitan copies K and V to every query head (repeat_kv) and its attention
// kernel saves the copies. On an H200 with PyTorch 2.11 (docs/validation/
// h200-torch-checks-2026-11-30.json, scripts/device_torch_checks.py) one eager torchtitan block
// kept, beside its input (2h bytes per token, which the model counts as the first norm's),
// 172168.1 bytes per token for Llama 3 8B's shape at 8192 tokens and 344328.3 for 70B's at 4096;
// the model leaves out the norms' two fp32 statistics (8 bytes; the allocator's rounding adds
// under one byte per token). Without repeat_kv the model
// would keep K and V at the KV heads' width: 2h lower for the 8B, 3h for the 70B.
TEST(StageMemory, TorchtitanKeepsRepeatKvCopiesAsPyTorchMeasured) {
  struct Case {
    const char* model;
    int64_t seq;
    double hidden, measured_per_token;
  };
  for (const Case& c :
       {Case{"llama3-8b", 8192, 4096, 172168.125}, Case{"llama3-70b", 4096, 8192, 344328.25}}) {
    nlohmann::json spec = {{"model", c.model},
                           {"cluster", {{"gpu", "h200-sxm-141gb"}, {"num_gpus", 8}}},
                           {"training",
                            {{"seq_len", c.seq},
                             {"micro_batch_size", 1},
                             {"global_batch_size", 8},
                             {"framework", "torchtitan"},
                             {"recompute", "none"}}},
                           {"parallelism", {{"dp", 8}, {"fsdp", true}}}};
    JobSpec job = ParseTestJob(spec);
    ASSERT_TRUE(job.training.framework.repeat_kv);
    const double tokens = static_cast<double>(c.seq);
    const double per_token = LayerActivationBytes(job, false, Recompute::kNone) / tokens;
    EXPECT_NEAR(per_token, c.measured_per_token + 2.0 * c.hidden, 9.0) << c.model;
    job.training.framework.repeat_kv = false;
    const double kv_width = LayerActivationBytes(job, false, Recompute::kNone) / tokens;
    EXPECT_NEAR(per_token - kv_width, (c.hidden == 4096 ? 2.0 : 3.0) * c.hidden, 1e-6) << c.model;
  }
}

// Golden: quantized weights in memory. Megatron-Core passes is_first_microbatch, so Transformer
// Engine keeps every linear layer's fp8 weight and its transpose (1 + 1 bytes per weight) from
// the step's first micro-batch to the next step's; a stack that casts every micro-batch
// (Composer) holds one layer's at a time. With fp8 parameters (Megatron-LM --fp8-param-gather)
// the layers' weights are stored in fp8 (1 byte less each) and only the transpose is cached;
// with grad_reduce_bf16 the main gradients take 2 bytes instead of 4.
TEST(StageMemory, Fp8WeightCopiesParametersAndBf16Gradients) {
  nlohmann::json spec = {
      {"model", "llama3-8b"},
      {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 16}}},
      {"training", {{"seq_len", 4096}, {"global_batch_size", 16}, {"precision", "bf16"}}},
      {"parallelism", {{"zero_stage", 1}}}};
  const JobSpec bf16 = ParseTestJob(spec);
  const MemoryBreakdown base = StageMemory(bf16, GpuOf(bf16), 0);
  const double linears =
      static_cast<double>(StageLayers(bf16, 0)) * LayerParamsPerGpu(bf16, false).Total();
  const ShardParams p = ParamsPerGpu(bf16, 0);

  spec["training"]["precision"] = "fp8";
  const JobSpec fp8 = ParseTestJob(spec);
  EXPECT_DOUBLE_EQ(StageMemory(fp8, GpuOf(fp8), 0).weights_bytes,
                   base.weights_bytes + 2.0 * linears);

  spec["training"]["fp8_param_gather"] = true;
  const JobSpec fp8_params = ParseTestJob(spec);
  EXPECT_DOUBLE_EQ(StageMemory(fp8_params, GpuOf(fp8_params), 0).weights_bytes,
                   base.weights_bytes - linears + linears);  // fp8 weights + their transposes

  spec["training"]["grad_reduce_bf16"] = true;
  const JobSpec bf16_grads = ParseTestJob(spec);
  EXPECT_DOUBLE_EQ(StageMemory(bf16_grads, GpuOf(bf16_grads), 0).grads_bytes, 2.0 * p.trainable);
  EXPECT_DOUBLE_EQ(base.grads_bytes, 4.0 * p.trainable);

  spec["training"] = {{"seq_len", 4096},
                      {"global_batch_size", 16},
                      {"precision", "fp8"},
                      {"framework", "composer"}};
  spec["parallelism"] = {{"fsdp", true}};
  nlohmann::json composer_bf16 = spec;
  composer_bf16["training"]["precision"] = "bf16";
  const JobSpec composer = ParseTestJob(spec);
  const JobSpec composer_base = ParseTestJob(composer_bf16);
  EXPECT_DOUBLE_EQ(StageMemory(composer, GpuOf(composer), 0).weights_bytes,
                   StageMemory(composer_base, GpuOf(composer_base), 0).weights_bytes);
}

TEST(StageMemory, SkippedStagesNeverHoldMore) {
  // Identical middle stages are evaluated once; check the shortcut against every stage for
  // each schedule, with and without slots and with dense layers before MoE layers.
  const nlohmann::json moe = SmallMoe(16);
  for (const nlohmann::json& model : {nlohmann::json("llama3-405b"), moe}) {
    for (const char* schedule : {"gpipe", "1f1b", "interleaved", "zb-h1"}) {
      for (bool slots : {false, true}) {
        const bool is_moe = model.is_object();
        const int64_t vpp = std::string(schedule) == "interleaved" ? 2 : 1;
        const int64_t pp = is_moe ? (slots ? 3 : 4) : (slots ? 16 : 9);
        const JobSpec job = ParseTestJob(
            {{"model", model},
             {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", pp}, {"gpus_per_node", 1}}},
             // 144 micro-batches: a multiple of every pp here, as interleaving needs.
             {"training", {{"seq_len", 2048}, {"global_batch_size", 144}}},
             {"parallelism",
              {{"pp", pp},
               {"vpp", vpp},
               {"schedule", schedule},
               {"account_for_embedding_in_pipeline_split", slots},
               {"account_for_loss_in_pipeline_split", slots}}}});
        const MemoryBreakdown est = EstimateMemory(job, GpuOf(job));
        const MemoryBreakdown all = EveryStage(job);
        EXPECT_DOUBLE_EQ(est.peak_bytes, all.peak_bytes) << schedule << " slots " << slots;
        EXPECT_EQ(est.peak_stage, all.peak_stage) << schedule << " slots " << slots;
      }
    }
  }
}

// The analytic stored activations of every stage against the event simulator's counter.
void ExpectAnalyticMatchesEvents(const JobSpec& job, const std::string& what) {
  const NetworkSpec& net = *BuiltinDb().FindNetwork(job.cluster.inter_node);
  EventSimOptions options;
  options.record_timeline = false;
  Expected<EventSimResult> sim = SimulateStepEvents(job, GpuOf(job), net, options);
  ASSERT_TRUE(sim.ok()) << sim.status().message();
  const LayerActivations act = JobLayerActivations(job);
  for (int64_t s = 0; s < job.parallel.pp; ++s) {
    const double events = sim->peak_activation_bytes[static_cast<size_t>(s)];
    EXPECT_NEAR(StageActivationBytes(job, act, s), events, 1e-9 * events) << what << " stage " << s;
  }
}

TEST(StageMemory, AnalyticActivationsMatchTheEventSimulatorOnEveryStage) {
  ExpectAnalyticMatchesEvents(ParseTestJob(Llama405bSpec()), "llama3-405b paper layout");
  nlohmann::json longer = Llama405bSpec();  // 64 micro-batches: steady states of several periods
  longer["parallelism"]["dp"] = 32;
  longer["cluster"]["num_gpus"] = 4096;
  ExpectAnalyticMatchesEvents(ParseTestJob(longer), "llama3-405b 64 micro-batches");
  nlohmann::json one = Llama405bSpec();  // 1F1B, 32 micro-batches
  one["parallelism"]["vpp"] = 1;
  one["parallelism"]["schedule"] = "1f1b";
  one["parallelism"]["dp"] = 64;
  one["cluster"]["num_gpus"] = 8192;
  ExpectAnalyticMatchesEvents(ParseTestJob(one), "llama3-405b 1f1b");
  for (const char* schedule : {"gpipe", "1f1b", "interleaved", "zb-h1"}) {
    // 30 layers + 2 slots on 4 stages; interleaved: 32 slots on 4 x 2 chunks, m = 12.
    // Layers 0-2 are dense.
    const JobSpec job =
        SmallMoeOnFourStages(schedule, {{"account_for_embedding_in_pipeline_split", true},
                                        {"account_for_loss_in_pipeline_split", true}});
    ExpectAnalyticMatchesEvents(job, std::string("small MoE ") + schedule);
  }
}

TEST(StageMemory, UnevenFirstAndLastStagesMatchTheEventSimulator) {
  // Llama 3 405B's 7 + 14 x 8 + 7 given as first/last stage layers (Megatron-LM
  // --decoder-first/last-pipeline-num-layers) instead of slots, 1F1B, 32 micro-batches.
  nlohmann::json spec = Llama405bSpec();
  spec["parallelism"]["vpp"] = 1;
  spec["parallelism"]["schedule"] = "1f1b";
  spec["parallelism"]["dp"] = 64;
  spec["cluster"]["num_gpus"] = 8192;
  nlohmann::json uneven = spec;
  uneven["parallelism"].erase("account_for_embedding_in_pipeline_split");
  uneven["parallelism"].erase("account_for_loss_in_pipeline_split");
  uneven["parallelism"]["first_stage_layers"] = 7;
  uneven["parallelism"]["last_stage_layers"] = 7;
  const JobSpec job = ParseTestJob(uneven);
  ExpectAnalyticMatchesEvents(job, "llama3-405b 7 + 14 x 8 + 7");
  // The same layers per stage as the slot layout: the same memory on every stage.
  const JobSpec slots = ParseTestJob(spec);
  for (int64_t s = 0; s < 16; ++s) {
    EXPECT_DOUBLE_EQ(StageMemory(job, GpuOf(job), s).peak_bytes,
                     StageMemory(slots, GpuOf(slots), s).peak_bytes)
        << s;
  }
  for (const char* schedule : {"gpipe", "1f1b", "interleaved", "zb-h1"}) {
    // 30 layers as 6 + 2 x 8 + 8 on 4 stages (interleaved: 2 chunks each); layers 0-2 are dense.
    const JobSpec moe =
        SmallMoeOnFourStages(schedule, {{"first_stage_layers", 6}, {"last_stage_layers", 8}});
    ExpectAnalyticMatchesEvents(moe, std::string("small MoE uneven ") + schedule);
    EXPECT_DOUBLE_EQ(EstimateMemory(moe, GpuOf(moe)).peak_bytes, EveryStage(moe).peak_bytes)
        << schedule;
  }
}

// Golden: activation offload (Megatron-Core --cpu-offloading --cpu-offloading-num-layers k,
// Transformer Engine's CPU offload context). The first k of L layers' stored activations A per
// layer leave the GPU: the peak keeps L - k layers. Each layer's copy crosses the host link once
// per pass, one way (GB200: NVLink-C2C, 225 GB/s per GPU and direction; H100: PCIe Gen5 x16,
// 63 GB/s), behind one layer's kernels; what it takes beyond them is waited for, and its bytes
// also cross HBM beside the kernels. Spread over the layers: k/L of each layer's cost.
TEST(ActivationOffload, FirstLayersCrossTheHostLink) {
  for (const char* gpu_id : {"gb200", "h100-sxm5-80gb"}) {
    nlohmann::json spec = {
        {"model", "llama3-70b"},
        {"cluster", {{"gpu", gpu_id}, {"num_gpus", 8}}},
        {"training", {{"seq_len", 8192}, {"global_batch_size", 8}, {"precision", "bf16"}}},
        {"parallelism", {{"tp", 8}, {"sequence_parallel", true}, {"zero_stage", 1}}}};
    const JobSpec base = ParseTestJob(spec);
    spec["training"]["activation_offload_layers"] = 40;
    const JobSpec off = ParseTestJob(spec);
    const GpuSpec& gpu = GpuOf(base);
    const double layer = LayerActivationBytes(base, false, Recompute::kNone);
    EXPECT_DOUBLE_EQ(StageMemory(off, gpu, 0).activations_bytes,
                     StageMemory(base, gpu, 0).activations_bytes - 40 * layer)
        << gpu_id;
    ExpectAnalyticMatchesEvents(off, gpu_id);

    const NetworkSpec& net = *BuiltinDb().FindNetwork(base.cluster.inter_node);
    const DeviceRates rates = DatasheetRates(gpu, Precision::kBf16);
    const LayerCosts b = ComputeStepCosts(base, gpu, net, rates).dense;
    const LayerCosts o = ComputeStepCosts(off, gpu, net, rates).dense;
    const double link = std::string(gpu_id) == "gb200" ? 225e9 : 63e9;
    const double copy = layer / link, hbm = layer / rates.memory_bytes_per_s;
    const double share = 40.0 / 80.0;
    EXPECT_NEAR(o.fwd_other - b.fwd_other, share * (std::max(0.0, copy - b.Forward()) + hbm),
                1e-12 * b.Forward())
        << gpu_id;
    EXPECT_NEAR(o.bwd - b.bwd, share * (std::max(0.0, copy - b.bwd) + hbm), 1e-12 * b.bwd)
        << gpu_id;
  }
}

// StageLayers and StageLayerCounts are the sums over the stage's chunks of ChunkLayers and
// ChunkLayerCounts (the search calls them in closed form), for dense and MoE models, even and
// interleaved pipelines, embedding and loss slots, first/last stage layers and stack splits.
TEST(StageLayers, EqualTheSumOverChunks) {
  struct Split {
    int64_t pp, vpp;
    bool embedding_slot, loss_slot;
    int64_t first, last;
    std::vector<int64_t> stage_layers;
  };
  const Split splits[] = {{1, 1, false, false, 0, 0, {}},
                          {2, 1, false, false, 0, 0, {}},
                          {6, 1, false, false, 0, 0, {}},
                          {3, 1, true, false, 0, 0, {}},
                          {4, 2, true, true, 0, 0, {}},
                          {2, 2, false, true, 0, 0, {}},
                          {4, 2, false, false, 6, 8, {}},
                          {5, 1, false, false, 6, 0, {}},
                          {4, 1, false, false, 0, 0, {9, 8, 7, 6}}};
  for (const nlohmann::json& model : {nlohmann::json(SmallMoe(30)), nlohmann::json("llama3-8b")}) {
    JobSpec job = ParseTestJob({{"model", model},
                                {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 1}}},
                                {"training", {{"seq_len", 2048}, {"global_batch_size", 8}}}});
    for (const Split& split : splits) {
      ParallelSpec& p = job.parallel;
      p.pp = split.pp;
      p.vpp = split.vpp;
      p.embedding_slot = split.embedding_slot;
      p.loss_slot = split.loss_slot;
      p.first_stage_layers = split.first;
      p.last_stage_layers = split.last;
      p.stage_layers = split.stage_layers;
      for (int64_t stage = 0; stage < p.pp; ++stage) {
        int64_t layers = 0;
        StageLayerMix mix;
        for (int64_t chunk = 0; chunk < p.vpp; ++chunk) {
          layers += ChunkLayers(job, stage, chunk);
          mix.dense += ChunkLayerCounts(job, stage, chunk).dense;
          mix.moe += ChunkLayerCounts(job, stage, chunk).moe;
        }
        const std::string where =
            job.model.name + ", pp " + std::to_string(p.pp) + ", stage " + std::to_string(stage);
        EXPECT_EQ(StageLayers(job, stage), layers) << where;
        EXPECT_DOUBLE_EQ(StageLayerCounts(job, stage).dense, mix.dense) << where;
        EXPECT_DOUBLE_EQ(StageLayerCounts(job, stage).moe, mix.moe) << where;
      }
    }
  }
}

}  // namespace
}  // namespace gpuplan

// LoRA: frozen base weights at their stored precision, the activations frozen layers do not
// keep, no weight-gradient GEMMs for frozen weights, and the MLPerf Llama 2 70B LoRA job fits.
#include <gtest/gtest.h>

#include "simulator/cost_model.h"
#include "simulator/gemm_time.h"
#include "simulator/job_spec_json.h"
#include "simulator/memory.h"
#include "simulator/shard.h"
#include "simulator/step_costs.h"
#include "tests/builtin_db.h"
#include "tests/parse_job.h"

namespace gpuplan {
namespace {

TEST(LoraBase, BytesPerStoredParameter) {
  TrainingSpec tr;
  tr.lora = {true, 16, kLoraAttention, BaseWeights::kSame};
  tr.precision = Precision::kBf16;
  EXPECT_EQ(FrozenBaseBytesPerParam(tr), 2.0);
  tr.precision = Precision::kFp8;  // fp8 training keeps 16-bit weights
  EXPECT_EQ(FrozenBaseBytesPerParam(tr), 2.0);
  tr.precision = Precision::kFp32;
  EXPECT_EQ(FrozenBaseBytesPerParam(tr), 4.0);
  tr.precision = Precision::kBf16;
  tr.lora.base = BaseWeights::kBf16;
  EXPECT_EQ(FrozenBaseBytesPerParam(tr), 2.0);
  tr.lora.base = BaseWeights::kFp16;
  EXPECT_EQ(FrozenBaseBytesPerParam(tr), 2.0);
  tr.lora.base = BaseWeights::kFp8;
  EXPECT_EQ(FrozenBaseBytesPerParam(tr), 1.0);
  // QLoRA Sec. 3: 4-bit codes + 0.127 bit of double-quantised constants per parameter.
  tr.lora.base = BaseWeights::kNf4;
  EXPECT_NEAR(FrozenBaseBytesPerParam(tr) * 8.0, 4.127, 5e-4);
}

// The job spec names each stored precision, writes it back, and rejects a base its training
// precision cannot use, naming the field and what is allowed.
TEST(LoraBase, JobSpecNamesStoredPrecision) {
  nlohmann::json spec = {{"model", "llama2-7b"},
                         {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 8}}},
                         {"training",
                          {{"global_batch_size", 8},
                           {"precision", "bf16"},
                           {"lora", {{"rank", 16}, {"base", "fp8"}}}}}};
  const JobSpec job = ParseTestJob(spec);
  EXPECT_EQ(job.training.lora.base, BaseWeights::kFp8);
  EXPECT_EQ(JobSpecToJson(job)["training"]["lora"]["base"], "fp8");
  auto error = [&](const std::string& precision, const std::string& base) {
    nlohmann::json s = spec;
    s["training"]["precision"] = precision;
    s["training"]["lora"]["base"] = base;
    Expected<JobSpec> parsed = ParseJobSpec(s, "job.json", ".", BuiltinDb());
    return parsed.ok() ? std::string() : parsed.status().message();
  };
  EXPECT_EQ(error("fp8", "bf16"), "");  // fp8 training keeps 16-bit weights
  EXPECT_EQ(error("fp16", "fp16"), "");
  EXPECT_NE(error("fp32", "fp8")
                .find("training: lora: field 'base': 'fp8' needs "
                      "training.precision bf16, fp16 or fp8"),
            std::string::npos);
  EXPECT_NE(error("fp16", "bf16").find("'bf16' needs training.precision bf16 or fp8"),
            std::string::npos);
  EXPECT_NE(error("bf16", "int4")
                .find("'int4' is not allowed (allowed: same, bf16, fp16, fp8, "
                      "nf4)"),
            std::string::npos);
}

JobSpec Llama70bLora(const std::string& base, const nlohmann::json& parallelism) {
  return ParseTestJob({{"model", "llama2-70b"},
                       {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 8}}},
                       {"training",
                        {{"seq_len", 8192},
                         {"global_batch_size", 8},
                         {"micro_batch_size", 1},
                         {"precision", base == "fp8" ? "fp8" : "bf16"},
                         {"lora", {{"rank", 16}, {"targets", {"attention"}}, {"base", base}}}}},
                       {"parallelism", parallelism}});
}

// Weights on a GPU: the frozen base at its stored bytes + the adapters' 16-bit weights; with fp8
// math on Megatron-Core, the fp8-stored base's transposes that Transformer Engine caches for the
// data gradients (1 byte per layer weight; StageMemory.Fp8WeightCopiesParametersAndBf16Gradients).
TEST(LoraBase, WeightMemoryFollowsStoredPrecision) {
  for (const char* base : {"bf16", "fp8", "nf4"}) {
    const JobSpec job = Llama70bLora(base, {{"tp", 8}});
    const ShardParams shard = ParamsPerGpu(job, 0);
    const MemoryBreakdown mb = StageMemory(job, GpuOf(job), 0);
    const double transposes =
        std::string(base) == "fp8" ? 80.0 * LayerParamsPerGpu(job, false).Total() : 0.0;
    EXPECT_DOUBLE_EQ(mb.weights_bytes, FrozenBaseBytesPerParam(job.training) * shard.Total() +
                                           2.0 * shard.trainable + transposes)
        << base;
  }
  // ZeRO-3 shards the stored base over the 8 ranks and gathers two layers as stored, with their
  // transposes.
  const JobSpec job = Llama70bLora("fp8", {{"zero_stage", 3}});
  const ShardParams shard = ParamsPerGpu(job, 0);
  const double layers = static_cast<double>(job.model.num_layers);
  EXPECT_DOUBLE_EQ(StageMemory(job, GpuOf(job), 0).weights_bytes,
                   1.0 * shard.Total() / 8.0 + 2.0 * shard.trainable / 8.0 +
                       2.0 * 1.0 * shard.Total() / layers +
                       2.0 * LayerParamsPerGpu(job, false).Total());
}

// A GPT layer (f = 4h, MHA, GELU, dropout, unfused attention) on TP 4 without sequence
// parallelism, 2-byte activations, so every Korthikanti et al. 2022 Sec. 4 term is visible.
JobSpec GptLayerJob(uint32_t targets) {
  JobSpec j;
  j.model.name = "gpt";
  j.model.num_layers = 4;
  j.model.hidden_size = 1024;
  j.model.ffn_hidden_size = 4096;
  j.model.num_attention_heads = 16;
  j.model.num_kv_heads = 16;
  j.model.vocab_size = 32000;
  j.model.mlp = MlpKind::kGelu;
  j.training.seq_len = 2048;
  j.training.micro_batch_size = 1;
  j.training.global_batch_size = 8;
  j.training.precision = Precision::kFp16;
  j.training.attention = AttentionImpl::kUnfused;
  j.training.dropout = true;
  if (targets != 0) j.training.lora = {true, 8, targets, BaseWeights::kSame};
  j.parallel.tp = 4;
  return j;
}

// The stored activation terms, in bytes (Korthikanti et al. 2022 Sec. 4.1).
struct Terms {
  double sb = 2048, h = 1024, f = 4096, a = 16, t = 4, r = 8;
  double norms = 4 * sb * h;   // two LayerNorm inputs
  double masks = 2 * sb * h;   // two dropout masks
  double qkv_in = 2 * sb * h;  // QKV input: only for the QKV weight gradient
  double fc1_in = 2 * sb * h;  // FC1 input: only for the FC1 weight gradient
  double qkv = 6 * sb * h / t;
  double out_in = 2 * sb * h / t;  // attention output: the out projection's input
  double gelu_in = 2 * sb * f / t;
  double fc2_in = 2 * sb * f / t;  // GELU output: only for the FC2 weight gradient
  double core = 5 * a * sb * 2048 / t;
  double adapter = 2 * sb * r;  // one adapter's A·x
};

TEST(LoraActivations, FrozenWeightGradientInputsDropTermByTerm) {
  const Terms x;
  auto bytes = [](uint32_t targets) {
    return LayerActivationBytes(GptLayerJob(targets), false, Recompute::kNone);
  };
  const double full =
      x.norms + x.masks + x.qkv_in + x.fc1_in + x.qkv + x.out_in + x.gelu_in + x.fc2_in + x.core;
  EXPECT_DOUBLE_EQ(bytes(0), full);
  // Every linear targeted: all inputs stay, plus six adapters (GELU has no gate).
  EXPECT_DOUBLE_EQ(bytes(kLoraAll), full + 6 * x.adapter);
  EXPECT_DOUBLE_EQ(bytes(kLoraQ), full - x.fc1_in - x.out_in - x.fc2_in + x.adapter);
  EXPECT_DOUBLE_EQ(bytes(kLoraO), full - x.qkv_in - x.fc1_in - x.fc2_in + x.adapter);
  EXPECT_DOUBLE_EQ(bytes(kLoraUp), full - x.qkv_in - x.out_in - x.fc2_in + x.adapter);
  EXPECT_DOUBLE_EQ(bytes(kLoraDown), full - x.qkv_in - x.fc1_in - x.out_in + x.adapter);
  EXPECT_DOUBLE_EQ(bytes(kLoraAttention), full - x.fc1_in - x.fc2_in + 4 * x.adapter);

  // Fused attention reads O in its backward: the out-projection input stays.
  JobSpec flash = GptLayerJob(kLoraQ);
  flash.training.attention = AttentionImpl::kFlash;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(flash, false, Recompute::kNone),
                   full - x.core + 4 * x.sb * x.a / x.t - x.fc1_in - x.fc2_in + x.adapter);

  // Full recomputation keeps the layer input either way.
  EXPECT_DOUBLE_EQ(LayerActivationBytes(GptLayerJob(kLoraQ), false, Recompute::kFull),
                   2 * x.sb * x.h);
}

TEST(LoraActivations, SwiGluAndMoeTerms) {
  const Terms x;
  JobSpec job = GptLayerJob(kLoraGate);
  job.model.mlp = MlpKind::kSwiGlu;
  job.training.dropout = false;
  // gate targeted: FC1 input stays; gate and up outputs stay (SiLU and product backward), the
  // product (down input) goes.
  const double swiglu = x.norms + x.fc1_in + x.qkv + x.core * 2 / 5 + 4 * x.sb * x.f / x.t;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(job, false, Recompute::kNone), swiglu + x.adapter);

  // MoE layer, attention targeted: QKV and out-projection inputs stay; each of the k = 2 active
  // experts keeps gate and up outputs but neither its dispatched token copy (its FC1 input) nor
  // its down input.
  job.model.moe_num_experts = 8;
  job.model.moe_top_k = 2;
  job.model.moe_ffn_hidden_size = 512;
  job.training.lora.targets = kLoraAttention;
  const double moe =
      x.norms + x.qkv_in + x.qkv + x.out_in + x.core * 2 / 5 + 2 * (4 * x.sb * 512) / x.t;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(job, true, Recompute::kNone), moe + 4 * x.adapter);
  // Up targeted: each expert keeps its dispatched copy too, gathered over the expert TP group
  // (etp = tp): 2sbh per copy on every rank.
  job.training.lora.targets = kLoraAttention | kLoraUp;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(job, true, Recompute::kNone),
                   moe + x.fc1_in + 2 * (2 * x.sb * x.h) + (4 + 2) * x.adapter);
}

// Frozen weights get no weight-gradient GEMM: the backward runs the data-gradient GEMMs (1x the
// frozen forward GEMMs) and the adapters' two (2x theirs); the W work is the adapters' alone.
TEST(LoraStepCosts, NoWeightGradientGemmForFrozenWeights) {
  JobSpec full = Llama70bLora("bf16", {{"tp", 8}});
  full.training.lora = LoraSpec{};
  const JobSpec lora = Llama70bLora("bf16", {{"tp", 8}});
  const GpuSpec& gpu = GpuOf(full);
  const NetworkSpec& net = *BuiltinDb().FindNetwork(full.cluster.inter_node);
  const DeviceRates rates = DatasheetRates(gpu, Precision::kBf16);
  const LayerCosts f = ComputeStepCosts(full, gpu, net, rates).dense;
  const LayerCosts l = ComputeStepCosts(lora, gpu, net, rates).dense;
  const double adapters = l.wgrad;
  EXPECT_GT(adapters, 0);
  EXPECT_LT(adapters, 0.1 * f.wgrad);  // rank-16 GEMMs: small, and below peak efficiency
  EXPECT_DOUBLE_EQ(l.fwd_gemm, f.fwd_gemm + adapters);
  EXPECT_NEAR(l.bwd, f.bwd - f.wgrad + 2 * adapters, 1e-12 * f.bwd);

  // An fp8-stored base under bf16 math is cast before each use, in forward and in backward:
  // read 1 B, write and re-read 2 B per local parameter of QKV, O, gate, up and down.
  const JobSpec fp8_bf16 =
      ParseTestJob({{"model", "llama2-70b"},
                    {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 8}}},
                    {"training",
                     {{"seq_len", 8192},
                      {"global_batch_size", 8},
                      {"lora", {{"rank", 16}, {"targets", {"attention"}}, {"base", "fp8"}}}}},
                    {"parallelism", {{"tp", 8}}}});
  const LayerCosts c = ComputeStepCosts(fp8_bf16, gpu, net, rates).dense;
  const double h = 8192, kv = 1024, ffn = 28672, t = 8;
  const double layer_params = (h * (h + 2 * kv) + h * h + 3 * h * ffn) / t;
  const double cast = MemoryBoundSeconds(rates, (1.0 + 2.0 * 2.0) * layer_params, 7);
  EXPECT_NEAR(c.fwd_other - l.fwd_other, cast, 1e-12 * cast);
  EXPECT_NEAR(c.bwd - l.bwd, cast, 1e-12 * cast);
  // Under fp8 math the GEMMs read the fp8 base directly: no cast.
  const JobSpec fp8_fp8 = Llama70bLora("fp8", {{"tp", 8}});
  JobSpec same_fp8 = fp8_fp8;
  same_fp8.training.lora.base = BaseWeights::kSame;
  const DeviceRates rates8 = DatasheetRates(gpu, Precision::kFp8);
  EXPECT_EQ(ComputeStepCosts(fp8_fp8, gpu, net, rates8).dense.fwd_other,
            ComputeStepCosts(same_fp8, gpu, net, rates8).dense.fwd_other);
}

// MLPerf Training v4.0 llama2_70b_lora on one 8 x H100 80GB node, seq 8192, micro-batch 1,
// global batch 8, LoRA r = 16 on q, k, v, o (mlcommons/training llama2_70b_lora,
// run_llama_70B_scrolls_r16.sh: --lora_target_modules qkv_proj,o_proj, --lora_r 16,
// --max_seq_len 8192, --per_device_train_batch_size 1).
TEST(LoraBehaviour, MlperfLlama2_70bLoraFitsOnEightH100) {
  // The reference implementation: DeepSpeed ZeRO-3 over 8 GPUs, bf16, gradient checkpointing
  // (configs/default_config.yaml, --use_gradient_checkpointing True).
  JobSpec reference = Llama70bLora("bf16", {{"zero_stage", 3}});
  reference.training.recompute = Recompute::kFull;
  EXPECT_TRUE(EstimateMemory(reference, GpuOf(reference)).fits);

  // No recomputation, TP 4 with sequence parallelism, fp8 math and the frozen base stored in fp8
  // (the case): 86.5 GB per GPU when the base counted 2 bytes per parameter and frozen
  // layers kept full-training activations; it fits now. Full fp8 training keeps the FC1 and down
  // inputs that LoRA drops, in fp8 (Transformer Engine saves the quantized input): 33.0 GB of
  // activations against 39.2 GB.
  const JobSpec fp8 = Llama70bLora("fp8", {{"tp", 4}, {"sequence_parallel", true}});
  const MemoryBreakdown m = EstimateMemory(fp8, GpuOf(fp8));
  EXPECT_TRUE(m.fits) << m.peak_bytes / 1e9 << " GB";
  JobSpec full_training = fp8;
  full_training.training.lora = LoraSpec{};
  EXPECT_LT(m.activations_bytes,
            0.85 * EstimateMemory(full_training, GpuOf(fp8)).activations_bytes);
}

}  // namespace
}  // namespace gpuplan

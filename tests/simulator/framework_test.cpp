// The training stacks of hardware-db/data/frameworks.json and what each changes in memory, time and
// the layouts it runs, checked against counts read from the stacks' code.
#include "simulator/framework.h"

#include <gtest/gtest.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "simulator/gemm_time.h"
#include "simulator/job.h"
#include "simulator/memory.h"
#include "simulator/shard.h"
#include "simulator/step_costs.h"
#include "simulator/tp_overlap.h"
#include "tests/builtin_db.h"
#include "tests/parse_job.h"

namespace gpuplan {
namespace {

// The sweep's 1B Llama layer (nanotron scripts/scaling_benchmarks.py): h 2048, 32 heads, MHA,
// SwiGLU 8192, vocabulary 131072, tied embeddings, one node of H100.
// The built-in stack `id`.
const FrameworkSpec& Stack(const std::string& id) {
  const FrameworkSpec* f = BuiltinDb().FindFramework(id);
  EXPECT_NE(f, nullptr) << id;
  static const FrameworkSpec kNone;
  return f != nullptr ? *f : kNone;
}

JobSpec Llama1B(const std::string& framework) {
  JobSpec j;
  ModelSpec& m = j.model;
  m.name = "1B";
  m.num_layers = 16;
  m.hidden_size = 2048;
  m.ffn_hidden_size = 8192;
  m.num_attention_heads = 32;
  m.num_kv_heads = 32;
  m.vocab_size = 131072;
  m.mlp = MlpKind::kSwiGlu;
  m.tied_embeddings = true;
  j.cluster = {"h100-sxm5-80gb", 8, 8, "ib-ndr-400"};
  j.training.seq_len = 4096;
  j.training.global_batch_size = 8;
  j.training.framework = Stack(framework);
  j.parallel.dp = 8;
  return j;
}

TEST(Framework, BuiltinStacks) {
  EXPECT_EQ(BuiltinDb().FrameworkIds(),
            (std::vector<std::string>{"composer", "deepspeed", "hf-trainer", "megatron-core",
                                      "nanotron", "torchtitan", "torchtitan-compile"}));
  // Every behaviour names its source (the loader requires it); deepspeed also gives the optional
  // max_zero_stage_with_pp, torchtitan the optional loss_bytes_per_logit_with_tp, eager
  // torchtitan also repeat_kv and compiled also tp_overlap_buffers.
  for (const auto& [id, f] : BuiltinDb().frameworks()) {
    const size_t optional = (id == "deepspeed" || id.starts_with("torchtitan") ? 1 : 0) +
                            (id.starts_with("torchtitan-") || id == "torchtitan" ? 1 : 0);
    EXPECT_EQ(f.sources.size(), 30u + optional) << id;
  }
  EXPECT_EQ(Stack("deepspeed").max_zero_stage_with_pp, 1);
  // ZeRO-2 per wrapped block where it is PyTorch FSDP's SHARD_GRAD_OP; DeepSpeed in buckets.
  EXPECT_TRUE(Stack("composer").zero2_reduces_per_layer);
  EXPECT_TRUE(Stack("torchtitan").zero2_reduces_per_layer);
  EXPECT_FALSE(Stack("deepspeed").zero2_reduces_per_layer);
  EXPECT_FALSE(Stack("megatron-core").zero2_reduces_per_layer);
  EXPECT_TRUE(Stack("megatron-core").tp_overlap);
  EXPECT_FALSE(Stack("nanotron").tp_overlap);
  EXPECT_TRUE(Stack("megatron-core").tp_backward_overlap);
  EXPECT_FALSE(Stack("deepspeed").tp_backward_overlap);
  EXPECT_TRUE(Stack("megatron-core").recompute_modules);
  EXPECT_FALSE(Stack("torchtitan").recompute_modules);
}

// A job that does not name its stack runs on FrameworkSpec{}: it must be the megatron-core entry.
TEST(Framework, BuiltinMegatronCoreIsTheDefault) {
  const FrameworkSpec def;
  const FrameworkSpec& m = Stack(kDefaultFrameworkId);
  EXPECT_EQ(def.id, m.id);
  EXPECT_EQ(def.loss_bytes_per_logit, m.loss_bytes_per_logit);
  EXPECT_EQ(def.loss_bytes_per_logit_with_tp, m.loss_bytes_per_logit_with_tp);
  EXPECT_EQ(def.tp_overlap_buffers, m.tp_overlap_buffers);
  EXPECT_EQ(def.tp_overlap_buffers, kTpOverlapUserBuffers);
  EXPECT_EQ(def.ddp_bucket_bytes_per_param, m.ddp_bucket_bytes_per_param);
  EXPECT_EQ(def.grad_bucket.params, m.grad_bucket.params);
  EXPECT_EQ(def.grad_bucket.params_per_dp_rank, m.grad_bucket.params_per_dp_rank);
  EXPECT_EQ(def.grad_bucket.bytes, m.grad_bucket.bytes);
  EXPECT_EQ(def.eager_elementwise, m.eager_elementwise);
  EXPECT_EQ(def.repeat_kv, m.repeat_kv);
  EXPECT_EQ(def.pipeline_split, m.pipeline_split);
  EXPECT_EQ(def.weight_gather_in_forward, m.weight_gather_in_forward);
  EXPECT_EQ(def.zero2_reduces_per_layer, m.zero2_reduces_per_layer);
  EXPECT_EQ(def.zero3_unsharded_stage_with_pp, m.zero3_unsharded_stage_with_pp);
  EXPECT_EQ(def.zero3_shard_is_master, m.zero3_shard_is_master);
  EXPECT_EQ(def.zero1_grad_reduction, m.zero1_grad_reduction);
  EXPECT_EQ(def.host_seconds_per_layer, m.host_seconds_per_layer);
  EXPECT_EQ(def.moe_host_seconds_per_layer, m.moe_host_seconds_per_layer);
  EXPECT_EQ(def.pipeline_host_seconds_per_tp_rank, m.pipeline_host_seconds_per_tp_rank);
  EXPECT_EQ(def.max_zero_stage, m.max_zero_stage);
  EXPECT_EQ(def.max_zero_stage_with_pp, m.max_zero_stage_with_pp);
  EXPECT_EQ(def.tp_overlap, m.tp_overlap);
  EXPECT_EQ(def.tp_backward_overlap, m.tp_backward_overlap);
  EXPECT_EQ(def.interleaved_pipeline, m.interleaved_pipeline);
  EXPECT_EQ(def.cpu_offload, m.cpu_offload);
  EXPECT_EQ(def.fsdp, m.fsdp);
  EXPECT_EQ(def.pipeline_needs_pp_minus_1_microbatches, m.pipeline_needs_pp_minus_1_microbatches);
  EXPECT_EQ(def.ep_overlap, m.ep_overlap);
  EXPECT_EQ(def.parallel_dims, m.parallel_dims);
  EXPECT_EQ(def.fp8_norm_fused_cast, m.fp8_norm_fused_cast);
  EXPECT_EQ(def.fp8_weight_cast_every_microbatch, m.fp8_weight_cast_every_microbatch);
  EXPECT_EQ(def.quantized_saved_inputs, m.quantized_saved_inputs);
  EXPECT_EQ(def.activation_offload, m.activation_offload);
  // The default runs each architecture's reference attention kernel.
  for (const auto& [arch, kernel] : m.attention_kernels) {
    EXPECT_EQ(kernel.relative_speed, def.AttentionSpeed(arch)) << arch;
  }
}

// nanotron models/llama.py, one layer, tp = 1, per token (elements): the two norm inputs (h
// each), the QKV and gate/up inputs (h each), the contiguous Q/K/V copy (q + 2kv), the K/V copy
// concatenated for the rotary kernel (2kv), the attention output (q), the merged gate/up output
// (2f), SiLU's output (f) and the product (f); 2 bytes each, plus FlashAttention's fp32
// log-sum-exp (4 bytes per head). Megatron-Core keeps neither copy nor SiLU's output.
TEST(Framework, NanotronLayerActivationsFromTheCode) {
  const double sb = 4096, h = 2048, q = 2048, kv = 2048, f = 8192, a = 32;
  const double lse = 4 * sb * a;
  const double nanotron = 2 * sb * (4 * h + (q + 2 * kv) + 2 * kv + q + 4 * f) + lse;
  const double megatron = 2 * sb * (4 * h + (q + 2 * kv) + q + 3 * f) + lse;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(Llama1B("nanotron"), false, Recompute::kNone), nanotron);
  EXPECT_DOUBLE_EQ(LayerActivationBytes(Llama1B("megatron-core"), false, Recompute::kNone),
                   megatron);
}

// Golden: the loss buffers per logit of each stack's cross-entropy, from its code
// (frameworks.json sources). PyTorch's F.cross_entropy on an fp32 copy (torchtitan, the Hugging
// Face Trainer) peaks in its backward: nll_loss's dense fp32 gradient, the saved log-softmax
// output and the fp32 input gradient, 12 bytes; Megatron-Core subtracts the max in place (6),
// nanotron out of place (10), Composer's fused kernel keeps 16-bit logits and gradients (4).
// With tensor parallelism torchtitan's loss parallelism (torch/distributed/tensor/parallel/
// loss.py) keeps the saved log-softmax output, a zeroed gradient, exp(x) added to it and the
// product with the incoming gradient: 16 bytes per logit of the rank's vocabulary share.
TEST(Framework, LossBuffersPerLogitFromTheCode) {
  const double sbv = 4096.0 * 131072.0;  // one micro-batch's logits
  const std::tuple<const char*, double, double> stacks[] = {
      {"megatron-core", 6, 6}, {"nanotron", 10, 10},   {"composer", 4, 4},
      {"hf-trainer", 12, 12},  {"torchtitan", 12, 16}, {"torchtitan-compile", 12, 16}};
  for (const auto& [id, bytes, with_tp] : stacks) {
    JobSpec job = Llama1B(id);
    EXPECT_DOUBLE_EQ(StageMemory(job, GpuOf(job), 0).logits_bytes, bytes * sbv) << id;
    job.parallel.tp = 2;
    job.parallel.dp = 4;
    EXPECT_DOUBLE_EQ(StageMemory(job, GpuOf(job), 0).logits_bytes, with_tp * sbv / 2) << id;
  }
}

// Golden: the overlapped TP's buffers follow the stack, and PyTorch's allocator sees none of
// them. Megatron-Core's Transformer Engine registers 12 userbuffers of tokens x hidden
// (kTpOverlapUserBuffers); torchtitan's async TP takes one symmetric-memory workspace per TP group
// (torch/distributed/_symmetric_memory get_symm_mem_workspace), sized for the gathered input.
TEST(Framework, TpOverlapBuffersFollowTheStack) {
  const double tokens_hidden = 4096.0 * 2048.0;
  for (const auto& [id, buffers] : std::vector<std::pair<std::string, double>>{
           {"megatron-core", 12}, {"torchtitan-compile", 1}}) {
    JobSpec job = Llama1B(id);
    job.parallel.tp = 2;
    job.parallel.dp = 4;
    job.parallel.sequence_parallel = true;
    const double context = BytesOutsideAllocator(job);
    EXPECT_DOUBLE_EQ(context, job.overhead.framework_bytes) << id;
    job.parallel.tp_overlap = true;
    EXPECT_DOUBLE_EQ(BytesOutsideAllocator(job) - context, buffers * tokens_hidden * 2) << id;
  }
}

// Quantized training: Transformer Engine's linear layers save the quantized copy of their input
// for the weight gradient (transformer_engine/pytorch/module/linear.py: the fp8 input, or its
// fp8 transpose; layernorm_linear.py: the norm's fp8 output), so on Megatron-Core the QKV, FC1
// and FC2 inputs take c = 1 + 1/32 bytes (MXFP8's scale per 32 elements; per-tensor scaling
// needs less) and the out-projection keeps a c-byte copy of the attention output beside the
// 16-bit one fused attention's backward reads. torchao's Float8Linear (torchtitan) saves the
// 16-bit input (float8_linear.py, save_for_backward(input_hp, ...)): no change. fp4 (NVFP4):
// 0.5 + 1/16 bytes on the layers that run in fp4. LoRA's frozen linears save no input either way.
TEST(Framework, QuantizedLinearsKeepQuantizedInputs) {
  const double sb = 4096, h = 2048, q = 2048, kv = 2048, f = 8192, a = 32;
  const double lse = 4 * sb * a;
  // c bytes per saved GEMM input, o for the out-projection's own copy of the attention output.
  auto megatron = [&](double c, double o) {
    return sb * ((4 + 2 * c) * h + 2 * (q + 2 * kv) + (2 + o) * q + (4 + c) * f) + lse;
  };
  JobSpec job = Llama1B("megatron-core");
  ASSERT_DOUBLE_EQ(LayerActivationBytes(job, false, Recompute::kNone), megatron(2, 0));
  job.training.precision = Precision::kFp8;
  const double fp8 = 1 + 1.0 / 32;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(job, false, Recompute::kNone), megatron(fp8, fp8));
  job.training.precision = Precision::kFp4;
  const double fp4_share = 1 - kFp4Bf16LayerFraction;
  const double fp4 = fp4_share * (0.5 + 1.0 / 16) + (1 - fp4_share) * 2;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(job, false, Recompute::kNone), megatron(fp4, fp4));

  JobSpec titan = Llama1B("torchtitan");
  const double titan_bf16 = LayerActivationBytes(titan, false, Recompute::kNone);
  titan.training.precision = Precision::kFp8;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(titan, false, Recompute::kNone), titan_bf16);

  JobSpec lora = Llama1B("megatron-core");
  lora.training.lora.enabled = true;
  const double lora_bf16 = LayerActivationBytes(lora, false, Recompute::kNone);
  lora.training.precision = Precision::kFp8;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(lora, false, Recompute::kNone), lora_bf16);
}

// The loss buffers on the last stage: 16-bit logits + fp32 copy (Megatron-Core subtracts the max
// in place: 6 bytes per logit), + a second fp32 buffer (nanotron: 10); and PyTorch DDP's 16-bit
// gradient buckets beside nanotron's fp32 main gradients (2 bytes per parameter, dp > 1 only).
TEST(Framework, LossBuffersAndDdpBuckets) {
  const GpuSpec& gpu = *BuiltinDb().FindGpu("h100-sxm5-80gb");
  const double logits = 4096.0 * 131072.0;
  const MemoryBreakdown megatron = EstimateMemory(Llama1B("megatron-core"), gpu);
  const MemoryBreakdown nanotron = EstimateMemory(Llama1B("nanotron"), gpu);
  EXPECT_DOUBLE_EQ(megatron.logits_bytes, 6 * logits);
  EXPECT_DOUBLE_EQ(nanotron.logits_bytes, 10 * logits);
  EXPECT_DOUBLE_EQ(nanotron.grads_bytes - megatron.grads_bytes, 2 * megatron.weights_bytes / 2);
  JobSpec single = Llama1B("nanotron");
  single.parallel.dp = 1;
  single.cluster.num_gpus = 1;
  const MemoryBreakdown alone = EstimateMemory(single, gpu);
  EXPECT_DOUBLE_EQ(alone.grads_bytes, 2 * alone.weights_bytes);  // fp32 main grads, no buckets
}

// ZeRO-3 model state per parameter and shard: Megatron-FSDP and DeepSpeed keep a 16-bit shard
// beside the optimizer's fp32 master, 2 + 4 + 12 bytes (ZeRO paper, with fp32 main gradients);
// PyTorch FSDP's shard is the fp32 master itself ("outside forward and backward, the sharded
// parameters are kept in full precision"), 4 + 4 + 8 (Composer, the HF Trainer, torchtitan). The
// two gathered layers are 16-bit under both.
TEST(Framework, PyTorchFsdpShardIsTheFp32Master) {
  const GpuSpec& gpu = *BuiltinDb().FindGpu("h100-sxm5-80gb");
  for (const std::string id :
       {"megatron-core", "deepspeed", "composer", "hf-trainer", "torchtitan"}) {
    JobSpec j = Llama1B(id);
    j.parallel.zero_stage = 3;
    j.parallel.fsdp = true;
    const MemoryBreakdown m = EstimateMemory(j, gpu);
    const double params = ParamsPerGpu(j, 0).Total();
    const double gathered = 2.0 * 2.0 * params / 16.0;  // two of the 16 layers, 16-bit
    const double shard = Stack(id).zero3_shard_is_master ? 0.0 : 2.0 * params / 8.0;
    EXPECT_EQ(Stack(id).zero3_shard_is_master,
              id == "composer" || id == "hf-trainer" || id == "torchtitan")
        << id;
    EXPECT_NEAR(m.weights_bytes, shard + gathered, 1e-6 * params) << id;
    EXPECT_NEAR(m.optimizer_bytes, 12.0 * params / 8.0, 1e-6 * params) << id;
  }
}

// Job `j`'s dense layer costs on `gpus` GPUs at TP `tp` (sequence parallel when tp > 1), PP `pp`
// and DP the rest, micro-batches of `mbs` sequences, `micro_batches` of them per step.
LayerCosts DenseLayerOf(JobSpec j, int64_t gpus, int64_t tp, int64_t pp, int64_t mbs,
                        int64_t micro_batches) {
  j.cluster.num_gpus = gpus;
  j.parallel.tp = tp;
  j.parallel.pp = pp;
  j.parallel.dp = gpus / (tp * pp);
  j.parallel.sequence_parallel = tp > 1;
  j.training.micro_batch_size = mbs;
  j.training.global_batch_size = j.parallel.dp * mbs * micro_batches;
  const GpuSpec& gpu = *BuiltinDb().FindGpu(j.cluster.gpu);
  const DeviceRates rates = DatasheetRates(gpu, j.training.precision);
  return ComputeStepCosts(j, gpu, *BuiltinDb().FindNetwork(j.cluster.inter_node), rates).dense;
}

// The same for the 1B on H100s under stack `f`.
LayerCosts DenseLayer(const std::string& f, int64_t gpus, int64_t tp, int64_t pp, int64_t mbs,
                      int64_t micro_batches) {
  return DenseLayerOf(Llama1B(f), gpus, tp, pp, mbs, micro_batches);
}

// Host-bound layers: with TP 8 the 1B's layer is ~1.2 ms of GPU work per micro-batch, under
// nanotron's 4.5 ms host floor, so forward and backward take a third and two thirds of it,
// collectives included. With TP 1 and a micro-batch of 4 the GPU work is above the floor and
// nothing changes. Megatron-Core has no floor.
TEST(Framework, NanotronLayersAreHostBound) {
  const double host = Stack("nanotron").host_seconds_per_layer;
  EXPECT_DOUBLE_EQ(host, 4.5e-3);
  EXPECT_DOUBLE_EQ(Stack("megatron-core").host_seconds_per_layer, 0.0);
  const LayerCosts small = DenseLayer("nanotron", 8, 8, 1, 1, 1);
  const LayerCosts fast = DenseLayer("megatron-core", 8, 8, 1, 1, 1);
  ASSERT_LT(fast.Forward() + fast.tp_fwd + fast.bwd + fast.tp_bwd, 0.5 * host);
  EXPECT_NEAR(small.Forward() + small.tp_fwd, host / 3.0, 1e-15);
  EXPECT_NEAR(small.bwd + small.tp_bwd, 2.0 * host / 3.0, 1e-15);
  const LayerCosts big = DenseLayer("nanotron", 8, 1, 1, 4, 1);
  const LayerCosts big_megatron = DenseLayer("megatron-core", 8, 1, 1, 4, 1);
  ASSERT_GT(big.Forward(), host / 3.0);
  // Above the floor only the attention kernel (FlashAttention-2 on the H100) and the unfused
  // element-wise passes differ.
  EXPECT_DOUBLE_EQ(big.fwd_gemm, big_megatron.fwd_gemm);
  EXPECT_GT(big.fwd_other, big_megatron.fwd_other);
}

// Megatron-Core's mixture-of-experts layers: the host issues a layer's router, dispatcher and
// per-expert GEMMs in moe_host_seconds_per_layer (9 ms), a floor under the MoE layer's GPU work
// per micro-batch, a third in forward and two thirds in backward, all-to-alls included; its dense
// layers keep no floor. A Qwen3-30B-A3B-shaped layer (hidden 2048, 128 experts of 768, top 8) on
// 8 H100 at EP 8, micro-batch 1 of 4096 tokens, is ~7 ms of GPU work: it takes the floor, and
// without it would stay below it. At micro-batch 4 the GPU work passes it and nothing changes.
TEST(Framework, MegatronCoreMoeLayersAreHostBound) {
  EXPECT_DOUBLE_EQ(Stack("megatron-core").moe_host_seconds_per_layer, 9e-3);
  EXPECT_DOUBLE_EQ(Stack("nanotron").moe_host_seconds_per_layer, 0.0);
  auto layers = [](int64_t mbs, double moe_host_seconds) {
    JobSpec j = Llama1B("megatron-core");
    j.training.framework.moe_host_seconds_per_layer = moe_host_seconds;
    j.model.num_kv_heads = 4;
    j.model.head_dim = 128;
    j.model.ffn_hidden_size = 6144;
    j.model.moe_num_experts = 128;
    j.model.moe_top_k = 8;
    j.model.moe_ffn_hidden_size = 768;
    j.parallel.ep = 8;
    j.training.micro_batch_size = mbs;
    j.training.global_batch_size = 8 * mbs * 4;
    const GpuSpec& gpu = *BuiltinDb().FindGpu(j.cluster.gpu);
    return ComputeStepCosts(j, gpu, *BuiltinDb().FindNetwork(j.cluster.inter_node),
                            DatasheetRates(gpu, j.training.precision));
  };
  const double host = 9e-3;
  auto fwd = [](const LayerCosts& l) { return l.Forward() + l.tp_fwd + l.ep_comm / 2.0; };
  auto bwd = [](const LayerCosts& l) { return l.bwd + l.tp_bwd + l.ep_comm / 2.0; };
  const StepCosts small = layers(1, host);
  EXPECT_NEAR(fwd(small.moe), host / 3.0, 1e-15);
  EXPECT_NEAR(bwd(small.moe), 2.0 * host / 3.0, 1e-15);
  const StepCosts gpu_only = layers(1, 0.0);
  EXPECT_LT(fwd(gpu_only.moe) + bwd(gpu_only.moe), host);
  EXPECT_DOUBLE_EQ(small.dense.Forward(), gpu_only.dense.Forward());  // dense layers: no floor
  const StepCosts big = layers(4, host);
  const StepCosts big_gpu_only = layers(4, 0.0);
  EXPECT_GT(fwd(big_gpu_only.moe), host / 3.0);
  EXPECT_GT(bwd(big_gpu_only.moe), 2.0 * host / 3.0);
  EXPECT_DOUBLE_EQ(big.moe.Forward(), big_gpu_only.moe.Forward());
  EXPECT_DOUBLE_EQ(big.moe.bwd, big_gpu_only.moe.bwd);
}

// Unfused element-wise code (frameworks.json unfused_passes): nanotron's SwiGLU as two ops (2
// extra moves per element of f), its contiguous q/k/v copy (2 per element of q + 2kv) and the
// k/v buffer for the rotary kernel (2 per element of 2kv), 2 bytes each; one kernel per two
// moves. The 1B's layer at TP 1, a micro-batch of 4 sequences: the forward memory-bound time
// grows by exactly those bytes; backward by twice.
TEST(Framework, UnfusedPassesAddTheirTraffic) {
  const double T = 4 * 4096.0, q = 2048, kv = 2048, f = 8192;
  const double extra = 2 * (2 * f + 2 * (q + 2 * kv) + 2 * 2 * kv) * T;
  const LayerCosts nanotron = DenseLayer("nanotron", 8, 1, 1, 4, 1);
  const LayerCosts megatron = DenseLayer("megatron-core", 8, 1, 1, 4, 1);
  const GpuSpec& gpu = *BuiltinDb().FindGpu("h100-sxm5-80gb");
  const DeviceRates r = DatasheetRates(gpu, Precision::kBf16);
  EXPECT_NEAR(nanotron.fwd_other - megatron.fwd_other,
              extra / r.memory_bytes_per_s + 3 * r.kernel_overhead_s, 1e-12);
  EXPECT_NEAR((nanotron.bwd - nanotron.bwd_attn) - (megatron.bwd - megatron.bwd_attn),
              2 * (nanotron.fwd_other - megatron.fwd_other), 1e-12);
}

// Attention kernels (frameworks.json attention_kernels): on Hopper nanotron and Composer run
// FlashAttention-2, an Ampere-generation kernel, at 319 / 518 of cuDNN's rate (FlashAttention-3
// paper, H100, causal, head dim 128, 4k tokens); Megatron-Core runs cuDNN, the reference. The
// kernel time (less the launch overhead) scales by the inverse; on Ampere all three agree.
TEST(Framework, AttentionKernelFollowsTheStackAndTheArchitecture) {
  EXPECT_DOUBLE_EQ(Stack("nanotron").AttentionSpeed("hopper"), 0.616);
  EXPECT_DOUBLE_EQ(Stack("composer").AttentionSpeed("hopper"), 0.616);
  EXPECT_DOUBLE_EQ(Stack("megatron-core").AttentionSpeed("hopper"), 1.0);
  EXPECT_DOUBLE_EQ(Stack("composer").AttentionSpeed("blackwell"), 1.0);  // not listed
  const LayerCosts fa2 = DenseLayer("nanotron", 8, 1, 1, 4, 1);
  const LayerCosts cudnn = DenseLayer("megatron-core", 8, 1, 1, 4, 1);
  const double overhead = kKernelOverheadSeconds;
  EXPECT_NEAR((fa2.fwd_attn - overhead) * 0.616, cudnn.fwd_attn - overhead, 1e-15);
  EXPECT_NEAR((fa2.bwd_attn - overhead) * 0.616, cudnn.bwd_attn - overhead, 1e-15);
}

// fp8 casts (Transformer Engine's fused cast-transpose: read 2 bytes, write 1 + 1 per element).
// The 1B's layer at TP 1, one 4,096-token micro-batch, 4 per step. Forward: QKV and FC1 inputs
// (h each per token) cast by a te.Linear behind a PyTorch norm (Composer: 4 B), or only
// transposed after TE's fused norm (Megatron-Core: 2 B); O and FC2 inputs (q, f) 4 B; weights
// (h(q+2kv) + qh + 3fh) 4 B per parameter, every micro-batch (Composer) or once per step
// (Megatron-Core). Backward: the four output gradients (q+2kv, h, 2f, h) 4 B. The time is the
// bytes over the memory rate plus a launch per cast.
TEST(Framework, Fp8CastsFollowTheStack) {
  const double T = 4096, h = 2048, q = 2048, kv = 2048, f = 8192;
  const double params = h * (q + 2 * kv) + q * h + 3 * f * h;
  const double grads = 4 * (q + 2 * kv + h + 2 * f + h) * T;
  const GpuSpec& gpu = *BuiltinDb().FindGpu("h100-sxm5-80gb");
  const NetworkSpec& net = *BuiltinDb().FindNetwork("ib-ndr-400");
  auto layer = [&](const std::string& stack, Precision precision) {
    JobSpec j = Llama1B(stack);
    j.training.precision = precision;
    j.training.global_batch_size = 32;  // 4 micro-batches per rank
    return ComputeStepCosts(j, gpu, net, DatasheetRates(gpu, precision)).dense;
  };
  const DeviceRates r = DatasheetRates(gpu, Precision::kFp8);
  struct Case {
    std::string stack;
    double norm_bytes;
    double weight_casts;
  };
  for (const Case& c : {Case{"composer", 4, 1}, Case{"megatron-core", 2, 0.25}}) {
    const LayerCosts fp8 = layer(c.stack, Precision::kFp8);
    const LayerCosts bf16 = layer(c.stack, Precision::kBf16);
    const double fwd = c.norm_bytes * 2 * h * T + 4 * (q + f) * T + 4 * params * c.weight_casts;
    EXPECT_NEAR(fp8.fwd_other - bf16.fwd_other, MemoryBoundSeconds(r, fwd, 4 + 4 * c.weight_casts),
                1e-12)
        << c.stack;
    // Backward: the GEMMs and attention differ by precision; the rest is 2 x the bf16
    // memory-bound kernels plus the gradient casts.
    EXPECT_NEAR(fp8.bwd - 2 * fp8.fwd_gemm - fp8.bwd_attn,
                2 * bf16.fwd_other + MemoryBoundSeconds(r, grads, 4), 1e-12)
        << c.stack;
  }
}

// fp4 (NVFP4, arXiv:2509.25149): the linear GEMMs of the 84% of layers not kept in bf16 run at
// the fp4 peak, the rest at the bf16 peak (a harmonic mix); each operand cast reads 2 B for the
// per-tensor amax, then reads 2 B and writes 4-bit codes with an E4M3 scale per 16 elements,
// row-wise and column-wise (5.125 B, 2 kernels), with no norm-fused shortcut; attention stays
// bf16.
TEST(Framework, Fp4GemmsAndCasts) {
  const double T = 4096, h = 2048, q = 2048, kv = 2048, f = 8192;
  const double params = h * (q + 2 * kv) + q * h + 3 * f * h;
  const double grads = (q + 2 * kv + h + 2 * f + h) * T;
  const GpuSpec& gpu = *BuiltinDb().FindGpu("gb200");
  const NetworkSpec& net = *BuiltinDb().FindNetwork("ib-ndr-400");
  // fp4 GEMMs at the fp8 fraction of their peak (no fp4 measurement), the bf16 layers at bf16's.
  const double fp4 = gpu.PeakFlops(Precision::kFp4) * gpu.gemm_efficiency_fp8;
  const double bf16 = gpu.PeakFlops(Precision::kBf16) * gpu.gemm_efficiency;
  EXPECT_DOUBLE_EQ(LinearGemmFlops(gpu, Precision::kFp4), 1 / (0.84 / fp4 + 0.16 / bf16));
  EXPECT_DOUBLE_EQ(LinearGemmFlops(gpu, Precision::kFp8),
                   gpu.PeakFlops(Precision::kFp8) * gpu.gemm_efficiency_fp8);
  const DeviceRates r = DatasheetRates(gpu, Precision::kFp4);
  EXPECT_DOUBLE_EQ(r.attention_flops_per_s,
                   DatasheetRates(gpu, Precision::kBf16).attention_flops_per_s);
  const QuantizedCast cast = QuantizedCastOf(Precision::kFp4);
  EXPECT_DOUBLE_EQ(cast.bytes, 5.125);
  auto layer = [&](Precision precision) {
    JobSpec j = Llama1B("megatron-core");
    j.training.precision = precision;
    j.training.global_batch_size = 32;  // 4 micro-batches per rank: weights cast once per step
    return ComputeStepCosts(j, gpu, net, DatasheetRates(gpu, precision)).dense;
  };
  const LayerCosts q4 = layer(Precision::kFp4);
  const LayerCosts b16 = layer(Precision::kBf16);
  const double fwd = 5.125 * (2 * h * T + (q + f) * T + params * 0.25);
  EXPECT_NEAR(q4.fwd_other - b16.fwd_other, 0.84 * MemoryBoundSeconds(r, fwd, 2 * (4 + 4 * 0.25)),
              1e-12);
  EXPECT_NEAR(q4.bwd - 2 * q4.fwd_gemm - q4.bwd_attn,
              2 * b16.fwd_other + 0.84 * MemoryBoundSeconds(r, 5.125 * grads, 8), 1e-12);
}

// Pipelined layouts: with pp 2 the floor grows by pipeline_host_seconds_per_tp_rank per TP
// rank, 4.5 + 1.75 x 8 = 18.5 ms for the 1B at TP 8; with pp 1 it stays 4.5 ms; Megatron-Core
// has neither.
TEST(Framework, NanotronPipelinedFloorGrowsWithTp) {
  const FrameworkSpec& nanotron = Stack("nanotron");
  EXPECT_DOUBLE_EQ(nanotron.pipeline_host_seconds_per_tp_rank, 1.75e-3);
  EXPECT_DOUBLE_EQ(Stack("megatron-core").pipeline_host_seconds_per_tp_rank, 0.0);
  const double floor = nanotron.host_seconds_per_layer + 8 * 1.75e-3;
  const LayerCosts piped = DenseLayer("nanotron", 64, 8, 2, 1, 8);
  EXPECT_NEAR(piped.Forward() + piped.tp_fwd, floor / 3.0, 1e-15);
  EXPECT_NEAR(piped.bwd + piped.tp_bwd, 2.0 * floor / 3.0, 1e-15);
  const LayerCosts flat = DenseLayer("nanotron", 64, 8, 1, 1, 8);
  EXPECT_NEAR(flat.Forward() + flat.tp_fwd, nanotron.host_seconds_per_layer / 3.0, 1e-15);
  const LayerCosts megatron = DenseLayer("megatron-core", 64, 8, 2, 1, 8);
  EXPECT_LT(megatron.Forward() + megatron.tp_fwd, nanotron.host_seconds_per_layer / 3.0);
  // A TP group across nodes: each rank's share also pays the cross-node cost per node boundary,
  // 16 x (1.75 + 0.75 x 1) ms at TP 16 over two nodes, 32 x (1.75 + 0.75 x 3) at TP 32 over four.
  for (const auto& [tp, nodes] : {std::pair<int64_t, double>{16, 2}, {32, 4}}) {
    const double spanning =
        nanotron.host_seconds_per_layer +
        static_cast<double>(tp) * (1.75e-3 + nanotron.tp_seconds_per_inter_node_hop * (nodes - 1));
    const LayerCosts wide = DenseLayer("nanotron", 128, tp, 2, 1, 8);
    EXPECT_NEAR(wide.Forward() + wide.tp_fwd, spanning / 3.0, 1e-15) << tp;
    EXPECT_NEAR(wide.bwd + wide.tp_bwd, 2.0 * spanning / 3.0, 1e-15) << tp;
  }
}

// Tensor parallelism across nodes: each TP collective pays the stack's
// tp_seconds_per_inter_node_hop per node boundary beyond the first node, so with sequence
// parallelism a layer's two all-gather + reduce-scatter pairs add 4 x hop x (nodes - 1) per
// pass: 3 ms for nanotron's TP 16 over 2 nodes, 9 ms for TP 32 over 4, nothing within a node.
// The host floor is set aside to compare GPU-side costs; Megatron-Core charges nothing.
TEST(Framework, TpAcrossNodesPaysPerCollectiveAndHop) {
  const double hop = Stack("nanotron").tp_seconds_per_inter_node_hop;
  EXPECT_DOUBLE_EQ(hop, 0.75e-3);
  EXPECT_DOUBLE_EQ(Stack("megatron-core").tp_seconds_per_inter_node_hop, 0.0);
  JobSpec with = Llama1B("nanotron");
  with.training.framework.host_seconds_per_layer = 0;
  JobSpec without = with;
  without.training.framework.tp_seconds_per_inter_node_hop = 0;
  for (const auto& [tp, nodes] : {std::pair<int64_t, double>{8, 1}, {16, 2}, {32, 4}}) {
    const LayerCosts a = DenseLayerOf(with, 64, tp, 1, 1, 1);
    const LayerCosts b = DenseLayerOf(without, 64, tp, 1, 1, 1);
    EXPECT_NEAR(a.tp_fwd - b.tp_fwd, 4 * hop * (nodes - 1), 1e-12) << tp;
    EXPECT_NEAR(a.tp_bwd - b.tp_bwd, 4 * hop * (nodes - 1), 1e-12) << tp;
    EXPECT_NEAR(a.Forward() + a.bwd, b.Forward() + b.bwd, 1e-15) << tp;  // GPU work unchanged
  }
  // Overlapped TP (Transformer Engine userbuffers) hides bandwidth, not the per-hop cost.
  JobSpec overlap = with;
  overlap.parallel.tp_overlap = true;
  JobSpec overlap_free = without;
  overlap_free.parallel.tp_overlap = true;
  const LayerCosts a = DenseLayerOf(overlap, 64, 16, 1, 1, 1);
  const LayerCosts b = DenseLayerOf(overlap_free, 64, 16, 1, 1, 1);
  EXPECT_NEAR(a.tp_fwd - b.tp_fwd, 4 * hop, 1e-12);
  EXPECT_NEAR(a.tp_bwd - b.tp_bwd, 4 * hop, 1e-12);
}

TEST(Framework, NanotronCostBalancedStages) {
  // nanotron models/base.py build_model with models/llama.py block costs. The 1B layer costs
  // 4 x 2048^2 + 3 x 8192 x 2048 = 2^26 and its LM head 131072 x 2048 = 2^28 (4 layers), 20
  // units in all. pp 2: thresholds 10 and 20; after layer 10 the running cost equals 10 (not
  // above), so layer 11 stays on stage 0 too: 11 + 5. pp 4: 6 + 5 + 5, the LM head alone last.
  const ModelSpec m = Llama1B("nanotron").model;
  EXPECT_EQ(CostBalancedStageLayers(m, 1), (std::vector<int64_t>{16}));
  EXPECT_EQ(CostBalancedStageLayers(m, 2), (std::vector<int64_t>{11, 5}));
  EXPECT_EQ(CostBalancedStageLayers(m, 4), (std::vector<int64_t>{6, 5, 5, 0}));
  EXPECT_EQ(CostBalancedStageLayers(m, 8), (std::vector<int64_t>{3, 3, 2, 3, 2, 3, 0, 0}));
  // The sweep's 8B: 32 layers of 4 x 4096^2 + 3 x 14336 x 4096, LM head 131072 x 4096.
  ModelSpec b = m;
  b.num_layers = 32;
  b.hidden_size = 4096;
  b.ffn_hidden_size = 14336;
  b.num_kv_heads = 8;  // nanotron's estimate ignores GQA
  EXPECT_EQ(CostBalancedStageLayers(b, 8), (std::vector<int64_t>{5, 4, 4, 5, 4, 4, 4, 2}));
}

TEST(Framework, NanotronPlacementFindsTheEmptyStage) {
  // The walk over all blocks (embedding, layers, final norm, LM head, cast, loss) in units of
  // one 1B layer (the head is 4): on 16 stages the thresholds are 1.25 k; the layers fill
  // stages 0-11 (2,1,1,2,1,1,1,2,1,1,1,2), the norm and head stage 12 (running cost 20 > 16.25),
  // the cast stage 13 (20 > 17.5), the loss stage 14 (20 > 18.75), and the walk ends on 15,
  // which build_model makes the output stage with nothing on it.
  const ModelSpec m = Llama1B("nanotron").model;
  const CostBalancedSplit pp16 = CostBalancedPlacement(m, 16);
  EXPECT_EQ(pp16.layers, (std::vector<int64_t>{2, 1, 1, 2, 1, 1, 1, 2, 1, 1, 1, 2, 0, 0, 0, 0}));
  EXPECT_EQ(pp16.empty_stage, 15);
  // On 8 stages the cast and loss share the last stage (20 is not above its threshold 20).
  EXPECT_EQ(CostBalancedPlacement(m, 8).empty_stage, -1);
  // The 8B on 32 stages: the norm and head on 29, the cast on 30, the loss on 31, none empty.
  ModelSpec b = m;
  b.num_layers = 32;
  b.hidden_size = 4096;
  b.ffn_hidden_size = 14336;
  EXPECT_EQ(CostBalancedPlacement(b, 32).empty_stage, -1);
}

TEST(Framework, StackRunsLayout) {
  JobSpec j = Llama1B("nanotron");
  j.parallel.dp = 1;
  j.parallel.pp = 8;
  j.training.global_batch_size = 7;  // 7 micro-batches >= pp - 1
  EXPECT_TRUE(StackRunsLayout(j).ok());
  j.training.global_batch_size = 6;
  EXPECT_EQ(StackRunsLayout(j).message(),
            "training: field 'global_batch_size': nanotron's 1F1B engine needs at least pp - 1 = 7 "
            "micro-batches per step, this job has 6 (global_batch_size / (micro_batch_size x dp))");
  j.parallel.schedule = Schedule::kGpipe;  // all-forward-all-backward has no such assert
  EXPECT_TRUE(StackRunsLayout(j).ok());
  j.parallel.pp = 16;
  j.training.global_batch_size = 16;
  EXPECT_EQ(
      StackRunsLayout(j).message(),
      "parallelism: field 'pp': nanotron's cost-balanced split leaves stage 15 of 16 without a "
      "block (the LM head weighs 4.0 layers); use fewer stages");
  j.training.framework = Stack("megatron-core");
  EXPECT_TRUE(StackRunsLayout(j).ok());
}

// nanotron shards only the optimizer state (optim/zero.py): no ZeRO-2, ZeRO-3 or FSDP, and no
// offload.
TEST(Framework, NanotronRunsZeroOneAtMost) {
  JobSpec j = Llama1B("nanotron");
  j.parallel.dp = 8;
  j.parallel.zero_stage = 1;
  EXPECT_TRUE(StackRunsLayout(j).ok());
  // Its OptimizerArgs has no offload: the optimizer state stays on the GPU.
  j.parallel.cpu_offload = true;
  EXPECT_EQ(StackRunsLayout(j).message(),
            "parallelism: field 'cpu_offload': nanotron keeps the optimizer state on the GPU "
            "(frameworks.json cpu_offload false); set cpu_offload false, or use another framework");
  j.parallel.cpu_offload = false;
  j.parallel.zero_stage = 2;
  EXPECT_EQ(StackRunsLayout(j).message(),
            "parallelism: field 'zero_stage': nanotron runs ZeRO stages up to 1 and no FSDP "
            "(frameworks.json), got zero_stage 2; use zero_stage 1 or lower, or another framework");
  j.parallel.zero_stage = 3;
  j.parallel.fsdp = true;
  EXPECT_EQ(StackRunsLayout(j).message(),
            "parallelism: field 'fsdp': nanotron runs ZeRO stages up to 1 and no FSDP "
            "(frameworks.json), got fsdp true; use zero_stage 1 or lower, or another framework");
  j.training.framework = Stack("megatron-core");
  EXPECT_TRUE(StackRunsLayout(j).ok());
}

// DeepSpeed's PipelineEngine asserts ZeRO stage < 2 ('ZeRO-2 and ZeRO-3 are incompatible with
// pipeline parallelism'): ZeRO-2/3 only without pipelining.
TEST(Framework, DeepSpeedPipelinesRunZeroOneAtMost) {
  JobSpec j = Llama1B("deepspeed");
  j.parallel.dp = 4;
  j.parallel.pp = 2;
  j.parallel.zero_stage = 1;
  EXPECT_TRUE(StackRunsLayout(j).ok());
  j.parallel.zero_stage = 2;
  EXPECT_EQ(StackRunsLayout(j).message(),
            "parallelism: field 'zero_stage': deepspeed runs ZeRO stages up to 1 with pipeline "
            "parallelism (frameworks.json max_zero_stage_with_pp), got zero_stage 2 with pp 2; "
            "use zero_stage 1, pp 1, or another framework");
  j.parallel.zero_stage = 3;
  j.parallel.fsdp = true;
  EXPECT_NE(StackRunsLayout(j).message().find("field 'fsdp'"), std::string::npos);
  // Its engine runs one contiguous chunk a stage: no interleaved schedule.
  j.parallel.fsdp = false;
  j.parallel.zero_stage = 1;
  j.parallel.vpp = 2;
  j.parallel.schedule = Schedule::kInterleaved;
  EXPECT_EQ(StackRunsLayout(j).message(),
            "parallelism: field 'vpp': deepspeed runs no interleaved pipeline schedule "
            "(frameworks.json interleaved_pipeline), got vpp 2; use vpp 1 (schedule 1f1b), or "
            "another framework");
  j.training.framework = Stack("megatron-core");
  EXPECT_TRUE(StackRunsLayout(j).ok());
  j.training.framework = Stack("deepspeed");
  j.parallel.vpp = 1;
  j.parallel.schedule = Schedule::k1F1B;
  j.parallel.pp = 1;
  j.parallel.dp = 8;
  EXPECT_TRUE(StackRunsLayout(j).ok());
}

TEST(Framework, StackSplitFillsStageLayers) {
  JobSpec nanotron = Llama1B("nanotron");
  nanotron.parallel.pp = 4;
  nanotron.parallel.dp = 2;
  ApplyStackPipelineSplit(&nanotron);
  EXPECT_EQ(nanotron.parallel.stage_layers, (std::vector<int64_t>{6, 5, 5, 0}));
  EXPECT_EQ(StageLayers(nanotron, 0), 6);
  EXPECT_EQ(ChunkFirstLayer(nanotron, 2, 0), 11);
  EXPECT_EQ(StageLayersText(nanotron), "6+5+5+0");
  // Stage 0 keeps 6 layers x 4 micro-batches in flight, not 4 x 4.
  JobSpec even = nanotron;
  even.parallel.stage_layers.clear();
  const LayerActivations act = JobLayerActivations(nanotron);
  EXPECT_DOUBLE_EQ(StageActivationBytes(nanotron, act, 0),
                   1.5 * StageActivationBytes(even, act, 0));
  // Megatron-Core splits evenly; a split the job gives is kept.
  JobSpec megatron = Llama1B("megatron-core");
  megatron.parallel.pp = 4;
  ApplyStackPipelineSplit(&megatron);
  EXPECT_TRUE(megatron.parallel.stage_layers.empty());
  JobSpec given = Llama1B("nanotron");
  given.parallel.pp = 2;
  given.parallel.stage_layers = {8, 8};
  ApplyStackPipelineSplit(&given);
  EXPECT_EQ(given.parallel.stage_layers, (std::vector<int64_t>{8, 8}));
}

}  // namespace
}  // namespace gpuplan

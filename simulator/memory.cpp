#include "simulator/memory.h"

#include <algorithm>

#include "simulator/moe_dispatch.h"
#include "simulator/pipeline.h"
#include "simulator/pipeline_schedule.h"
#include "simulator/shard.h"
#include "simulator/step_costs.h"
#include "simulator/tp_overlap.h"

namespace gpuplan {

OverheadSpec DefaultOverhead(const GpuSpec& gpu) {
  return gpu.HostDevice() ? OverheadSpec{0.0, 0.0, 0.0} : OverheadSpec{};
}

namespace {

// Bytes per parameter of 4-bit NF4 storage with double quantisation: 4 bits + 0.127 bits of
// quantisation constants (Dettmers et al. 2023, "QLoRA", Sec. 3; see memory.h).
constexpr double kNf4BytesPerParam = (4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0)) / 8.0;

bool IsFp32(Precision p) { return p == Precision::kFp32 || p == Precision::kTf32; }

}  // namespace

double WeightBytesPerParam(Precision precision) { return IsFp32(precision) ? 4.0 : 2.0; }

double FrozenBaseBytesPerParam(const TrainingSpec& tr) {
  switch (tr.lora.base) {
    case BaseWeights::kSame:
      return IsFp32(tr.precision) ? 4.0 : 2.0;
    case BaseWeights::kBf16:
    case BaseWeights::kFp16:
      return 2.0;
    case BaseWeights::kFp8:
      return 1.0;
    case BaseWeights::kNf4:
      return kNf4BytesPerParam;
  }
  return 2.0;
}

double MainGradBytesPerParam(Precision precision) {
  return precision == Precision::kFp16 ? 2.0 : 4.0;
}

bool Bf16GradReductionApplies(Precision precision) {
  return precision == Precision::kBf16 || precision == Precision::kFp8 ||
         precision == Precision::kFp4;
}

double MainGradBytesPerParam(const TrainingSpec& training) {
  return training.grad_reduce_bf16 ? 2.0 : MainGradBytesPerParam(training.precision);
}

ModelStateBytes ZeroModelStateBytes(double params, double dp_shards, int zero_stage,
                                    Precision precision, bool cpu_offload,
                                    double grad_bytes_per_param) {
  const bool fp32 = IsFp32(precision);
  ModelStateBytes b;
  b.weights = WeightBytesPerParam(precision) * params;
  b.grads = grad_bytes_per_param * params;
  b.optimizer = (fp32 ? 8.0 : 12.0) * params;
  if (zero_stage >= 1) b.optimizer /= dp_shards;
  if (zero_stage >= 2) b.grads /= dp_shards;
  if (zero_stage >= 3) b.weights /= dp_shards;
  if (cpu_offload) b.optimizer = 0;
  return b;
}

namespace {

// LayerActivationBytes with the recomputed modules (RecomputeModule bits) given.
double LayerActivationBytesWith(const JobSpec& job, bool moe_layer, Recompute recompute,
                                uint32_t recompute_modules) {
  const ModelSpec& m = job.model;
  const TrainingSpec& tr = job.training;
  const ParallelSpec& par = job.parallel;
  const double t = static_cast<double>(par.tp);
  const double sb = static_cast<double>(tr.seq_len) / static_cast<double>(par.cp) *
                    static_cast<double>(tr.micro_batch_size);
  const double s_full = static_cast<double>(tr.seq_len);
  const double h = static_cast<double>(m.hidden_size);
  const double a = static_cast<double>(m.num_attention_heads);
  const double q = a * static_cast<double>(m.HeadDim());
  const double kv = static_cast<double>(m.num_kv_heads * m.HeadDim());
  const double scale = IsFp32(tr.precision) ? 2.0 : 1.0;  // Table 2 assumes 2-byte activations
  const bool dropout = tr.dropout;

  // LoRA: a frozen linear's input is stored only for its weight gradient, which is not computed;
  // it stays where an adapter on the same input needs it (dL/dA = dL/d(Ax) x^T, Hu et al. 2021).
  const LoraSpec& lora = tr.lora;
  auto input_kept = [&](uint32_t targets) { return !lora.enabled || (lora.targets & targets); };
  const bool swiglu = m.mlp == MlpKind::kSwiGlu;
  const uint32_t fc1_targets = kLoraUp | (swiglu ? kLoraGate : 0u);
  const bool fc1_input_kept = input_kept(fc1_targets);

  // Bytes per element of a linear layer's input kept for its weight gradient (QKV,
  // out-projection, FC1 and the experts' FC1, FC2): 2, or where the stack saves the quantized
  // copy it made for the forward GEMM (FrameworkSpec::quantized_saved_inputs; Transformer
  // Engine's linear.py saves the fp8 input, layernorm_linear.py the norm's fp8 output) that
  // copy's QuantizedCast::saved_input_bytes, on the share of layers that run quantized. LoRA's
  // frozen linears save no input and an adapter keeps its 16-bit one: 2 where kept.
  const FrameworkSpec& stack = tr.framework;
  const bool quantized_inputs =
      QuantizedLinears(tr.precision) && stack.quantized_saved_inputs && !lora.enabled;
  double gemm_input = 2.0;
  if (quantized_inputs) {
    const QuantizedCast cast = QuantizedCastOf(tr.precision);
    gemm_input = cast.layer_share * cast.saved_input_bytes + (1.0 - cast.layer_share) * 2.0;
  }

  // Selective recomputation of the modules Megatron-Core discards the outputs of (RecomputeModule):
  // a MoE layer's pre-MLP norm (layernorm), whose output is the router's and dispatcher's input,
  // and the routed experts' activation (moe_act), whose output is their FC2's input. Both are
  // recomputed before the backward that reads them, so neither is stored. A dense layer's
  // checkpointed MLP (mlp) keeps only its input, the pre-MLP norm's (kept below as a norm input):
  // its FC1 input, intermediates and adapters are not stored.
  const bool selective = recompute == Recompute::kSelective;
  const bool norm_discarded = moe_layer && selective && (recompute_modules & kRecomputeLayernorm);
  const bool act_discarded = moe_layer && selective && (recompute_modules & kRecomputeMoeAct);
  const bool mlp_discarded = !moe_layer && selective && (recompute_modules & kRecomputeMlp);

  // Layer inputs in TP-replicated regions: two norm inputs (2sbh each), QKV and FC1 inputs
  // (gemm_input x sbh each; a MoE layer's FC1 input is its pre-MLP norm's output), two dropout
  // masks (1 byte each). Sequence parallelism splits them by t.
  const double replicated =
      sb * h *
      (4.0 + (input_kept(kLoraQ | kLoraK | kLoraV) ? gemm_input : 0.0) +
       (fc1_input_kept && !norm_discarded && !mlp_discarded ? gemm_input : 0.0) +
       (dropout ? 2.0 : 0.0));
  const double full_input = 2.0 * sb * h;  // what full recomputation keeps per layer

  // TP-split tensors: Q, K, V and the attention output O. Fused attention's backward reads O
  // (Dao et al. 2022, Alg. 4) in 16 bits, beside the out-projection's quantized copy where the
  // stack keeps one; otherwise (unfused, or a fused kernel whose forward selective recomputation
  // runs again) O is kept only as the out-projection's input.
  // An eager stack also keeps the K/V copy it concatenates for the rotary kernel (2 x kv). A
  // stack that copies K and V to every query head first (FrameworkSpec::repeat_kv, torchtitan's
  // repeat_kv) keeps those copies instead, at the queries' width: Q, K, V and O, 2q each. On an
  // H200 with PyTorch 2.11 an eager torchtitan Llama 3 8B block and a 70B-shaped one kept 42.03
  // bytes per token and hidden unit beside their input (docs/validation/
  // h200-torch-checks-2026-11-30.json): 8h here, 6h of the norms' outputs and the second norm's
  // input, 28h of SwiGLU, and the log-sum-exp and the norms' statistics.
  const bool core_attn_recomputed = selective && (recompute_modules & kRecomputeCoreAttn) != 0;
  const bool fused_keeps_output = tr.attention == AttentionImpl::kFlash && !core_attn_recomputed;
  const double out_input_bytes = fused_keeps_output ? 2.0 + (quantized_inputs ? gemm_input : 0.0)
                                                    : (input_kept(kLoraO) ? gemm_input : 0.0);
  const double kv_kept = stack.repeat_kv ? q : kv;
  double split = 2.0 * sb * (q + 2.0 * kv_kept) + out_input_bytes * sb * q +
                 (stack.eager_elementwise && !stack.repeat_kv ? 4.0 * sb * kv : 0.0);
  // Core attention: unfused keeps softmax output (2), dropout mask (1) and output (2) per score;
  // fused attention keeps only the fp32 log-sum-exp per query row (Dao et al. 2022, Sec. 3.1).
  const double scores = a * sb * s_full;
  const double core =
      tr.attention == AttentionImpl::kUnfused ? (dropout ? 5.0 : 2.0) * scores : 4.0 * sb * a;
  // MLP intermediates: GELU keeps its input and FC2's input (2sbf and gemm_input x sbf);
  // SwiGLU keeps gate, up (2sbf each) and the product (gemm_input x sbf); the FC2 input only for
  // FC2's weight gradient. MoE: every token's top-k experts (+ shared) keep theirs, plus the
  // dispatched copy of the token (gemm_input x sbh each, the experts' FC1 input). Expert TP gathers
  // the routed copies of its etp ranks (Megatron-Core's dispatcher: all-to-all over EP, then
  // all-gather over expert TP), so a rank keeps etp/t of them at full width: etp x gemm_input x sbh
  // per copy before the split by t. An eager SwiGLU (act(gate) * up as two ops) also keeps SiLU's
  // output (2sbf).
  const double per_mlp = (swiglu ? (stack.eager_elementwise ? 6.0 : 4.0) : 2.0) +
                         (input_kept(kLoraDown) ? gemm_input : 0.0);
  const double mlp_copies =
      moe_layer ? static_cast<double>(m.moe_top_k + m.moe_shared_experts) : 1.0;
  if (moe_layer) {
    // The busiest EP rank keeps MoeRankImbalance x the mean routed copies; with moe_act their
    // FC2 inputs are discarded (the shared experts keep theirs).
    const double routed = static_cast<double>(m.moe_top_k) * MoeRankImbalance(job);
    const double shared = static_cast<double>(m.moe_shared_experts);
    const double gathered = routed * static_cast<double>(par.ExpertTp()) + shared;
    const double fc2_input = input_kept(kLoraDown) ? gemm_input : 0.0;
    const double routed_mlp = act_discarded ? per_mlp - fc2_input : per_mlp;
    split += (routed * routed_mlp + shared * per_mlp) * sb * static_cast<double>(m.ExpertFfn()) +
             (fc1_input_kept ? gathered * gemm_input * sb * h : 0.0);
  } else if (!mlp_discarded) {
    split += per_mlp * sb * static_cast<double>(m.ffn_hidden_size);
  }
  // LoRA adapters: each targeted matrix keeps its rank-r intermediate A·x (2 bytes per element)
  // for the gradient of B, on every TP rank (stated: not split).
  double adapter_matrices = 0;
  if (lora.enabled) {
    for (uint32_t target : {kLoraQ, kLoraK, kLoraV, kLoraO}) {
      if (lora.targets & target) adapter_matrices += 1;
    }
    const double mlp_adapters = mlp_discarded ? 0.0 : mlp_copies;
    for (uint32_t target : {kLoraUp, kLoraDown}) {
      if (lora.targets & target) adapter_matrices += mlp_adapters;
    }
    if (swiglu && (lora.targets & kLoraGate)) adapter_matrices += mlp_adapters;
  }
  const double adapters = 2.0 * sb * static_cast<double>(lora.rank) * adapter_matrices;

  const bool sp = par.sequence_parallel && par.tp > 1;
  const double replicated_share = sp ? replicated / t : replicated;
  switch (recompute) {
    case Recompute::kFull:
      return scale * (sp ? full_input / t : full_input);
    case Recompute::kSelective:
      // With core_attn the core attention is recomputed: what it keeps is not stored, its s^2
      // tensors (Korthikanti Sec. 5) or a fused kernel's log-sum-exp and output (above).
      return scale *
             (replicated_share + (split + (core_attn_recomputed ? 0.0 : core)) / t + adapters);
    case Recompute::kNone:
      break;
  }
  return scale * (replicated_share + (split + core) / t + adapters);
}

}  // namespace

double LayerActivationBytes(const JobSpec& job, bool moe_layer, Recompute recompute) {
  return LayerActivationBytesWith(job, moe_layer, recompute, job.training.recompute_modules);
}

double RerunModuleBytes(const JobSpec& job, bool moe_layer) {
  const TrainingSpec& tr = job.training;
  if (tr.recompute != Recompute::kSelective) return 0;
  const uint32_t kept = tr.recompute_modules & kRecomputeCoreAttn;
  return LayerActivationBytesWith(job, moe_layer, Recompute::kSelective, kept) -
         LayerActivationBytes(job, moe_layer, Recompute::kSelective);
}

LayerActivations JobLayerActivations(const JobSpec& job) {
  LayerActivations act;
  act.dense = LayerActivationBytes(job, false, job.training.recompute);
  if (job.model.is_moe()) act.moe = LayerActivationBytes(job, true, job.training.recompute);
  return act;
}

double OffloadedActivationBytes(const JobSpec& job, const LayerActivations& act) {
  const int64_t k = job.training.activation_offload_layers;
  const int64_t dense = std::min(k, job.model.DenseLayers());
  return static_cast<double>(dense) * act.dense + static_cast<double>(k - dense) * act.moe;
}

double ChunkActivationBytes(const JobSpec& job, const LayerActivations& act, int64_t stage,
                            int64_t chunk) {
  const StageLayerMix mix = ChunkLayerCounts(job, stage, chunk);
  return mix.dense * act.dense + mix.moe * act.moe - OffloadedActivationBytes(job, act);
}

double StageActivationBytes(const JobSpec& job, const LayerActivations& act, int64_t stage) {
  const ParallelSpec& par = job.parallel;
  const int64_t p = par.pp, m = MicrobatchesPerStep(job), v = par.vpp;
  auto chunk_bytes = [&](int64_t chunk) { return ChunkActivationBytes(job, act, stage, chunk); };
  const double first_chunk = chunk_bytes(0);
  double per_microbatch = first_chunk;
  bool equal_chunks = true;
  for (int64_t chunk = 1; chunk < v; ++chunk) {
    const double bytes = chunk_bytes(chunk);
    per_microbatch += bytes;
    equal_chunks = equal_chunks && bytes == first_chunk;
  }
  if (par.schedule != Schedule::kInterleaved || equal_chunks) {
    return MicrobatchesInFlight(par.schedule, p, m, v, stage) * per_microbatch;
  }
  // Interleaved 1F1B (InterleavedOrder): the warm-up forwards, then the k-th steady forward
  // stores before the k-th backward frees. The level after each steady forward repeats with
  // period p*v (every group of micro-batches is full: m is a multiple of p), so one period holds
  // its maximum.
  const int64_t total = m * v;
  const int64_t warmup = InterleavedWarmup(p, m, v, stage);
  auto forward_chunk = [&](int64_t k) { return InterleavedForwardSlot(p, v, k).chunk; };
  double level = 0;
  for (int64_t k = 0; k < warmup; ++k) level += chunk_bytes(forward_chunk(k));
  double peak = level;
  const int64_t steady = std::min(total - warmup, p * v);
  for (int64_t k = 0; k < steady; ++k) {
    level += chunk_bytes(forward_chunk(warmup + k));
    peak = std::max(peak, level);
    level -= chunk_bytes(v - 1 - forward_chunk(k));
  }
  return peak;
}

double UsableBytes(const GpuSpec& gpu, const OverheadSpec& overhead) {
  return gpu.memory_bytes * (1.0 - overhead.allocator_headroom);
}

double BytesOutsideAllocator(const JobSpec& job) {
  const ParallelSpec& par = job.parallel;
  double bytes = job.overhead.framework_bytes;
  if (par.tp_overlap && par.tp > 1) {
    // The overlapped TP GEMMs' communication buffers, 16-bit: Transformer Engine's userbuffers
    // (tp_overlap.h), or what the stack's own mechanism holds (FrameworkSpec::tp_overlap_buffers).
    const double tokens = static_cast<double>(job.training.seq_len) / static_cast<double>(par.cp) *
                          static_cast<double>(job.training.micro_batch_size);
    bytes += TpOverlapBufferBytes(job.training.framework.tp_overlap_buffers, tokens,
                                  static_cast<double>(job.model.hidden_size), 2.0);
  }
  return bytes;
}

namespace {

// StageMemory with the job's per-layer activation bytes already computed.
MemoryBreakdown StageMemoryWith(const JobSpec& job, const GpuSpec& gpu, const LayerActivations& act,
                                int64_t stage) {
  const ParallelSpec& par = job.parallel;
  const TrainingSpec& tr = job.training;
  const double dp_shards = static_cast<double>(par.ShardRanks());  // HSDP: one shard group
  // Expert states shard over the expert-DP ranks of the shard group.
  const double expert_shards = static_cast<double>(par.ExpertShardRanks());
  const int zero = par.ZeroStage();
  const ShardParams shard = ParamsPerGpu(job, stage);
  const bool shard_is_master = zero >= 3 && tr.framework.zero3_shard_is_master;
  MemoryBreakdown mb;
  mb.peak_stage = stage;
  // Bytes per parameter of a gathered ZeRO-3 layer: 16-bit weights, or the frozen base as stored.
  const double gathered_bytes = tr.lora.enabled ? FrozenBaseBytesPerParam(tr) : 2.0;
  const double grad_bytes = MainGradBytesPerParam(tr);
  if (tr.lora.enabled) {
    // Frozen base: weights only, at their stored precision; adapters carry full Adam state.
    const ModelStateBytes adapters = ZeroModelStateBytes(shard.trainable, dp_shards, zero,
                                                         tr.precision, par.cpu_offload, grad_bytes);
    mb.weights_bytes =
        gathered_bytes * shard.Total() / (zero >= 3 ? dp_shards : 1.0) + adapters.weights;
    mb.grads_bytes = adapters.grads;
    mb.optimizer_bytes = adapters.optimizer;
  } else {
    const ModelStateBytes dense = ZeroModelStateBytes(shard.dense, dp_shards, zero, tr.precision,
                                                      par.cpu_offload, grad_bytes);
    const ModelStateBytes expert = ZeroModelStateBytes(shard.expert, expert_shards, zero,
                                                       tr.precision, par.cpu_offload, grad_bytes);
    // PyTorch FSDP's shard is the fp32 master the optimizer state already counts: no 16-bit
    // shard beside it (FrameworkSpec::zero3_shard_is_master); only gathered layers are 16-bit.
    mb.weights_bytes = shard_is_master ? 0.0 : dense.weights + expert.weights;
    mb.grads_bytes = dense.grads + expert.grads;
    mb.optimizer_bytes = dense.optimizer + expert.optimizer;
  }
  if (zero < 3 && dp_shards > 1) {
    // 16-bit gradients beside the main gradients (FrameworkSpec::ddp_bucket_bytes_per_param).
    mb.grads_bytes += tr.framework.ddp_bucket_bytes_per_param * shard.trainable;
  }
  const double layers = std::max(1.0, static_cast<double>(StageLayers(job, stage)));
  const bool keeps_gathered = FsdpKeepsStageGathered(job);
  if (keeps_gathered) {
    // The stage's weights stay gathered from its first forward to the step's last backward
    // (torchtitan under pipelining: reshard_after_forward = not pp_enabled), beside the shards.
    mb.weights_bytes += gathered_bytes * shard.Total();
  } else if (zero >= 3) {
    // FSDP/ZeRO-3 gathers one layer at a time and prefetches the next: two unsharded layers.
    mb.weights_bytes += 2.0 * gathered_bytes * shard.Total() / layers;
  }
  if (QuantizedLinears(tr.precision) && !tr.framework.fp8_weight_cast_every_microbatch) {
    // Quantized linears on a stack that casts the weights once per step: Megatron-Core passes
    // is_first_microbatch, and Transformer Engine keeps each linear's quantized weight and its
    // transpose in a workspace (get_weight_workspace, cache_name "weight") from the step's
    // first micro-batch to the next step's, for every layer of the stage; under ZeRO-3 only the
    // gathered layers have them. A stack that casts every micro-batch holds one layer's copies
    // at a time (a per-layer temporary, not counted).
    const StageLayerMix mix = StageLayerCounts(job, stage);
    double linear_params = mix.dense * LayerParamsPerGpu(job, false).Total();
    if (job.model.is_moe()) linear_params += mix.moe * LayerParamsPerGpu(job, true).Total();
    const QuantizedCast cast = QuantizedCastOf(tr.precision);
    // fp8 parameters (training.fp8_param_gather): the layers' weights are stored in fp8, 1 byte
    // less each (sharded, and gathered, under ZeRO-3), and the fp8 weight is the parameter, so
    // only its transpose is cached; so too for a LoRA base stored in fp8 (counted as stored
    // above).
    const double fp8_params = tr.fp8_param_gather ? 1.0 : 0.0;
    const bool stored_fp8 =
        tr.fp8_param_gather || (tr.lora.enabled && tr.lora.base == BaseWeights::kFp8);
    const double stored_shards = shard_is_master ? 0.0 : 1.0 / dp_shards;
    mb.weights_bytes -=
        fp8_params * linear_params * (zero >= 3 ? stored_shards + 2.0 / layers : 1.0);
    mb.weights_bytes += cast.layer_share * (cast.weight_copy_bytes - (stored_fp8 ? 1.0 : 0.0)) *
                        linear_params * (zero >= 3 ? 2.0 / layers : 1.0);
  }
  if (zero >= 2 && dp_shards > 1) {
    // Sharded gradients are reduce-scattered one layer (wrap unit, bucket) at a time during
    // backward, so two unsharded layer gradients are live: the one whose reduce-scatter runs, in
    // the reduction's dtype (MainGradBytesPerParam), and the next one that backward is
    // producing, in the compute dtype. PyTorch FSDP _post_backward_hook casts the unsharded
    // gradient to reduce_dtype and reduce-scatters it on its own stream while the next unit's
    // backward runs; DeepSpeed ZeRO-2 and Megatron-FSDP reduce bucket by bucket the same way.
    const double compute_bytes = IsFp32(tr.precision) ? 4.0 : 2.0;
    // Under pipelining a stage that keeps its weights gathered reduce-scatters only after the
    // step's last backward: the backwards before it accumulate every layer's unsharded gradient
    // in the reduction's dtype (PyTorch FSDP2 post_backward without reduce_grads:
    // to_accumulated_grad_if_needed), beside the layer whose gradient backward is producing.
    const double reducing = keeps_gathered ? shard.trainable : shard.trainable / layers;
    mb.grads_bytes += grad_bytes * reducing + compute_bytes * shard.trainable / layers;
  }
  // Full recomputation re-materialises one layer at a time during backward; a selective
  // recomputation of modules one layer's discarded outputs, the larger of a MoE and a dense
  // layer's where the stage has both kinds.
  const StageLayerMix stage_layers = StageLayerCounts(job, stage);
  const double recompute_working =
      tr.recompute == Recompute::kFull
          ? LayerActivationBytes(job, job.model.is_moe(), Recompute::kNone)
          : std::max(stage_layers.moe > 0 ? RerunModuleBytes(job, true) : 0.0,
                     stage_layers.dense > 0 ? RerunModuleBytes(job, false) : 0.0);
  mb.activations_bytes = StageActivationBytes(job, act, stage) + recompute_working;
  if (stage == par.pp - 1) {
    // Logits and cross-entropy buffers of one micro-batch while its loss runs, vocabulary split
    // over TP: the stack's bytes per logit (FrameworkSpec::LossBytesPerLogit: 16-bit logits +
    // fp32 copy, + a second fp32 buffer where the max is subtracted out of place; its
    // vocabulary-parallel loss's with tp > 1) x sbv/t.
    const double sb = static_cast<double>(tr.seq_len) / static_cast<double>(par.cp) *
                      static_cast<double>(tr.micro_batch_size);
    mb.logits_bytes = tr.framework.LossBytesPerLogit(par.tp) * sb *
                      static_cast<double>(job.model.vocab_size) / static_cast<double>(par.tp);
  }
  mb.overhead_bytes =
      BytesOutsideAllocator(job) + job.overhead.fragmentation * mb.activations_bytes;
  mb.peak_bytes = mb.weights_bytes + mb.grads_bytes + mb.optimizer_bytes + mb.activations_bytes +
                  mb.logits_bytes + mb.overhead_bytes;
  mb.capacity_bytes = UsableBytes(gpu, job.overhead);
  mb.fits = mb.peak_bytes <= mb.capacity_bytes;
  return mb;
}

}  // namespace

MemoryBreakdown StageMemory(const JobSpec& job, const GpuSpec& gpu, int64_t stage) {
  return StageMemoryWith(job, gpu, JobLayerActivations(job), stage);
}

MemoryBreakdown EstimateMemory(const JobSpec& job, const GpuSpec& gpu) {
  const int64_t pp = job.parallel.pp;
  const LayerActivations act = JobLayerActivations(job);
  // Middle stage s repeats stage s-1 (also a middle stage) when every chunk has the same layers:
  // same parameters, same bytes per chunk, and no schedule keeps more in flight on a later stage.
  // Layers differ between middle stages only where dense layers precede MoE layers, or where
  // stage_layers gives each stage its own count.
  const bool mixed = (job.model.is_moe() && job.model.moe_first_dense_layers > 0) ||
                     !job.parallel.stage_layers.empty();
  auto repeats_previous = [&](int64_t s) {
    if (s < 2 || s > pp - 2) return false;
    if (!mixed) return true;
    for (int64_t chunk = 0; chunk < job.parallel.vpp; ++chunk) {
      const StageLayerMix a = ChunkLayerCounts(job, s, chunk);
      const StageLayerMix b = ChunkLayerCounts(job, s - 1, chunk);
      if (a.dense != b.dense || a.moe != b.moe) return false;
    }
    return true;
  };
  MemoryBreakdown peak;
  for (int64_t s = 0; s < pp; ++s) {
    if (repeats_previous(s)) continue;
    MemoryBreakdown stage = StageMemoryWith(job, gpu, act, s);
    if (s == 0 || stage.peak_bytes > peak.peak_bytes) peak = stage;
  }
  return peak;
}

}  // namespace gpuplan

#include "simulator/memory.h"

#include <algorithm>

#include "simulator/pipeline.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

// Bytes per parameter of 4-bit NF4 storage with double quantisation: 4 bits + ~0.127 bits of
// quantisation constants (Dettmers et al. 2023, "QLoRA", Sec. 3).
constexpr double kNf4BytesPerParam = 4.127 / 8.0;

bool IsFp32(Precision p) { return p == Precision::kFp32 || p == Precision::kTf32; }

}  // namespace

ModelStateBytes ZeroModelStateBytes(double params, double dp_shards, int zero_stage,
                                    Precision precision, bool cpu_offload) {
  const bool fp32 = IsFp32(precision);
  ModelStateBytes b;
  b.weights = (fp32 ? 4.0 : 2.0) * params;
  b.grads = (fp32 ? 4.0 : 2.0) * params;
  b.optimizer = (fp32 ? 8.0 : 12.0) * params;
  if (zero_stage >= 1) b.optimizer /= dp_shards;
  if (zero_stage >= 2) b.grads /= dp_shards;
  if (zero_stage >= 3) b.weights /= dp_shards;
  if (cpu_offload) b.optimizer = 0;
  return b;
}

double LayerActivationBytes(const JobSpec& job, bool moe_layer, Recompute recompute) {
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

  // Layer inputs in TP-replicated regions: two norm inputs (2sbh each), QKV and FC1 inputs
  // (2sbh each), two dropout masks (1 byte each). Sequence parallelism splits them by t.
  const double replicated = sb * h * (4.0 + 2.0 + 2.0 + (dropout ? 2.0 : 0.0));
  const double full_input = 2.0 * sb * h;  // what full recomputation keeps per layer

  // TP-split tensors: Q, K, V and the out-projection input.
  double split = 2.0 * sb * (q + 2.0 * kv) + 2.0 * sb * q;
  // Core attention: unfused keeps softmax output (2), dropout mask (1) and output (2) per score;
  // fused attention keeps only the fp32 log-sum-exp per query row (Dao et al. 2022, Sec. 3.1).
  const double scores = a * sb * s_full;
  const double core =
      tr.attention == AttentionImpl::kUnfused ? (dropout ? 5.0 : 2.0) * scores : 4.0 * sb * a;
  // MLP intermediates: GELU keeps its input and FC2's input (2sbf each); SwiGLU keeps gate, up
  // and the product (2sbf each). MoE: every token's top-k experts (+ shared) keep theirs, plus
  // the dispatched copy of the token (2sbh each).
  const double per_mlp = (m.mlp == MlpKind::kSwiGlu ? 6.0 : 4.0);
  if (moe_layer) {
    const double active = static_cast<double>(m.moe_top_k + m.moe_shared_experts);
    split += active * (per_mlp * sb * static_cast<double>(m.ExpertFfn()) + 2.0 * sb * h);
  } else {
    split += per_mlp * sb * static_cast<double>(m.ffn_hidden_size);
  }

  const bool sp = par.sequence_parallel && par.tp > 1;
  const double replicated_share = sp ? replicated / t : replicated;
  switch (recompute) {
    case Recompute::kFull:
      return scale * (sp ? full_input / t : full_input);
    case Recompute::kSelective:
      // Core attention is recomputed: its s^2 tensors are not stored (Korthikanti Sec. 5).
      return scale * (replicated_share + split / t +
                      (tr.attention == AttentionImpl::kUnfused ? 0.0 : core / t));
    case Recompute::kNone:
      break;
  }
  return scale * (replicated_share + (split + core) / t);
}

MemoryBreakdown EstimateMemory(const JobSpec& job, const GpuSpec& gpu) {
  const ParallelSpec& par = job.parallel;
  const TrainingSpec& tr = job.training;
  const ModelSpec& m = job.model;
  const int64_t micro = MicrobatchesPerStep(job);
  const double dp_shards = static_cast<double>(par.dp * par.cp);
  const double expert_shards = std::max(1.0, dp_shards / static_cast<double>(par.ep));
  const int zero = par.fsdp ? 3 : par.zero_stage;
  const double moe_fraction =
      static_cast<double>(m.MoeLayers()) / static_cast<double>(m.num_layers);
  const bool has_moe = moe_fraction > 0;
  const double layer_act =
      (1.0 - moe_fraction) * LayerActivationBytes(job, false, tr.recompute) +
      (has_moe ? moe_fraction * LayerActivationBytes(job, true, tr.recompute) : 0);
  // Full recomputation re-materialises one layer at a time during backward.
  const double recompute_working =
      tr.recompute == Recompute::kFull ? LayerActivationBytes(job, has_moe, Recompute::kNone) : 0;
  const double sb = static_cast<double>(tr.seq_len) / static_cast<double>(par.cp) *
                    static_cast<double>(tr.micro_batch_size);

  MemoryBreakdown best;
  const StageKind stages[2] = {par.pp == 1 ? StageKind::kOnly : StageKind::kFirst,
                               par.pp == 1 ? StageKind::kOnly : StageKind::kLast};
  for (int i = 0; i < (par.pp == 1 ? 1 : 2); ++i) {
    const StageKind kind = stages[i];
    const ShardParams shard = ParamsPerGpu(job, kind);
    const int64_t stage_index = StageIndex(job, kind);
    const double layers_per_stage = static_cast<double>(StageLayers(job, stage_index));
    MemoryBreakdown mb;
    if (tr.lora.enabled) {
      // Frozen base: weights only (bf16, or NF4 for QLoRA); adapters carry full Adam state.
      const double base_bytes =
          tr.lora.base == BaseWeights::kNf4 ? kNf4BytesPerParam : (IsFp32(tr.precision) ? 4 : 2);
      const ModelStateBytes adapters =
          ZeroModelStateBytes(shard.trainable, dp_shards, zero, tr.precision, par.cpu_offload);
      mb.weights_bytes =
          base_bytes * shard.Total() / (zero >= 3 ? dp_shards : 1.0) + adapters.weights;
      mb.grads_bytes = adapters.grads;
      mb.optimizer_bytes = adapters.optimizer;
    } else {
      const ModelStateBytes dense =
          ZeroModelStateBytes(shard.dense, dp_shards, zero, tr.precision, par.cpu_offload);
      const ModelStateBytes expert =
          ZeroModelStateBytes(shard.expert, expert_shards, zero, tr.precision, par.cpu_offload);
      mb.weights_bytes = dense.weights + expert.weights;
      mb.grads_bytes = dense.grads + expert.grads;
      mb.optimizer_bytes = dense.optimizer + expert.optimizer;
    }
    if (zero >= 3) {
      // FSDP/ZeRO-3 gathers one layer at a time and prefetches the next: two unsharded layers.
      const double layer_params = shard.Total() / std::max(1.0, layers_per_stage);
      mb.weights_bytes += 2.0 * 2.0 * layer_params;
    }
    const double in_flight =
        MicrobatchesInFlight(par.schedule, par.pp, micro, par.vpp, stage_index);
    mb.activations_bytes = layers_per_stage * layer_act * in_flight + recompute_working;
    if (kind == StageKind::kLast || kind == StageKind::kOnly) {
      // Logits and cross-entropy buffers of one micro-batch, vocabulary split over TP:
      // 4sbv/t (Korthikanti et al. 2022 Sec. 4.3, output layer + loss).
      mb.logits_bytes = 4.0 * sb * static_cast<double>(m.vocab_size) / static_cast<double>(par.tp);
    }
    mb.overhead_bytes =
        job.overhead.framework_bytes + job.overhead.fragmentation * mb.activations_bytes;
    mb.peak_bytes = mb.weights_bytes + mb.grads_bytes + mb.optimizer_bytes + mb.activations_bytes +
                    mb.logits_bytes + mb.overhead_bytes;
    if (mb.peak_bytes > best.peak_bytes) best = mb;
  }
  best.capacity_bytes = gpu.memory_bytes;
  best.fits = best.peak_bytes <= best.capacity_bytes;
  return best;
}

}  // namespace gpuplan

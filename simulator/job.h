// A training job: model, cluster, training settings and parallel layout. This is what
// `gpuplan simulate --spec` reads (docs/JOB_SPEC.md) and what the cost model evaluates.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hardware-db/framework_spec.h"
#include "hardware-db/hardware.h"
#include "simulator/model.h"

namespace gpuplan {

enum class Recompute { kNone, kSelective, kFull };
/// The submodules a selective recomputation re-runs, a bitmask (Megatron-Core
/// --recompute-modules, megatron/core/transformer/transformer_config.py recompute_modules;
/// default core_attn). kRecomputeCoreAttn: the core attention, checkpointed (its input kept, its
/// forward run again before its backward). kRecomputeLayernorm: the norms that are modules of
/// their own, their outputs discarded after use and recomputed (output-discarding checkpoint);
/// Transformer Engine fuses the input norm into the QKV linear and a dense layer's pre-MLP norm
/// into FC1 (IdentityOp in gpt_layer_specs.py), so only a MoE layer's pre-MLP norm qualifies.
/// kRecomputeMoeAct: the routed experts' activation function, its output (FC2's input)
/// discarded and recomputed (experts.py). kRecomputeMlp: a dense layer's MLP, checkpointed
/// (transformer_layer.py _forward_mlp: tensor_parallel.checkpoint(self.mlp, ...), not in MoE
/// layers): its input kept, and its pre-MLP norm (fused into FC1), FC1, activation and FC2 with
/// their TP collectives run again before its backward. Megatron's other modules (moe,
/// shared_experts, mla_up_proj) are not modelled.
enum RecomputeModule : uint32_t {
  kRecomputeCoreAttn = 1,
  kRecomputeLayernorm = 2,
  kRecomputeMoeAct = 4,
  kRecomputeMlp = 8,
};
/// Pipeline schedules; pipeline_schedule.h holds their table (names, pass orders, sources).
enum class Schedule { kGpipe, k1F1B, kInterleaved, kZeroBubbleH1 };
/// How attention is computed: fused FlashAttention-style kernels (no s^2 tensor in HBM) or the
/// unfused softmax path of earlier Megatron/PyTorch (scores materialised, read and written).
enum class AttentionImpl { kFlash, kUnfused };
/// Storage of frozen base weights under LoRA (bytes per parameter: FrozenBaseBytesPerParam in
/// simulator/memory.h). kSame: the training precision's weights (4 B for fp32/tf32, else 2 B);
/// kBf16, kFp16: 2 B; kFp8: 1 B (weights kept only in fp8, as Transformer Engine's
/// fp8_model_init creates them); kNf4: 4-bit NormalFloat with double
/// quantisation (QLoRA, Dettmers et al. 2023, Sec. 3).
enum class BaseWeights { kSame, kBf16, kFp16, kFp8, kNf4 };
/// How a MoE layer moves token copies to their experts over the expert-parallel ranks
/// (simulator/moe_dispatch.h). kAllToAll: NCCL all-to-all of every routed copy (Megatron-Core
/// --moe-token-dispatcher-type alltoall). kDeepEp: DeepEP's normal kernels (Megatron-Core
/// --moe-token-dispatcher-type flex --moe-flex-dispatcher-backend deepep), which send a token
/// once per destination node over the network and forward it over NVLink inside the node.
enum class MoeDispatcher { kAllToAll, kDeepEp };

struct ClusterSpec {
  std::string gpu;  ///< GpuSpec id
  int64_t num_gpus = 0;
  int64_t gpus_per_node = 0;
  std::string inter_node;  ///< NetworkSpec id
};

/// Low-rank adaptation: only adapters of rank `rank` on the targeted projections are trained.
struct LoraSpec {
  bool enabled = false;
  int64_t rank = 0;
  /// Targeted projections as a bitmask of LoraTarget.
  uint32_t targets = 0;
  BaseWeights base = BaseWeights::kSame;

  bool operator==(const LoraSpec&) const = default;
};
enum LoraTarget : uint32_t {
  kLoraQ = 1,
  kLoraK = 2,
  kLoraV = 4,
  kLoraO = 8,
  kLoraGate = 16,
  kLoraUp = 32,
  kLoraDown = 64,
  kLoraAttention = kLoraQ | kLoraK | kLoraV | kLoraO,
  kLoraAll = kLoraAttention | kLoraGate | kLoraUp | kLoraDown,
};

/// Tokens per sequence when a job does not give one (job spec training.seq_len, `--seq-len` of
/// `gpuplan simulate` and `gpuplan plan`): Llama 3's initial pre-training sequence length
/// (Dubey et al. 2024, "The Llama 3 Herd of Models", Sec. 3.4.1: "sequences of length 4,096").
inline constexpr int64_t kDefaultSeqLen = 4096;

struct TrainingSpec {
  int64_t seq_len = 0;
  int64_t global_batch_size = 0;  ///< sequences per optimizer step
  int64_t micro_batch_size = 1;   ///< sequences per micro-batch per model replica
  Precision precision = Precision::kBf16;
  Recompute recompute = Recompute::kNone;
  /// With recompute kSelective: what it re-runs (RecomputeModule bits; Recomputes).
  uint32_t recompute_modules = kRecomputeCoreAttn;
  AttentionImpl attention = AttentionImpl::kFlash;
  bool dropout = false;  ///< dropout layers (their masks are kept for backward)
  /// Main gradients accumulated and data-parallel-reduced in bf16, 2 bytes, instead of fp32
  /// (Megatron-LM --grad-reduce-in-bf16; NeMo grad_reduce_in_fp32=False, as NVIDIA's MLPerf
  /// Training Llama 3.1 runs set it). Needs a 16-bit or quantized precision.
  bool grad_reduce_bf16 = false;
  /// fp8 training with the linear layers' weights stored in fp8 (Megatron-LM
  /// --fp8-param-gather, Transformer Engine fp8 model parameters): 1 byte per weight instead of
  /// 2 and its transpose as the only cached copy, and the ZeRO-1/2/3 all-gather of those weights
  /// in fp8. Needs precision fp8 and sharded data parallelism (zero_stage >= 1 or fsdp), as
  /// Megatron-LM asserts.
  bool fp8_param_gather = false;
  /// Activation offload to host memory (Megatron-Core --cpu-offloading
  /// --cpu-offloading-num-layers, Transformer Engine's CPU offload context): the stored
  /// activations of the first this-many transformer layers go to host memory during forward and
  /// come back for backward, over the GPU's host link (GpuSpec::HostLinkBytesPerS: NVLink-C2C on
  /// a Grace superchip, else PCIe). 0: none. Megatron-Core allows [0, num_layers) layers, pp 1, no
  /// recomputation (transformer_config.py), and a stack that runs it
  /// (FrameworkSpec::activation_offload).
  int64_t activation_offload_layers = 0;
  LoraSpec lora;
  /// The training stack (hardware-db/data/frameworks.json, resolved by ParseJobSpec): what it
  /// keeps in memory beyond the model, its host cost, and what it can run (StackRunsLayout).
  FrameworkSpec framework;
  MoeDispatcher moe_dispatcher = MoeDispatcher::kAllToAll;
  /// Routed token copies of the busiest expert-parallel rank over the mean (>= 1). The slowest
  /// rank paces the layer: its expert GEMMs, its share of the dispatch and its activations
  /// grow by this factor when ep > 1. 1: balanced, as Megatron-Core's performance runs force
  /// (--moe-router-force-load-balancing); a router's per-expert token counts give the real one.
  double moe_load_imbalance = 1.0;
};

/// Whether `tr` recomputes `module`: a selective recomputation that names it.
inline bool Recomputes(const TrainingSpec& tr, RecomputeModule module) {
  return tr.recompute == Recompute::kSelective && (tr.recompute_modules & module) != 0;
}

struct ParallelSpec {
  int64_t tp = 1, pp = 1, dp = 1, cp = 1, ep = 1, vpp = 1;
  /// Expert tensor parallelism: the ranks that split each routed expert's matrices (Megatron-LM
  /// --expert-tensor-parallel-size, MoE Parallel Folding, Liu et al. 2025). 0: the same as tp,
  /// Megatron's default. Divides tp: expert layers regroup each stage's tp x cp x dp ranks as
  /// etp x ep x expert-dp, etp fastest.
  int64_t etp = 0;
  bool sequence_parallel = false;
  int zero_stage = 0;  ///< 0..3 (DeepSpeed ZeRO / Megatron distributed optimizer = 1)
  bool fsdp = false;   ///< PyTorch FSDP FULL_SHARD (same traffic as ZeRO-3)
  /// Hybrid sharding (HSDP): ZeRO-3/FSDP shards over dp/dp_replicate x cp ranks and keeps
  /// dp_replicate replicas of that shard group, whose gradients are all-reduced across the
  /// replicas (PyTorch FSDP HYBRID_SHARD and FSDP2's 2-D mesh, torchtitan
  /// --parallelism.data_parallel_replicate_degree, Megatron-FSDP
  /// --num-distributed-optimizer-instances with --outer-dp-sharding-strategy no_shard, DeepSpeed
  /// MiCS mics_shard_size). 1: one shard group over all dp x cp ranks. Divides dp; > 1 needs
  /// zero_stage 3.
  int64_t dp_replicate = 1;
  bool cpu_offload = false;  ///< optimizer state and master weights in host memory (ZeRO-Offload)
  Schedule schedule = Schedule::k1F1B;
  bool dp_overlap = true;   ///< gradient reduction overlapped with backward in buckets
  bool tp_overlap = false;  ///< TP collectives overlapped with GEMMs (Megatron --tp-comm-overlap)
  /// Without tp_overlap: whether the column-parallel layers' backward runs its TP collectives
  /// asynchronously beside its data- and weight-gradient GEMMs (FrameworkSpec::
  /// tp_backward_overlap; Megatron-LM before 2022 and Megatron-DeepSpeed by default did not:
  /// --no-async-tensor-model-parallel-allreduce). Unset: the training stack's behaviour.
  std::optional<bool> tp_backward_overlap;
  /// tp_backward_overlap as given, else the stack's.
  bool TpBackwardOverlap(const FrameworkSpec& framework) const {
    return tp_backward_overlap.value_or(framework.tp_backward_overlap);
  }
  /// Context parallelism's K/V ring exchange runs beside the attention kernels (Transformer
  /// Engine's and torchtitan's ring attention: each step's transfer beside the previous step's
  /// kernel). false: every transfer is waited for, as gpuplan's validator runs it
  /// (validator/executed_job.h).
  bool cp_overlap = true;
  /// Expert-parallel dispatch and combine of one micro-batch overlapped with another
  /// micro-batch's computation: Megatron-Core's combined 1F1B schedule runs each layer's forward
  /// of micro-batch N beside its backward of micro-batch N-1 on two streams
  /// (--overlap-moe-expert-parallel-comm --delay-wgrad-compute; simulator/ep_overlap.h).
  /// Needs a MoE model with ep > 1, no full recomputation, and the interleaved schedule when
  /// pp > 1.
  bool ep_overlap = false;
  /// The embedding takes one layer slot of the first pipeline stage, and the LM head with the
  /// loss one slot of the last (Megatron-LM --account-for-embedding-in-pipeline-split and
  /// --account-for-loss-in-pipeline-split; Llama 3 405B ran 126 layers on 16 stages this way,
  /// Dubey et al. 2024 Sec. 3.3.2). Needs pp > 1.
  bool embedding_slot = false;
  bool loss_slot = false;
  /// Transformer layers of the first / of the last pipeline stage, 0 when not given (Megatron-LM
  /// --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers); the other stages
  /// share the remaining layers evenly. Needs pp > 1; excludes embedding_slot and loss_slot.
  int64_t first_stage_layers = 0;
  int64_t last_stage_layers = 0;
  /// Transformer layers of every pipeline stage (pp entries, summing to model.num_layers; a
  /// stage may hold none), or empty for the splits above. The first stage always holds the
  /// embedding and the last the LM head and the loss. Set by the job spec or by the stack's own
  /// split (FrameworkTraits::pipeline_split: nanotron balances its cost estimate per stage).
  /// Needs vpp = 1; excludes the slots and first/last_stage_layers.
  std::vector<int64_t> stage_layers;

  /// Whether data-parallel ranks shard the model state (FSDP, or ZeRO stage >= 1).
  bool ShardsModelState() const { return fsdp || zero_stage >= 1; }
  /// The ZeRO stage the layout runs: 3 with FSDP (FULL_SHARD), else zero_stage.
  int ZeroStage() const { return fsdp ? 3 : zero_stage; }
  /// Data-parallel ranks of one shard group (HSDP; dp without it).
  int64_t DpShard() const { return dp / dp_replicate; }
  /// Ranks that shard the model state (ZeRO >= 1): DpShard() x cp.
  int64_t ShardRanks() const { return DpShard() * cp; }
  /// Expert tensor-parallel ranks: etp, or tp when it is not set.
  int64_t ExpertTp() const { return etp > 0 ? etp : tp; }
  /// Expert-data-parallel ranks, which hold the same experts: tp x cp x dp / (etp x ep).
  int64_t ExpertDp() const { return std::max<int64_t>(1, tp * cp * dp / (ExpertTp() * ep)); }
  /// Ranks that shard the expert states (ZeRO >= 1): the expert-DP ranks of one shard group,
  /// whose tp x ShardRanks() ranks regroup as etp x ep x this (ExpertDp() without HSDP).
  int64_t ExpertShardRanks() const {
    return std::max<int64_t>(1, tp * ShardRanks() / (ExpertTp() * ep));
  }
};

/// OverheadSpec::allocator_headroom's default: the share of a GPU's memory (what the driver
/// reports) that PyTorch's caching allocator cannot hand out near a full GPU, where segments
/// holding freed blocks of other sizes and the driver's own allocations are in the way. It is the
/// share that reading the H100's "80 GB" as 80·10⁹ bytes set aside of its 81,559 MiB until
/// 2026-11-30 (1 − 80·10⁹ / 85.52·10⁹), kept because the layout sweep's crashes support it
/// (docs/ACCURACY.md, "Memory"): they begin at 0.90–0.95 of the true capacity, and on a 0.005
/// grid 85% of the crashed rows are first predicted to fail at 0.065 (465 of 547; 449 with no
/// headroom, 461 at 0.06), while 7 of the 1,026 rows that ran are (4 with none).
inline constexpr double kAllocatorHeadroom = 0.0646;

/// Memory the framework needs beyond the model state (stated parameters, see docs/METRICS.md).
struct OverheadSpec {
  double framework_bytes = 2.0e9;  ///< CUDA context, cuBLAS/NCCL workspaces, allocator reserve
  double fragmentation = 0.10;     ///< extra fraction of activation memory lost to fragmentation
  /// Fraction of the GPU's memory (GpuSpec::memory_bytes, what the driver reports) that PyTorch's
  /// caching allocator cannot hand out near a full GPU: a job fits when its peak is within the
  /// rest (MemoryBreakdown::capacity_bytes, UsableBytes in simulator/memory.h).
  double allocator_headroom = kAllocatorHeadroom;
};

struct JobSpec {
  ModelSpec model;
  ClusterSpec cluster;
  TrainingSpec training;
  ParallelSpec parallel;
  OverheadSpec overhead;
};

}  // namespace gpuplan

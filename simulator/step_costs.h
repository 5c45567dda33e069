// The durations of the pieces of one training step on one GPU: per layer and micro-batch the
// kernels of forward, backward and recomputation, the collectives each needs, and the per-stage
// extras (embedding, LM head, pipeline hops, gradient synchronisation, optimizer). The analytic
// model (cost_model.h) adds them up in closed form; the event simulator (event_sim.h) places
// them on streams and links. Both read these numbers, so they cannot drift apart.
#pragma once

#include <algorithm>

#include "hardware-db/hardware.h"
#include "simulator/collective.h"
#include "simulator/gemm_time.h"
#include "simulator/job.h"
#include "simulator/shard.h"

namespace gpuplan {

/// Stated parameters of the model (documented in docs/METRICS.md).
/// Slow-down of computation while communication kernels run beside it on the same SMs: each
/// second of overlapped communication costs this many seconds of compute (Galvatron uses a
/// 1.1-1.3x slow-down coefficient for overlapped kernels: AFDWang/Hetu-Galvatron
/// docs/en/source/5_search_engine_usage/search_engine_usage.md, commit 98484bc).
inline constexpr double kOverlapInterference = 0.15;
/// Exposed part of communication `comm` overlapped with computation `window` (seconds), with
/// the interference of the communication kernels on the computation: the computation is slowed
/// by kOverlapInterference for every second of communication beside it, and the pair ends when
/// the later of the two does, so a communication-bound pair hides that slow-down
/// (docs/COST_MODEL.md, "Overlap").
inline double ExposedSeconds(double comm, double window) {
  return std::max(comm - window, kOverlapInterference * std::min(comm, window));
}
/// Host-side Adam throughput with ZeRO-Offload (DeepSpeed CPU-Adam): ~1e9 params/s on a
/// 2-socket server (Ren et al. 2021, Table 3 order of magnitude). Stated default.
inline constexpr double kCpuAdamParamsPerSecond = 1.0e9;
/// Optimizer bytes moved per parameter by fused mixed-precision Adam: read fp32 master,
/// momentum, variance and the fp32 main gradient, write the three back and the 16-bit weight
/// copy.
inline constexpr double kAdamBytesPerParam = 4 + 4 + 4 + 4 + 4 + 4 + 4 + 2;

/// FlashAttention backward runs 5 matmuls per block against 2 in forward (it recomputes QK^T):
/// 2.5x forward FLOPs (Dao 2023, Sec. 3.1.2).
inline constexpr double kFlashBackwardRatio = 2.5;

/// One transformer layer, one micro-batch, one GPU (seconds unless the name says otherwise).
struct LayerCosts {
  double fwd_gemm = 0;   ///< projections and MLP GEMMs (+ LoRA adapters)
  double fwd_attn = 0;   ///< core attention
  double fwd_other = 0;  ///< memory-bound kernels (norms, residuals, activation, rotary), and
                         ///< the wait for a host-bound stack (FrameworkTraits)
  double bwd = 0;        ///< all backward kernels (and the wait for a host-bound stack)
  double bwd_attn = 0;   ///< the core-attention part of bwd
  double wgrad = 0;      ///< the weight-gradient part of bwd (zero-bubble "W" pass)
  double recompute = 0;  ///< forward kernels re-run during backward
  double tp_comm = 0;    ///< TP communication of forward + backward (+ recompute)
  double tp_fwd = 0;     ///< its forward part
  double tp_bwd = 0;     ///< its backward part
  /// Its recomputation's part: all of tp_fwd again under full recomputation, the dense MLP's
  /// collectives under recompute_modules mlp, else 0.
  double tp_recompute = 0;
  /// CP ring exchange of every pass: forward and a full recomputation each pass the K/V chunk
  /// around the ring once (cp_pass), backward passes K, V and their gradients (2 cp_pass).
  double cp_comm = 0;
  double cp_pass = 0;  ///< one ring pass: cp - 1 hops of the K/V chunk
  /// Expert all-to-alls (dispatch and combine) of every pass: forward, backward and a full
  /// recomputation's repeated forward.
  double ep_comm = 0;
  /// What a micro-batch waits for of ep_comm: all of it, or with parallelism.ep_overlap the
  /// part the paired passes leave exposed (ep_overlap.h), averaged over the step's passes.
  double ep_exposed = 0;
  double ep_pass = 0;    ///< ep_exposed per pass (forward, backward, recomputation alike)
  double mlp_fwd = 0;    ///< the MLP's part of Forward(): its GEMMs and activation
  double mlp_bwd = 0;    ///< the MLP's part of bwd (with its weight gradients)
  double mlp_wgrad = 0;  ///< the MLP's part of wgrad
  double fwd_flops = 0;  ///< FLOPs of the forward kernels (trace annotation)
  double tp_bytes = 0;   ///< nccl-tests size of one TP collective
  double cp_bytes = 0;   ///< one K/V chunk of the ring
  double ep_bytes = 0;   ///< one dispatch (or combine) all-to-all
  double Forward() const { return fwd_gemm + fwd_attn + fwd_other; }
  double Compute() const { return Forward() + bwd + recompute; }
};

/// Everything one step is made of, for one GPU of the job.
struct StepCosts {
  LayerCosts dense;                     ///< a dense-MLP layer
  LayerCosts moe;                       ///< a mixture-of-experts layer (zero for dense models)
  double embed_fwd = 0, embed_bwd = 0;  ///< first stage: lookup and its backward scatter
  double head_fwd = 0, head_bwd = 0;    ///< last stage: LM head GEMM and cross-entropy
  double p2p = 0;                       ///< one activation (or gradient) hop between stages
  double p2p_bytes = 0;
  double grad_bytes_per_param = 4;  ///< reduced gradient element size (MainGradBytesPerParam)
  /// Bytes per parameter of the ZeRO/FSDP weight all-gathers: 2 (16-bit), 4 for fp32/tf32
  /// training, or with training.fp8_param_gather 1 for the layers' weights and 2 for the
  /// embedding, LM head and norms, averaged over the model's parameters.
  double weight_gather_bytes_per_param = 2;
  /// ZeRO-1 on a stack that all-reduces the whole gradient buffer after the last backward
  /// (Zero1GradReduction::kAllReduceAfterBackward, nanotron): GradReduceSeconds is that
  /// all-reduce, and nothing overlaps it.
  bool grads_all_reduced_after_backward = false;
  /// Parameters per DP bucket (GradBucketParams): the analytic model and the event simulator
  /// issue one collective per bucket as the backward fills it; 0 when the stack issues one
  /// collective for all of it (no overlap, or all-reduce after backward).
  double grad_bucket_params = 0;
  GroupLink tp_link, cp_link, ep_link, pp_link;  ///< where each group's ranks sit (topology.h)
  GroupLink dp_link;                             ///< gradient group of dense parameters (dp x cp)
  /// ZeRO-3/FSDP: the ranks one layer is sharded over (dp/dp_replicate x cp), and the replicas
  /// of that group (dp_replicate ranks, one per shard group; HSDP).
  GroupLink shard_link, replicate_link;
  GroupLink expert_dp_link;  ///< gradient group of expert parameters
  /// ZeRO-3/FSDP on expert parameters: the expert-DP ranks of one shard group
  /// (ParallelSpec::ExpertShardRanks) and, with HSDP, the replicas of that group.
  GroupLink expert_shard_link, expert_replicate_link;
};

/// The step's pieces for `job` (validated) on `gpu`/`net` at `rates`. Pure arithmetic.
StepCosts ComputeStepCosts(const JobSpec& job, const GpuSpec& gpu, const NetworkSpec& net,
                           const DeviceRates& rates);

/// Gradient reduction of `dense_params` and `expert_params` trainable parameters over the step's
/// DP groups: all-reduce (ZeRO 0, or costs.grads_all_reduced_after_backward) or reduce-scatter
/// (ZeRO 1/2) of the gradients at costs.grad_bytes_per_param, as one collective (the event
/// simulator calls it per bucket). Zero for ZeRO-3, which synchronises per layer
/// (FsdpReduceSeconds).
double GradReduceSeconds(const StepCosts& costs, int zero_stage, double dense_params,
                         double expert_params);

/// The all-gather of the updated weights (at costs.weight_gather_bytes_per_param) after the
/// optimizer step over the step's DP
/// groups (ZeRO 1/2, Megatron distributed optimizer), as one collective (the event simulator
/// calls it per bucket); zero for ZeRO 0 and 3.
double WeightGatherSeconds(const StepCosts& costs, int zero_stage, double dense_params,
                           double expert_params);

/// GradReduceSeconds as the stack issues it when it overlaps the reduction with the backward:
/// in buckets of costs.grad_bucket_params, each full bucket and the remainder a reduction of its
/// own that pays its own latency (PyTorch DDP, Megatron-LM --overlap-grad-reduce); a bucket holds
/// dense and expert parameters in the proportion given, each part reduced over its own group.
/// One reduction when grad_bucket_params is 0.
double BucketedGradReduceSeconds(const StepCosts& costs, int zero_stage, double dense_params,
                                 double expert_params);

/// WeightGatherSeconds in the buckets of BucketedGradReduceSeconds (Megatron-Core's
/// --overlap-param-gather gathers the distributed optimizer's buckets one by one).
double BucketedWeightGatherSeconds(const StepCosts& costs, int zero_stage, double dense_params,
                                   double expert_params);

/// Forward passes of the core attention (with its context-parallel ring) that recomputation
/// runs again in the backward: one under full (the layer) and selective recomputation of the
/// core attention (kRecomputeCoreAttn), none otherwise.
inline double RecomputedAttentionForwards(const TrainingSpec& tr) {
  return tr.recompute == Recompute::kFull || Recomputes(tr, kRecomputeCoreAttn) ? 1.0 : 0.0;
}

/// ZeRO-3/FSDP: all-gathers of each wrap unit's weights per micro-batch: before its forward and
/// again before its backward. Full recomputation's second forward runs inside the backward on the
/// weights the backward gathered, so it gathers nothing more: PyTorch FSDP's pre-forward hook
/// returns early in the pre-backward state ("the pre-backward hook is responsible for the
/// unshard", torch/distributed/fsdp/_fully_shard/_fsdp_state.py; FSDP1 _runtime_utils.py
/// _pre_forward, BACKWARD_PRE) and its post-forward does not reshard; Megatron-FSDP sets
/// PRE_BACKWARD "to skip resharding and unsharding operations when performing activation
/// recomputation" (megatron_fsdp.py _pre_backward); DeepSpeed ZeRO-3 keeps a parameter that is
/// used again within stage3_max_reuse_distance (default 1e9 parameters), which covers a layer's
/// recomputation and backward.
inline constexpr int kFsdpGathersPerMicroBatch = 2;

/// ZeRO-3/FSDP with pipeline parallelism on a stack that keeps each stage's weights gathered
/// (FrameworkSpec::zero3_unsharded_stage_with_pp, torchtitan): sharded data parallelism, pp >= 2.
/// Such a stage gathers each layer once per step, before the first micro-batch's forward, and
/// reduce-scatters each layer's accumulated gradients once, after the step's last backward;
/// it holds the stage's gathered weights and its unsharded gradients (memory.cpp).
bool FsdpKeepsStageGathered(const JobSpec& job);

/// ZeRO-3/FSDP: the all-gather of one layer's parameters (16-bit) once (PyTorch FSDP unshards
/// each wrapped layer before its forward and again before its backward; Zhao et al. 2023,
/// PyTorch FSDP, Sec. 3.3): the dense ones (ShardParams::dense) over the shard group, the
/// routed experts' (ShardParams::expert) over the expert shard group, whose ranks hold them
/// (as memory.cpp shards them; Megatron-FSDP and torchtitan shard experts over expert-DP).
double FsdpGatherSeconds(const StepCosts& costs, const ShardParams& layer);

/// ZeRO-3/FSDP: the gradient reduction of one layer's trainable parameters: a reduce-scatter
/// over the shard group (the experts' over the expert shard group) and, with HSDP, an
/// all-reduce of the rank's gradient shard across the replicas (FSDP HYBRID_SHARD:
/// reduce-scatter intra-group, then all-reduce inter-group; PyTorch FSDP ShardingStrategy
/// docs). All at costs.grad_bytes_per_param.
double FsdpReduceSeconds(const StepCosts& costs, const ShardParams& layer);

/// Parameters per bucket of `job`'s stack when it overlaps its DP communication with the
/// backward (FrameworkSpec::grad_bucket at dp x cp). A bucket given in bytes counts the bytes of
/// the gradients the stack's DDP buckets hold: FrameworkSpec::ddp_bucket_bytes_per_param where
/// it keeps DDP bucket views (PyTorch DDP's bucket_cap_mb counts the .grad tensors' bytes:
/// 16-bit on nanotron), else the job's main-gradient bytes. Under ZeRO-2 on a stack that
/// reduces per layer (FrameworkSpec::zero2_reduces_per_layer: PyTorch FSDP SHARD_GRAD_OP) a
/// bucket is one transformer layer's trainable parameters per GPU (the mean layer).
double GradBucketParams(const JobSpec& job);

/// Whether `job`'s ZeRO-1/2 weight all-gather runs during the next step's first forward pass
/// rather than beside the gradient reduction: DP communication overlapped (dp_overlap), data
/// parallelism present, and a stack that gathers in forward (FrameworkTraits::
/// weight_gather_in_forward, Megatron-Core --overlap-param-gather).
bool WeightGatherInForward(const JobSpec& job);

/// The memory traffic of casting one 16-bit GEMM operand to a quantized precision (Transformer
/// Engine), per element.
struct QuantizedCast {
  double bytes = 0;  ///< a full cast of an operand and its transpose
  /// A norm-fed operand (QKV, FC1 inputs) where the stack's norms write the quantized format
  /// (fp8_norm_fused_cast): only the transpose for fp8; the full cast for fp4, which no norm
  /// writes.
  double norm_fed_bytes = 0;
  double kernels_per_tensor = 1;
  double layer_share = 1;  ///< share of the linear layers that run quantized
  /// Bytes per weight element of its quantized copy and that copy's transpose (column-wise
  /// copy), which Transformer Engine keeps in a workspace when the stack casts the weights once
  /// per step (memory.cpp): fp8 1 + 1; fp4 2 x (0.5 + 1/16).
  double weight_copy_bytes = 0;
  /// Bytes per element of the quantized copy of a linear layer's input that a stack keeping
  /// quantized inputs (FrameworkSpec::quantized_saved_inputs) saves for the weight gradient:
  /// one copy, row- or column-wise. fp8 1 + 1/32 (MXFP8's E8M0 scale per 32 elements, the larger
  /// of Transformer Engine's fp8 recipes: delayed and current scaling keep one fp32 scale per
  /// tensor); fp4 0.5 + 1/16.
  double saved_input_bytes = 0;
};

/// fp8 (delayed scaling): read 2 B, write 1 + 1 (fused cast-transpose), 1 kernel; where a norm
/// writes the fp8 operand only its transpose is made (read 1 B, write 1 B). fp4 (NVFP4, TE's
/// NVFP4BlockScaling, arXiv:2509.25149 Sec. 4): an amax pass for the FP32 per-tensor scale
/// (read 2 B), then the cast writes 4-bit codes plus an E4M3 scale per 16 elements row-wise
/// and column-wise (2 x (0.5 + 1/16) B; the column-wise copy of wgrad's operands goes through
/// the 16x16 random Hadamard transform inside that kernel): 5.125 B and 2 kernels per tensor,
/// on the 1 - kFp4Bf16LayerFraction of layers not kept in bf16. Precondition:
/// QuantizedLinears(precision).
QuantizedCast QuantizedCastOf(Precision precision);

/// The trainable parameters of `stage_params` whose optimizer state this GPU holds and updates:
/// with ZeRO >= 1 or FSDP the dense ones over the shard group (ShardRanks) and the routed
/// experts' over the expert shard group (ExpertShardRanks), as memory.cpp shards them; else all.
double OptimizerShardParams(const JobSpec& job, const ShardParams& stage_params);

/// Optimizer step over `params` trainable parameters held by one GPU: fused Adam streaming
/// kAdamBytesPerParam per parameter, or with ZeRO-Offload host Adam + the round trip over the
/// host link (PCIe, or NVLink-C2C on a Grace superchip: GpuSpec::HostLinkBytesPerS).
double OptimizerSeconds(const StepCosts& costs, const JobSpec& job, const GpuSpec& gpu,
                        const DeviceRates& rates, double params);

}  // namespace gpuplan

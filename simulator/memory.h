// Memory per GPU: model state (weights, gradients, optimizer), activations, buffers, overhead.
#pragma once

#include "hardware-db/hardware.h"
#include "simulator/job.h"

namespace gpuplan {

/// Bytes of model state for `params` parameters on one GPU of a data-parallel group of
/// `dp_shards` ranks. Mixed-precision Adam keeps 2 bytes of fp16/bf16 weights, the main
/// gradients (MainGradBytesPerParam: 4 for bf16, 2 for fp16) and 12 of optimizer state (fp32
/// master weights, momentum, variance) per parameter: 16 in all with fp16 gradients (Rajbhandari
/// et al. 2020, "ZeRO", Sec. 3.1 and Fig. 1), 18 with bf16 and fp32 main gradients. ZeRO stage 1
/// shards the optimizer state, stage 2 also the gradients, stage 3 (= FSDP FULL_SHARD) also the
/// weights. fp32 training keeps 4-byte weights and gradients and 8 bytes of Adam moments. With
/// `cpu_offload` the optimizer state lives in host memory (ZeRO-Offload, Ren et al. 2021).
/// `grad_bytes_per_param`: the main gradients' element size (MainGradBytesPerParam).
struct ModelStateBytes {
  double weights = 0;
  double grads = 0;
  double optimizer = 0;
  double Total() const { return weights + grads + optimizer; }
};
ModelStateBytes ZeroModelStateBytes(double params, double dp_shards, int zero_stage,
                                    Precision precision, bool cpu_offload,
                                    double grad_bytes_per_param);

/// Bytes of one model weight as training stores and gathers it at `precision`: 4 for fp32 and
/// tf32, 2 otherwise (fp8 and fp4 training keep 16-bit weights; Transformer Engine casts them).
double WeightBytesPerParam(Precision precision);

/// Bytes per parameter of the main gradients that are accumulated over micro-batches and
/// reduced over data parallelism. bf16 (and fp8, whose weights are bf16) training accumulates
/// and reduces them in fp32: Megatron-LM forces accumulate_allreduce_grads_in_fp32 for bf16
/// (megatron/training/arguments.py) and its distributed-optimizer guide counts "bf16 param, fp32
/// grads" as 18 bytes per parameter, 6 + 12/d sharded (docs/source/distrib_optimizer.md);
/// nanotron's FP32GradientAccumulator keeps a full fp32 gradient buffer. fp32/tf32: 4; fp16: 2
/// (Megatron's fp16 default reduces in fp16).
double MainGradBytesPerParam(Precision precision);
/// Whether training.grad_reduce_bf16 applies at `precision`: bf16, fp8 and fp4 (fp32/tf32 and
/// fp16 reduce in their own precision).
bool Bf16GradReductionApplies(Precision precision);
/// The job's main-gradient bytes: 2 with training.grad_reduce_bf16, else the precision's.
double MainGradBytesPerParam(const TrainingSpec& training);

/// Bytes per stored frozen base parameter under LoRA (TrainingSpec::lora.base): `same` = the
/// training precision's weights (4 for fp32/tf32; 2 otherwise, fp8 training included, whose
/// weights stay 16-bit), bf16/fp16 2, fp8 1, nf4 4.127/8: 4-bit codes in 64-element blocks with
/// double quantisation (8-bit block constants in blocks of 256 plus one fp32 constant per 256
/// of those: 8/64 + 32/(64*256) = 0.127 bit per parameter; Dettmers et al. 2023, QLoRA, Sec. 3).
double FrozenBaseBytesPerParam(const TrainingSpec& tr);

/// Activation bytes stored by one transformer layer for one micro-batch on one GPU, for the
/// backward pass. Generalises Korthikanti et al. 2022 ("Reducing Activation Recomputation in
/// Large Transformer Models", Sec. 4, Table 2) from GPT (f = 4h, MHA, GELU, dropout) to any
/// FFN width, GQA, SwiGLU, MoE and fused attention. For GPT with unfused attention it reproduces
/// Table 2: sbh(10 + 24/t + 5as/(ht)) without SP, sbh(34/t + 5as/(ht)) with SP,
/// sbh(34/t) with SP + selective recompute, and 2sbh for full recompute.
/// Under LoRA the frozen linears compute no weight gradients, so the inputs stored only for
/// them are dropped: the QKV input unless q, k or v is targeted, the FC1 input (and an MoE
/// expert's dispatched token copy) unless up or gate is, the FC2/down input unless down is, and
/// the out-projection input unless o is or fused attention needs it (its backward reads the
/// output O, Dao et al. 2022 Alg. 4). Each targeted matrix stores its adapter's rank-r
/// intermediate A·x (2·sb·r bytes) for the gradient of B. docs/COST_MODEL.md lists the terms.
/// `recompute` overrides job.training.recompute (to size the layer being re-materialised).
double LayerActivationBytes(const JobSpec& job, bool moe_layer, Recompute recompute);

/// Bytes one layer's re-run modules hold during its backward under a selective recomputation of
/// modules (training.recompute_modules): the outputs its forward discarded (what
/// LayerActivationBytes drops for them), re-run before that layer's backward reads them: a MoE
/// layer's (`moe_layer`) pre-MLP norm and experts' activation (layernorm, moe_act; Megatron-Core's
/// CheckpointWithoutOutput, from a gradient hook), a dense layer's MLP (mlp; its checkpoint). 0
/// for modules the layer kind has none of, or without selective recomputation.
double RerunModuleBytes(const JobSpec& job, bool moe_layer);

/// Activation bytes one micro-batch stores in one transformer layer on one GPU at the job's
/// recompute setting (LayerActivationBytes): a dense-MLP layer and an MoE layer (0 when the
/// model has no MoE layers).
struct LayerActivations {
  double dense = 0;
  double moe = 0;
};
LayerActivations JobLayerActivations(const JobSpec& job);

/// Bytes of stored activations that training.activation_offload_layers = k moves to host memory
/// per micro-batch: the first k layers' (dense layers come first), 0 when k = 0. Each layer's
/// copy runs on a side stream behind the next layers' forward and is done before forward ends
/// (a slower copy is waited for: step_costs.cpp), so at the peak, the end of forward, none of
/// them is on the GPU; in backward they come back one layer ahead of use. Precondition: pp 1
/// and k < num_layers (ValidateJob, as Megatron-Core requires).
double OffloadedActivationBytes(const JobSpec& job, const LayerActivations& act);

/// Bytes one micro-batch keeps on the GPU through the layers of model chunk `chunk` of pipeline
/// stage `stage` (ChunkLayerCounts x `act`, less OffloadedActivationBytes).
double ChunkActivationBytes(const JobSpec& job, const LayerActivations& act, int64_t stage,
                            int64_t chunk);

/// Peak bytes of stored activations on pipeline stage `stage` (0-based) during one step: each
/// forward pass stores its chunk's bytes until its backward (ZB-H1: its W pass) frees them, in
/// the schedule's pass order (pipeline_schedule.h). With chunks of equal bytes this is
/// MicrobatchesInFlight x the stage's bytes per micro-batch; interleaved chunks of unequal bytes
/// (embedding/loss slots, dense layers before MoE layers) follow the pass order's steady state
/// (one period of p*v passes when p divides m). The event simulator's activation counter peaks
/// at the same value. No allocation.
double StageActivationBytes(const JobSpec& job, const LayerActivations& act, int64_t stage);

/// Per-GPU memory at the step's peak.
/// Bytes in a GiB (2^30): PyTorch's memory logs (nanotron, torchtitan) divide its byte counts by
/// 1024**3.
inline constexpr double kBytesPerGiB = 1073741824.0;

struct MemoryBreakdown {
  double weights_bytes = 0;
  double grads_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;  ///< transformer layers, all micro-batches in flight
  double logits_bytes = 0;       ///< LM-head output and fp32 cross-entropy buffers
  double overhead_bytes = 0;     ///< framework + fragmentation (OverheadSpec) + TP userbuffers
  double peak_bytes = 0;         ///< sum of the above on pipeline stage `peak_stage`
  int64_t peak_stage = 0;        ///< the stage (0-based) these bytes are of
  double capacity_bytes = 0;     ///< what the job may use: UsableBytes of the GPU
  bool fits = false;             ///< peak_bytes <= capacity_bytes
};

/// The bytes a job may use on `gpu`: its memory less the allocator headroom of `overhead`.
double UsableBytes(const GpuSpec& gpu, const OverheadSpec& overhead);

/// The overhead a job spec gets when it states none: OverheadSpec's defaults on a GPU; none on the
/// host device (HostDevice: the CPU executor's ranks have no CUDA context, cuBLAS or NCCL
/// workspaces, and its arena counts exactly the bytes it asks for, so no fragmentation either).
OverheadSpec DefaultOverhead(const GpuSpec& gpu);

/// The part of a GPU's predicted memory that PyTorch's caching allocator does not hold, so that
/// its counters (torch.cuda.max_memory_reserved, what frameworks log) never see it: the
/// overhead's framework_bytes (CUDA context, cuBLAS and NCCL workspaces) and, with tp_overlap,
/// the TP communication buffers, which Transformer Engine's userbuffers and torch's symmetric
/// memory allocate outside it (TpOverlapBufferBytes). Part of MemoryBreakdown::overhead_bytes.
double BytesOutsideAllocator(const JobSpec& job);

/// Default of the planner's memory margin (PlanRequest::memory_margin, docs/PLANNER.md "Memory
/// margin"): the share of each GPU's memory a plan leaves free for what the memory model misses.
/// In the layout sweep (docs/ACCURACY.md) the predicted peak is within 7.7% of the measured one at
/// the median.
inline constexpr double kDefaultMemoryMargin = 0.10;

/// Whether a predicted peak leaves `margin` (a fraction in [0, 1)) of the GPU's memory free:
/// peak <= (1 - margin) x capacity.
inline bool FitsWithMargin(const MemoryBreakdown& m, double margin) {
  return m.peak_bytes <= (1.0 - margin) * m.capacity_bytes;
}

/// Memory of one GPU of pipeline stage `stage` (0-based, < pp): its parameters (ParamsPerGpu),
/// its stored activations (StageActivationBytes, plus one re-materialised layer under full
/// recomputation), the logits buffers on the last stage, and the overhead.
MemoryBreakdown StageMemory(const JobSpec& job, const GpuSpec& gpu, int64_t stage);

/// Memory of the most loaded pipeline stage of `job` on `gpu`: the largest StageMemory over all
/// stages (the lowest index on a tie). With embedding/loss slots or interleaving the peak can be
/// a middle stage. A middle stage with the same layers per chunk as the stage before it is not
/// evaluated: it has the same parameters and no more micro-batches in flight.
MemoryBreakdown EstimateMemory(const JobSpec& job, const GpuSpec& gpu);

}  // namespace gpuplan

// Training stacks as data: one entry of hardware-db/data/frameworks.json (format:
// docs/HARDWARE_DB.md, "Training stacks"), what the cost model needs to know about the software a
// job runs on, each field read from the stack's code and named with its source in the file.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>

namespace gpuplan {

/// How a stack places transformer layers on pipeline stages when the job does not say.
enum class PipelineSplit {
  kEven,          ///< pp divides the layers (or the job gives Megatron's first/last stages)
  kCostBalanced,  ///< nanotron: by a per-block cost estimate (CostBalancedStageLayers)
};

/// How a stack reduces the gradients under ZeRO-1 with data parallelism.
enum class Zero1GradReduction {
  /// Reduce-scatter in buckets as the last backward produces them, overlapped with it
  /// (Megatron-Core's distributed optimizer with --overlap-grad-reduce, DeepSpeed).
  kReduceScatterInBackward,
  /// One all-reduce of the whole fp32 gradient buffer after the last backward, overlapped with
  /// nothing (nanotron with accumulate_grad_in_fp32: no DDP wrapper, so no backward hooks).
  kAllReduceAfterBackward,
};

/// The size of the buckets a stack reduces its gradients in (and, under ZeRO-1/2, all-gathers
/// the updated weights in) when it overlaps that communication with the backward pass: one
/// collective per bucket, each paying the collective's latency. Either a parameter count, grown
/// with the data-parallel group (Megatron-Core), or a byte size of the gradient buffer (PyTorch
/// DDP's bucket_cap_mb).
struct GradBucket {
  double params = 40e6;             ///< parameters per bucket (0 when given in bytes)
  double params_per_dp_rank = 1e6;  ///< at least this many per rank of the dp x cp group
  double bytes = 0;                 ///< gradient bytes per bucket (0 when given in parameters)
  /// Parameters per bucket for gradients of `grad_bytes_per_param` bytes (> 0) over a DP group of
  /// `dp_ranks` ranks (dp x cp).
  double Params(double grad_bytes_per_param, double dp_ranks) const {
    const double floor = params > 0 ? params : bytes / grad_bytes_per_param;
    return floor > params_per_dp_rank * dp_ranks ? floor : params_per_dp_rank * dp_ranks;
  }
};

/// The attention kernel a stack runs on one GPU architecture and its speed.
struct AttentionKernel {
  std::string kernel;         ///< e.g. "flash-attn-2", "cudnn"
  double relative_speed = 1;  ///< its FLOP rate / the architecture's reference kernel's, > 0
};

/// Element moves (reads plus writes of 16-bit elements) per forward pass that a stack's unfused
/// element-wise code makes beyond the fused kernels the cost model charges every stack
/// (docs/COST_MODEL.md, "Memory-bound kernels"), each per element of one tensor; backward makes
/// twice as many. All zero: fused (Megatron-Core, torch.compile).
struct UnfusedPasses {
  double swiglu = 0;  ///< per element of the SwiGLU product, f/t per MLP (SwiGLU models)
  double rotary = 0;  ///< per element of q and k, (q + kv)/t (rotary: SwiGLU-family models)
  double qkv = 0;     ///< per element of q, k and v, (q + 2kv)/t
  double kv = 0;      ///< per element of k and v, 2kv/t
  double attention_output = 0;  ///< per element of the attention output, q/t
};

/// The id of the stack a job runs on when it does not say (TrainingSpec::framework).
inline constexpr const char* kDefaultFrameworkId = "megatron-core";

/// One training stack. The defaults are Megatron-Core's behaviour, the model's baseline: the
/// `megatron-core` entry of frameworks.json states each of them with its source, and
/// FrameworkFiles.BuiltinMegatronCoreIsTheDefault checks that the two agree.
struct FrameworkSpec {
  std::string id = kDefaultFrameworkId;  ///< spec and CLI name, e.g. "nanotron"
  std::string name = "Megatron-Core";    ///< display name
  /// The software release its fields were read from; empty when the entry does not say. The same
  /// layout runs faster release by release, so the entry states which one it describes.
  std::string version;
  /// Peak bytes per logit element on the last pipeline stage while the loss and its backward
  /// run: the 16-bit logits (2), their fp32 copy (4), and a second fp32 buffer (4) where the max
  /// is subtracted out of place (Megatron-Core subtracts in place: 6; nanotron: 10); PyTorch's
  /// F.cross_entropy on an fp32 copy peaks in its backward, at three fp32 buffers (12).
  double loss_bytes_per_logit = 6;
  /// The same with tensor parallelism (tp > 1), where a stack's vocabulary-parallel loss differs
  /// from its plain one (torchtitan's loss parallelism: 16); loss_bytes_per_logit where the entry
  /// gives none.
  double loss_bytes_per_logit_with_tp = 6;
  double LossBytesPerLogit(int64_t tp) const {
    return tp > 1 ? loss_bytes_per_logit_with_tp : loss_bytes_per_logit;
  }
  /// Bytes per trainable parameter of 16-bit gradients kept beside the fp32 main gradients when
  /// data parallelism is used without ZeRO-3 (PyTorch DDP bucket views: 2; Megatron-Core's own
  /// DDP reduces the main-gradient buffer: 0).
  double ddp_bucket_bytes_per_param = 0;
  /// The buckets of its overlapped DP communication (Megatron-Core: max(40M, 1M x dp x cp)
  /// parameters).
  GradBucket grad_bucket;
  /// Eager element-wise code keeps SiLU's output beside the gate/up output and the product, and
  /// the Q/K/V and rotary K/V copies (nanotron); fused kernels keep neither (Megatron-Core).
  bool eager_elementwise = false;
  /// Whether it copies K and V to every query head before attention (repeat_kv, grouped-query
  /// models): the attention kernel then saves the copies, [tokens x q] each, and no K/V-sized
  /// copy is kept (the eager rotary one neither). Optional in frameworks.json (absent: false).
  bool repeat_kv = false;
  /// Layers per pipeline stage when the job gives no split.
  PipelineSplit pipeline_split = PipelineSplit::kEven;
  /// ZeRO-1/2 with overlapped DP communication: the all-gather of the updated 16-bit weights runs
  /// during the next step's first forward pass (Megatron-Core --overlap-param-gather), or blocks
  /// at the end of the optimizer step (nanotron).
  bool weight_gather_in_forward = true;
  /// ZeRO-2 reduce-scatters the gradients, and all-gathers the weights, one transformer layer at
  /// a time: PyTorch FSDP's SHARD_GRAD_OP (FSDP2 reshard_after_forward=False) keeps one flat
  /// parameter per wrapped block and issues one collective per block. false: in grad_bucket's
  /// buckets (DeepSpeed's reduce_bucket_size, Megatron-Core's DDP buckets).
  bool zero2_reduces_per_layer = false;
  /// ZeRO-1: how the gradients are reduced across data-parallel ranks.
  Zero1GradReduction zero1_grad_reduction = Zero1GradReduction::kReduceScatterInBackward;
  /// Seconds the host needs to issue one transformer layer's forward and backward for one
  /// micro-batch: a floor under the layer's GPU time (docs/COST_MODEL.md, "Host-bound layers").
  double host_seconds_per_layer = 0;
  /// Added to host_seconds_per_layer for a mixture-of-experts layer: the host time of its router,
  /// token dispatcher and per-expert GEMMs, so that an MoE layer's floor is the sum
  /// (docs/COST_MODEL.md, "Host-bound layers").
  double moe_host_seconds_per_layer = 9 * 1e-3;  // the megatron-core entry's 9 ms (calibrated)
  /// Added to host_seconds_per_layer per tensor-parallel rank when the layout is pipelined.
  double pipeline_host_seconds_per_tp_rank = 0;
  /// Seconds added to each tensor-parallel collective per node boundary its ring crosses beyond
  /// one node (group nodes - 1), over what NCCL's bandwidth and latency give, and with pp >= 2 to
  /// the host floor per TP rank and boundary: TP groups that span nodes (docs/COST_MODEL.md,
  /// "Tensor parallelism across nodes").
  double tp_seconds_per_inter_node_hop = 0;
  /// ZeRO-3/FSDP with pipeline parallelism: whether each stage keeps its layers' gathered weights
  /// from the first micro-batch's forward to the step's last backward, accumulates their unsharded
  /// gradients in the reduction dtype, and reduce-scatters them once after that backward
  /// (torchtitan: reshard_after_forward = not pp_enabled; torch.distributed.pipelining's stage
  /// backward without gradient sync but the last). false: every micro-batch gathers and
  /// reduce-scatters each layer, as without pipelining.
  bool zero3_unsharded_stage_with_pp = false;
  /// ZeRO-3/FSDP: whether the sharded parameter is the fp32 master weight the optimizer updates,
  /// cast to 16 bits only into the gathered copy (PyTorch FSDP's FlatParameter and FSDP2's
  /// sharded DTensor: "outside forward and backward, the sharded parameters are kept in full
  /// precision"), so no 16-bit shard is kept beside it. false: a 16-bit shard is kept beside the
  /// optimizer's fp32 master shard (Megatron-FSDP's weight buffer, DeepSpeed ZeRO-3's partition).
  bool zero3_shard_is_master = false;
  /// Highest ZeRO stage the stack runs (nanotron shards only the optimizer state: 1).
  int max_zero_stage = 3;
  /// Highest ZeRO stage it runs with pipeline parallelism (pp >= 2; DeepSpeed's PipelineEngine
  /// asserts stage 0-1); max_zero_stage where the entry gives none.
  int max_zero_stage_with_pp = 3;
  /// Whether it runs fully sharded data parallelism (PyTorch FSDP / Megatron-FSDP).
  bool fsdp = true;
  /// Whether it keeps the optimizer state in host memory and steps it there (parallelism.
  /// cpu_offload; Megatron-Core --optimizer-cpu-offload, DeepSpeed ZeRO-Offload).
  bool cpu_offload = true;
  /// Whether its 1F1B pipeline engine asserts at least pp - 1 micro-batches per step (nanotron).
  bool pipeline_needs_pp_minus_1_microbatches = false;
  /// Whether it runs the interleaved pipeline schedule, several model chunks per stage
  /// (parallelism.vpp > 1; Megatron-Core, torchtitan's Interleaved1F1B).
  bool interleaved_pipeline = true;
  /// Whether it overlaps the expert all-to-all with another micro-batch's computation
  /// (Megatron-Core's combined 1F1B schedule, parallelism.ep_overlap).
  bool ep_overlap = true;
  /// Whether it overlaps tensor-parallel communication with the GEMMs that produce or consume it
  /// by splitting them, as Transformer Engine's userbuffers do under Megatron-Core
  /// --tp-comm-overlap (parallelism.tp_overlap, simulator/tp_overlap.h).
  bool tp_overlap = true;
  /// Whether, without tp_overlap, the backward of a column-parallel linear layer (QKV, FC1)
  /// issues its tensor-parallel collectives asynchronously beside its GEMMs: the input's
  /// all-gather beside the data-gradient GEMM and the data gradient's reduce-scatter (all-reduce
  /// without sequence parallelism) beside the weight-gradient GEMM (Megatron-LM
  /// LinearWithGradAccumulationAndAsyncCommunication, Transformer Engine's Linear;
  /// parallelism.tp_backward_overlap overrides it per job; docs/COST_MODEL.md, "Tensor
  /// parallelism").
  bool tp_backward_overlap = true;
  /// With tp_overlap: its communication buffers, in full-size [tokens x hidden] 16-bit tensors
  /// (Transformer Engine's userbuffers: 12, simulator/tp_overlap.h kTpOverlapUserBuffers;
  /// torch's symmetric memory: one workspace per TP group).
  double tp_overlap_buffers = 12;
  /// The extra memory traffic of its unfused element-wise code (eager PyTorch).
  UnfusedPasses unfused_passes;
  /// fp8 training: whether the norms before QKV and FC1 write their output in fp8, leaving only
  /// its transpose to make (Transformer Engine's LayerNormLinear/LayerNormMLP), or every GEMM
  /// input is cast on its own (te.Linear behind a PyTorch norm).
  bool fp8_norm_fused_cast = true;
  /// fp8 training: whether the fp8 weight copies are made every micro-batch (true) or once per
  /// step and reused (false: Megatron-Core passes is_first_microbatch to Transformer Engine).
  bool fp8_weight_cast_every_microbatch = false;
  /// Quantized (fp8, fp4) training: whether each linear layer keeps its input for the weight
  /// gradient as the quantized copy it made for the forward GEMM (Transformer Engine's Linear,
  /// LayerNormLinear, LayerNormMLP and GroupedLinear), or in 16 bits and casts it again in
  /// backward (torchao's Float8Linear).
  bool quantized_saved_inputs = true;
  /// Whether it chooses the modules a selective recomputation re-runs (Megatron-Core
  /// --recompute-modules; training.recompute_modules, simulator/job.h RecomputeModule).
  bool recompute_modules = true;
  /// Whether it offloads the stored activations of whole layers to host memory
  /// (training.activation_offload_layers; Megatron-Core --cpu-offloading).
  bool activation_offload = true;
  /// The model-parallel dimensions it runs beyond data parallelism: "tp" (with sequence
  /// parallelism), "pp", "cp", "ep" (parallelism.tp, pp, cp, ep above 1; StackRunsLayout).
  std::set<std::string> parallel_dims = {"tp", "pp", "cp", "ep"};
  /// The fused attention kernel by GPU architecture (GpuSpec::architecture). The calibrated
  /// attention rate (kFusedAttentionRelativeEfficiency) is that of the architecture's reference
  /// kernel, one written for it (FlashAttention-2 on Ampere, cuDNN on Hopper); a stack that runs
  /// an older generation's kernel is slower by relative_speed (docs/COST_MODEL.md, Attention).
  /// An architecture not listed runs the reference kernel.
  std::map<std::string, AttentionKernel> attention_kernels;
  /// relative_speed of the kernel on `architecture`, 1 when not listed.
  double AttentionSpeed(const std::string& architecture) const {
    const auto it = attention_kernels.find(architecture);
    return it == attention_kernels.end() ? 1.0 : it->second.relative_speed;
  }
  /// Where each field above comes from, by its frameworks.json name.
  std::map<std::string, std::string> sources;
};

}  // namespace gpuplan

// Training stacks: what the framework a job runs on keeps in memory that the cost model counts.
// One row per stack in Frameworks(); each field names the code it was read from.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace gpuplan {

struct JobSpec;

/// The training stack of a job (TrainingSpec::framework).
enum class Framework { kMegatronCore, kNanotron };

/// How a stack places transformer layers on pipeline stages when the job does not say.
enum class PipelineSplit {
  kEven,          ///< pp divides the layers (or the job gives Megatron's first/last stages)
  kCostBalanced,  ///< nanotron: by a per-block cost estimate (CostBalancedStageLayers)
};

/// How a stack stores activations and buffers, as read from its code (not fitted).
struct FrameworkTraits {
  Framework id;
  const char* name;  ///< spec and CLI name
  const char* source;
  /// Peak bytes per logit element on the last pipeline stage while the loss runs: the 16-bit
  /// logits (2), their fp32 copy (4), and a second fp32 buffer (4) where the max is subtracted
  /// out of place. Megatron-Core subtracts in place: 6 (megatron/core/tensor_parallel/
  /// cross_entropy.py, "In-place subtraction reduces memory pressure"); nanotron's
  /// sharded_cross_entropy does not: 10.
  double loss_bytes_per_logit;
  /// Bytes per trainable parameter of 16-bit gradients kept beside the fp32 main gradients when
  /// data parallelism is used without ZeRO-3: PyTorch DistributedDataParallel's bucket views
  /// (nanotron wraps the model in DDP and adds the buckets into its fp32 buffer in a
  /// communication hook), 2. nanotron does not wrap with ZeRO-1 (trainer.py _init_model), yet its
  /// 8B ZeRO-1 rows of the layout sweep measure as if the 16-bit .grad tensors stay (line 801:
  /// 65.2 GB, 58.7 GB without them), so the term is kept for ZeRO-1 too. Megatron-Core's
  /// DistributedDataParallel reduces the main-gradient buffer itself, 0.
  double ddp_bucket_bytes_per_param;
  /// Eager element-wise code: SwiGLU keeps SiLU's output beside the merged gate/up output and
  /// the product (act(gate) * up as two PyTorch ops), and attention keeps the contiguous Q/K/V
  /// copy and a concatenated K/V copy made for the rotary kernel (nanotron models/llama.py).
  /// Megatron-Core's fused SwiGLU and rotary kernels keep neither.
  bool eager_elementwise;
  /// Layers per pipeline stage when the job gives no split: Megatron-Core splits evenly
  /// (pipeline_parallel/utils, get_num_layers_to_build); nanotron by cost (models/base.py).
  PipelineSplit pipeline_split;
  /// ZeRO-1/2 with overlapped DP communication: whether the all-gather of the updated 16-bit
  /// weights runs during the next step's first forward pass, bucket by bucket ahead of the layers
  /// that need them (Megatron-Core --overlap-param-gather, which gpuplan's Megatron export sets:
  /// distributed/distributed_data_parallel.py forward pre-hooks wait for a bucket's all-gather
  /// and dispatch the next one), or blocks at the end of the optimizer step (nanotron
  /// optim/zero.py ZeroDistributedOptimizer.step all-gathers the parameters before returning).
  bool weight_gather_in_forward;
  /// Seconds the host needs to issue one transformer layer's forward and backward kernels and
  /// collectives for one micro-batch: a floor under the layer's GPU time when the GPU work is
  /// smaller (StepCosts; docs/COST_MODEL.md, "Host-bound layers"). nanotron (eager PyTorch):
  /// 4.5 ms, CALIBRATED on the layout sweep's host-bound rows (median of 18 rows at 1-4 nodes,
  /// pp 1, tp 2-8, micro-batch 1-2, where 1B and 8B layers alike take 4.35-4.89 ms per
  /// micro-batch while the GPU work is 1.2-2.8 ms). Megatron-Core: 0, not modelled (no
  /// measurement; its fused Transformer Engine layers issue fewer kernels).
  double host_seconds_per_layer;
  /// Seconds added to host_seconds_per_layer per tensor-parallel rank when the layout is
  /// pipelined (pp >= 2): the floor becomes host_seconds_per_layer + this x tp. nanotron: 1.75 ms,
  /// CALIBRATED on the layout sweep's 1B rows with pp 2-8, tp 2-8 at 1-16 nodes (150 rows, stalls
  /// left out; the value of a 0.25 ms grid with the least median |log error| of tokens/s), where
  /// a layer takes more per micro-batch than with pp 1, independent of pp and growing with tp,
  /// and the excess fades once the GPU work exceeds it. Checked on the 8B's 115 such rows, not
  /// used in the fit. The mechanism inside nanotron's pipeline engine is not identified
  /// (docs/COST_MODEL.md, "Host-bound layers"). Megatron-Core: 0, not modelled.
  double pipeline_host_seconds_per_tp_rank;
};

/// Every stack, in a fixed order (the first is the default).
std::span<const FrameworkTraits> Frameworks();

/// The row of `f`.
const FrameworkTraits& TraitsOf(Framework f);

/// The stack called `name` (FrameworkTraits::name); false if there is none.
bool ParseFramework(std::string_view name, Framework* out);

/// The allowed names joined by ", " (for error messages and help).
std::string FrameworkNames();

/// Whether the job's stack can run its layout at all, as read from the stack's code; an invalid-
/// input Status naming the field and the reason when it cannot. Megatron-Core: always. nanotron:
/// no ZeRO-2/3 or FSDP (it shards only the optimizer state, optim/zero.py); with pp >= 2 and
/// vpp 1: (1) its 1F1B engine asserts at least pp - 1 micro-batches per step
/// (parallel/pipeline_parallel/engine.py, OneForwardOneBackwardPipelineEngine.train_batch_iter);
/// (2) its cost-balanced split must give every stage a block (models/base.py build_model makes
/// the stage its walk ended on the output stage; CostBalancedPlacement). The Ultra-Scale
/// Playbook's config generator (huggingface/bench_cluster create_configs.py) skips both kinds
/// of layout, and in the layout sweep every row of either kind crashed (105 rows with too few
/// micro-batches; the 1B on 16 stages, 65 of 66).
Status StackRunsLayout(const JobSpec& job);

}  // namespace gpuplan

// What each rank does in one training step: the schedule's passes with their pipeline sends and
// receives (peers named), the ops of one transformer layer per pass kind, the data-parallel
// gradient synchronisation and the optimizer. The validator executes this; `validate --dry-run`
// prints it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/job.h"
#include "simulator/pipeline_schedule.h"
#include "validator/rank_layout.h"

namespace gpuplan {

enum class RankOpKind {
  kCompute,     ///< a kernel: GEMM, attention, norm, activation, embedding, loss, optimizer
  kCollective,  ///< an NCCL collective over one of the rank's groups
  kSend,        ///< NCCL send to `peer`
  kRecv,        ///< NCCL receive from `peer`
  kLayers,      ///< a run of transformer layers; their ops are LayerProgram(pass)
};

/// What a selective recomputation (training.recompute_modules) does with a kCompute op.
enum class RecomputeRole {
  kNone,
  /// A forward op whose outputs are freed once the next op has read them (layernorm, moe_act:
  /// Megatron-Core's CheckpointWithoutOutput around the MoE layer's pre-MLP norm and the routed
  /// experts' activation; mlp: the ops inside a dense layer's checkpointed MLP).
  kDiscard,
  /// A forward op run under activation checkpointing (core_attn: Megatron's
  /// _checkpointed_attention_forward): its output stays, the next op saves it as its input, and
  /// what only its own backward reads (attention's log-sum-exp) is freed when it ends.
  kCheckpoint,
  /// A kDiscard or kCheckpoint op run again in the backward ("... (recompute)"); its outputs live
  /// until the backward of its layer ends.
  kRerun,
};

/// One op. Shapes use the profiler's conventions: GEMM "m x n x k", attention
/// "b, s, heads, head_dim", elementwise "rows x cols".
struct RankOp {
  RankOpKind kind = RankOpKind::kCompute;
  std::string name;   ///< "gemm qkv", "attention_fwd", "all_reduce", "activation", ...
  std::string shape;  ///< "" when none
  GroupKind group = GroupKind::kTp;  ///< kCollective: the communicator
  int64_t peer = -1;                 ///< kSend / kRecv: the other rank
  double bytes = 0;                  ///< kCollective: nccl-tests size; kSend/kRecv: message
  int64_t count = 1;                 ///< repeats (e.g. gradient buckets, CP ring steps)
  /// kLayers: which LayerProgram the layers run (a backward one under full recompute runs each
  /// layer's forward again first: ExpandLayers).
  PassKind layers_pass = PassKind::kForward;
  RecomputeRole recompute = RecomputeRole::kNone;  ///< kCompute only
  /// kCompute in a forward: false when no backward reads its outputs, only the next op (under
  /// LoRA the input of a frozen linear without an adapter, an adapter's output added into its
  /// linear's); they are freed once that op has read them.
  bool saved_for_backward = true;
};

/// The suffix of a kRerun op's name after the forward op's: "swiglu_fwd (recompute)".
inline constexpr std::string_view kRerunSuffix = " (recompute)";

/// One line of a rank's step: a schedule pass (`pass` set) or a step-level phase.
struct ProgramStep {
  std::string label;  ///< "F mb3 c0", "B mb0 c1", "W mb2 c0", "grad sync", "optimizer"
  bool is_pass = false;
  PipelinePass pass{};
  std::vector<RankOp> ops;
};

/// The ops of one transformer layer on one rank for `kind` (forward, backward or the split
/// weight-gradient pass), in order, with TP/CP/EP collectives and ZeRO-3 parameter traffic.
/// Forward (Shoeybi et al. 2019 Sec. 3; Korthikanti et al. 2022 Sec. 4.2 for sequence
/// parallelism): norm, QKV GEMM, attention, output GEMM, TP all-reduce (or all-gather before /
/// reduce-scatter after each block with sequence parallelism), norm, [router + EP all-to-all],
/// FC1, activation, FC2, TP all-reduce. Backward mirrors it with data- and weight-gradient GEMMs.
/// Under LoRA (Hu et al. 2021) every targeted linear gains an adapter's two GEMMs, x·A then ·B,
/// after its own in forward and their data- and weight-gradient GEMMs after its data gradient in
/// backward; frozen weights get no weight gradient, and an input that only a frozen linear's
/// weight gradient would read is not saved. A column-parallel linear (QKV, FC1) keeps A whole
/// and splits B by tp; a row-parallel one (O, FC2) splits A and keeps B whole (the cost model's
/// LoraAdapterSeconds).
/// A selective recomputation with `core_attn` checkpoints the attention and re-runs its forward
/// (with CP, its ring exchange too) just before its backward (Megatron's checkpointed core
/// attention). A MoE layer under `layernorm` discards its pre-MLP norm's output and re-runs the
/// norm first in its backward; under `moe_act` it discards the routed experts' activation output
/// and re-runs it before their FC2 backward (Megatron-Core transformer_layer.py, experts.py: the
/// re-run is a gradient hook on the MLP's, or FC2's, output). A dense layer under `mlp` discards
/// what its MLP computes but its output and runs the MLP's forward again (pre-MLP norm, the TP
/// all-gather, FC1, activation, FC2, the TP reduction, adapters included) before the MLP's
/// backward (Megatron's tensor_parallel.checkpoint of the MLP).
std::vector<RankOp> LayerProgram(const JobSpec& job, PassKind kind, bool moe_layer);

/// One op of a layer run, with the model layer it belongs to.
struct LayerOp {
  int64_t layer = 0;
  RankOp op;
  /// The LayerProgram the op comes from: kForward inside a backward pass is full recompute.
  PassKind layer_program = PassKind::kForward;
};

/// The ops of layer run `op` (kLayers) of `step` on pipeline stage `stage`: LayerProgram of
/// op.layers_pass for each of its layers in order, MoE layers after the model's leading dense
/// ones. Under full recompute a backward layer runs its forward again first (Megatron-LM's
/// checkpointed layers re-run each layer's forward just before its backward).
std::vector<LayerOp> ExpandLayers(const JobSpec& job, int64_t stage, const ProgramStep& step,
                                  const RankOp& op);

/// The whole step of `rank`: every pass of its stage's pass order (PassOrder) with the receives
/// before and sends after it, then gradient synchronisation and the optimizer.
std::vector<ProgramStep> RankProgram(const JobSpec& job, const RankLayout& layout, int64_t rank);

}  // namespace gpuplan

// Expert-parallel communication hidden behind another micro-batch's computation, as
// Megatron-Core's combined 1F1B schedule runs it (--overlap-moe-expert-parallel-comm with
// --delay-wgrad-compute; megatron/core/pipeline_parallel/combined_1f1b.py and
// megatron/core/models/common/model_chunk_schedule_plan.py, TransformerLayerSchedulePlan.run).
//
// In the 1F1B steady state the forward of micro-batch N and the backward of micro-batch N-1 run
// layer by layer as one pair on two streams. Each layer is cut into an attention node (norms,
// attention, router, permutation), the dispatch, an MLP node (the experts) and the combine, and
// the pair issues, in this order:
//   communication: combine bwd (N-1) | dispatch fwd (N), dispatch bwd (N-1) | combine fwd (N)
//   computation:   attention fwd (N) | MLP bwd (N-1), MLP wgrad (N-1), MLP fwd (N) |
//                  attention bwd (N-1), attention wgrad (N-1)
// each node waiting for the one it consumes: an all-to-all of one micro-batch runs while the
// other micro-batch computes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "simulator/job.h"

namespace gpuplan {

/// One MoE layer's nodes for one micro-batch, seconds. Backward times are data gradients only;
/// the weight gradients are the delayed wgrad nodes.
struct EpOverlapLayer {
  double attn_fwd = 0, attn_bwd = 0, attn_wgrad = 0;
  double mlp_fwd = 0, mlp_bwd = 0, mlp_wgrad = 0;
  double a2a = 0;  ///< one dispatch or combine (the four move the same bytes)
};

/// Share of the all-to-all time the two-stream schedule could hide that measured runs hide.
/// CALIBRATED on the one published pair that differs only in the overlap: Qwen3-235B-A22B on
/// 256 H100, TP2 EP32 PP8 VPP4, DeepEP, 19.7 s a step without and 17.6 s with
/// --overlap-moe-expert-parallel-comm (yanring/Megatron-MoE-ModelZoo
/// best_practice/Qwen3/readme.md): a step 0.893x as long, where hiding all that the schedule
/// could would give 0.767x (tests/simulator/ep_overlap_test.cpp; 0.43 before the token
/// permutation, MoePermutationOf, was charged). Megatron-Core's MoE layers
/// wait on the host (a device-to-host sync for the tokens per expert before the experts run;
/// docs/discussions/deepseek-v3-gb200-optimization), which the two streams above do not model.
inline constexpr double kEpOverlapEfficiency = 0.46;

/// Communication seconds a paired forward + backward of `layer` leaves exposed: the pair's
/// length on the two streams above (each in issue order, each node after what it consumes)
/// beyond its computation, and at least the slow-down the all-to-all kernels cause the
/// computation beside them (kOverlapInterference per overlapped second, as Exposed in
/// cost_model.cpp); of what that hides from the 4 x a2a, kEpOverlapEfficiency is hidden.
double EpOverlapExposedSeconds(const EpOverlapLayer& layer);

/// Fraction of a stage's forward and backward passes that run paired, for `microbatches` per
/// step. Without pipelining the first forward and the last backward run alone
/// (combined_1f1b_schedule_for_no_pipelining): (m - 1) / m. With the interleaved schedule the
/// first stage's warm-up forwards and cool-down backwards run alone, 2(pp - 1) + (vpp - 1)pp of
/// the m x vpp chunk passes each (Megatron-Core schedules.py, get_pp_rank_microbatches); the
/// first stage has the most of them.
double EpOverlapPairedFraction(const ParallelSpec& p, int64_t microbatches);

/// Why `job` cannot run with parallelism.ep_overlap (the asserts of Megatron-Core's
/// TransformerConfig for overlap_moe_expert_parallel_comm), or nullopt when it can.
std::optional<std::string> EpOverlapProblem(const JobSpec& job);

}  // namespace gpuplan

// Where a MoE layer's token copies go, and what DeepEP's dispatch costs: the expected number of
// distinct ranks and nodes one token's top_k copies reach under (group-limited) routing, and the
// time of DeepEP's normal dispatch/combine kernels, which send a token once per destination node
// over the network and forward it over NVLink inside the node (deepseek-ai/DeepEP,
// csrc/kernels/internode.cu; DeepSeek-AI 2024, arXiv:2412.19437 Sec. 3.2.2).
#pragma once

#include <string>
#include <string_view>

#include "simulator/collective.h"
#include "simulator/job.h"
#include "simulator/model.h"

namespace gpuplan {

/// DeepEP's NVLink forwarding bandwidth as a fraction of the link's collective busbw
/// (GroupLink::intra_bytes_per_s). CALIBRATED on the one intranode row of DeepEP's published
/// table (docs/legacy.md, "Normal kernels with NVLink and RDMA forwarding": EP8 dispatch 153 GB/s
/// on H800, whose NVLink gives 200 GB/s x 0.812 = 162 GB/s busbw here): 0.83. The internode rows
/// (EP16, 32, 64) check it (moe_dispatch_test.cc).
inline constexpr double kDeepEpNvlinkEfficiency = 0.83;

/// The router's choice as the dispatch sees it: each token picks `group_topk` of `groups` equal
/// groups of consecutive experts, then its `top_k` experts among the experts of those groups
/// (groups = group_topk = 1 without group-limited routing). Uniformly at random: the expectation
/// of a balanced router.
struct ExpertRouting {
  double experts = 0;
  double top_k = 0;
  double groups = 1;
  double group_topk = 1;
};

/// The dispatchers by spec and CLI name, in a fixed order (the first is the default).
struct MoeDispatcherName {
  MoeDispatcher id;
  const char* name;
};
inline constexpr MoeDispatcherName kMoeDispatchers[] = {{MoeDispatcher::kAllToAll, "alltoall"},
                                                        {MoeDispatcher::kDeepEp, "deepep"}};
/// The name of `d` (kMoeDispatchers).
const char* NameOf(MoeDispatcher d);
/// The dispatcher called `name`; false if there is none.
bool ParseMoeDispatcher(std::string_view name, MoeDispatcher* out);

/// Empty when `load_imbalance` is an allowed TrainingSpec::moe_load_imbalance, else what is
/// wrong with it (for an error naming the field or flag).
std::string MoeLoadImbalanceProblem(double load_imbalance);

/// The factor by which the busiest expert-parallel rank's routed token copies exceed the mean:
/// TrainingSpec::moe_load_imbalance, at most ep (all copies on one rank); 1 for dense models and
/// ep = 1 (every rank then computes every expert's share).
double MoeRankImbalance(const JobSpec& job);

/// The memory-bound copies of one pass of Megatron-Core's token permutation around a MoE
/// layer's experts on one rank (token_dispatcher.py, all-to-all dispatcher).
struct MoePermutation {
  double bytes = 0;    ///< read and written
  double kernels = 0;  ///< launches
};

/// The forward permutation of a rank that routes `local_tokens` (> 0) tokens to `top_k` experts
/// each and receives `routed_rows` rows for its `local_experts` (>= 1) experts, rows of `hidden`
/// elements of `element_bytes`: permute copies each local token to its top_k slots (a gather:
/// reads and writes top_k x local_tokens rows); with more than one local expert the received rows
/// are sorted by expert after the dispatch and restored before the combine (sort_chunks_by_idxs:
/// each reads and writes routed_rows rows); unpermute sums each token's top_k rows (reads top_k,
/// writes one row per token). Backward moves the same bytes over the gradients. DeepEP's flex
/// dispatcher permutes the received rows by expert and back alike. Golden test
/// Golden.MoePermutationCopiesEveryRoutedRow.
MoePermutation MoePermutationOf(double top_k, double local_tokens, double routed_rows,
                                double local_experts, double hidden, double element_bytes);

/// DeepEP's normal kernels forward among at most this many NVLink peers of one node
/// (deepseek-ai/DeepEP csrc/kernels/configs.cuh: `#define NUM_MAX_NVL_PEERS 8`).
inline constexpr int64_t kDeepEpMaxNvlinkPeers = 8;

/// Whether DeepEP runs on nodes of `gpus_per_node` GPUs of type `gpu`: it needs "NVLink with
/// full directed CUDA peer access between every pair of participating intranode GPUs"
/// (deepseek-ai/DeepEP README, Requirements), an NVSwitch domain spanning the node, of at most
/// kDeepEpMaxNvlinkPeers GPUs (not a 72-GPU NVL72 rack).
bool DeepEpRuns(const GpuSpec& gpu, int64_t gpus_per_node);

/// The routing of model `m` (a MoE model).
ExpertRouting RoutingOf(const ModelSpec& m);

/// Expected number of distinct units one token's top_k copies reach, where the experts are split
/// into experts / unit_experts units of unit_experts consecutive experts each (an EP rank holds
/// experts / ep; a node the experts of its EP ranks). Precondition: unit_experts divides experts.
/// Exact under ExpertRouting's uniform choice, for any alignment of units and groups.
double ExpectedUnitsReached(const ExpertRouting& routing, double unit_experts);

/// Seconds of one DeepEP normal dispatch (or combine: the same bytes backwards) for one rank of
/// the EP group `ep`: `tokens` local tokens of `bytes_per_token` each, routed by `routing`, the
/// busiest rank receiving `load_imbalance` times the mean. Within one node every token goes once
/// to each other rank it reaches over NVLink; across nodes once to each other node it reaches
/// over the network (at GroupLink::inter_bytes_per_s), then from that node's receiving GPU over
/// NVLink to its ranks (at kDeepEpNvlinkEfficiency x intra_bytes_per_s); the two stages
/// pipeline, so the slower one sets the time, plus one network (or NVLink) latency.
double DeepEpSeconds(const ExpertRouting& routing, double tokens, double bytes_per_token,
                     double load_imbalance, const GroupLink& ep);

}  // namespace gpuplan

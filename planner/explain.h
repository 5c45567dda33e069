// The planner's reasons: what bound the recommendation, sentences explaining the choice, and
// the diagnosis when nothing fits. Internal to the planner (planner.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "hardware-db/hardware_db.h"
#include "planner/plan.h"

namespace gpuplan {

/// What limits `plan` when no constraint excluded a better one: "memory" when it needs
/// recomputation or offload, or its peak memory is above 90% of the memory the margin leaves
/// usable ((1 - memory_margin) x capacity); "communication" when exposed communication is >= 25%
/// of the step; "pipeline bubble" when the bubble is >= 15%; otherwise "compute".
std::string IntrinsicBound(const Plan& plan, double memory_margin);

/// One sentence on the memory the plan saves with its recompute/offload choice, e.g. "without
/// full recomputation it would need 93.1 GB per GPU, 72.0 GB usable (80.0 GB less the 10%
/// margin)", or what the layout uses when it needs neither.
std::string MemoryReason(const Plan& plan, const GpuSpec& gpu, double memory_margin);

/// "TP8 PP4 DP16 ... on 512 x h100-sxm5-80gb (dgx-h100)" style one-line name of a plan.
std::string PlanName(const Plan& plan);

/// Sentences comparing the recommendation with the scaling table: when fewer GPUs (or one GPU)
/// cost less, and what the extra GPUs buy in time.
std::vector<std::string> ScalingSentences(const Plan& chosen, const std::vector<ScalingRow>& rows);

/// Sentences on what the cost model assumes about the parts of `plan`'s layout that published
/// runs of its size rarely use and that it prices least directly: context parallelism (the
/// ring's exposed time, and the attention kernel's rate on the short chunks), ZeRO-3/FSDP (the
/// per-layer collectives, their prefetch overlap and what stays exposed), TP and EP overlap and
/// fp4; first, what reading the model approximated (ModelSpec::approximation_note). Empty when
/// there is none of them.
std::vector<std::string> LayoutAssumptions(const Plan& plan);

/// How much faster a causal attention forward kernel runs on `long_tokens`-token sequences than
/// on `short_tokens`-token ones, in FlashAttention-3's H100 benchmark (Shah et al. 2024, "Attention
/// forward speed, head dim 128, H100 SXM5", causal: FlashAttention-2, FlashAttention-3, cuDNN at
/// 512 to 16k tokens, log-linear between the measured lengths). Returns {lowest, highest} of
/// the three kernels' rate(long) / rate(short) - 1, or {-1, -1} when a length is outside
/// 512-16,384 tokens. Precondition: short_tokens <= long_tokens.
std::pair<double, double> ShortSequenceAttentionGap(double short_tokens, double long_tokens);

/// For a plan on a rack-scale template (econ.spare_hosts_per_domain >= 0): how its tray failures
/// are covered, e.g. "a failed tray is replaced from its rack's 2 spare trays (none free for 0.2%
/// of tray failures: 1.4 h of expected repair wait)" or "its racks keep no spare tray: each tray
/// failure waits for the tray's repair (1.0 d; 9.4 d expected over the run)", with `repair_s` the
/// repair time used. Empty for server templates.
std::string SpareTrayClause(const PlanEconomics& econ, double repair_s);

/// "smallest footprint found: 97.0 GB per GPU at TP8 PP16 ... on 64 x h100-sxm5-80gb; it has
/// 80.0 GB".
std::string SmallestFootprintSentence(const Plan& smallest, const GpuSpec& gpu);

}  // namespace gpuplan

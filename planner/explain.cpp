#include "planner/explain.h"

#include <algorithm>
#include <cmath>
#include <iterator>

#include "common/str_format.h"
#include "planner/economics.h"
#include "planner/report_document.h"
#include "planner/units_format.h"
#include "simulator/ep_overlap.h"
#include "simulator/gemm_time.h"
#include "simulator/job_spec_json.h"
#include "simulator/memory.h"
#include "simulator/shard.h"
#include "simulator/step_costs.h"

namespace gpuplan {

namespace {
// Thresholds of IntrinsicBound (stated in docs/PLANNER.md).
constexpr double kMemoryBoundFill = 0.90;
constexpr double kCommunicationBoundShare = 0.25;
constexpr double kBubbleBoundShare = 0.15;

double ExposedCommunication(const TimeBreakdown& b) {
  return b.tp_comm + b.cp_comm + b.pp_comm + b.dp_comm + b.ep_comm;
}

// FlashAttention-3 paper (Shah et al. 2024), figure "Attention forward speed, head dim 128
// (H100 80GB SXM5)", causal mask: TFLOP/s by sequence length.
constexpr double kBenchmarkTokens[] = {512, 1024, 2048, 4096, 8192, 16384};
constexpr double kBenchmarkTflops[][6] = {
    {191, 260, 298, 319, 333, 335},  // FlashAttention-2
    {292, 423, 521, 579, 602, 616},  // FlashAttention-3
    {315, 410, 484, 518, 529, 539},  // cuDNN
};

// Log-linear interpolation of one kernel's rate at `tokens` (inside the benchmark's range).
double BenchmarkRate(const double (&tflops)[6], double tokens) {
  size_t i = 0;
  while (i + 2 < std::size(kBenchmarkTokens) && tokens > kBenchmarkTokens[i + 1]) ++i;
  const double f = std::log(tokens / kBenchmarkTokens[i]) /
                   std::log(kBenchmarkTokens[i + 1] / kBenchmarkTokens[i]);
  return tflops[i] + f * (tflops[i + 1] - tflops[i]);
}
}  // namespace

std::pair<double, double> ShortSequenceAttentionGap(double short_tokens, double long_tokens) {
  const double lo = kBenchmarkTokens[0];
  const double hi = kBenchmarkTokens[std::size(kBenchmarkTokens) - 1];
  if (short_tokens < lo || long_tokens > hi || short_tokens > long_tokens) return {-1.0, -1.0};
  double low = 1e300, high = -1e300;
  for (const auto& kernel : kBenchmarkTflops) {
    const double gap = BenchmarkRate(kernel, long_tokens) / BenchmarkRate(kernel, short_tokens) - 1;
    low = std::min(low, gap);
    high = std::max(high, gap);
  }
  return {low, high};
}

std::string IntrinsicBound(const Plan& plan, double memory_margin) {
  const StepResult& s = plan.step;
  const TrainingSpec& tr = plan.job.training;
  if (tr.recompute != Recompute::kNone || plan.job.parallel.cpu_offload ||
      tr.activation_offload_layers > 0 ||
      s.memory.peak_bytes > kMemoryBoundFill * (1.0 - memory_margin) * s.memory.capacity_bytes) {
    return "memory";
  }
  if (ExposedCommunication(s.breakdown_s) >= kCommunicationBoundShare * s.step_time_s) {
    return "communication";
  }
  if (s.breakdown_s.bubble >= kBubbleBoundShare * s.step_time_s) return "pipeline bubble";
  return "compute";
}

std::string MemoryReason(const Plan& plan, const GpuSpec& gpu, double memory_margin) {
  JobSpec lighter = plan.job;
  std::string what;
  if (lighter.training.recompute != Recompute::kNone) {
    what = std::string(RecomputeName(lighter.training.recompute)) + " recomputation";
    if (lighter.training.recompute == Recompute::kSelective &&
        lighter.training.recompute_modules != kRecomputeCoreAttn) {
      what += " (" + RecomputeModulesName(lighter.training.recompute_modules, ", ") + ")";
    }
    lighter.training.recompute = Recompute::kNone;
    lighter.training.recompute_modules = kRecomputeCoreAttn;
  }
  if (lighter.parallel.cpu_offload) {
    what += std::string(what.empty() ? "" : " and ") + "CPU offload";
    lighter.parallel.cpu_offload = false;
  }
  if (lighter.training.activation_offload_layers > 0) {
    what += std::string(what.empty() ? "" : " and ") + "offloading the activations of " +
            std::to_string(lighter.training.activation_offload_layers) + " layers to host memory";
    lighter.training.activation_offload_layers = 0;
  }
  const double capacity = plan.step.memory.capacity_bytes;
  const std::string usable = FormatGb((1.0 - memory_margin) * capacity) + " usable (" +
                             FormatGb(capacity) + " less the " + FormatPercent(memory_margin) +
                             " margin)";
  if (what.empty()) {
    return "the layout uses " + FormatGb(plan.step.memory.peak_bytes) + " per GPU, " + usable;
  }
  const MemoryBreakdown without = EstimateMemory(lighter, gpu);
  return "without " + what + " it would need " + FormatGb(without.peak_bytes) + " per GPU, " +
         usable + "; with it " + FormatGb(plan.step.memory.peak_bytes);
}

std::string PlanName(const Plan& plan) {
  return LayoutSummary(plan.job) + " on " + std::to_string(plan.job.cluster.num_gpus) + " x " +
         plan.job.cluster.gpu + " (" + plan.node + ")";
}

std::string SpareTrayClause(const PlanEconomics& econ, double repair_s) {
  const int64_t spares = econ.spare_hosts_per_domain;
  if (spares < 0) return "";
  const std::string wait = econ.expected_repair_wait_s < 60
                               ? std::string("under a minute")
                               : FormatDuration(econ.expected_repair_wait_s);
  if (spares == 0) {
    return "its racks keep no spare tray: each tray failure waits for the tray's repair (" +
           FormatDuration(repair_s) + "; " + wait + " expected over the run)";
  }
  const std::string share = econ.no_spare_probability < 1e-3
                                ? std::string("under 0.1%")
                                : FormatPercent(econ.no_spare_probability);
  return "a failed tray is replaced from its rack's " + std::to_string(spares) + " spare " +
         Noun(spares, "tray", "trays") + " (none free for " + share + " of tray failures: " + wait +
         " of expected repair wait)";
}

std::vector<std::string> ScalingSentences(const Plan& chosen, const std::vector<ScalingRow>& rows) {
  std::vector<std::string> out;
  const ScalingRow* cheapest = nullptr;
  const ScalingRow* fastest = nullptr;
  for (const ScalingRow& r : rows) {
    if (!r.feasible || !IsPriced(r.plan)) continue;
    if (cheapest == nullptr ||
        r.plan.econ.expected_cost_usd < cheapest->plan.econ.expected_cost_usd) {
      cheapest = &r;
    }
    if (fastest == nullptr || r.plan.econ.expected_wall_s < fastest->plan.econ.expected_wall_s) {
      fastest = &r;
    }
  }
  if (cheapest == nullptr) return out;
  const int64_t n = chosen.job.cluster.num_gpus;
  const Plan& c = cheapest->plan;
  const std::string gpus =
      cheapest->gpus == 1 ? "One GPU" : std::to_string(cheapest->gpus) + " GPUs";
  if (cheapest->gpus < n) {
    out.push_back(gpus + " would cost less: " + FormatDuration(c.econ.expected_wall_s) + " for " +
                  FormatUsd(c.econ.expected_cost_usd) + ", against " +
                  FormatDuration(chosen.econ.expected_wall_s) + " for " +
                  FormatUsd(chosen.econ.expected_cost_usd) + " on " + std::to_string(n) +
                  "; the extra GPUs buy time, not savings.");
  } else if (cheapest->gpus == n && fastest != nullptr && fastest->gpus > n) {
    const Plan& f = fastest->plan;
    const double speedup = c.econ.expected_wall_s / f.econ.expected_wall_s;
    out.push_back(
        (n == 1 ? std::string("One GPU") : std::to_string(n) + " GPUs") +
        " is the cheapest choice; " + std::to_string(fastest->gpus) + " GPUs would finish in " +
        FormatDuration(f.econ.expected_wall_s) + " (" + FormatFixed(speedup, 1) + "x faster) for " +
        FormatUsd(f.econ.expected_cost_usd) + " (scaling efficiency " +
        FormatPercent(speedup * static_cast<double>(n) / static_cast<double>(fastest->gpus)) +
        ").");
  }
  return out;
}

std::vector<std::string> LayoutAssumptions(const Plan& plan) {
  std::vector<std::string> out;
  const ParallelSpec& p = plan.job.parallel;
  const TrainingSpec& tr = plan.job.training;
  const double step = plan.step.step_time_s;
  if (!plan.job.model.approximation_note.empty()) {
    out.push_back("Assumed for the model: " + plan.job.model.approximation_note +
                  " (docs/MODELS.md).");
  }
  if (p.cp > 1) {
    const double seq_tokens = static_cast<double>(tr.seq_len);
    const double piece_tokens = seq_tokens / static_cast<double>(p.cp);
    const double slower = AttentionLengthFactor(seq_tokens) / AttentionLengthFactor(piece_tokens);
    const std::pair<double, double> gap = ShortSequenceAttentionGap(piece_tokens, seq_tokens);
    const std::string benchmark =
        gap.first < 0
            ? "the benchmark the docs cite covers 512-16,384 tokens only"
            : "FlashAttention-3's H100 benchmark: " + FormatFixed(100.0 * gap.first, 0) + "-" +
                  FormatFixed(100.0 * gap.second, 0) + "% across FlashAttention-2, -3 and cuDNN";
    out.push_back("Assumed for CP" + std::to_string(p.cp) + ": each " + FormatCount(seq_tokens) +
                  "-token sequence runs attention as " + std::to_string(p.cp) + " ring steps on " +
                  FormatCount(piece_tokens) + "-token pieces; the model charges the K/V ring (" +
                  FormatDuration(plan.step.breakdown_s.cp_comm) + " exposed per step, " +
                  FormatPercent(plan.step.breakdown_s.cp_comm / step) +
                  "), the per-step merges, and each step's attention kernel at the rate of its " +
                  "piece, " + FormatFixed(100.0 * (slower - 1.0), 0) +
                  "% slower per FLOP than on whole sequences (" + benchmark +
                  "; docs/COST_MODEL.md, Context parallelism).");
  }
  if (p.zero_stage == 3 || p.fsdp) {
    // Per micro-batch: the cost model's gathers and the gradient reduce-scatter, for each layer of
    // the stage and the embedding/head unit; once per step where the stage stays gathered.
    const int64_t layers = StageLayers(plan.job, 0);
    const bool kept = FsdpKeepsStageGathered(plan.job);
    const int64_t collectives =
        kept ? (layers + 1) * 2
             : (layers + 1) * (kFsdpGathersPerMicroBatch + 1) * plan.step.microbatches;
    const std::string name = p.fsdp ? "FSDP" : "ZeRO-3";
    std::string replicas;
    if (p.dp_replicate > 1) {
      replicas = ", then all-reduces each gradient shard across the " +
                 std::to_string(p.dp_replicate) + " replicas of its shard group (" +
                 std::to_string(p.ShardRanks()) + " data-parallel ranks)";
    }
    const std::string pattern =
        kept
            ? "each pipeline stage gathers its layers' weights once, for the first micro-batch, "
              "keeps them and the unsharded gradients to the step's last backward (the stack "
              "does not reshard under pipelining), then reduce-scatters the gradients with nothing "
              "left to hide them"
            : std::string(
                  "every micro-batch gathers each layer's weights for forward and again "
                  "for backward") +
                  (tr.recompute == Recompute::kFull ? ", which its recomputation reuses," : "") +
                  " and reduce-scatters its gradients";
    out.push_back(
        "Assumed for " + name + ": " + pattern + " (" +
        FormatCount(static_cast<double>(collectives)) +
        " collectives per step on the first stage, each paying its ring's latency)" + replicas +
        "; prefetching hides all but the first layer's gather behind the neighbouring layers' " +
        "computation, charged at " + FormatPercent(kOverlapInterference) +
        " of the overlapped time for the kernels sharing the GPU; in all " +
        FormatDuration(plan.step.breakdown_s.dp_comm) + " of data-parallel communication per " +
        "step stays exposed (" + FormatPercent(plan.step.breakdown_s.dp_comm / step) +
        "; docs/COST_MODEL.md, FSDP / ZeRO-3).");
  }
  if (p.tp_overlap && p.tp > 1) {
    out.push_back(
        "Assumed for TP overlap: Megatron-LM --tp-comm-overlap with Transformer Engine's "
        "default userbuffers; it adds " +
        FormatDuration(plan.step.breakdown_s.tp_comm) + " per step (" +
        FormatPercent(plan.step.breakdown_s.tp_comm / step) +
        ") beyond the GEMMs (docs/COST_MODEL.md, Tensor parallelism).");
  }
  if (p.ep_overlap && p.ep > 1) {
    out.push_back(
        "Assumed for EP overlap: Megatron-Core --overlap-moe-expert-parallel-comm "
        "--delay-wgrad-compute, each all-to-all beside another micro-batch's computation, hiding " +
        FormatPercent(kEpOverlapEfficiency) +
        " of what the paired passes could (calibrated on one published pair); " +
        FormatDuration(plan.step.breakdown_s.ep_comm) + " of EP communication per step (" +
        FormatPercent(plan.step.breakdown_s.ep_comm / step) +
        ") stays exposed (docs/COST_MODEL.md, EP overlap).");
  }
  if (tr.recompute == Recompute::kSelective && tr.recompute_modules != kRecomputeCoreAttn) {
    const bool norm = (tr.recompute_modules & kRecomputeLayernorm) != 0;
    const bool act = (tr.recompute_modules & kRecomputeMoeAct) != 0;
    const bool mlp = (tr.recompute_modules & kRecomputeMlp) != 0;
    std::string what;
    if (norm || act) {
      what = std::string("each MoE layer's ") + (norm ? "pre-MLP norm output" : "") +
             (norm && act ? " and " : "") + (act ? "routed experts' activation output" : "") +
             (norm && act ? " are" : " is") +
             " discarded after use and re-run in the backward as a memory-bound pass";
    }
    if (mlp) {
      what += std::string(what.empty() ? "" : "; ") +
              "each dense layer's MLP is checkpointed: only its input is kept, and its forward "
              "(the pre-MLP norm, FC1, activation, FC2 and their TP collectives) runs again "
              "before its backward";
    }
    out.push_back(
        "Assumed for the recomputed modules: Megatron-Core --recompute-granularity selective "
        "--recompute-modules " +
        RecomputeModulesName(tr.recompute_modules, " ") + "; " + what +
        ((tr.recompute_modules & kRecomputeCoreAttn) != 0 ? ", beside the core attention's forward"
                                                          : "") +
        " (docs/COST_MODEL.md, Recomputation); no measured run checks their memory.");
  }
  if (tr.precision == Precision::kFp4) {
    out.push_back(
        "Assumed for fp4: Transformer Engine's NVFP4 recipe (Megatron-Core --fp4-format e2m1 "
        "--fp4-recipe nvfp4) with " +
        FormatPercent(kFp4Bf16LayerFraction) +
        " of the layers kept in bf16, random Hadamard transforms and block scales in each cast "
        "(docs/COST_MODEL.md, Quantized casts); no published run measured its speed. Whether "
        "fp4 reaches the quality of bf16 or fp8 training for this model and token count is your "
        "call: NVIDIA reports parity with fp8 for one 12B model on 10T tokens (arXiv:2509.25149).");
  }
  return out;
}

std::string SmallestFootprintSentence(const Plan& smallest, const GpuSpec& gpu) {
  return "smallest footprint found: " + FormatGb(smallest.step.memory.peak_bytes) + " per GPU at " +
         PlanName(smallest) + "; " + gpu.id + " has " +
         FormatGb(smallest.step.memory.capacity_bytes);
}

}  // namespace gpuplan

#include "planner/search.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <thread>

#include "common/limits.h"
#include "planner/economics.h"
#include "planner/export.h"
#include "simulator/cost_model.h"
#include "simulator/ep_overlap.h"
#include "simulator/framework.h"
#include "simulator/gemm_time.h"
#include "simulator/memory.h"
#include "simulator/moe_dispatch.h"
#include "simulator/shard.h"
#include "simulator/topology.h"
#include "simulator/tp_overlap.h"

namespace gpuplan {

namespace {

std::vector<int64_t> PowersOfTwoUpTo(int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

std::vector<int64_t> Divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// One recomputation setting the search tries: the level and, when selective, its modules.
struct RecomputeLevel {
  Recompute recompute;
  uint32_t modules;
};

// The search state of one hardware point: the job being mutated in place and the results.
class PointSearch {
 public:
  PointSearch(const PlanRequest& req, const HardwarePoint& point) : req_(req), point_(point) {
    out_.point = point;
    JobSpec& job = job_;
    job.model = req.model;
    job.cluster.gpu = point.gpu->id;
    job.cluster.num_gpus = point.num_gpus;
    job.cluster.gpus_per_node = std::min<int64_t>(point.node->gpus_per_node, point.num_gpus);
    job.cluster.inter_node = point.network->id;
    job.training.seq_len = req.seq_len;
    job.training.attention = req.attention;
    job.training.dropout = req.dropout;
    job.training.lora = req.lora;
    job.training.moe_dispatcher = req.moe_dispatcher;
    job.training.moe_load_imbalance = req.moe_load_imbalance;
    job.training.grad_reduce_bf16 = req.grad_reduce_bf16;
    job.training.framework = req.framework;
    job.overhead = req.overhead;
  }

  PointResult Run() {
    for (Precision precision : req_.precisions) {
      if (!(point_.gpu->PeakFlops(precision) > 0)) continue;
      job_.training.precision = precision;
      rates_ = CalibratedRates(*point_.gpu, precision, req_.measured);
      for (int64_t gbs : req_.global_batch_sizes) {
        job_.training.global_batch_size = gbs;
        steps_ = StepsFor(req_, gbs, req_.seq_len);
        tokens_ = steps_ * static_cast<double>(gbs * req_.seq_len);
        SearchModelParallel();
      }
    }
    return std::move(out_);
  }

 private:
  // TP within a node, CP, PP over the layers; DP takes the remaining GPUs.
  void SearchModelParallel() {
    const ModelSpec& m = job_.model;
    const int64_t n = point_.num_gpus;
    const int64_t overlap_domain = TpOverlapMaxRanks(*point_.gpu, job_.cluster.gpus_per_node);
    for (int64_t tp : PowersOfTwoUpTo(job_.cluster.gpus_per_node)) {
      if (m.num_attention_heads % tp != 0 ||
          (m.num_kv_heads % tp != 0 && tp % m.num_kv_heads != 0)) {
        ++out_.stats.pruned_invalid;
        continue;
      }
      for (int64_t cp : PowersOfTwoUpTo(n / tp)) {
        if (req_.seq_len % cp != 0 ||
            (cp > 1 && req_.seq_len / cp < kMinContextParallelChunkTokens)) {
          continue;
        }
        if (n % (tp * cp) != 0) continue;
        for (int64_t pp : Divisors(n / (tp * cp))) {
          if (pp > m.num_layers) break;
          // A pp that does not divide the layers gets SuggestStageSplit's first/last stages, or
          // the stack's own split (nanotron's cost-balanced stages) for every pp.
          const bool stack_split =
              job_.training.framework.pipeline_split == PipelineSplit::kCostBalanced && pp > 1;
          const std::optional<StageSplit> split =
              stack_split ? std::nullopt : SuggestStageSplit(m.num_layers, pp);
          if (!stack_split && m.num_layers % pp != 0 && !split) continue;
          ParallelSpec& par = job_.parallel;
          par = ParallelSpec{};
          par.tp = tp;
          par.cp = cp;
          par.pp = pp;
          if (split) {
            par.first_stage_layers = split->first;
            par.last_stage_layers = split->last;
          }
          if (stack_split) par.stage_layers = CostBalancedStageLayers(m, pp);
          par.dp = n / (tp * cp * pp);
          par.sequence_parallel = tp > 1;  // Megatron docs: always enable with TP
          // TP communication overlapped with the GEMMs (tp_overlap.h) where userbuffers can run:
          // both variants, since splitting the GEMMs can cost more than it hides.
          par.tp_overlap = false;
          SearchExpertParallel();
          if (tp > 1 && tp <= overlap_domain && job_.training.framework.tp_overlap) {
            par.tp_overlap = true;
            SearchExpertParallel();
          }
        }
      }
    }
  }

  void SearchExpertParallel() {
    const ModelSpec& m = job_.model;
    ParallelSpec& par = job_.parallel;
    if (!m.is_moe()) {
      par.ep = 1;
      SearchBatching();
      return;
    }
    // Expert TP: every power of two dividing tp (MoE Parallel Folding; Megatron's default
    // etp = tp among them); EP over the stage's tp x cp x dp ranks that etp leaves. Megatron-Core
    // needs sequence parallelism with tp > 1 and ep > 1, which SearchModelParallel sets.
    for (int64_t etp = 1; etp <= par.tp; etp *= 2) {
      if (par.tp % etp != 0 || m.ExpertFfn() % etp != 0) continue;
      // gpuplan models DeepEP without expert TP (job_spec_json.cpp).
      if (job_.training.moe_dispatcher == MoeDispatcher::kDeepEp && etp != 1) continue;
      par.etp = etp == par.tp ? 0 : etp;  // 0: follows tp, as a spec without etp
      for (int64_t ep : Divisors(m.moe_num_experts)) {
        if ((par.tp * par.cp * par.dp) % (etp * ep) != 0) continue;
        if (ep > 1 && job_.training.moe_dispatcher == MoeDispatcher::kDeepEp &&
            !DeepEpRuns(*point_.gpu, job_.cluster.gpus_per_node)) {
          continue;
        }
        par.ep = ep;
        SearchBatching();
      }
    }
    par.etp = 0;
  }

  // Micro-batch size and virtual pipeline stages.
  void SearchBatching() {
    ParallelSpec& par = job_.parallel;
    TrainingSpec& tr = job_.training;
    const int64_t gbs = tr.global_batch_size;
    if (gbs % par.dp != 0) {
      ++out_.stats.pruned_invalid;
      return;
    }
    // vpp divides every stage's layers; uneven splits (SuggestStageSplit) only with vpp = 1.
    const int64_t max_vpp = par.first_stage_layers > 0 || !par.stage_layers.empty()
                                ? 1
                                : job_.model.num_layers / par.pp;
    for (int64_t mb : PowersOfTwoUpTo(std::min(kMaxMicroBatch, gbs / par.dp))) {
      if (gbs % (mb * par.dp) != 0) continue;
      tr.micro_batch_size = mb;
      const int64_t micro = gbs / (mb * par.dp);
      // Beyond the documented limit (docs/JOB_SPEC.md): not a layout a job spec may give.
      if (micro > kMaxMicroBatchesPerStep) {
        ++out_.stats.pruned_invalid;
        continue;
      }
      for (int64_t vpp = 1; vpp <= max_vpp; ++vpp) {
        if (max_vpp % vpp != 0) continue;
        // Interleaving needs pp > 1 and (Megatron-LM) a micro-batch count divisible by pp.
        if (vpp > 1 && (par.pp == 1 || micro % par.pp != 0)) break;
        par.vpp = vpp;
        par.schedule = vpp > 1 ? Schedule::kInterleaved : Schedule::k1F1B;
        par.ep_overlap = false;
        SearchMemoryOptions();
        // EP communication overlapped with another micro-batch's computation (ep_overlap.h)
        // where the stack runs Megatron-Core's combined 1F1B schedule: both variants, since the
        // paired passes can take longer than the all-to-all they hide. Full recomputation,
        // which it cannot run with, is skipped in TryLayout.
        par.ep_overlap = true;
        const Recompute recompute = tr.recompute;
        tr.recompute = Recompute::kNone;
        const bool ep_overlap_runs = !EpOverlapProblem(job_).has_value();
        tr.recompute = recompute;
        if (ep_overlap_runs) SearchMemoryOptions();
        par.ep_overlap = false;
      }
    }
  }

  // ZeRO stage, then the cheapest recomputation and offload that fit. For a fixed layout more
  // recomputation only adds forward work and offload only adds host transfers and CPU Adam, so
  // the first fitting recompute level (without offload) beats every heavier one, and offload is
  // only worth trying with lighter recomputation than that.
  void SearchMemoryOptions() {
    ParallelSpec& par = job_.parallel;
    // The recompute levels in groups, cheaper groups first: none; selective recomputation of
    // each set of modules the stack and model can name (Megatron-Core --recompute-modules: the
    // core attention alone on another stack; on a stack that chooses them, every non-empty set
    // of core_attn, layernorm and moe_act where the model has MoE layers, and mlp where it has
    // dense ones); full. Each selective set re-runs a part of what full re-runs, so every level
    // of a group costs less than any of the next; within the selective group neither time nor
    // memory orders the sets, so every set that fits is timed.
    static constexpr RecomputeLevel kNoRecompute = {Recompute::kNone, kRecomputeCoreAttn};
    static constexpr RecomputeLevel kFullRecompute = {Recompute::kFull, kRecomputeCoreAttn};
    uint32_t all_modules = kRecomputeCoreAttn;
    if (job_.training.framework.recompute_modules) {
      if (job_.model.is_moe()) all_modules |= kRecomputeLayernorm | kRecomputeMoeAct;
      if (job_.model.DenseLayers() > 0) all_modules |= kRecomputeMlp;
    }
    // Tries each level of group `g` (0 none, 1 selective, 2 full); whether any fits.
    auto try_group = [&](int g, bool offload) {
      if (g == 0) return TryLayout(kNoRecompute, offload);
      if (g == 2) return TryLayout(kFullRecompute, offload);
      // Each module only discards what it recomputes, so the set of all of them needs the least
      // memory: when it does not fit, no other set does.
      if (!TryLayout({Recompute::kSelective, all_modules}, offload)) return false;
      // Its proper non-empty subsets, each once (s - 1 & all steps through them downwards).
      for (uint32_t modules = (all_modules - 1) & all_modules; modules != 0;
           modules = (modules - 1) & all_modules) {
        TryLayout({Recompute::kSelective, modules}, offload);
      }
      return true;
    };
    // Without data parallelism there is nothing to shard: stages 1-3 only differ from 0 by
    // allowing offload (ZeRO-Offload on one replica), so stage 1 is searched with offload only.
    const bool sharded = par.dp * par.cp > 1;
    const int max_zero = std::min(sharded ? 3 : 1, job_.training.framework.max_zero_stage);
    for (int zero = 0; zero <= max_zero; ++zero) {
      par.zero_stage = zero;
      // Megatron-LM's fp8 parameters need the distributed optimizer (ZeRO >= 1).
      job_.training.fp8_param_gather =
          req_.fp8_param_gather && job_.training.precision == Precision::kFp8 && zero >= 1;
      // ZeRO-3 also as hybrid sharding (HSDP): the shard group of dp/r x cp ranks replicated r
      // times, for every power of two r whose shard group still fills a node (smaller groups
      // keep the inter-node all-reduce and shard less) and that EP divides.
      for (int64_t r = 1; r <= (zero == 3 ? par.dp : 1); r *= 2) {
        if (par.dp % r != 0) break;
        par.dp_replicate = r;
        if (r > 1 && (par.tp * par.ShardRanks() < job_.cluster.gpus_per_node ||
                      (par.tp * par.ShardRanks()) % (par.ExpertTp() * par.ep) != 0)) {
          break;
        }
        // What the stack cannot run at all (its pipeline engine's rules; StackRunsLayout), and
        // groups that would straddle two scale-up domains (UntiledGroup; the job check refuses
        // them).
        if (!StackRunsLayout(job_).ok() || UntiledGroup(par, job_.cluster.gpus_per_node)) {
          ++out_.stats.pruned_invalid;
          continue;
        }
        int first_fit = 3;
        for (int group = 0; group < 3 && (sharded || zero == 0); ++group) {
          if (try_group(group, false)) {
            first_fit = group;
            break;
          }
        }
        if (first_fit > 0 && (sharded || zero == 0)) TryActivationOffload();
        // Offload: none on a host device, nor on a stack that keeps the optimizer on the GPU.
        if (zero == 0 || point_.gpu->HostDevice() || !job_.training.framework.cpu_offload) {
          continue;
        }
        for (int group = 0; group < first_fit; ++group) {
          if (try_group(group, true)) break;
        }
      }
      par.dp_replicate = 1;
    }
  }

  // Activation offload (training.activation_offload_layers) for a layout that does not fit
  // without recomputation: the fewest layers whose offload makes the peak fit, since each more
  // only adds host transfers. Megatron-Core offloads with pp 1 and no recomputation only. Searched
  // only where the model prices it well: over NVLink-C2C, each GPU's own link to its Grace, with
  // the host memory behind it known and holding the offloaded layers (on a PCIe host the GPUs'
  // concurrent copies share switch uplinks and host memory bandwidth, which the model does not
  // charge), and with the distributed optimizer (ZeRO <= 1), not Megatron-FSDP, with which
  // Megatron-LM does not document offloading.
  void TryActivationOffload() {
    const int64_t layers = job_.model.num_layers;
    const double host_bytes = point_.gpu->host_memory_bytes_per_gpu;
    if (job_.parallel.pp != 1 || !job_.training.framework.activation_offload || !(host_bytes > 0) ||
        job_.parallel.fsdp || job_.parallel.zero_stage > 1 || layers < 2) {
      return;
    }
    job_.training.recompute = Recompute::kNone;
    job_.training.recompute_modules = kRecomputeCoreAttn;
    job_.parallel.cpu_offload = false;
    const LayerActivations act = JobLayerActivations(job_);
    auto fits = [&](int64_t k) {
      job_.training.activation_offload_layers = k;
      return FitsWithMargin(EstimateMemory(job_, *point_.gpu), req_.memory_margin);
    };
    if (fits(layers - 1)) {
      int64_t lo = 1, hi = layers - 1;  // fits(hi) holds; the peak falls as k grows
      while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (fits(mid)) {
          hi = mid;
        } else {
          lo = mid + 1;
        }
      }
      job_.training.activation_offload_layers = lo;
      if (OffloadedActivationBytes(job_, act) <= host_bytes) {
        TryLayout({Recompute::kNone, kRecomputeCoreAttn}, false);
      }
    }
    job_.training.activation_offload_layers = 0;
  }

  // Checks memory (the peak must leave the request's margin free), and when it fits evaluates the
  // step and keeps the layout if it is among the fastest. Returns whether it fits.
  bool TryLayout(RecomputeLevel level, bool offload) {
    if (job_.parallel.ep_overlap && level.recompute == Recompute::kFull) {
      ++out_.stats.pruned_invalid;  // Megatron-Core refuses it (EpOverlapProblem)
      return false;
    }
    job_.training.recompute = level.recompute;
    job_.training.recompute_modules = level.modules;
    job_.parallel.cpu_offload = offload;
    ++out_.stats.configurations;
    const MemoryBreakdown mem = EstimateMemory(job_, *point_.gpu);
    out_.any_layout = true;
    if (mem.peak_bytes < smallest_peak_) {
      smallest_peak_ = mem.peak_bytes;
      out_.smallest = Plan{};
      out_.smallest.job = job_;
      PlaceOnTemplate(*point_.node, *point_.gpu, &out_.smallest);
      out_.smallest.step.memory = mem;
    }
    if (!FitsWithMargin(mem, req_.memory_margin)) {
      ++out_.stats.pruned_memory;
      return false;
    }
    ++out_.stats.evaluated;
    const StepResult step = EvaluateStep(job_, *point_.gpu, *point_.network, rates_);
    const double compute_time = steps_ * step.step_time_s;
    // With --confidence, layouts are ranked at their band's pessimistic end; within one point
    // the band depends only on whether the weights are sharded (BandStack).
    const Plan& banded = BandedPlan(job_.parallel.zero_stage == 3 || job_.parallel.fsdp);
    const double key = compute_time * banded.rank_factor;
    std::vector<Plan>& best = out_.best;
    if (best.size() == static_cast<size_t>(kKeepPerPoint) &&
        !(key < best.back().econ.compute_time_s * best.back().rank_factor)) {
      return true;
    }
    if (!req_.export_format.empty() && !CheckExportable(req_.export_format, job_).ok()) {
      ++out_.stats.pruned_export;
      return true;
    }
    Plan plan;
    plan.job = job_;
    PlaceOnTemplate(*point_.node, *point_.gpu, &plan);
    plan.step = step;
    plan.econ.steps = steps_;
    plan.econ.tokens = tokens_;
    plan.econ.compute_time_s = compute_time;
    plan.band = banded.band;
    plan.rank_factor = banded.rank_factor;
    auto at = std::upper_bound(best.begin(), best.end(), key, [](double k, const Plan& p) {
      return k < p.econ.compute_time_s * p.rank_factor;
    });
    best.insert(at, std::move(plan));
    if (best.size() > static_cast<size_t>(kKeepPerPoint)) best.pop_back();
    return true;
  }

  // A plan holding only the band and rank factor of this point's sharded or unsharded layouts,
  // computed on first use.
  const Plan& BandedPlan(bool sharded) {
    std::optional<Plan>& cached = banded_[sharded ? 1 : 0];
    if (!cached) {
      cached.emplace();
      cached->job = job_;
      AttachBand(req_, *point_.gpu, &*cached);
    }
    return *cached;
  }

  const PlanRequest& req_;
  const HardwarePoint& point_;
  PointResult out_;
  JobSpec job_;
  std::optional<Plan> banded_[2];
  DeviceRates rates_{};
  double steps_ = 0;
  double tokens_ = 0;
  double smallest_peak_ = std::numeric_limits<double>::infinity();
};

}  // namespace

std::vector<int64_t> CandidateGpuCounts(int64_t min_gpus, int64_t max_gpus, int gpus_per_node) {
  std::vector<int64_t> counts;
  const int64_t node = std::max(1, gpus_per_node);
  for (int64_t n = 1; n <= max_gpus; n *= 2) counts.push_back(n);
  for (int64_t nodes = 1; nodes * node <= max_gpus; nodes *= 2) {
    counts.push_back(nodes * node);
    if (3 * nodes * node <= max_gpus) counts.push_back(3 * nodes * node);
  }
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  // Above one node only whole nodes are rented.
  std::erase_if(counts, [&](int64_t n) { return n < min_gpus || (n > node && n % node != 0); });
  return counts;
}

PointResult SearchPoint(const PlanRequest& req, const HardwarePoint& point) {
  return PointSearch(req, point).Run();
}

std::vector<PointResult> SearchPoints(const PlanRequest& req,
                                      const std::vector<HardwarePoint>& points, int threads,
                                      ProgressSink* progress) {
  std::vector<PointResult> results(points.size());
  std::atomic<size_t> next{0};
  std::atomic<int64_t> done{0};
  const int64_t total = static_cast<int64_t>(points.size());
  auto worker = [&] {
    for (size_t i = next++; i < points.size(); i = next++) {
      if (progress != nullptr && progress->Cancelled()) return;
      results[i] = SearchPoint(req, points[i]);
      const int64_t finished = ++done;
      if (progress != nullptr) progress->Update(finished, total);
    }
  };
  const int n = std::max(1, std::min<int>(threads, static_cast<int>(points.size())));
  std::vector<std::thread> pool;
  for (int t = 1; t < n; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& th : pool) th.join();
  return results;
}

}  // namespace gpuplan

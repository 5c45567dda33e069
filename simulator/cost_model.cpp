#include "simulator/cost_model.h"

#include <algorithm>
#include <cmath>

#include "simulator/collective.h"
#include "simulator/flops.h"
#include "simulator/pipeline.h"
#include "simulator/shard.h"
#include "simulator/topology.h"

namespace gpuplan {
namespace {

// Causal masking: fused kernels skip the upper triangle of the score matrix, so they compute
// half of the s x s products (FlashAttention-2, Dao 2023, Sec. 3.1.1 "causal masking").
constexpr double kCausalFraction = 0.5;
// FlashAttention backward runs 5 matmuls per block against 2 in forward (it recomputes QK^T):
// 2.5x forward FLOPs (Dao 2023, Sec. 3.1.2).
constexpr double kFlashBackwardRatio = 2.5;
// Bytes moved per attention score by unfused softmax path, forward: scale+mask+softmax reads
// and writes the scores (2+2); dropout reads them and writes output and mask (2+2+1).
constexpr double kUnfusedScoreBytesWithDropout = 9.0;
constexpr double kUnfusedScoreBytesNoDropout = 4.0;
// Bytes per logit of the vocabulary-parallel cross-entropy, forward + backward: read the 16-bit
// logits, write/read fp32 softmax, write 16-bit gradients (Megatron's fused kernel).
constexpr double kCrossEntropyBytesPerLogit = 2 + 4 + 4 + 4 + 2;

// Kernel time of one layer for one micro-batch on one GPU.
struct LayerTime {
  double fwd_gemm = 0;     // projections and MLP
  double fwd_attn = 0;     // core attention
  double fwd_other = 0;    // memory-bound kernels
  double bwd = 0;          // backward kernels
  double recompute = 0;    // recomputed forward kernels during backward
  double tp_comm = 0;      // TP collectives of forward + backward (+ recompute)
  double cp_comm = 0;      // CP ring exchange (forward + backward)
  double ep_comm = 0;      // expert all-to-all (forward + backward)
  double Compute() const { return fwd_gemm + fwd_attn + fwd_other + bwd + recompute; }
};

struct Ctx {
  const JobSpec& job;
  const DeviceRates& r;
  GroupLink tp_link, cp_link, ep_link, dp_link, expert_dp_link, pp_link;
  double tokens = 0;      // tokens per micro-batch on one rank (b*s/cp)
  double act_bytes = 2;   // bytes per activation element
};

double LoraAdapterSeconds(const Ctx& c, double in, double out) {
  const double rank = static_cast<double>(c.job.training.lora.rank);
  return GemmSeconds(c.r, c.tokens, rank, in) + GemmSeconds(c.r, c.tokens, out, rank);
}

LayerTime EvaluateLayer(const Ctx& c, bool moe) {
  const JobSpec& job = c.job;
  const ModelSpec& m = job.model;
  const TrainingSpec& tr = job.training;
  const ParallelSpec& par = job.parallel;
  const DeviceRates& r = c.r;
  const double t = static_cast<double>(par.tp);
  const double T = c.tokens;
  const double h = static_cast<double>(m.hidden_size);
  const double d = static_cast<double>(m.HeadDim());
  const double a = static_cast<double>(m.num_attention_heads);
  const double q = a * d;
  const double kv = static_cast<double>(m.num_kv_heads) * d;
  const double s_full = static_cast<double>(tr.seq_len);
  const double b = static_cast<double>(tr.micro_batch_size);
  const bool swiglu = m.mlp == MlpKind::kSwiGlu;
  const bool dropout = tr.dropout;
  const bool lora = tr.lora.enabled;

  LayerTime lt;
  // Projections. Column-parallel QKV and FC1 split their outputs, row-parallel O and FC2 their
  // inputs, over t ranks (Shoeybi et al. 2019, Sec. 3).
  double gemm = GemmSeconds(r, T, (q + 2.0 * kv) / t, h) + GemmSeconds(r, T, h, q / t);
  double mlp_active = 1.0;
  double f = static_cast<double>(m.ffn_hidden_size);
  if (moe) {
    // Each token visits top_k routed experts (+ shared ones). With balanced routing a rank
    // computes T*top_k token-expert rows over its local experts (Lepikhin et al. 2020).
    f = static_cast<double>(m.ExpertFfn());
    mlp_active = static_cast<double>(m.moe_top_k + m.moe_shared_experts);
    gemm += GemmSeconds(r, T, static_cast<double>(m.moe_num_experts), h);  // router
  }
  const double up_width = (swiglu ? 2.0 : 1.0) * f / t;  // gate and up fused
  gemm += mlp_active * (GemmSeconds(r, T, up_width, h) + GemmSeconds(r, T, h, f / t));
  lt.fwd_gemm = gemm;

  // Core attention over the full sequence (CP: each rank's queries against all keys).
  const double heads_local = a / t;
  const double score_elems = heads_local * T * s_full;  // (b * s/cp) queries x s keys
  double attn_bwd = 0;
  if (tr.attention == AttentionImpl::kFlash) {
    const double flops = 4.0 * score_elems * d * kCausalFraction;
    lt.fwd_attn = flops / r.attention_flops_per_s + r.kernel_overhead_s;
    attn_bwd = kFlashBackwardRatio * flops / r.attention_flops_per_s + r.kernel_overhead_s;
  } else {
    const double batch = b * heads_local;
    const double s_local = T / b;
    const double gemms =
        GemmSeconds(r, s_local, s_full, d, batch) + GemmSeconds(r, s_local, d, s_full, batch);
    const double traffic = MemoryBoundSeconds(
        r, score_elems * (dropout ? kUnfusedScoreBytesWithDropout : kUnfusedScoreBytesNoDropout),
        dropout ? 2 : 1);
    lt.fwd_attn = gemms + traffic;
    attn_bwd = 2.0 * lt.fwd_attn;
  }

  // Memory-bound kernels, elements per token: two norms (read h, write h), two residual adds
  // (read 2h, write h; with dropout also a mask and the dropout itself), the activation (GELU
  // read f write f; SwiGLU read 2f write f), rotary embedding on q and k for SwiGLU-family
  // models. Norms and residuals run on all T tokens unless sequence parallelism splits them.
  const bool sp = par.sequence_parallel && par.tp > 1;
  const double replicated = (4.0 + 6.0 + (dropout ? 3.0 : 0.0)) * h * (sp ? T / t : T);
  const double activation = mlp_active * (swiglu ? 3.0 : 2.0) * f / t * T;
  const double rope = swiglu ? 2.0 * (q + kv) / t * T : 0.0;
  const double other_bytes = c.act_bytes * (replicated + activation + rope);
  lt.fwd_other = MemoryBoundSeconds(r, other_bytes, dropout ? 8 : 6);

  // Backward: data gradients and weight gradients, each a GEMM as large as the forward one
  // (2x forward). Frozen (LoRA) weights need data gradients only.
  lt.bwd = (lora ? 1.0 : 2.0) * lt.fwd_gemm + attn_bwd + 2.0 * lt.fwd_other;
  if (lora) {
    // Adapters: forward down(in->r) and up(r->out) GEMMs, backward 2x.
    const uint32_t tg = tr.lora.targets;
    double adapters = 0;
    if (tg & kLoraQ) adapters += LoraAdapterSeconds(c, h, q / t);
    if (tg & kLoraK) adapters += LoraAdapterSeconds(c, h, kv / t);
    if (tg & kLoraV) adapters += LoraAdapterSeconds(c, h, kv / t);
    if (tg & kLoraO) adapters += LoraAdapterSeconds(c, q / t, h);
    if ((tg & kLoraGate) && swiglu) adapters += mlp_active * LoraAdapterSeconds(c, h, f / t);
    if (tg & kLoraUp) adapters += mlp_active * LoraAdapterSeconds(c, h, f / t);
    if (tg & kLoraDown) adapters += mlp_active * LoraAdapterSeconds(c, f / t, h);
    lt.fwd_gemm += adapters;
    lt.bwd += 2.0 * adapters;
    if (tr.lora.base == BaseWeights::kNf4) {
      // QLoRA dequantises each frozen matrix before use: read 0.5 B, write and re-read 2 B per
      // parameter, in forward, backward and any recomputation.
      const double layer_params = (h * (q + 2.0 * kv) + q * h + mlp_active * f * h *
                                   (swiglu ? 3.0 : 2.0)) / t;
      const double dequant = MemoryBoundSeconds(r, 4.5 * layer_params, swiglu ? 7 : 6);
      lt.fwd_other += dequant;
      lt.bwd += dequant;
    }
  }

  // Recomputation (Korthikanti et al. 2022): full re-runs the layer's forward; selective
  // re-runs core attention, which FlashAttention's backward already does on its own.
  switch (tr.recompute) {
    case Recompute::kFull:
      lt.recompute = lt.fwd_gemm + lt.fwd_attn + lt.fwd_other;
      break;
    case Recompute::kSelective:
      lt.recompute = tr.attention == AttentionImpl::kUnfused ? lt.fwd_attn : 0.0;
      break;
    case Recompute::kNone:
      break;
  }

  // TP: per layer two all-reduces forward and two backward of the T x h activation (without SP)
  // or the same bytes as all-gather + reduce-scatter pairs (with SP; Korthikanti Sec. 4.2.2).
  if (par.tp > 1) {
    const double bytes = T * h * c.act_bytes;
    const double one = sp ? CollectiveSeconds(Collective::kAllGather, bytes, c.tp_link) +
                                CollectiveSeconds(Collective::kReduceScatter, bytes, c.tp_link)
                          : CollectiveSeconds(Collective::kAllReduce, bytes, c.tp_link);
    const double passes = tr.recompute == Recompute::kFull ? 3.0 : 2.0;  // fwd, bwd, recompute
    lt.tp_comm = 2.0 * passes * one;
  }
  // CP: ring attention passes each rank's K and V chunk around the ring (cp-1 hops) forward,
  // and K, V plus their gradients backward (Liu et al. 2023; Megatron-LM context parallel).
  if (par.cp > 1) {
    const double chunk = 2.0 * T * kv / t * c.act_bytes;
    const double hops = static_cast<double>(par.cp - 1);
    lt.cp_comm = 3.0 * hops * CollectiveSeconds(Collective::kSendRecv, chunk, c.cp_link);
  }
  // EP: dispatch and combine all-to-all of the routed tokens, forward and backward.
  if (moe && par.ep > 1) {
    const double bytes = T * static_cast<double>(m.moe_top_k) * h * c.act_bytes;
    lt.ep_comm = 4.0 * CollectiveSeconds(Collective::kAllToAll, bytes, c.ep_link);
  }
  return lt;
}

// Exposed part of communication `comm` overlapped with computation `window`, with the
// interference of the communication kernels on the computation.
double Exposed(double comm, double window) {
  return std::max(0.0, comm - window) + kOverlapInterference * std::min(comm, window);
}

}  // namespace

StepResult EvaluateStep(const JobSpec& job, const GpuSpec& gpu, const NetworkSpec& net) {
  return EvaluateStep(job, gpu, net, DatasheetRates(gpu, job.training.precision));
}

StepResult EvaluateStep(const JobSpec& job, const GpuSpec& gpu, const NetworkSpec& net,
                        const DeviceRates& rates) {
  const ModelSpec& m = job.model;
  const TrainingSpec& tr = job.training;
  const ParallelSpec& par = job.parallel;
  const ClusterLinks links = ResolveLinks(gpu, net, job.cluster.gpus_per_node);

  Ctx c{job, rates, {}, {}, {}, {}, {}, {}};
  c.tokens = static_cast<double>(tr.micro_batch_size * tr.seq_len) / static_cast<double>(par.cp);
  c.act_bytes = rates.activation_bytes;
  // Megatron rank order: tp fastest, then cp, then dp (ep inside dp), then pp.
  c.tp_link = PlaceGroup(links, par.tp, 1);
  c.cp_link = PlaceGroup(links, par.cp, par.tp);
  c.ep_link = PlaceGroup(links, par.ep, par.tp * par.cp);
  c.dp_link = PlaceGroup(links, par.dp * par.cp, par.tp);
  c.expert_dp_link = PlaceGroup(links, std::max<int64_t>(1, par.dp * par.cp / par.ep),
                                par.tp * par.ep);
  c.pp_link = PlaceGroup(links, par.pp, par.tp * par.cp * par.dp);

  const LayerTime dense = EvaluateLayer(c, false);
  const LayerTime moe = m.is_moe() ? EvaluateLayer(c, true) : LayerTime{};
  const double pp = static_cast<double>(par.pp);
  const double layers_stage = static_cast<double>(m.num_layers) / pp;
  const double moe_share =
      static_cast<double>(m.MoeLayers()) / static_cast<double>(m.num_layers);
  auto per_stage = [&](double LayerTime::*field) {
    return layers_stage * ((1.0 - moe_share) * dense.*field + moe_share * moe.*field);
  };
  auto per_stage_compute = [&] {
    return layers_stage * ((1.0 - moe_share) * dense.Compute() + moe_share * moe.Compute());
  };
  const double t = static_cast<double>(par.tp);
  const double V = static_cast<double>(m.vocab_size);
  const double h = static_cast<double>(m.hidden_size);

  // Per micro-batch, per stage: layer kernels, exposed TP/CP/EP communication.
  const double layers_compute = per_stage_compute();
  double tp_stage = per_stage(&LayerTime::tp_comm);
  if (par.tp_overlap) {
    // Megatron --tp-comm-overlap splits the GEMMs and overlaps the pieces with the collectives.
    tp_stage = Exposed(tp_stage, per_stage(&LayerTime::fwd_gemm) * 3.0);
  }
  const double attn_window = per_stage(&LayerTime::fwd_attn) * (1.0 + kFlashBackwardRatio);
  const double cp_stage = par.cp > 1 ? Exposed(per_stage(&LayerTime::cp_comm), attn_window) : 0;
  const double ep_stage = per_stage(&LayerTime::ep_comm);

  // First stage: embedding lookup and its backward scatter (memory-bound, T x h).
  const double embed = MemoryBoundSeconds(rates, 3.0 * c.tokens * h * c.act_bytes, 2);
  // Last stage: LM head GEMM (forward + 2x backward) and the cross-entropy.
  const double head_fwd = GemmSeconds(rates, c.tokens, V / t, h);
  const double head = (tr.lora.enabled ? 2.0 : 3.0) * head_fwd +
                      MemoryBoundSeconds(rates, kCrossEntropyBytesPerLogit * c.tokens * V / t, 4);

  // FSDP / ZeRO-3: each micro-batch gathers the stage's weights for forward and again for
  // backward, and reduce-scatters gradients; prefetching hides them behind that micro-batch's
  // computation except for the first layer's gather (Zhao et al. 2023, PyTorch FSDP, Sec. 3.3).
  const int zero = par.fsdp ? 3 : par.zero_stage;
  const ShardParams only = ParamsPerGpu(job, par.pp == 1 ? StageKind::kOnly : StageKind::kFirst);
  const double grad_bytes = (tr.precision == Precision::kFp32 || tr.precision == Precision::kTf32)
                                ? 4.0 : 2.0;
  double fsdp_per_mb = 0;
  double fsdp_comm_per_mb = 0;
  if (zero >= 3 && par.dp * par.cp > 1) {
    // Gathered size = the stage's full (TP-split) weights; reduce-scatter input = full gradients.
    const double weight_bytes = 2.0 * only.Total();
    const double grad_total = grad_bytes * only.trainable;
    const double gather = CollectiveSeconds(Collective::kAllGather, weight_bytes, c.dp_link);
    const double passes = tr.recompute == Recompute::kFull ? 3.0 : 2.0;
    fsdp_comm_per_mb = passes * gather +
                       CollectiveSeconds(Collective::kReduceScatter, grad_total, c.dp_link);
    const double window = layers_compute + embed + head;
    fsdp_per_mb = Exposed(fsdp_comm_per_mb, window) + gather / std::max(1.0, layers_stage);
  }

  const double stage_core = layers_compute + tp_stage + cp_stage + ep_stage;
  const double first = stage_core + embed + (par.pp == 1 ? head : 0.0) + fsdp_per_mb;
  const double last = par.pp == 1 ? first : stage_core + head + fsdp_per_mb;
  const double middle = stage_core + fsdp_per_mb;
  const double max_stage = std::max(first, last);
  const double sum_stages = par.pp == 1 ? first : first + last + (pp - 2.0) * middle;
  const int64_t micro = MicrobatchesPerStep(job);
  const double mm = static_cast<double>(micro);
  const PipelineTime pipe =
      PipelineStepTime(par.schedule, par.pp, micro, par.vpp, max_stage, sum_stages);

  StepResult res;
  res.microbatches = micro;
  TimeBreakdown& bd = res.breakdown_s;
  const double compute_max = std::max(layers_compute + embed + (par.pp == 1 ? head : 0.0),
                                      layers_compute + (par.pp == 1 ? embed : 0.0) + head);
  bd.compute = mm * compute_max;
  bd.tp_comm = mm * tp_stage;
  bd.cp_comm = mm * cp_stage;
  bd.ep_comm = mm * ep_stage;
  bd.dp_comm = mm * fsdp_per_mb;
  bd.bubble = pipe.bubble_s;
  // Stage imbalance (first vs last) shows up as compute of the slowest stage; keep the sum exact.
  bd.compute += pipe.total_s - pipe.bubble_s - mm * (compute_max + tp_stage + cp_stage +
                                                      ep_stage + fsdp_per_mb);

  // PP: activations (and their gradients) cross each stage boundary once per micro-batch per
  // model chunk; with Megatron's scatter-gather optimisation a rank sends 1/t of the tensor.
  if (par.pp > 1) {
    const double bytes = c.tokens * h * c.act_bytes / t;
    const double hop = CollectiveSeconds(Collective::kSendRecv, bytes, c.pp_link);
    const double v = par.schedule == Schedule::kInterleaved ? static_cast<double>(par.vpp) : 1.0;
    bd.pp_comm = 2.0 * hop * (mm * v + pp - 1.0);
  }

  // DP gradient synchronisation (non-ZeRO-3): all-reduce, or reduce-scatter + all-gather of the
  // updated weights with ZeRO-1/2 (Megatron distributed optimizer). Overlapped in buckets with
  // the last micro-batch's backward when dp_overlap (PyTorch DDP, Li et al. 2020, Sec. 3.2.3).
  const ShardParams worst = ParamsPerGpu(job, par.pp == 1 ? StageKind::kOnly : StageKind::kLast);
  const ShardParams biggest = worst.Total() >= only.Total() ? worst : only;
  if (zero < 3 && par.dp * par.cp > 1) {
    const double dense_share = biggest.Total() > 0 ? biggest.dense / biggest.Total() : 1.0;
    const double trainable = biggest.trainable;
    auto sync = [&](double params, const GroupLink& link) {
      const double bytes = grad_bytes * params;
      if (zero >= 1) {
        return CollectiveSeconds(Collective::kReduceScatter, bytes, link) +
               CollectiveSeconds(Collective::kAllGather, 2.0 * params, link);
      }
      return CollectiveSeconds(Collective::kAllReduce, bytes, link);
    };
    double comm = sync(trainable * dense_share, c.dp_link);
    if (biggest.expert > 0) comm += sync(trainable * (1.0 - dense_share), c.expert_dp_link);
    if (par.dp_overlap) {
      const double bucket = sync(std::min(trainable, kGradBucketParams), c.dp_link);
      const double window = layers_stage * ((1.0 - moe_share) * dense.bwd + moe_share * moe.bwd);
      bd.dp_comm += Exposed(comm, window) + bucket;
    } else {
      bd.dp_comm += comm;
    }
  }

  // Optimizer step over this rank's shard of the trainable parameters.
  const double opt_params = biggest.trainable / (zero >= 1 ? static_cast<double>(par.dp * par.cp) : 1.0);
  if (par.cpu_offload) {
    bd.optimizer = opt_params / kCpuAdamParamsPerSecond +
                   (grad_bytes + 2.0) * opt_params / gpu.pcie_bytes_per_s;
  } else {
    bd.optimizer = MemoryBoundSeconds(rates, kAdamBytesPerParam * opt_params, 10);
  }

  res.step_time_s = bd.Total();
  const double tokens_step = static_cast<double>(tr.global_batch_size * tr.seq_len);
  const double gpus = static_cast<double>(job.cluster.num_gpus);
  res.tokens_per_s = tokens_step / res.step_time_s;
  res.tokens_per_s_per_gpu = res.tokens_per_s / gpus;
  res.model_flops_per_step = TrainingStepModelFlops(m, static_cast<double>(tr.seq_len),
                                                    static_cast<double>(tr.global_batch_size),
                                                    tr.lora.enabled);
  double recompute_flops = 0;
  const double seqs = static_cast<double>(tr.global_batch_size);
  const double s = static_cast<double>(tr.seq_len);
  if (tr.recompute == Recompute::kFull) {
    recompute_flops = ModelForwardFlopsPerSequence(m, s) - LogitsForwardFlops(m, s);
  } else if (tr.recompute == Recompute::kSelective && tr.attention == AttentionImpl::kUnfused) {
    // With fused attention, selective recompute re-runs nothing beyond the kernel's own backward.
    recompute_flops = static_cast<double>(m.num_layers) * DenseLayerForwardFlops(m, s).attn_core;
  }
  res.hardware_flops_per_step = res.model_flops_per_step + recompute_flops * seqs;
  const double peak = gpu.PeakFlops(tr.precision);
  res.model_tflops_per_gpu = res.model_flops_per_step / res.step_time_s / gpus / 1e12;
  res.mfu = res.model_flops_per_step / res.step_time_s / gpus / peak;
  res.hfu = res.hardware_flops_per_step / res.step_time_s / gpus / peak;
  res.memory = EstimateMemory(job, gpu);
  return res;
}

}  // namespace gpuplan

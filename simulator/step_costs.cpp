#include "simulator/step_costs.h"

#include <algorithm>
#include <cmath>

#include "simulator/ep_overlap.h"
#include "simulator/memory.h"
#include "simulator/moe_dispatch.h"
#include "simulator/shard.h"
#include "simulator/topology.h"
#include "simulator/tp_overlap.h"

namespace gpuplan {
namespace {

// Causal masking: fused kernels skip the upper triangle of the score matrix, so they compute
// half of the s x s products (FlashAttention-2, Dao 2023, Sec. 3.1.1 "causal masking").
constexpr double kCausalFraction = 0.5;
// Bytes moved per attention score by unfused softmax path, forward: scale+mask+softmax reads
// and writes the scores (2+2); dropout reads them and writes output and mask (2+2+1).
constexpr double kUnfusedScoreBytesWithDropout = 9.0;
constexpr double kUnfusedScoreBytesNoDropout = 4.0;
// Bytes per logit of the vocabulary-parallel cross-entropy, forward + backward: read the 16-bit
// logits, write/read fp32 softmax, write 16-bit gradients (Megatron's fused kernel).
constexpr double kCrossEntropyBytesPerLogit = 2 + 4 + 4 + 4 + 2;
// Kernels per ring-attention step for the merge: forward, the output and the log-sum-exp
// corrections; backward, the dQ and the dK/dV accumulations (TE context_parallel.py).
constexpr double kCpMergeKernels = 2;

struct Ctx {
  const JobSpec& job;
  const DeviceRates& r;
  GroupLink tp_link, etp_link, cp_link, ep_link, dp_link, expert_dp_link, pp_link, shard_link,
      replicate_link;
  double tokens = 0;     // tokens per micro-batch on one rank (b*s/cp)
  double act_bytes = 2;  // bytes per activation element
  // The stack's attention kernel on this GPU against the architecture's reference kernel, whose
  // rate DeviceRates holds (FrameworkSpec::attention_kernels).
  double attention_speed = 1;
};

// Bytes moved per frozen base parameter to convert it into GEMM operands of `operand_bytes`
// (read the stored copy, write and re-read the converted one), or 0 when the GEMMs read the
// stored copy directly: 16-bit bases (the checks in job_spec_json.cpp keep them at 16-bit math)
// and fp8 bases under fp8 math.
double FrozenBaseCastBytesPerParam(const TrainingSpec& tr, double operand_bytes) {
  const bool direct = tr.lora.base == BaseWeights::kSame || tr.lora.base == BaseWeights::kBf16 ||
                      tr.lora.base == BaseWeights::kFp16 ||
                      (tr.lora.base == BaseWeights::kFp8 && tr.precision == Precision::kFp8);
  return direct ? 0.0 : FrozenBaseBytesPerParam(tr) + 2.0 * operand_bytes;
}

double LoraAdapterSeconds(const Ctx& c, double in, double out) {
  const double rank = static_cast<double>(c.job.training.lora.rank);
  return GemmSeconds(c.r, c.tokens, rank, in) + GemmSeconds(c.r, c.tokens, out, rank);
}

LayerCosts EvaluateLayer(const Ctx& c, bool moe) {
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

  LayerCosts lt;
  // Projections. Column-parallel QKV and FC1 split their outputs, row-parallel O and FC2 their
  // inputs, over t ranks (Shoeybi et al. 2019, Sec. 3).
  double gemm = GemmSeconds(r, T, (q + 2.0 * kv) / t, h) + GemmSeconds(r, T, h, q / t);
  double gemm_flops = 2.0 * T * h * (q + 2.0 * kv + q) / t;
  // Sequence parallelism leaves each TP rank T/t of the tokens outside the TP regions.
  const bool sp = par.sequence_parallel && par.tp > 1;
  const double local_tokens = sp ? T / t : T;
  double tp_mlps = 1.0;  // MLPs split over t: the dense one, or a MoE layer's shared experts
  double f = static_cast<double>(m.ffn_hidden_size);
  // Routed-expert GEMMs: `routed` of them per token, each `routed_rows` tall and split over e.
  const double imbalance = MoeRankImbalance(job);
  double routed = 0.0;
  double routed_rows = T;
  double local_experts = 0.0;  // routed experts held by this rank
  const double e = static_cast<double>(par.ExpertTp());
  if (moe) {
    // Each token visits top_k routed experts (+ shared ones). With balanced routing a rank
    // computes T*top_k token-expert rows over its local experts (Lepikhin et al. 2020).
    // Megatron-Core's dispatcher sends each rank's local tokens over EP, then gathers the
    // e ranks of the expert TP group: a rank runs e/t x T rows per routed copy at width f/e
    // (token_dispatcher.py: permute -> A2A(EP) -> AG(ETP)); the same FLOPs as f/t on T rows.
    // Shared experts follow the dense TP. The router scores the rank's local tokens.
    // The busiest EP rank holds moe_load_imbalance x the mean copies (at most all of them) and
    // paces the layer.
    f = static_cast<double>(m.ExpertFfn());
    routed = static_cast<double>(m.moe_top_k);
    routed_rows = T * e / t * imbalance;
    tp_mlps = static_cast<double>(m.moe_shared_experts);
    const double experts = static_cast<double>(m.moe_num_experts);
    local_experts = experts / static_cast<double>(par.ep);
    gemm += GemmSeconds(r, local_tokens, experts, h);  // router
    gemm_flops += 2.0 * local_tokens * h * experts;
  }
  const double gate_up = swiglu ? 2.0 : 1.0;  // gate and up fused
  const double up_width = gate_up * f / t;
  double mlp_gemm = tp_mlps * (GemmSeconds(r, T, up_width, h) + GemmSeconds(r, T, h, f / t));
  gemm_flops += tp_mlps * 2.0 * T * h * (up_width + f / t);
  // What the routed experts' backward GEMMs take beyond the 2x forward charged below for every
  // GEMM: each local expert's weight gradient reduces over its own rows only.
  double routed_dgrad_extra = 0.0;
  double routed_wgrad_extra = 0.0;
  if (moe) {
    // The rank's routed rows spread over its local experts, one GEMM each (GroupedGemmPasses).
    const double expert_rows = routed * routed_rows / local_experts;
    const GemmPasses fc1 = GroupedGemmPasses(r, local_experts, expert_rows, gate_up * f / e, h);
    const GemmPasses fc2 = GroupedGemmPasses(r, local_experts, expert_rows, h, f / e);
    const double forward = fc1.forward_s + fc2.forward_s;
    mlp_gemm += forward;
    routed_dgrad_extra = fc1.dgrad_s + fc2.dgrad_s - forward;
    routed_wgrad_extra = fc1.wgrad_s + fc2.wgrad_s - forward;
    gemm_flops += routed * 2.0 * routed_rows * h * (gate_up * f / e + f / e);
  }
  // Weights of the layer's GEMMs on this rank: the attention projections and the dense (or
  // shared) MLPs split over t, every local routed expert split over e (gate, up and down, or fc1
  // and fc2).
  const double layer_weights = (h * (q + 2.0 * kv) + q * h) / t +
                               (tp_mlps / t + local_experts / e) * f * h * (gate_up + 1.0);
  const double mlp_active = tp_mlps + routed;
  lt.fwd_gemm = gemm + mlp_gemm;

  // Core attention over the full sequence (CP: each rank's queries against all keys).
  const double heads_local = a / t;
  const double score_elems = heads_local * T * s_full;  // (b * s/cp) queries x s keys
  if (tr.attention == AttentionImpl::kFlash) {
    // A fused kernel is slower per FLOP on shorter sequences (AttentionLengthFactor). Under CP
    // each ring step's kernel sees a chunk of s/cp tokens: the diagonal step s/cp queries against
    // s/cp keys, the others half of that against all of it (taken at s/cp as well). A layer of
    // local attention skips the key blocks outside its window (FlashAttention's window_size,
    // cuDNN's sliding window): its queries attend CausalKeysPerQuery keys, at the rate of a
    // sequence as long as the window. The layer's time is the average over the model's layers.
    const double chunk = s_full / static_cast<double>(par.cp);
    auto seconds = [&](double keys, double tokens) {
      const double flops = 4.0 * heads_local * T * keys * d;
      const double speed =
          AttentionLengthFactor(tokens, r.attention_half_rate_tokens) * c.attention_speed;
      return std::pair{flops, flops / speed};
    };
    const double local = LocalAttentionShare(m);
    const auto [full_flops, full_work] = seconds(s_full * kCausalFraction, chunk);
    double flops = full_flops;
    double work = full_work;
    if (local > 0) {
      const auto [local_flops, local_work] =
          seconds(CausalKeysPerQuery(m, s_full, true),
                  std::min(chunk, static_cast<double>(m.attention_window)));
      flops = (1.0 - local) * full_flops + local * local_flops;
      work = (1.0 - local) * full_work + local * local_work;
    }
    gemm_flops += flops;
    lt.fwd_attn = work / r.attention_flops_per_s + r.kernel_overhead_s;
    lt.bwd_attn =
        kFlashBackwardRatio * work / r.attention_backward_flops_per_s + r.kernel_overhead_s;
  } else {
    const double batch = b * heads_local;
    const double s_local = T / b;
    const double gemms =
        GemmSeconds(r, s_local, s_full, d, batch) + GemmSeconds(r, s_local, d, s_full, batch);
    const double traffic = MemoryBoundSeconds(
        r, score_elems * (dropout ? kUnfusedScoreBytesWithDropout : kUnfusedScoreBytesNoDropout),
        dropout ? 2 : 1);
    lt.fwd_attn = gemms + traffic;
    gemm_flops += 4.0 * score_elems * d;
    lt.bwd_attn = 2.0 * lt.fwd_attn;
  }
  if (par.cp > 1) {
    // Ring attention (Transformer Engine AttnFuncWithCPAndKVP2P, Megatron-LM's CP) runs core
    // attention as cp steps, one attention kernel per step against the K/V chunk in hand, and
    // folds each step's partial output into the running one (online-softmax correction of the
    // output and its log-sum-exp: read both outputs, write one). Backward runs cp attention
    // kernels and accumulates each step's dQ and dK/dV the same way. Causal load balancing (two
    // of 2cp sequence chunks per rank) gives every step the same work, so the FLOPs above stand.
    const double steps = static_cast<double>(par.cp);
    const double out_bytes = T * q / t * c.act_bytes;
    const double kv_bytes = T * 2.0 * kv / t * c.act_bytes;
    lt.fwd_attn += (steps - 1.0) *
                   (r.kernel_overhead_s + MemoryBoundSeconds(r, 3.0 * out_bytes, kCpMergeKernels));
    lt.bwd_attn += (steps - 1.0) * r.kernel_overhead_s +
                   steps * MemoryBoundSeconds(r, 3.0 * (out_bytes + kv_bytes), kCpMergeKernels);
  }

  // Memory-bound kernels, elements per token: two norms (read h, write h), two residual adds
  // (read 2h, write h; with dropout also a mask and the dropout itself), the activation (GELU
  // read f write f; SwiGLU read 2f write f), rotary embedding on q and k for SwiGLU-family
  // models. Norms and residuals run on all T tokens unless sequence parallelism splits them.
  const double replicated = (4.0 + 6.0 + (dropout ? 3.0 : 0.0)) * h * (sp ? T / t : T);
  // MLPs a token passes through on this rank (dense, or shared + routed on the busiest EP rank).
  const double mlp_visits = tp_mlps + routed * imbalance;
  const double activation = mlp_visits * (swiglu ? 3.0 : 2.0) * f / t * T;
  const double rope = swiglu ? 2.0 * (q + kv) / t * T : 0.0;
  // Eager stacks' unfused element-wise code (FrameworkSpec::unfused_passes): the extra element
  // moves per element of each tensor, one kernel per two moves.
  const UnfusedPasses& u = tr.framework.unfused_passes;
  const double unfused_mlp = swiglu ? u.swiglu * mlp_visits * f / t * T : 0.0;
  const double unfused_attention = ((swiglu ? u.rotary * (q + kv) : 0.0) + u.qkv * (q + 2.0 * kv) +
                                    u.kv * 2.0 * kv + u.attention_output * q) /
                                   t * T;
  const double unfused_kernels =
      std::ceil(((swiglu ? u.swiglu + u.rotary : 0.0) + u.qkv + u.kv + u.attention_output) / 2.0);
  const double activation_all = activation + unfused_mlp;
  const double elements = replicated + activation_all + rope + unfused_attention;
  const double kernels = (dropout ? 8 : 6) + unfused_kernels;
  lt.fwd_other = MemoryBoundSeconds(r, c.act_bytes * elements, kernels);
  // Backward moves each element twice (the gradient in, the gradient out, beside the input).
  double bwd_other = 2.0 * lt.fwd_other;
  // The MLP's share: its GEMMs and its activation's bytes of the memory-bound kernels.
  double mlp_other = lt.fwd_other * activation_all / elements;
  double mlp_bwd_other = 2.0 * mlp_other;
  const ElementwiseTimes& norm_times = swiglu ? r.host_kernels.rmsnorm : r.host_kernels.layernorm;
  const ElementwiseTimes& act_times = swiglu ? r.host_kernels.swiglu : r.host_kernels.gelu;
  if (norm_times.Measured() && act_times.Measured()) {
    // The host device's norms and activation at their measured times per element (the two norms
    // over h per token, the activation over its f/t outputs per MLP visit); the residual adds,
    // rotary and unfused passes stay priced by their bytes. HostKernelTimes says why.
    const double norm_elements = 2.0 * h * local_tokens;
    const double act_outputs = mlp_visits * f / t * T;
    const double rest = elements - 2.0 * norm_elements - activation;
    constexpr double kMeasuredKernels = 3;  // the two norms and the activation
    const double rest_s = MemoryBoundSeconds(r, c.act_bytes * rest, kernels - kMeasuredKernels);
    const double mlp_rest_s = rest > 0 ? rest_s * unfused_mlp / rest : 0.0;
    lt.fwd_other =
        norm_times.forward_s * norm_elements + act_times.forward_s * act_outputs + rest_s;
    bwd_other =
        norm_times.backward_s * norm_elements + act_times.backward_s * act_outputs + 2.0 * rest_s;
    mlp_other = act_times.forward_s * act_outputs + mlp_rest_s;
    mlp_bwd_other = act_times.backward_s * act_outputs + 2.0 * mlp_rest_s;
  }
  if (moe) {
    // Token permutation around the experts (MoePermutationOf), part of the layer's non-expert
    // work (EP overlap's attention node); backward moves the same bytes once.
    const MoePermutation p =
        MoePermutationOf(routed, local_tokens, routed * routed_rows, local_experts, h, c.act_bytes);
    const double permutation = MemoryBoundSeconds(r, p.bytes, p.kernels);
    lt.fwd_other += permutation;
    bwd_other += permutation;
  }
  // Backward GEMMs: data gradients and (trainable weights only) weight gradients.
  const double bwd_gemm_extra = routed_dgrad_extra + (lora ? 0.0 : routed_wgrad_extra);
  lt.mlp_fwd = mlp_gemm + mlp_other;
  lt.mlp_wgrad = lora ? 0.0 : mlp_gemm + routed_wgrad_extra;
  lt.mlp_bwd = (lora ? 1.0 : 2.0) * mlp_gemm + bwd_gemm_extra + mlp_bwd_other;

  // Quantized GEMMs (Transformer Engine). fp8 (delayed scaling): each GEMM operand is cast from
  // 16 bits to fp8 together with its transpose, which the other pass's GEMM reads (TE's fused
  // cast-transpose: read 2 bytes, write 1 + 1 per element). Forward casts the four projections'
  // inputs, or only transposes the QKV and FC1 inputs where the norm writes them in fp8 (the
  // stack's fp8_norm_fused_cast: TE's LayerNormLinear/LayerNormMLP); backward casts the four
  // output gradients; the weights are cast every micro-batch or once per step
  // (fp8_weight_cast_every_microbatch). fp4 (NVFP4, QuantizedCast): two kernels per tensor, the
  // norms write no fp4, and only the layers not kept in bf16 cast. The LM head stays 16-bit.
  double quant_fwd = 0.0;
  double quant_bwd = 0.0;
  double quant_mlp_inputs = 0.0;  // the FC1 and FC2 input casts of quant_fwd
  if (QuantizedLinears(tr.precision)) {
    const FrameworkSpec& stack = tr.framework;
    const QuantizedCast cast = QuantizedCastOf(tr.precision);
    const double norm_fed = (h + mlp_visits * h) * T;          // QKV and FC1 inputs
    const double other_in = (q / t + mlp_visits * f / t) * T;  // O and FC2 inputs
    const double grads =
        ((q + 2.0 * kv) / t + h + mlp_visits * gate_up * f / t + mlp_visits * h) * T;
    const double weight_casts =
        stack.fp8_weight_cast_every_microbatch
            ? 1.0
            : 1.0 / static_cast<double>(std::max<int64_t>(1, MicrobatchesPerStep(job)));
    const double norm_bytes = stack.fp8_norm_fused_cast ? cast.norm_fed_bytes : cast.bytes;
    const double fwd_bytes =
        norm_bytes * norm_fed + cast.bytes * other_in + cast.bytes * layer_weights * weight_casts;
    const double k = cast.kernels_per_tensor;
    quant_fwd = cast.layer_share * MemoryBoundSeconds(r, fwd_bytes, k * (4.0 + 4.0 * weight_casts));
    quant_mlp_inputs =
        cast.layer_share *
        MemoryBoundSeconds(r, (norm_bytes * h + cast.bytes * f / t) * mlp_visits * T, k * 2.0);
    quant_bwd = cast.layer_share * MemoryBoundSeconds(r, cast.bytes * grads, k * 4.0);
  }

  // Backward: data gradients and weight gradients, each a GEMM as large as the forward one
  // (2x forward; the routed experts' as GroupedGemmPasses prices them). Frozen (LoRA) weights
  // need data gradients only.
  lt.bwd = (lora ? 1.0 : 2.0) * lt.fwd_gemm + bwd_gemm_extra + lt.bwd_attn + bwd_other + quant_bwd;
  lt.fwd_other += quant_fwd;
  lt.wgrad = lora ? 0.0 : lt.fwd_gemm + routed_wgrad_extra;
  // The MLP's forward work beyond lt.mlp_fwd that its re-run repeats (recompute_modules mlp):
  // its adapters, its inputs' quantizing casts and its frozen weights' conversion.
  double mlp_fwd_extra = quant_mlp_inputs;
  if (lora) {
    // Adapters: forward down(in->r) and up(r->out) GEMMs, backward 2x.
    const uint32_t tg = tr.lora.targets;
    double adapters = 0;
    if (tg & kLoraQ) adapters += LoraAdapterSeconds(c, h, q / t);
    if (tg & kLoraK) adapters += LoraAdapterSeconds(c, h, kv / t);
    if (tg & kLoraV) adapters += LoraAdapterSeconds(c, h, kv / t);
    if (tg & kLoraO) adapters += LoraAdapterSeconds(c, q / t, h);
    double mlp_adapters = 0;
    if ((tg & kLoraGate) && swiglu) mlp_adapters += mlp_active * LoraAdapterSeconds(c, h, f / t);
    if (tg & kLoraUp) mlp_adapters += mlp_active * LoraAdapterSeconds(c, h, f / t);
    if (tg & kLoraDown) mlp_adapters += mlp_active * LoraAdapterSeconds(c, f / t, h);
    adapters += mlp_adapters;
    mlp_fwd_extra += mlp_adapters;
    lt.fwd_gemm += adapters;
    lt.bwd += 2.0 * adapters;
    lt.wgrad += adapters;
    const double cast_bytes = FrozenBaseCastBytesPerParam(tr, c.act_bytes);
    if (cast_bytes > 0) {
      // A frozen base stored narrower than the GEMM operands is converted before each use:
      // QLoRA dequantises each NF4 matrix (Dettmers et al. 2023, Sec. 3), an fp8-stored base
      // under 16-bit math is cast; in forward, backward and any recomputation.
      const double cast = MemoryBoundSeconds(r, cast_bytes * layer_weights, swiglu ? 7 : 6);
      lt.fwd_other += cast;
      lt.bwd += cast;
      const double mlp_weights = tp_mlps / t * f * h * (gate_up + 1.0);
      mlp_fwd_extra += MemoryBoundSeconds(r, cast_bytes * mlp_weights, swiglu ? 3 : 2);
    }
  }

  // Recomputation (Korthikanti et al. 2022): full re-runs the layer's forward; selective
  // re-runs the modules it names (Megatron-Core --recompute-modules, RecomputeModule). The core
  // attention's forward runs again whatever its kernel: Megatron checkpoints the core attention
  // module (Attention._checkpointed_attention_forward runs tensor_parallel.checkpoint around
  // TEDotProductAttention or flash attention), so the backward first runs the kernel's forward
  // again for the output and log-sum-exp it did not keep; the score recomputation inside
  // FlashAttention's backward (Dao et al. 2022, Alg. 4) is besides. A MoE layer's pre-MLP norm
  // (layernorm) runs again over the rank's tokens (read h, write h), and its routed experts'
  // activation (moe_act) over their FC1 outputs (read 2f write f for SwiGLU, read f write f for
  // GELU), memory-bound passes priced as their forward ones above. A dense layer's checkpointed
  // MLP (mlp) runs its forward again: the pre-MLP norm that Transformer Engine fuses into FC1
  // (read h, write h per local token), FC1, the activation and FC2 (lt.mlp_fwd) and what else its
  // forward did (mlp_fwd_extra); its TP collectives are below.
  switch (tr.recompute) {
    case Recompute::kFull:
      lt.recompute = lt.fwd_gemm + lt.fwd_attn + lt.fwd_other;
      break;
    case Recompute::kSelective: {
      if (Recomputes(tr, kRecomputeCoreAttn)) lt.recompute += lt.fwd_attn;
      double rerun_elements = 0;
      double rerun_kernels = 0;
      if (moe && Recomputes(tr, kRecomputeLayernorm)) {
        rerun_elements += 2.0 * h * local_tokens;
        rerun_kernels += 1;
      }
      if (moe && Recomputes(tr, kRecomputeMoeAct)) {
        rerun_elements += routed * imbalance * (swiglu ? 3.0 : 2.0) * f / t * T;
        rerun_kernels += 1;
      }
      if (!moe && Recomputes(tr, kRecomputeMlp)) {
        lt.recompute += lt.mlp_fwd + mlp_fwd_extra;
        rerun_elements += 2.0 * h * local_tokens;
        rerun_kernels += 1;
      }
      if (rerun_kernels > 0) {
        lt.recompute += MemoryBoundSeconds(r, c.act_bytes * rerun_elements, rerun_kernels);
      }
      break;
    }
    case Recompute::kNone:
      break;
  }

  // TP: per layer two all-reduces forward and two backward of the T x h activation (without SP)
  // or the same bytes as all-gather + reduce-scatter pairs (with SP; Korthikanti Sec. 4.2.2).
  // With tp_overlap (SP required, job_spec_json.cpp) Transformer Engine pipelines them with the
  // GEMMs (tp_overlap.h): a layer pays what the overlapped GEMMs take beyond the GEMMs alone.
  // Without tp_overlap, a stack with FrameworkSpec::tp_backward_overlap (Megatron-Core) runs the
  // backward's column-parallel collectives beside the QKV and FC1 data- and weight-gradient GEMMs
  // (TpAsyncBackwardSeconds); the other stacks run all of them in line.
  // A MoE layer's MLP part is not overlapped: its shared experts keep the dense pair, and its
  // routed experts all-gather the dispatched copies over the expert TP group after the EP
  // all-to-all and reduce-scatter them before the combine (token_dispatcher.py), e x T/t x
  // top_k rows of h (the pair runs in reverse backward).
  // A TP group that spans nodes pays the stack's FrameworkSpec::tp_seconds_per_inter_node_hop
  // per collective and node boundary beyond one node (docs/COST_MODEL.md, "Tensor parallelism
  // across nodes"); overlap does not hide it.
  const double inter_node_hops = par.tp > 1 ? std::max(0.0, c.tp_link.nodes() - 1.0) : 0.0;
  if (par.tp > 1) {
    const double bytes = T * h * c.act_bytes;
    const double pair_hops =
        tr.framework.tp_seconds_per_inter_node_hop * inter_node_hops * (sp ? 2.0 : 1.0);
    const double one = (sp ? CollectiveSeconds(Collective::kAllGather, bytes, c.tp_link) +
                                 CollectiveSeconds(Collective::kReduceScatter, bytes, c.tp_link)
                           : CollectiveSeconds(Collective::kAllReduce, bytes, c.tp_link)) +
                       pair_hops;
    double mlp = one;
    if (moe && sp) {
      const double routed_bytes = e * local_tokens * routed * imbalance * h * c.act_bytes;
      mlp = (m.moe_shared_experts > 0 ? one : 0.0) +
            (par.ExpertTp() > 1
                 ? CollectiveSeconds(Collective::kAllGather, routed_bytes, c.etp_link) +
                       CollectiveSeconds(Collective::kReduceScatter, routed_bytes, c.etp_link)
                 : 0.0);
    }
    // The dense MLP's part of the forward, what a checkpointed MLP (recompute_modules mlp) runs
    // again; priced only when it does.
    const bool mlp_rerun = !moe && Recomputes(tr, kRecomputeMlp);
    double mlp_fwd_tp = mlp;
    TpOverlapGemms g;
    g.tokens = T;
    g.hidden = h;
    g.qkv_width = (q + 2.0 * kv) / t;
    g.attn_width = q / t;
    g.fc1_width = moe ? 0.0 : up_width;
    g.fc2_width = moe ? 0.0 : f / t;
    const double moe_mlp = moe ? mlp : 0.0;
    const double overlapped_hops = (moe ? 1.0 : 2.0) * pair_hops;
    if (par.tp_overlap) {
      const double fwd_extra = TpOverlapForward(r, g, c.tp_link, c.act_bytes).Extra();
      lt.tp_fwd = fwd_extra + moe_mlp + overlapped_hops;
      lt.tp_bwd =
          TpOverlapBackward(r, g, c.tp_link, c.act_bytes).Extra() + moe_mlp + overlapped_hops;
      if (mlp_rerun) {
        TpOverlapGemms attention = g;
        attention.fc1_width = attention.fc2_width = 0.0;
        mlp_fwd_tp =
            fwd_extra - TpOverlapForward(r, attention, c.tp_link, c.act_bytes).Extra() + pair_hops;
      }
    } else {
      lt.tp_fwd = one + mlp;
      // A stack that runs the column-parallel layers' backward collectives beside their GEMMs
      // (FrameworkSpec::tp_backward_overlap) pays what those pairs leave exposed; a MoE layer's
      // expert collectives stay in line.
      lt.tp_bwd =
          par.TpBackwardOverlap(tr.framework)
              ? TpAsyncBackwardSeconds(r, g, c.tp_link, c.act_bytes, sp) + moe_mlp + overlapped_hops
              : one + mlp;
    }
    lt.tp_recompute = tr.recompute == Recompute::kFull ? lt.tp_fwd : mlp_rerun ? mlp_fwd_tp : 0.0;
    lt.tp_comm = lt.tp_fwd + lt.tp_recompute + lt.tp_bwd;
    lt.tp_bytes = bytes;
  }
  // A full recomputation re-runs each layer's forward whole, its collectives included
  // (Megatron-LM --recompute-granularity full checkpoints the transformer layer: the ring
  // exchange and the token dispatcher's all-to-alls run again, as the TP collectives above).
  const double recomputed_forwards = tr.recompute == Recompute::kFull ? 1.0 : 0.0;
  // CP: ring attention passes each rank's K and V chunk around the ring (cp-1 hops) forward,
  // and K, V plus their gradients backward (Liu et al. 2023; Megatron-LM context parallel). The
  // ring is inside the core attention, so a selective recomputation runs its forward pass again
  // too (RecomputedAttentionForwards).
  if (par.cp > 1) {
    const double chunk = 2.0 * T * kv / t * c.act_bytes;
    const double hops = static_cast<double>(par.cp - 1);
    lt.cp_pass = hops * CollectiveSeconds(Collective::kSendRecv, chunk, c.cp_link);
    lt.cp_comm = (3.0 + RecomputedAttentionForwards(tr)) * lt.cp_pass;
    lt.cp_bytes = chunk;
  }
  // EP: dispatch and combine of the routed copies of the rank's local tokens (T/t under SP),
  // forward and backward; the busiest rank receives `imbalance` x the mean. NCCL's all-to-all
  // moves every copy; DeepEP one per reached node across nodes (moe_dispatch.h).
  const double ep_passes = 2.0 + recomputed_forwards;
  if (moe && par.ep > 1) {
    const double bytes = local_tokens * routed * imbalance * h * c.act_bytes;
    const double a2a =
        tr.moe_dispatcher == MoeDispatcher::kDeepEp
            ? DeepEpSeconds(RoutingOf(m), local_tokens, h * c.act_bytes, imbalance, c.ep_link)
            : CollectiveSeconds(Collective::kAllToAll, bytes, c.ep_link);
    lt.ep_comm = 2.0 * ep_passes * a2a;
    lt.ep_bytes = bytes;
  }
  lt.ep_exposed = lt.ep_comm;
  // Host-bound layers: an eager stack's CPU issues a layer's kernels and collectives no faster
  // than FrameworkTraits::host_seconds_per_layer per micro-batch, and a mixture-of-experts layer's
  // moe_host_seconds_per_layer more (router, dispatcher, per-expert GEMMs); when the GPU work of
  // a pass (kernels and the blocking TP and EP collectives) is shorter, the GPU waits for the
  // host.
  // One third of the floor is forward, two thirds backward (autograd issues about twice the
  // forward's ops); a full recomputation re-issues the forward.
  // Pipelined layouts raise the floor per TP rank by FrameworkTraits::
  // pipeline_host_seconds_per_tp_rank, plus tp_seconds_per_inter_node_hop per node boundary when
  // the TP group spans nodes (docs/COST_MODEL.md, "Host-bound layers").
  const FrameworkSpec& stack = tr.framework;
  const double per_tp_rank = stack.pipeline_host_seconds_per_tp_rank +
                             stack.tp_seconds_per_inter_node_hop * inter_node_hops;
  const double host = stack.host_seconds_per_layer +
                      (moe ? stack.moe_host_seconds_per_layer : 0.0) +
                      (par.pp > 1 ? per_tp_rank * t : 0.0);
  if (host > 0) {
    const double host_fwd = host / 3.0;
    const double host_bwd = 2.0 * host / 3.0;
    const double ep_pass = lt.ep_comm / ep_passes;
    lt.fwd_other += std::max(0.0, host_fwd - (lt.Forward() + lt.tp_fwd + ep_pass));
    lt.bwd += std::max(0.0, host_bwd - (lt.bwd + lt.tp_bwd + ep_pass));
    if (tr.recompute == Recompute::kFull) {
      lt.recompute += std::max(0.0, host_fwd - (lt.recompute + lt.tp_recompute + ep_pass));
    }
  }
  // EP overlap (ep_overlap.h): the paired passes leave exposed what the two-stream schedule
  // does not hide; the passes that run alone (warm-up, cool-down) pay the all-to-alls in full.
  if (moe && par.ep > 1 && par.ep_overlap) {
    EpOverlapLayer pair;
    pair.mlp_fwd = lt.mlp_fwd;
    pair.mlp_wgrad = lt.mlp_wgrad;
    pair.mlp_bwd = lt.mlp_bwd - lt.mlp_wgrad;
    pair.attn_fwd = lt.Forward() - lt.mlp_fwd + lt.tp_fwd;
    pair.attn_wgrad = lt.wgrad - lt.mlp_wgrad;
    pair.attn_bwd = lt.bwd - lt.mlp_bwd - pair.attn_wgrad + lt.recompute + lt.tp_bwd;
    pair.a2a = lt.ep_comm / (2.0 * ep_passes);
    const double paired = EpOverlapPairedFraction(par, MicrobatchesPerStep(job));
    lt.ep_exposed = paired * EpOverlapExposedSeconds(pair) + (1.0 - paired) * lt.ep_comm;
  }
  lt.ep_pass = lt.ep_exposed / ep_passes;
  lt.fwd_flops = gemm_flops;
  return lt;
}

}  // namespace

StepCosts ComputeStepCosts(const JobSpec& job, const GpuSpec& gpu, const NetworkSpec& net,
                           const DeviceRates& rates) {
  const TrainingSpec& tr = job.training;
  const ParallelSpec& par = job.parallel;
  const ClusterLinks links = ResolveLinks(gpu, net, job.cluster.gpus_per_node, rates.measured);

  Ctx c{job, rates, {}, {}, {}, {}, {}, {}, {}, {}, {}};
  c.tokens = static_cast<double>(tr.micro_batch_size * tr.seq_len) / static_cast<double>(par.cp);
  c.act_bytes = rates.activation_bytes;
  c.attention_speed = tr.framework.AttentionSpeed(gpu.architecture);
  const auto groups = LayoutGroups(par);
  c.tp_link = PlaceGroup(links, groups[kTpGroup]);
  c.etp_link = PlaceGroup(links, groups[kEtpGroup]);
  c.cp_link = PlaceGroup(links, groups[kCpGroup]);
  c.ep_link = PlaceGroup(links, groups[kEpGroup]);
  c.dp_link = PlaceGroup(links, groups[kDpGroup]);
  c.expert_dp_link = PlaceGroup(links, groups[kExpertDpGroup]);
  c.pp_link = PlaceGroup(links, groups[kPpGroup]);
  c.shard_link = PlaceGroup(links, groups[kShardGroup]);
  c.replicate_link = PlaceGroup(links, groups[kReplicateGroup]);

  StepCosts s;
  s.dense = EvaluateLayer(c, false);
  if (job.model.is_moe()) s.moe = EvaluateLayer(c, true);
  if (tr.activation_offload_layers > 0) {
    // Activation offload (training.activation_offload_layers, Transformer Engine's CPU offload
    // context under Megatron-Core): an offloaded layer's stored activations go to host memory on
    // a side stream behind the next layer's forward, and come back behind the backward of the
    // layer after it, each way at the host link's one-direction rate (NVLink-C2C or PCIe). What
    // a copy takes beyond one layer's forward (backward) kernels is waited for; the copy also
    // reads (writes) its bytes in HBM beside the kernels, charged at the HBM rate. Spread over
    // the layers: k/L of each layer's cost, in both the analytic model and the event simulator.
    const double share = static_cast<double>(tr.activation_offload_layers) /
                         static_cast<double>(job.model.num_layers);
    auto offload = [&](LayerCosts* layer, bool moe_layer) {
      const double bytes = LayerActivationBytes(job, moe_layer, Recompute::kNone);
      const double copy = bytes / gpu.HostLinkBytesPerS();
      const double hbm = MemoryBoundSeconds(rates, bytes, 0);
      const double fwd_wait = std::max(0.0, copy - layer->Forward());
      const double bwd_wait = std::max(0.0, copy - layer->bwd);
      layer->fwd_other += share * (fwd_wait + hbm);
      layer->bwd += share * (bwd_wait + hbm);
    };
    offload(&s.dense, false);
    if (job.model.is_moe()) offload(&s.moe, true);
  }
  const double t = static_cast<double>(par.tp);
  const double V = static_cast<double>(job.model.vocab_size);
  const double h = static_cast<double>(job.model.hidden_size);
  // First stage: embedding lookup (read ids, write T x h) and its backward scatter-add (read the
  // gradient, read-modify-write the table rows): 3 T*h element moves in 2 kernels.
  s.embed_fwd = MemoryBoundSeconds(rates, c.tokens * h * c.act_bytes, 1);
  s.embed_bwd = MemoryBoundSeconds(rates, 2.0 * c.tokens * h * c.act_bytes, 1);
  // Last stage: LM head GEMM forward, data + weight gradients backward (frozen under LoRA), and
  // the vocabulary-parallel cross-entropy.
  const double head_gemm = GemmSeconds(rates, c.tokens, V / t, h);
  const double logits = c.tokens * V / t;
  const double cross_entropy =
      rates.host_kernels.cross_entropy_s > 0
          ? rates.host_kernels.cross_entropy_s * logits  // the host device's, measured
          : MemoryBoundSeconds(rates, kCrossEntropyBytesPerLogit * logits, 4);
  s.head_fwd = head_gemm + 0.5 * cross_entropy;
  s.head_bwd = (tr.lora.enabled ? 1.0 : 2.0) * head_gemm + 0.5 * cross_entropy;
  // PP: activations (and their gradients) cross each stage boundary once per micro-batch per
  // model chunk; with Megatron's scatter-gather optimisation a rank sends 1/t of the tensor.
  if (par.pp > 1) {
    s.p2p_bytes = c.tokens * h * c.act_bytes / t;
    s.p2p = CollectiveSeconds(Collective::kSendRecv, s.p2p_bytes, c.pp_link);
  }
  s.grad_bytes_per_param = MainGradBytesPerParam(tr);
  // The weights are gathered in their own precision: 16 bits, or 32 when the model trains in
  // fp32/tf32 (Megatron's distributed optimizer gathers its param buffer, of the params' dtype;
  // FSDP without a mixed-precision param_dtype its fp32 flat parameters).
  s.weight_gather_bytes_per_param = WeightBytesPerParam(tr.precision);
  if (tr.fp8_param_gather) {
    // Megatron-LM --fp8-param-gather gathers the fp8 weights of the linear layers (1 byte) and
    // the other parameters in 16 bits; the mix is the model's.
    const ParameterCounts n = CountParameters(job.model);
    const double other = n.embedding + n.output_head + n.final_norm +
                         static_cast<double>(job.model.num_layers) * n.norms_per_layer;
    s.weight_gather_bytes_per_param = n.total > 0 ? (n.total + other) / n.total : 2.0;
  }
  s.grads_all_reduced_after_backward =
      par.zero_stage == 1 && !par.fsdp && par.dp * par.cp > 1 &&
      tr.framework.zero1_grad_reduction == Zero1GradReduction::kAllReduceAfterBackward;
  // Buckets only where the stack overlaps the reduction with the backward (hooks fire per
  // bucket); otherwise one collective reduces the whole buffer (Megatron-LM: bucket_size None
  // without --overlap-grad-reduce).
  const int zero = par.ZeroStage();
  if (par.dp_overlap && zero < 3 && !s.grads_all_reduced_after_backward) {
    s.grad_bucket_params = GradBucketParams(job);
  }
  s.tp_link = c.tp_link;
  s.cp_link = c.cp_link;
  s.ep_link = c.ep_link;
  s.pp_link = c.pp_link;
  s.dp_link = c.dp_link;
  s.expert_dp_link = c.expert_dp_link;
  s.shard_link = c.shard_link;
  s.replicate_link = c.replicate_link;
  // The expert shard group: ExpertShardRanks consecutive members of the expert-DP group (stride
  // etp x ep); its replicas one such group apart. Only ZeRO-3/FSDP gathers over it.
  if (job.model.is_moe() && zero >= 3) {
    const int64_t expert_shard = par.ExpertShardRanks();
    const int64_t expert_stride = par.ExpertTp() * par.ep;
    s.expert_shard_link = PlaceGroup(links, expert_shard, expert_stride);
    s.expert_replicate_link = PlaceGroup(links, std::max<int64_t>(1, par.ExpertDp() / expert_shard),
                                         expert_stride * expert_shard);
  }
  return s;
}

namespace {

// One collective of `bytes_per_param` bytes per parameter over the dense parameters' DP group
// and the expert parameters' expert-DP group.
double DpGroupsSeconds(const StepCosts& costs, Collective c, double bytes_per_param,
                       double dense_params, double expert_params) {
  auto one = [&](double params, const GroupLink& link) {
    if (params <= 0 || link.ranks <= 1) return 0.0;
    return CollectiveSeconds(c, bytes_per_param * params, link);
  };
  return one(dense_params, costs.dp_link) + one(expert_params, costs.expert_dp_link);
}

}  // namespace

double GradReduceSeconds(const StepCosts& costs, int zero_stage, double dense_params,
                         double expert_params) {
  if (zero_stage >= 3) return 0;
  const Collective c = zero_stage >= 1 && !costs.grads_all_reduced_after_backward
                           ? Collective::kReduceScatter
                           : Collective::kAllReduce;
  return DpGroupsSeconds(costs, c, costs.grad_bytes_per_param, dense_params, expert_params);
}

double WeightGatherSeconds(const StepCosts& costs, int zero_stage, double dense_params,
                           double expert_params) {
  if (zero_stage < 1 || zero_stage >= 3) return 0;
  return DpGroupsSeconds(costs, Collective::kAllGather, costs.weight_gather_bytes_per_param,
                         dense_params, expert_params);
}

namespace {

// `one` (GradReduceSeconds or WeightGatherSeconds) of `dense_params` + `expert_params` issued in
// buckets of costs.grad_bucket_params, each holding dense and expert parameters in that
// proportion: each full bucket and the remainder (ignored below a millionth of a bucket:
// rounding) as a collective of its own.
double InBuckets(double (*one)(const StepCosts&, int, double, double), const StepCosts& costs,
                 int zero_stage, double dense_params, double expert_params) {
  const double params = dense_params + expert_params;
  if (params <= 0) return 0.0;
  auto seconds = [&](double p) {
    return one(costs, zero_stage, p * dense_params / params, p * expert_params / params);
  };
  const double bucket = costs.grad_bucket_params;
  if (bucket <= 0 || params <= bucket) return seconds(params);
  const double full = std::floor(params / bucket);
  const double rest = params - full * bucket;
  return full * seconds(bucket) + (rest > 1e-6 * bucket ? seconds(rest) : 0.0);
}

}  // namespace

double BucketedGradReduceSeconds(const StepCosts& costs, int zero_stage, double dense_params,
                                 double expert_params) {
  return InBuckets(&GradReduceSeconds, costs, zero_stage, dense_params, expert_params);
}

double BucketedWeightGatherSeconds(const StepCosts& costs, int zero_stage, double dense_params,
                                   double expert_params) {
  return InBuckets(&WeightGatherSeconds, costs, zero_stage, dense_params, expert_params);
}

double FsdpGatherSeconds(const StepCosts& costs, const ShardParams& layer) {
  auto one = [&](double params, const GroupLink& shard) {
    if (params <= 0) return 0.0;
    return CollectiveSeconds(Collective::kAllGather, costs.weight_gather_bytes_per_param * params,
                             shard);
  };
  return one(layer.dense, costs.shard_link) + one(layer.expert, costs.expert_shard_link);
}

double FsdpReduceSeconds(const StepCosts& costs, const ShardParams& layer) {
  auto one = [&](double trainable, const GroupLink& shard, const GroupLink& replicas) {
    if (trainable <= 0) return 0.0;
    const double bytes = costs.grad_bytes_per_param * trainable;
    double seconds = CollectiveSeconds(Collective::kReduceScatter, bytes, shard);
    if (replicas.ranks > 1) {
      seconds += CollectiveSeconds(Collective::kAllReduce, bytes / shard.ranks, replicas);
    }
    return seconds;
  };
  return one(layer.DenseTrainable(), costs.shard_link, costs.replicate_link) +
         one(layer.ExpertTrainable(), costs.expert_shard_link, costs.expert_replicate_link);
}

QuantizedCast QuantizedCastOf(Precision precision) {
  QuantizedCast c;
  if (precision == Precision::kFp4) {
    c.bytes = 2.0 + 2.0 + 2.0 * (0.5 + 1.0 / 16.0);
    c.norm_fed_bytes = c.bytes;
    c.kernels_per_tensor = 2;
    c.layer_share = 1.0 - kFp4Bf16LayerFraction;
    c.weight_copy_bytes = 2.0 * (0.5 + 1.0 / 16.0);
    c.saved_input_bytes = 0.5 + 1.0 / 16.0;
    return c;
  }
  c.bytes = 4.0;
  c.norm_fed_bytes = 2.0;
  c.weight_copy_bytes = 2.0;
  c.saved_input_bytes = 1.0 + 1.0 / 32.0;
  return c;
}

double GradBucketParams(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  const FrameworkSpec& stack = job.training.framework;
  if (p.ZeroStage() == 2 && stack.zero2_reduces_per_layer) {
    // PyTorch FSDP SHARD_GRAD_OP / FSDP2 reshard_after_forward=False: one flat parameter per
    // wrapped transformer block, reduced and gathered whole (torch/distributed/fsdp
    // _post_backward_hook, FSDPParamGroup); the model's mean layer, dense and MoE blocks weighed
    // by their counts.
    const ModelSpec& m = job.model;
    const double dense_layer = LayerParamsPerGpu(job, false).trainable;
    if (!m.is_moe()) return dense_layer;
    const double dense = static_cast<double>(m.DenseLayers());
    const double moe = static_cast<double>(m.MoeLayers());
    return (dense * dense_layer + moe * LayerParamsPerGpu(job, true).trainable) / (dense + moe);
  }
  const double bucket_bytes_per_param = stack.ddp_bucket_bytes_per_param > 0
                                            ? stack.ddp_bucket_bytes_per_param
                                            : MainGradBytesPerParam(job.training);
  return stack.grad_bucket.Params(bucket_bytes_per_param, static_cast<double>(p.dp * p.cp));
}

bool FsdpKeepsStageGathered(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  return p.ZeroStage() >= 3 && p.ShardRanks() > 1 && p.pp >= 2 &&
         job.training.framework.zero3_unsharded_stage_with_pp;
}

bool WeightGatherInForward(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  return !p.fsdp && p.zero_stage >= 1 && p.zero_stage < 3 && p.dp * p.cp > 1 && p.dp_overlap &&
         job.training.framework.weight_gather_in_forward;
}

double OptimizerShardParams(const JobSpec& job, const ShardParams& stage_params) {
  const ParallelSpec& par = job.parallel;
  if (!par.ShardsModelState()) return stage_params.trainable;
  return stage_params.DenseTrainable() / static_cast<double>(par.ShardRanks()) +
         stage_params.ExpertTrainable() / static_cast<double>(par.ExpertShardRanks());
}

double OptimizerSeconds(const StepCosts& costs, const JobSpec& job, const GpuSpec& gpu,
                        const DeviceRates& rates, double params) {
  if (job.parallel.cpu_offload) {
    // Gradients down and updated 16-bit weights up over the host link: PCIe, or NVLink-C2C on a
    // Grace superchip (GpuSpec::HostLinkBytesPerS).
    return params / kCpuAdamParamsPerSecond +
           (costs.grad_bytes_per_param + 2.0) * params / gpu.HostLinkBytesPerS();
  }
  if (rates.host_kernels.adam_s > 0) return rates.host_kernels.adam_s * params;  // measured
  return MemoryBoundSeconds(rates, kAdamBytesPerParam * params, 10);
}

}  // namespace gpuplan

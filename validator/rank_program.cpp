#include "validator/rank_program.h"

#include <cmath>

#include "common/str_format.h"
#include "simulator/shard.h"
#include "simulator/step_costs.h"

namespace gpuplan {
namespace {

std::string Gemm(double m, double n, double k) { return StrFormat("%.0f x %.0f x %.0f", m, n, k); }
std::string Rows(double rows, double cols) { return StrFormat("%.0f x %.0f", rows, cols); }

// Dimensions of one layer on one rank.
struct Dims {
  double t, T, h, q, kv, d, a, b, s_local, act_bytes;
  bool sp, swiglu, moe, split_w;
  bool checkpoint_attn;            // recompute_modules core_attn
  bool discard_norm, discard_act;  // recompute_modules layernorm, moe_act on a MoE layer
  bool discard_mlp;                // recompute_modules mlp on a dense layer
  double f;                        // MLP width (an expert's for MoE)
  double lora_rank;                // 0 without LoRA
  double experts;
  double e;               // expert tensor parallelism (etp <= t, dividing it)
  double routed_rows;     // routed copies of the rank's local tokens (T/t under SP) x top_k
  double expert_rows;     // the routed rows its local experts run: e x routed_rows, gathered
  double shared_experts;  // shared experts: the dense TP pair around the MLP when > 0
  double local_experts;   // routed experts held by the rank
};

Dims LayerDims(const JobSpec& job, bool moe) {
  const ModelSpec& m = job.model;
  const ParallelSpec& p = job.parallel;
  const TrainingSpec& tr = job.training;
  Dims d{};
  d.t = static_cast<double>(p.tp);
  d.b = static_cast<double>(tr.micro_batch_size);
  d.s_local = static_cast<double>(tr.seq_len / p.cp);
  d.T = d.b * d.s_local;
  d.h = static_cast<double>(m.hidden_size);
  d.d = static_cast<double>(m.HeadDim());
  d.a = static_cast<double>(m.num_attention_heads);
  d.q = d.a * d.d;
  d.kv = static_cast<double>(m.num_kv_heads) * d.d;
  d.act_bytes = (tr.precision == Precision::kFp32 || tr.precision == Precision::kTf32) ? 4 : 2;
  d.sp = p.sequence_parallel && p.tp > 1;
  d.swiglu = m.mlp == MlpKind::kSwiGlu;
  d.moe = moe;
  d.split_w = GetScheduleInfo(p.schedule).splits_backward;
  d.checkpoint_attn = Recomputes(tr, kRecomputeCoreAttn);
  d.discard_norm = moe && Recomputes(tr, kRecomputeLayernorm);
  d.discard_act = moe && Recomputes(tr, kRecomputeMoeAct);
  d.discard_mlp = !moe && Recomputes(tr, kRecomputeMlp);
  d.lora_rank = tr.lora.enabled ? static_cast<double>(tr.lora.rank) : 0.0;
  d.f = static_cast<double>(moe ? m.ExpertFfn() : m.ffn_hidden_size);
  d.experts = static_cast<double>(m.moe_num_experts);
  d.e = static_cast<double>(p.ExpertTp());
  d.routed_rows = (d.sp ? d.T / d.t : d.T) * static_cast<double>(m.moe_top_k);
  d.expert_rows = d.e * d.routed_rows;
  d.shared_experts = static_cast<double>(m.moe_shared_experts);
  d.local_experts = d.experts / static_cast<double>(p.ep);
  return d;
}

// The MLP's GEMM pairs (fc1, fc2) on this rank: the dense MLP; or a MoE layer's shared experts
// (one MLP of S x f split by t, Megatron-Core's SharedExpertMLP) and each local routed expert,
// split by etp, over the copies routed to it (the expert TP group's gathered rows spread evenly
// over the local experts), one GEMM each as Transformer Engine's GroupedLinear runs them (the
// cost model's GroupedGemmPasses).
struct MlpPart {
  std::string prefix;  // weight key prefix: "", "shared " or "expert<i> "
  double rows;
  double width;  // the part's f/t (f/etp for a routed expert)
};

std::vector<MlpPart> MlpParts(const Dims& d) {
  if (!d.moe) return {{"", d.T, d.f / d.t}};
  std::vector<MlpPart> parts;
  if (d.shared_experts > 0) parts.push_back({"shared ", d.T, d.shared_experts * d.f / d.t});
  for (int i = 0; i < static_cast<int>(d.local_experts); ++i) {
    parts.push_back({StrFormat("expert%d ", i), d.expert_rows / d.local_experts, d.f / d.e});
  }
  return parts;
}

// The MLP activation's pieces, (rows, width): the dense MLP's; or a MoE layer's shared experts'
// (when it has them) and then its routed experts'.
struct ActivationPart {
  double rows, width;
  bool routed;
};
std::vector<ActivationPart> ActivationParts(const Dims& d) {
  if (!d.moe) return {{d.T, d.f / d.t, false}};
  std::vector<ActivationPart> parts;
  if (d.shared_experts > 0) parts.push_back({d.T * d.shared_experts, d.f / d.t, false});
  parts.push_back({d.expert_rows, d.f / d.e, true});
  return parts;
}

// Up (gate and up fused for SwiGLU) width of a part.
double UpWidth(const Dims& d, const MlpPart& part) { return (d.swiglu ? 2.0 : 1.0) * part.width; }

RankOp Compute(std::string name, std::string shape) {
  RankOp op;
  op.kind = RankOpKind::kCompute;
  op.name = std::move(name);
  op.shape = std::move(shape);
  return op;
}

RankOp Coll(std::string name, GroupKind group, double bytes, int64_t count = 1) {
  RankOp op;
  op.kind = RankOpKind::kCollective;
  op.name = std::move(name);
  op.group = group;
  op.bytes = bytes;
  op.count = count;
  return op;
}

// Norms: RMSNorm for SwiGLU-family models (Llama, Mistral), LayerNorm for GPT-style ones.
std::string NormName(const Dims& d, const char* suffix) {
  return std::string(d.swiglu ? "rmsnorm" : "layernorm") + suffix;
}

// A MoE layer's pre-MLP norm forward, over the rank's (sequence-sharded) tokens.
RankOp PreMlpNormForward(const Dims& d) {
  return Compute(NormName(d, "_fwd"), Rows(d.sp ? d.T / d.t : d.T, d.h));
}
// The MLP activation forward, or backward, of one of its pieces.
RankOp Activation(const Dims& d, const ActivationPart& part, bool backward) {
  return Compute(std::string(d.swiglu ? "swiglu" : "gelu") + (backward ? "_bwd" : "_fwd"),
                 Rows(part.rows, part.width));
}

// A forward op whose outputs no backward reads (RankOp::saved_for_backward) when `saved` is false.
RankOp Saved(RankOp op, bool saved) {
  op.saved_for_backward = saved;
  return op;
}

RankOp WithRole(RankOp op, RecomputeRole role) {
  op.recompute = role;
  if (role == RecomputeRole::kRerun) op.name += kRerunSuffix;
  return op;
}

// The TP collective after a row-parallel GEMM forward (g) or before a column-parallel one
// backward (f-bar): all-reduce, or reduce-scatter with sequence parallelism.
void TpReduce(const Dims& d, std::vector<RankOp>* ops) {
  if (d.t > 1) {
    ops->push_back(
        Coll(d.sp ? "reduce_scatter" : "all_reduce", GroupKind::kTp, d.T * d.h * d.act_bytes));
  }
}
// With sequence parallelism the sequence-sharded activation is gathered before a TP block.
void TpGather(const Dims& d, std::vector<RankOp>* ops) {
  if (d.sp) ops->push_back(Coll("all_gather", GroupKind::kTp, d.T * d.h * d.act_bytes));
}

// A MoE layer under sequence parallelism (or without TP) runs Megatron-Core's all-to-all
// dispatcher: the rank's local tokens go over EP, then the expert TP group (here the TP group:
// the executor runs etp = tp) gathers them; the combine runs the reverse (token_dispatcher.py:
// permute -> A2A(EP) -> AG(ETP), RS(ETP) -> A2A(EP) -> unpermute). Without SP, TP > 1 keeps
// the dense all-reduce (no EP then, job_spec_json.cpp).
bool MoeDispatches(const Dims& d) { return d.moe && (d.sp || d.t == 1); }

// The all-to-all of the routed rows over EP (when ep > 1).
void ExpertAllToAll(const JobSpec& job, const Dims& d, const char* name, std::vector<RankOp>* ops) {
  if (job.parallel.ep > 1) {
    ops->push_back(Coll(name, GroupKind::kEp, d.routed_rows * d.h * d.act_bytes));
  }
}
// The all-gather or reduce-scatter of the routed rows over the expert TP group (etp > 1).
void ExpertTpCollective(const Dims& d, const char* name, std::vector<RankOp>* ops) {
  if (d.e > 1) ops->push_back(Coll(name, GroupKind::kExpertTp, d.expert_rows * d.h * d.act_bytes));
}

// The rank's attention: its micro-batch, its s/cp tokens, its heads; with CP, the ring's cp
// steps (ring attention, Liu et al. 2023, as Transformer Engine runs it for Megatron-LM).
std::string AttentionShapeText(const JobSpec& job, const Dims& d) {
  std::string shape = StrFormat("b%.0f s%.0f h%.0f d%.0f", d.b, d.s_local, d.a / d.t, d.d);
  if (job.parallel.cp > 1) shape += StrFormat(" ring%lld", static_cast<long long>(job.parallel.cp));
  return shape;
}

// The attention forward over the rank's heads.
RankOp AttentionForward(const JobSpec& job, const Dims& d) {
  return Compute(
      job.training.attention == AttentionImpl::kFlash ? "attention_fwd" : "attention_fwd (unfused)",
      AttentionShapeText(job, d));
}
// Ring attention: each rank passes its K and V chunk around the CP ring (Liu et al. 2023).
RankOp RingKv(const JobSpec& job, const Dims& d, const char* name) {
  return Coll(name, GroupKind::kCp, 2 * d.T * d.kv / d.t * d.act_bytes, job.parallel.cp - 1);
}

// Weight-gradient GEMM of a weight [out x in]: dW = dY^T X over the T rows.
RankOp Wgrad(const std::string& name, double rows, double out, double in) {
  return Compute("gemm " + name + " wgrad", Gemm(out, in, rows));
}

// LoRA adapters (Hu et al. 2021). A targeted linear W gains A [in x r] and B [r x out] on this
// rank; the forward adds (x A) B to x W.
enum class Linear { kQkv, kO, kFc1, kFc2 };
struct Adapter {
  std::string name;  // "q", "o", "expert0 gate", ...
  double rows, in, out;
};

// The adapters of the targeted projections of `linear` (of MLP `part` for FC1 and FC2): q, k, v
// on QKV; o; gate and up on FC1 (gate only in SwiGLU models); down on FC2. Column-parallel ones
// keep A whole (in = h) and split B by t; row-parallel ones split A (in = width / t) and keep B
// whole, their partial sum joining the linear's before its TP reduction.
std::vector<Adapter> Adapters(const JobSpec& job, const Dims& d, Linear linear,
                              const MlpPart* part = nullptr) {
  const LoraSpec& lora = job.training.lora;
  std::vector<Adapter> out;
  if (!lora.enabled) return out;
  auto add = [&](uint32_t target, std::string name, double rows, double in, double width) {
    if ((lora.targets & target) != 0) out.push_back({std::move(name), rows, in, width});
  };
  switch (linear) {
    case Linear::kQkv:
      add(kLoraQ, "q", d.T, d.h, d.q / d.t);
      add(kLoraK, "k", d.T, d.h, d.kv / d.t);
      add(kLoraV, "v", d.T, d.h, d.kv / d.t);
      break;
    case Linear::kO:
      add(kLoraO, "o", d.T, d.q / d.t, d.h);
      break;
    case Linear::kFc1:
      if (d.swiglu) add(kLoraGate, part->prefix + "gate", part->rows, d.h, part->width);
      add(kLoraUp, part->prefix + "up", part->rows, d.h, part->width);
      break;
    case Linear::kFc2:
      add(kLoraDown, part->prefix + "down", part->rows, part->width, d.h);
      break;
  }
  return out;
}

// Forward: x A, kept for B's weight gradient, then (x A) B, added into the linear's output;
// `role`: inside a recomputed module.
void AdapterForward(const Dims& d, const std::vector<Adapter>& adapters, std::vector<RankOp>* ops,
                    RecomputeRole role = RecomputeRole::kNone) {
  for (const Adapter& a : adapters) {
    ops->push_back(
        WithRole(Compute("gemm " + a.name + " lora_a", Gemm(a.rows, d.lora_rank, a.in)), role));
    ops->push_back(WithRole(
        Saved(Compute("gemm " + a.name + " lora_b", Gemm(a.rows, a.out, d.lora_rank)), false),
        role));
  }
}
void AdapterWeightGrads(const Dims& d, const std::vector<Adapter>& adapters,
                        std::vector<RankOp>* ops) {
  for (const Adapter& a : adapters) {
    ops->push_back(Wgrad(a.name + " lora_b", a.rows, a.out, d.lora_rank));
    ops->push_back(Wgrad(a.name + " lora_a", a.rows, d.lora_rank, a.in));
  }
}
// Backward: d(x A) = dY B^T, then (unless a W pass takes them) dB and dA, then dX += d(x A) A^T.
void AdapterBackward(const Dims& d, const std::vector<Adapter>& adapters, bool wgrad,
                     std::vector<RankOp>* ops) {
  for (const Adapter& a : adapters) {
    ops->push_back(Compute("gemm " + a.name + " lora_b dgrad", Gemm(a.rows, d.lora_rank, a.out)));
    if (wgrad) AdapterWeightGrads(d, {a}, ops);
    ops->push_back(Compute("gemm " + a.name + " lora_a dgrad", Gemm(a.rows, a.in, d.lora_rank)));
  }
}

// The MLP's FC1, activation and FC2 (with their adapters), each op inside a recomputed MLP
// (`in_mlp`: kDiscard in forward, kRerun in the backward's re-run) but FC2, whose output is the
// layer's.
void MlpForward(const JobSpec& job, const Dims& d, RecomputeRole in_mlp, std::vector<RankOp>* ops) {
  const bool lora = job.training.lora.enabled;
  const std::vector<MlpPart> parts = MlpParts(d);
  for (const MlpPart& part : parts) {
    ops->push_back(WithRole(
        Compute("gemm " + part.prefix + "fc1", Gemm(part.rows, UpWidth(d, part), d.h)), in_mlp));
    AdapterForward(d, Adapters(job, d, Linear::kFc1, &part), ops, in_mlp);
  }
  const bool fc2_input_saved = !lora || (job.training.lora.targets & kLoraDown) != 0;
  for (const ActivationPart& part : ActivationParts(d)) {
    // moe_act discards the routed experts' activation output, not the shared experts'.
    const bool discarded = part.routed && d.discard_act;
    ops->push_back(WithRole(Saved(Activation(d, part, false), fc2_input_saved),
                            discarded ? RecomputeRole::kDiscard : in_mlp));
  }
  const RecomputeRole fc2 =
      in_mlp == RecomputeRole::kRerun ? RecomputeRole::kRerun : RecomputeRole::kNone;
  for (const MlpPart& part : parts) {
    ops->push_back(
        WithRole(Compute("gemm " + part.prefix + "fc2", Gemm(part.rows, d.h, part.width)), fc2));
    AdapterForward(d, Adapters(job, d, Linear::kFc2, &part), ops, in_mlp);
  }
}

void Forward(const JobSpec& job, const Dims& d, std::vector<RankOp>* ops) {
  const double norm_rows = d.sp ? d.T / d.t : d.T;
  const double cp = static_cast<double>(job.parallel.cp);
  // Under LoRA a frozen linear's input is saved only when an adapter on it needs it.
  const bool lora = job.training.lora.enabled;
  const uint32_t targets = job.training.lora.targets;
  ops->push_back(Saved(Compute(NormName(d, "_fwd"), Rows(norm_rows, d.h)),
                       !lora || (targets & (kLoraQ | kLoraK | kLoraV)) != 0));
  TpGather(d, ops);
  ops->push_back(Compute("gemm qkv", Gemm(d.T, (d.q + 2 * d.kv) / d.t, d.h)));
  AdapterForward(d, Adapters(job, d, Linear::kQkv), ops);
  if (cp > 1) ops->push_back(RingKv(job, d, "ring send/recv kv"));
  ops->push_back(WithRole(AttentionForward(job, d),
                          d.checkpoint_attn ? RecomputeRole::kCheckpoint : RecomputeRole::kNone));
  ops->push_back(Compute("gemm o", Gemm(d.T, d.h, d.q / d.t)));
  AdapterForward(d, Adapters(job, d, Linear::kO), ops);
  TpReduce(d, ops);
  // A checkpointed MLP (mlp) keeps only its input: every op inside it discards its outputs, but
  // FC2's, the layer's output.
  const RecomputeRole in_mlp = d.discard_mlp ? RecomputeRole::kDiscard : RecomputeRole::kNone;
  ops->push_back(
      WithRole(Saved(PreMlpNormForward(d), !lora || (targets & (kLoraGate | kLoraUp)) != 0),
               d.discard_norm || d.discard_mlp ? RecomputeRole::kDiscard : RecomputeRole::kNone));
  if (!MoeDispatches(d)) TpGather(d, ops);
  if (d.moe) {
    ops->push_back(Compute("gemm router", Gemm(norm_rows, d.experts, d.h)));
    if (MoeDispatches(d)) {
      if (d.shared_experts > 0) TpGather(d, ops);
      ExpertAllToAll(job, d, "alltoall dispatch", ops);
      ExpertTpCollective(d, "all_gather routed", ops);
    }
  }
  MlpForward(job, d, in_mlp, ops);
  if (MoeDispatches(d)) {
    ExpertTpCollective(d, "reduce_scatter routed", ops);
    ExpertAllToAll(job, d, "alltoall combine", ops);
    if (d.shared_experts > 0) TpReduce(d, ops);
  } else {
    TpReduce(d, ops);
  }
}

// The weight-gradient GEMMs of the schedule's split W pass: the layer's weights in backward
// order, or under LoRA its adapters'.
void WeightGrads(const JobSpec& job, const Dims& d, std::vector<RankOp>* ops) {
  const std::vector<MlpPart> parts = MlpParts(d);
  const bool lora = job.training.lora.enabled;
  for (const MlpPart& part : parts) {
    if (!lora) ops->push_back(Wgrad(part.prefix + "fc2", part.rows, d.h, part.width));
    AdapterWeightGrads(d, Adapters(job, d, Linear::kFc2, &part), ops);
  }
  for (const MlpPart& part : parts) {
    if (!lora) ops->push_back(Wgrad(part.prefix + "fc1", part.rows, UpWidth(d, part), d.h));
    AdapterWeightGrads(d, Adapters(job, d, Linear::kFc1, &part), ops);
  }
  if (!lora) ops->push_back(Wgrad("o", d.T, d.h, d.q / d.t));
  AdapterWeightGrads(d, Adapters(job, d, Linear::kO), ops);
  if (!lora) ops->push_back(Wgrad("qkv", d.T, (d.q + 2 * d.kv) / d.t, d.h));
  AdapterWeightGrads(d, Adapters(job, d, Linear::kQkv), ops);
}

void Backward(const JobSpec& job, const Dims& d, std::vector<RankOp>* ops) {
  const double norm_rows = d.sp ? d.T / d.t : d.T;
  const std::vector<MlpPart> parts = MlpParts(d);
  const bool adapter_wgrad = !d.split_w;
  const bool wgrad = adapter_wgrad && !job.training.lora.enabled;
  // MLP block, last op first: its output's gradient first re-runs a discarded pre-MLP norm, or a
  // checkpointed MLP's whole forward with its TP collectives.
  if (d.discard_norm || d.discard_mlp) {
    ops->push_back(WithRole(PreMlpNormForward(d), RecomputeRole::kRerun));
  }
  if (d.discard_mlp) {
    std::vector<RankOp> rerun;
    TpGather(d, &rerun);
    MlpForward(job, d, RecomputeRole::kRerun, &rerun);
    TpReduce(d, &rerun);
    for (RankOp& op : rerun) {
      if (op.kind == RankOpKind::kCollective) op = WithRole(std::move(op), RecomputeRole::kRerun);
      ops->push_back(std::move(op));
    }
  }
  if (MoeDispatches(d)) {
    if (d.shared_experts > 0) TpGather(d, ops);
    ExpertAllToAll(job, d, "alltoall combine (grad)", ops);
    ExpertTpCollective(d, "all_gather routed (grad)", ops);
  } else {
    TpGather(d, ops);  // backward of the reduce-scatter after FC2
  }
  for (const ActivationPart& part : ActivationParts(d)) {
    if (part.routed && d.discard_act) {
      ops->push_back(WithRole(Activation(d, part, false), RecomputeRole::kRerun));
    }
  }
  for (const MlpPart& part : parts) {
    ops->push_back(Compute("gemm " + part.prefix + "fc2 dgrad", Gemm(part.rows, part.width, d.h)));
    if (wgrad) ops->push_back(Wgrad(part.prefix + "fc2", part.rows, d.h, part.width));
    AdapterBackward(d, Adapters(job, d, Linear::kFc2, &part), adapter_wgrad, ops);
  }
  for (const ActivationPart& part : ActivationParts(d)) ops->push_back(Activation(d, part, true));
  for (const MlpPart& part : parts) {
    ops->push_back(
        Compute("gemm " + part.prefix + "fc1 dgrad", Gemm(part.rows, d.h, UpWidth(d, part))));
    if (wgrad) ops->push_back(Wgrad(part.prefix + "fc1", part.rows, UpWidth(d, part), d.h));
    AdapterBackward(d, Adapters(job, d, Linear::kFc1, &part), adapter_wgrad, ops);
  }
  if (MoeDispatches(d)) {
    ExpertTpCollective(d, "reduce_scatter routed (grad)", ops);
    ExpertAllToAll(job, d, "alltoall dispatch (grad)", ops);
    if (d.shared_experts > 0) TpReduce(d, ops);
  } else {
    TpReduce(d, ops);  // backward of the identity before FC1 (Megatron's f)
  }
  ops->push_back(Compute(NormName(d, "_bwd"), Rows(norm_rows, d.h)));
  // Attention block.
  TpGather(d, ops);
  ops->push_back(Compute("gemm o dgrad", Gemm(d.T, d.q / d.t, d.h)));
  if (wgrad) ops->push_back(Wgrad("o", d.T, d.h, d.q / d.t));
  AdapterBackward(d, Adapters(job, d, Linear::kO), adapter_wgrad, ops);
  if (d.checkpoint_attn) {  // the checkpointed attention's forward again, with its ring
    if (job.parallel.cp > 1) ops->push_back(RingKv(job, d, "ring send/recv kv (recompute)"));
    ops->push_back(WithRole(AttentionForward(job, d), RecomputeRole::kRerun));
  }
  ops->push_back(Compute(
      job.training.attention == AttentionImpl::kFlash ? "attention_bwd" : "attention_bwd (unfused)",
      AttentionShapeText(job, d)));
  if (job.parallel.cp > 1) {
    ops->push_back(Coll("ring send/recv kv, dkv", GroupKind::kCp,
                        4 * d.T * d.kv / d.t * d.act_bytes, job.parallel.cp - 1));
  }
  ops->push_back(Compute("gemm qkv dgrad", Gemm(d.T, d.h, (d.q + 2 * d.kv) / d.t)));
  if (wgrad) ops->push_back(Wgrad("qkv", d.T, (d.q + 2 * d.kv) / d.t, d.h));
  AdapterBackward(d, Adapters(job, d, Linear::kQkv), adapter_wgrad, ops);
  TpReduce(d, ops);
  ops->push_back(Compute(NormName(d, "_bwd"), Rows(norm_rows, d.h)));
}

bool FullySharded(const JobSpec& job) { return job.parallel.fsdp || job.parallel.zero_stage == 3; }

// Ranks that hold the gradient of a parameter: dp x cp (experts: expert_dp x cp).
int64_t DataParallelRanks(const JobSpec& job) { return job.parallel.dp * job.parallel.cp; }

}  // namespace

std::vector<RankOp> LayerProgram(const JobSpec& job, PassKind kind, bool moe_layer) {
  const Dims d = LayerDims(job, moe_layer);
  std::vector<RankOp> ops;
  const bool sharded = FullySharded(job) && DataParallelRanks(job) > 1;
  // ZeRO-3 / FSDP: gather the layer's 16-bit parameters before forward and before backward,
  // reduce-scatter its gradients after backward (Rajbhandari et al. 2020 Sec. 5.3). Under full
  // recomputation the backward pass runs the layer's forward first, and the weights that forward
  // gathered serve the backward too (kFsdpGathersPerMicroBatch, simulator/step_costs.h).
  const ShardParams layer = LayerParamsPerGpu(job, moe_layer);
  const double param_bytes = layer.Total() * d.act_bytes;
  switch (kind) {
    case PassKind::kForward:
      if (sharded) ops.push_back(Coll("all_gather layer params", GroupKind::kDp, param_bytes));
      Forward(job, d, &ops);
      break;
    case PassKind::kBackward:
      if (sharded && job.training.recompute != Recompute::kFull) {
        ops.push_back(Coll("all_gather layer params", GroupKind::kDp, param_bytes));
      }
      Backward(job, d, &ops);
      if (sharded && !d.split_w) {
        ops.push_back(
            Coll("reduce_scatter layer grads", GroupKind::kDp, layer.trainable * d.act_bytes));
      }
      break;
    case PassKind::kWeightGrad:
      WeightGrads(job, d, &ops);
      if (sharded) {
        ops.push_back(
            Coll("reduce_scatter layer grads", GroupKind::kDp, layer.trainable * d.act_bytes));
      }
      break;
  }
  return ops;
}

std::vector<LayerOp> ExpandLayers(const JobSpec& job, int64_t stage, const ProgramStep& step,
                                  const RankOp& op) {
  std::vector<LayerOp> out;
  const int64_t first = ChunkFirstLayer(job, stage, step.pass.chunk);
  const bool recompute =
      op.layers_pass == PassKind::kBackward && job.training.recompute == Recompute::kFull;
  for (int64_t layer = first; layer < first + op.count; ++layer) {
    const bool moe = job.model.is_moe() && layer >= job.model.moe_first_dense_layers;
    if (recompute) {
      for (RankOp& inner : LayerProgram(job, PassKind::kForward, moe)) {
        out.push_back({layer, std::move(inner), PassKind::kForward});
      }
    }
    for (RankOp& inner : LayerProgram(job, op.layers_pass, moe)) {
      out.push_back({layer, std::move(inner), op.layers_pass});
    }
  }
  return out;
}

std::vector<ProgramStep> RankProgram(const JobSpec& job, const RankLayout& layout, int64_t rank) {
  const ParallelSpec& p = job.parallel;
  const RankCoord& me = layout.ranks[static_cast<size_t>(rank)];
  const Dims d = LayerDims(job, false);
  const int64_t stage = me.pp;
  const int64_t v = p.vpp;
  const int64_t m = MicrobatchesPerStep(job);
  const int64_t last_virtual = p.pp * v - 1;
  // The rank at pipeline stage `s` with this rank's other coordinates.
  auto peer_at = [&](int64_t s) { return rank + (s - stage) * p.tp * p.cp * p.dp; };
  // Pipeline messages: one micro-batch's activation (or its gradient), sequence-sharded with SP.
  const double message = d.T * d.h * d.act_bytes / (d.sp ? d.t : 1.0);
  const double vocab = static_cast<double>(job.model.vocab_size);
  const bool full_recompute = job.training.recompute == Recompute::kFull;
  const bool lora = job.training.lora.enabled;

  auto layers_op = [&](int64_t chunk, PassKind kind, const char* what) {
    const int64_t first = ChunkFirstLayer(job, stage, chunk);
    const int64_t n = ChunkLayers(job, stage, chunk);
    RankOp op;
    op.kind = RankOpKind::kLayers;
    op.name = StrFormat("layers %lld-%lld %s", static_cast<long long>(first),
                        static_cast<long long>(first + n - 1), what);
    op.count = n;
    op.layers_pass = kind;
    return op;
  };
  auto p2p = [&](RankOpKind kind, const char* what, int64_t peer) {
    RankOp op;
    op.kind = kind;
    op.name = what;
    op.group = GroupKind::kPp;
    op.peer = peer;
    op.bytes = message;
    return op;
  };

  const ShardParams params = ParamsPerGpu(job, stage);
  const double expert_trainable = job.training.lora.enabled ? 0.0 : params.expert;
  const double dense_trainable = params.trainable - expert_trainable;
  const double grad_bytes = d.act_bytes;
  const int64_t dp_ranks = DataParallelRanks(job);
  const int64_t expert_dp_ranks = p.ExpertDp();
  const bool sharded = FullySharded(job);
  const int zero = sharded ? 3 : p.zero_stage;
  // ZeRO-2 keeps no full-size gradient buffer: every backward pass reduce-scatters the
  // gradients it produced, its model chunk's share of the stage's (DeepSpeed
  // stage_1_and_2.py; the cost model's stage_time and the event simulator alike), in the W pass
  // where the schedule splits the weight gradients off.
  const bool per_pass_reduce = zero == 2;
  auto reduce_pass_grads = [&](std::vector<RankOp>* ops) {
    const double chunks = static_cast<double>(v);
    if (dp_ranks > 1 && dense_trainable > 0) {
      ops->push_back(Coll("reduce_scatter grads (ZeRO-2)", GroupKind::kDp,
                          dense_trainable * grad_bytes / chunks));
    }
    if (expert_dp_ranks > 1 && expert_trainable > 0) {
      ops->push_back(Coll("reduce_scatter expert grads (ZeRO-2)", GroupKind::kExpertDp,
                          expert_trainable * grad_bytes / chunks));
    }
  };

  std::vector<ProgramStep> steps;
  for (const PipelinePass& pass : PassOrder(p.schedule, p.pp, m, v, stage)) {
    ProgramStep step;
    step.is_pass = true;
    step.pass = pass;
    const char letter = pass.kind == PassKind::kForward    ? 'F'
                        : pass.kind == PassKind::kBackward ? 'B'
                                                           : 'W';
    step.label = StrFormat("%c mb%d c%d", letter, pass.microbatch, pass.chunk);
    const int64_t vs = pass.chunk * p.pp + stage;  // virtual stage (Narayanan et al. 2021 Fig. 4)
    const int64_t prev = peer_at((vs - 1 + p.pp) % p.pp);
    const int64_t next = peer_at((vs + 1) % p.pp);
    std::vector<RankOp>& ops = step.ops;
    if (pass.kind == PassKind::kForward) {
      if (vs > 0) ops.push_back(p2p(RankOpKind::kRecv, "recv activation", prev));
      if (vs == 0) ops.push_back(Compute("embedding_fwd", Rows(d.T, d.h)));
      ops.push_back(layers_op(pass.chunk, PassKind::kForward, "forward"));
      if (vs == last_virtual) {
        ops.push_back(Saved(Compute(NormName(d, "_fwd"), Rows(d.T, d.h)), !lora));
        // The logits are the loss's input only: it writes their gradient (Megatron-LM's
        // vocabulary-parallel cross entropy keeps its own fp32 softmax, not the logits).
        ops.push_back(Saved(Compute("gemm lm_head", Gemm(d.T, vocab / d.t, d.h)), false));
        ops.push_back(Compute("cross_entropy", Rows(d.T, vocab / d.t)));
        // Vocabulary-parallel loss: max and sum of the logits across TP (Megatron).
        if (p.tp > 1) ops.push_back(Coll("all_reduce loss max, sum", GroupKind::kTp, 2 * d.T * 4));
      } else {
        ops.push_back(p2p(RankOpKind::kSend, "send activation", next));
      }
    } else if (pass.kind == PassKind::kBackward) {
      if (vs < last_virtual) ops.push_back(p2p(RankOpKind::kRecv, "recv gradient", next));
      if (vs == last_virtual) {
        ops.push_back(Compute("gemm lm_head dgrad", Gemm(d.T, d.h, vocab / d.t)));
        if (!lora) ops.push_back(Compute("gemm lm_head wgrad", Gemm(vocab / d.t, d.h, d.T)));
      }
      ops.push_back(
          layers_op(pass.chunk, PassKind::kBackward,
                    full_recompute ? "backward, each after its forward again" : "backward"));
      // A frozen (LoRA) embedding and LM head get no weight gradient.
      if (vs == 0 && !lora) ops.push_back(Compute("embedding_bwd", Rows(d.T, d.h)));
      if (vs > 0) ops.push_back(p2p(RankOpKind::kSend, "send gradient", prev));
      if (per_pass_reduce && !d.split_w) reduce_pass_grads(&ops);
    } else {
      ops.push_back(layers_op(pass.chunk, PassKind::kWeightGrad, "weight gradients"));
      if (per_pass_reduce) reduce_pass_grads(&ops);
    }
    steps.push_back(std::move(step));
  }

  // Gradient synchronisation and the optimizer (ZeRO stage semantics: Rajbhandari et al. 2020).
  ProgramStep sync;
  sync.label = "grad sync";
  // Buckets where the stack overlaps the reduction with the backward; without dp_overlap one
  // collective reduces the whole buffer (Megatron-LM: bucket_size None without
  // --overlap-grad-reduce), as the cost model times it.
  const double bucket = GradBucketParams(job);
  auto buckets = [&](double n) {
    return p.dp_overlap ? static_cast<int64_t>(std::ceil(n / bucket)) : int64_t{1};
  };
  if (!sharded && !per_pass_reduce && dp_ranks > 1 && dense_trainable > 0) {
    const int64_t n = buckets(dense_trainable);
    sync.ops.push_back(Coll(zero == 0 ? "all_reduce grad buckets" : "reduce_scatter grad buckets",
                            GroupKind::kDp, dense_trainable * grad_bytes / static_cast<double>(n),
                            n));
  }
  if (!sharded && !per_pass_reduce && expert_dp_ranks > 1 && expert_trainable > 0) {
    const int64_t n = buckets(expert_trainable);
    sync.ops.push_back(
        Coll(zero == 0 ? "all_reduce expert grad buckets" : "reduce_scatter expert grad buckets",
             GroupKind::kExpertDp, expert_trainable * grad_bytes / static_cast<double>(n), n));
  }
  if (!sync.ops.empty()) steps.push_back(std::move(sync));

  ProgramStep opt;
  opt.label = "optimizer";
  const double shard =
      zero >= 1 ? params.trainable / static_cast<double>(dp_ranks) : params.trainable;
  opt.ops.push_back(Compute(p.cpu_offload ? "adamw (host, ZeRO-Offload)" : "adam",
                            StrFormat("%.0f params", shard)));
  if ((zero == 1 || zero == 2) && dp_ranks > 1 && dense_trainable > 0) {
    const int64_t n = buckets(dense_trainable);
    opt.ops.push_back(Coll("all_gather updated params", GroupKind::kDp,
                           dense_trainable * d.act_bytes / static_cast<double>(n), n));
  }
  steps.push_back(std::move(opt));
  return steps;
}

}  // namespace gpuplan

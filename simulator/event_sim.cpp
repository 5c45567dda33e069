#include "simulator/event_sim.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "common/limits.h"
#include "simulator/event_engine.h"
#include "simulator/memory.h"
#include "simulator/pipeline_schedule.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

// What an op's time counts as in the breakdown. Enum order is the attribution priority.
enum class Category : uint8_t { kCompute, kTp, kCp, kEp, kPp, kDp, kOptimizer };
constexpr int kCategoryCount = 7;

struct OpMeta {
  int32_t rank;
  SimStream stream;
  Category category;
  std::string_view name;
  int32_t microbatch, chunk, layer;
  double bytes, flops;
};

// A pipeline transfer: the send op, the GPU that receives it, and which way it goes.
struct Transfer {
  int32_t send;
  int32_t to_rank;
  bool forward;  // activations (else gradients)
};

// What the simulation returns when its ProgressSink asks it to stop (as EventEngine::Run does).
Status Cancelled() { return Status::Cancelled("event simulation: cancelled"); }

// Key of a pass input crossing stages: (forward or backward, virtual stage, micro-batch).
int64_t InputKey(bool forward, int64_t virtual_stage, int64_t microbatch, int64_t m) {
  return ((forward ? 0 : 1) * 1'000'000 + virtual_stage) * m + microbatch;
}

class StepBuilder {
 public:
  StepBuilder(const JobSpec& job, const StepCosts& costs, const GpuSpec& gpu,
              const DeviceRates& rates)
      : job_(job),
        par_(job.parallel),
        costs_(costs),
        gpu_(gpu),
        rates_(rates),
        engine_(kOverlapInterference),
        m_(MicrobatchesPerStep(job)),
        v_(GetScheduleInfo(par_.schedule).uses_chunks ? par_.vpp : 1),
        split_(GetScheduleInfo(par_.schedule).splits_backward),
        zero_(par_.ZeroStage()),
        sharded_dp_(par_.dp * par_.cp > 1),
        gather_in_forward_(WeightGatherInForward(job)) {}

  Expected<EventSimResult> Run(const EventSimOptions& options);

 private:
  // The engine's finished ops as the second half of the step's progress: T + T x done / ops.
  class EngineProgress : public ProgressSink {
   public:
    EngineProgress(ProgressSink* sink, ProgressThrottle* step, int64_t passes)
        : sink_(sink), step_(step), passes_(passes) {}
    void Update(int64_t done, int64_t total) override {
      step_->Report(passes_ + (total > 0 ? passes_ * done / total : passes_));
    }
    bool Cancelled() const override { return sink_->Cancelled(); }

   private:
    ProgressSink* sink_;
    ProgressThrottle* step_;
    int64_t passes_;
  };

  struct Rank {
    int32_t compute, scaleup, network;               // engine resources
    std::array<int32_t, kSimStreamCount> last{};     // last op per stream, -1 none
    std::vector<int32_t> waits;                      // ops the next compute op must wait for
    int32_t prev_compute = -1;                       // compute op before the latest one
    std::vector<int32_t> prev_waits;                 // what the latest compute op waited for
    double bucket_dense = 0, bucket_expert = 0;      // gradients not yet in a DP op
    double weights_gathered = 0;                     // gathered ahead of the first forward pass
    double weights_left = 0;                         // not yet in a weight all-gather
    std::vector<std::pair<int32_t, double>> memory;  // (op, +/- bytes): at start if +, end if -
  };

  int32_t Resource(int32_t rank, SimStream stream) const;
  int32_t NewOp(int32_t rank, SimStream stream, Category category, std::string_view name,
                double work, int32_t mb = -1, int32_t chunk = -1, int32_t layer = -1,
                double bytes = 0, double flops = 0);
  int32_t Compute(int32_t rank, std::string_view name, double work, int32_t mb, int32_t chunk,
                  int32_t layer, double flops, Category category = Category::kCompute);
  int32_t Blocking(int32_t rank, SimStream stream, Category category, std::string_view name,
                   double work, int32_t mb, int32_t layer, double bytes);
  // A communication op that runs beside the latest compute op (starts with it).
  void Beside(int32_t rank, SimStream stream, Category category, std::string_view name, double work,
              int32_t mb, int32_t layer, double bytes);
  int32_t Async(int32_t rank, SimStream stream, Category category, std::string_view name,
                double work, double bytes);
  // Context parallelism's K/V ring exchange after an attention kernel: beside it (cp_overlap),
  // or waited for before the next kernel.
  void Ring(int32_t rank, double work, int32_t mb, int32_t layer, double bytes);
  void FlushBucket(int32_t rank, bool force);
  void AddGradients(int32_t rank, const ShardParams& params);
  void GatherWeights(int32_t rank, const ShardParams& params);
  Status BuildRank(int32_t stage);
  // `reduces_grads`: the pass adds its gradients to the DP buckets (the step's last backward of
  // the chunk, or every backward under ZeRO-2).
  void Pass(int32_t stage, const PipelinePass& pass, bool reduces_grads);
  void EndMicrobatchGradients(int32_t rank);
  // The all-gather of `layer`'s weights for one pass of micro-batch `mb`: its forward, or its
  // backward with the full recomputation's forward that runs inside it.
  int32_t Gather(int32_t rank, int64_t layer, int32_t mb);

  const LayerCosts& Layer(int64_t layer) const {
    return job_.model.is_moe() && layer >= job_.model.moe_first_dense_layers ? costs_.moe
                                                                             : costs_.dense;
  }
  // A layer's TP work: its collectives, or with tp_overlap what the overlapped GEMMs take beyond
  // the GEMMs alone (tp_overlap.h), which runs inside those GEMMs rather than beside them.
  std::string_view TpOpName() const {
    return par_.tp_overlap ? "tp overlap (beyond the GEMMs)" : "tp collectives";
  }
  bool IsMoe(int64_t layer) const {
    return job_.model.is_moe() && layer >= job_.model.moe_first_dense_layers;
  }

  const JobSpec& job_;
  const ParallelSpec& par_;
  const StepCosts& costs_;
  const GpuSpec& gpu_;
  const DeviceRates& rates_;
  EventEngine engine_;
  const int64_t m_, v_;
  const bool split_;
  const int zero_;
  const bool sharded_dp_;
  const bool gather_in_forward_;  // WeightGatherInForward (step_costs.h)
  std::vector<Rank> ranks_;
  std::vector<OpMeta> meta_;
  std::vector<std::pair<int64_t, int32_t>> provides_;  // (input key, send op)
  std::vector<std::pair<int64_t, int32_t>> needs_;     // (input key, first op of the pass)
  std::vector<Transfer> transfers_;
  std::vector<int32_t> pass_ops_;  // compute ops of forward/backward passes (pipeline end)
  ShardParams dense_layer_, moe_layer_;
  // A layer's parameters split where its backward's gradients become ready: [0] dense layer,
  // [1] MoE layer; the MLP's (experts, router and shared experts of a MoE layer), then the rest.
  ShardParams mlp_grads_[2], rest_grads_[2];
  ShardParams embedding_params_, head_params_;  // per GPU; trainable 0 under LoRA
  LayerActivations layer_act_;                  // stored bytes per layer and micro-batch
  ProgressThrottle* progress_ = nullptr;        // passes built (the first half)
  int64_t passes_built_ = 0;
};

int32_t StepBuilder::Resource(int32_t rank, SimStream stream) const {
  // A group inside one node uses the scale-up fabric (NVLink/PCIe); one that spans nodes is
  // limited by the GPU's NIC.
  const Rank& r = ranks_[static_cast<size_t>(rank)];
  const GroupLink* link = nullptr;
  switch (stream) {
    case SimStream::kCompute:
      return r.compute;
    case SimStream::kTp:
      link = &costs_.tp_link;
      break;
    case SimStream::kCp:
      link = &costs_.cp_link;
      break;
    case SimStream::kEp:
      link = &costs_.ep_link;
      break;
    case SimStream::kPpSend:
    case SimStream::kPpRecv:
      link = &costs_.pp_link;
      break;
    case SimStream::kDpGather:
      link = &costs_.shard_link;  // the whole DP group unless HSDP splits it
      break;
    case SimStream::kDpReduce:
      link = &costs_.dp_link;
      break;
  }
  return link->nodes() <= 1.0 ? r.scaleup : r.network;
}

int32_t StepBuilder::NewOp(int32_t rank, SimStream stream, Category category, std::string_view name,
                           double work, int32_t mb, int32_t chunk, int32_t layer, double bytes,
                           double flops) {
  const int32_t id = engine_.AddOp(Resource(rank, stream), work);
  meta_.push_back({rank, stream, category, name, mb, chunk, layer, bytes, flops});
  Rank& r = ranks_[static_cast<size_t>(rank)];
  int32_t& last = r.last[static_cast<size_t>(stream)];
  if (last >= 0) engine_.AddDependency(last, id);  // a stream runs its ops in order
  last = id;
  return id;
}

int32_t StepBuilder::Compute(int32_t rank, std::string_view name, double work, int32_t mb,
                             int32_t chunk, int32_t layer, double flops, Category category) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  r.prev_compute = r.last[static_cast<size_t>(SimStream::kCompute)];
  const int32_t id =
      NewOp(rank, SimStream::kCompute, category, name, work, mb, chunk, layer, 0, flops);
  for (int32_t w : r.waits) engine_.AddDependency(w, id);
  r.prev_waits.swap(r.waits);
  r.waits.clear();
  return id;
}

int32_t StepBuilder::Blocking(int32_t rank, SimStream stream, Category category,
                              std::string_view name, double work, int32_t mb, int32_t layer,
                              double bytes) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  const int32_t after = r.last[static_cast<size_t>(SimStream::kCompute)];
  const int32_t id = NewOp(rank, stream, category, name, work, mb, -1, layer, bytes);
  if (after >= 0) engine_.AddDependency(after, id);
  // Data it sends comes out of the ops still pending (a TP all-reduce before a pipeline send).
  for (int32_t w : r.waits) engine_.AddDependency(w, id);
  r.waits.push_back(id);
  return id;
}

void StepBuilder::Beside(int32_t rank, SimStream stream, Category category, std::string_view name,
                         double work, int32_t mb, int32_t layer, double bytes) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  const int32_t id = NewOp(rank, stream, category, name, work, mb, -1, layer, bytes);
  if (r.prev_compute >= 0) engine_.AddDependency(r.prev_compute, id);
  for (int32_t w : r.prev_waits) engine_.AddDependency(w, id);
  r.waits.push_back(id);
}

int32_t StepBuilder::Async(int32_t rank, SimStream stream, Category category, std::string_view name,
                           double work, double bytes) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  const int32_t after = r.last[static_cast<size_t>(SimStream::kCompute)];
  const int32_t id = NewOp(rank, stream, category, name, work, -1, -1, -1, bytes);
  if (after >= 0) engine_.AddDependency(after, id);
  return id;
}

void StepBuilder::Ring(int32_t rank, double work, int32_t mb, int32_t layer, double bytes) {
  if (par_.cp_overlap) {
    Beside(rank, SimStream::kCp, Category::kCp, "ring K/V", work, mb, layer, bytes);
  } else {
    Blocking(rank, SimStream::kCp, Category::kCp, "ring K/V", work, mb, layer, bytes);
  }
}

// Gradient reduction in buckets of costs.grad_bucket_params (the stack's), issued as soon as a
// bucket is full (PyTorch DDP, Li et al. 2020 Sec. 3.2.3; Megatron-LM --overlap-grad-reduce):
// the full buckets the layers so far have filled go out as one op, timed as their collectives
// (BucketedGradReduceSeconds, as the analytic model times them), and the rest waits for the next
// layer; `force` (the backward's end) sends the rest too.
void StepBuilder::FlushBucket(int32_t rank, bool force) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  const double params = r.bucket_dense + r.bucket_expert;
  const double bucket = costs_.grad_bucket_params;
  if (params <= 0 || (!force && params < bucket)) return;
  const double issued = force || bucket <= 0 ? params : std::floor(params / bucket) * bucket;
  const double dense = r.bucket_dense * issued / params;
  const double expert = r.bucket_expert * issued / params;
  // The weights are gathered once, after the optimizer step (or in the next forward).
  const double seconds = BucketedGradReduceSeconds(costs_, zero_, dense, expert);
  const char* name =
      zero_ == 0 || costs_.grads_all_reduced_after_backward ? "all-reduce" : "reduce-scatter";
  Async(rank, SimStream::kDpReduce, Category::kDp, name, seconds,
        costs_.grad_bytes_per_param * issued);
  r.bucket_dense = issued == params ? 0.0 : r.bucket_dense - dense;
  r.bucket_expert = issued == params ? 0.0 : r.bucket_expert - expert;
}

// ZeRO-2: a micro-batch's gradients are reduce-scattered by the end of its backward pass (the
// last bucket is issued then), and the next computation waits for them (DeepSpeed
// stage_1_and_2.py synchronises its reduction stream in the backward epilogue; the sharded
// gradient is accumulated into once the reduction is done).
void StepBuilder::EndMicrobatchGradients(int32_t rank) {
  if (zero_ != 2 || !sharded_dp_) return;
  FlushBucket(rank, true);
  Rank& r = ranks_[static_cast<size_t>(rank)];
  const int32_t last = r.last[static_cast<size_t>(SimStream::kDpReduce)];
  if (last >= 0) r.waits.push_back(last);
}

void StepBuilder::AddGradients(int32_t rank, const ShardParams& params) {
  if (zero_ >= 3 || !sharded_dp_) return;
  Rank& r = ranks_[static_cast<size_t>(rank)];
  const double share = params.Total() > 0 ? params.trainable / params.Total() : 0.0;
  r.bucket_dense += params.dense * share;
  r.bucket_expert += params.expert * share;
  // Without backward hooks (nanotron's ZeRO-1) the whole buffer is reduced after the last backward.
  if (par_.dp_overlap && !costs_.grads_all_reduced_after_backward) FlushBucket(rank, false);
}

// Megatron-Core --overlap-param-gather (FrameworkTraits::weight_gather_in_forward): the step
// begins with the all-gather of the weights the previous optimizer step updated, in buckets of
// costs.grad_bucket_params in forward order; the first forward pass waits at each layer for the
// bucket holding its weights. The all-gathers queue on their stream from the start of the step.
void StepBuilder::GatherWeights(int32_t rank, const ShardParams& params) {
  Rank& r = ranks_[static_cast<size_t>(rank)];
  const double need = params.trainable;
  if (need <= 0) return;
  if (r.weights_gathered < need) {
    const double bucket =
        std::min(r.weights_left, std::max(costs_.grad_bucket_params, need - r.weights_gathered));
    const double dense = params.DenseShare();
    const double seconds =
        BucketedWeightGatherSeconds(costs_, zero_, bucket * dense, bucket * (1.0 - dense));
    r.waits.push_back(NewOp(rank, SimStream::kDpGather, Category::kDp, "all-gather weights",
                            seconds, -1, -1, -1, costs_.weight_gather_bytes_per_param * bucket));
    r.weights_gathered += bucket;
    r.weights_left -= bucket;
  }
  r.weights_gathered = std::max(0.0, r.weights_gathered - need);
}

// FSDP/ZeRO-3: gather one layer's weights for one pass (kFsdpGathersPerMicroBatch: the forward,
// and the backward, whose full recomputation reuses them). Prefetch depth one layer (PyTorch FSDP
// forward/backward prefetch, Zhao et al. 2023 Sec. 3.3): the gather may start once the compute op
// before the previous layer is done.
int32_t StepBuilder::Gather(int32_t rank, int64_t layer, int32_t mb) {
  const bool moe = IsMoe(layer);
  const ShardParams& p = moe ? moe_layer_ : dense_layer_;
  const double bytes = costs_.weight_gather_bytes_per_param * p.Total();
  const double seconds = FsdpGatherSeconds(costs_, p);
  // Without dp_overlap nothing is prefetched: the gather waits for the computation before it.
  if (!par_.dp_overlap) {
    return Blocking(rank, SimStream::kDpGather, Category::kDp, "all-gather weights", seconds, mb,
                    static_cast<int32_t>(layer), bytes);
  }
  Rank& r = ranks_[static_cast<size_t>(rank)];
  const int32_t id = NewOp(rank, SimStream::kDpGather, Category::kDp, "all-gather weights", seconds,
                           mb, -1, static_cast<int32_t>(layer), bytes);
  if (r.prev_compute >= 0) engine_.AddDependency(r.prev_compute, id);
  r.waits.push_back(id);
  return id;
}

void StepBuilder::Pass(int32_t stage, const PipelinePass& pass, bool reduces_grads) {
  const int32_t mb = pass.microbatch;
  const int32_t chunk = pass.chunk;
  const int64_t pp = par_.pp;
  const int64_t vs = static_cast<int64_t>(chunk) * pp + stage;  // virtual stage
  const int64_t vs_count = pp * v_;
  const int64_t first_layer = ChunkFirstLayer(job_, stage, chunk);
  const int64_t layers = ChunkLayers(job_, stage, chunk);
  const bool has_embedding = vs == 0;
  const bool has_head = vs == vs_count - 1;
  const bool fsdp = zero_ >= 3 && sharded_dp_;
  // A stage that keeps its weights gathered under pipelining (FsdpKeepsStageGathered) gathers a
  // layer only for the first micro-batch's forward and reduce-scatters its gradients only after
  // the step's last backward of the chunk, exposed (PyTorch's pipelining runs FSDP's post_backward
  // after that backward).
  const bool keep = fsdp && FsdpKeepsStageGathered(job_);
  Rank& r = ranks_[static_cast<size_t>(stage)];
  int32_t first_compute = -1;
  auto compute = [&](std::string_view name, double work, int32_t layer, double flops) {
    const int32_t id = Compute(stage, name, work, mb, chunk, layer, flops);
    if (first_compute < 0) first_compute = id;
    return id;
  };
  const double chunk_act = ChunkActivationBytes(job_, layer_act_, stage, chunk);

  const bool gather_weights = gather_in_forward_ && pass.kind == PassKind::kForward && mb == 0;
  if (pass.kind == PassKind::kForward) {
    if (has_embedding) {
      if (gather_weights) GatherWeights(stage, embedding_params_);
      compute("embedding", costs_.embed_fwd, -1, 0);
    }
    for (int64_t l = first_layer; l < first_layer + layers; ++l) {
      const LayerCosts& c = Layer(l);
      const int32_t li = static_cast<int32_t>(l);
      if (fsdp && (!keep || mb == 0)) Gather(stage, l, mb);
      if (gather_weights) GatherWeights(stage, IsMoe(l) ? moe_layer_ : dense_layer_);
      if (par_.cp > 1) {
        compute("attention", c.fwd_attn, li, 0);
        Ring(stage, c.cp_pass, mb, li, c.cp_bytes);
        compute("forward", c.fwd_gemm + c.fwd_other, li, c.fwd_flops);
      } else {
        compute("forward", c.Forward(), li, c.fwd_flops);
      }
      if (par_.tp > 1) {
        Blocking(stage, SimStream::kTp, Category::kTp, TpOpName(), c.tp_fwd, mb, li, c.tp_bytes);
      }
      if (IsMoe(l) && par_.ep > 1) {
        Blocking(stage, SimStream::kEp, Category::kEp, "all-to-all", c.ep_pass, mb, li, c.ep_bytes);
      }
    }
    if (has_head) {
      if (gather_weights) GatherWeights(stage, head_params_);
      compute("lm head", costs_.head_fwd, -1, 0);
    }
    if (first_compute < 0) first_compute = compute("forward", 0.0, -1, 0);
    r.memory.emplace_back(first_compute, chunk_act);
  } else if (pass.kind == PassKind::kBackward) {
    if (has_head) compute("lm head", costs_.head_bwd, -1, 0);
    if (!split_ && reduces_grads && has_head) AddGradients(stage, head_params_);
    const char* reduce_name =
        par_.dp_replicate > 1 ? "reduce-scatter + all-reduce grads" : "reduce-scatter grads";
    double deferred_reduce_s = 0, deferred_reduce_bytes = 0;
    for (int64_t l = first_layer + layers - 1; l >= first_layer; --l) {
      const LayerCosts& c = Layer(l);
      const int32_t li = static_cast<int32_t>(l);
      if (fsdp && !keep) {
        // One gather serves the backward and a full recomputation's forward
        // (kFsdpGathersPerMicroBatch).
        Gather(stage, l, mb);
      }
      if (job_.training.recompute == Recompute::kFull) {
        // The forward again, its collectives included (step_costs.cpp).
        compute("recompute", c.recompute, li, c.fwd_flops);
        if (par_.cp > 1) {
          Ring(stage, c.cp_pass, mb, li, c.cp_bytes);
        }
        if (par_.tp > 1) {
          Blocking(stage, SimStream::kTp, Category::kTp, TpOpName(), c.tp_recompute, mb, li,
                   c.tp_bytes);
        }
        if (IsMoe(l) && par_.ep > 1) {
          Blocking(stage, SimStream::kEp, Category::kEp, "all-to-all", c.ep_pass, mb, li,
                   c.ep_bytes);
        }
      } else if (c.recompute > 0) {
        // Selective: the modules it names again (step_costs.cpp), the core attention with its
        // context-parallel ring, a checkpointed MLP with its TP collectives.
        compute("recompute", c.recompute, li, 0);
        if (par_.cp > 1 && Recomputes(job_.training, kRecomputeCoreAttn)) {
          Ring(stage, c.cp_pass, mb, li, c.cp_bytes);
        }
        if (c.tp_recompute > 0) {
          Blocking(stage, SimStream::kTp, Category::kTp, TpOpName(), c.tp_recompute, mb, li,
                   c.tp_bytes);
        }
      }
      const double bwd = c.bwd - (split_ ? c.wgrad : 0.0);
      double other = bwd;
      if (par_.cp > 1) {
        compute("attention backward", c.bwd_attn, li, 0);
        Ring(stage, 2.0 * c.cp_pass, mb, li, c.cp_bytes);
        other -= c.bwd_attn;
      }
      // The backward meets the MLP first: its weights' gradients are ready once its part of the
      // pass is done, the attention's and the norms' at the layer's end; DDP-style buckets fill
      // at that granularity.
      const int moe_index = IsMoe(l) ? 1 : 0;
      const bool mlp_first = !split_ && reduces_grads && zero_ < 3 && sharded_dp_ &&
                             !job_.training.lora.enabled && c.mlp_bwd > 0 && c.mlp_bwd < other;
      double flops = 2.0 * c.fwd_flops;  // the trace's annotation, split by time
      if (mlp_first) {
        const double mlp_flops = flops * c.mlp_bwd / other;
        compute("mlp backward", c.mlp_bwd, li, mlp_flops);
        AddGradients(stage, mlp_grads_[moe_index]);
        other -= c.mlp_bwd;
        flops -= mlp_flops;
      }
      compute("backward", other, li, flops);
      if (par_.tp > 1) {
        Blocking(stage, SimStream::kTp, Category::kTp, TpOpName(), c.tp_bwd, mb, li, c.tp_bytes);
      }
      if (IsMoe(l) && par_.ep > 1) {
        Blocking(stage, SimStream::kEp, Category::kEp, "all-to-all", c.ep_pass, mb, li, c.ep_bytes);
      }
      if (fsdp) {
        const ShardParams& p = IsMoe(l) ? moe_layer_ : dense_layer_;
        const double bytes = costs_.grad_bytes_per_param * p.trainable;
        if (keep) {
          if (reduces_grads) {
            deferred_reduce_s += FsdpReduceSeconds(costs_, p);
            deferred_reduce_bytes += bytes;
          }
        } else if (par_.dp_overlap) {
          Async(stage, SimStream::kDpReduce, Category::kDp, reduce_name,
                FsdpReduceSeconds(costs_, p), bytes);
        } else {
          Blocking(stage, SimStream::kDpReduce, Category::kDp, reduce_name,
                   FsdpReduceSeconds(costs_, p), mb, li, bytes);
        }
      }
      if (!split_ && reduces_grads) {
        AddGradients(stage,
                     mlp_first ? rest_grads_[moe_index] : (IsMoe(l) ? moe_layer_ : dense_layer_));
      }
    }
    if (has_embedding) {
      compute("embedding", costs_.embed_bwd, -1, 0);
      if (!split_ && reduces_grads) AddGradients(stage, embedding_params_);
    }
    if (deferred_reduce_s > 0) {
      Blocking(stage, SimStream::kDpReduce, Category::kDp, reduce_name, deferred_reduce_s, mb, -1,
               deferred_reduce_bytes);
    }
    if (first_compute < 0) first_compute = compute("backward", 0.0, -1, 0);
    if (!split_) r.memory.emplace_back(r.last[0], -chunk_act);
    if (!split_) EndMicrobatchGradients(stage);
  } else {
    // Weight gradients layer by layer (reverse order, as the B pass left them).
    for (int64_t l = first_layer + layers - 1; l >= first_layer; --l) {
      compute("wgrad", Layer(l).wgrad, static_cast<int32_t>(l), Layer(l).fwd_flops);
      if (reduces_grads) AddGradients(stage, IsMoe(l) ? moe_layer_ : dense_layer_);
    }
    if (reduces_grads && has_head) AddGradients(stage, head_params_);
    if (reduces_grads && has_embedding) AddGradients(stage, embedding_params_);
    r.memory.emplace_back(r.last[0], -chunk_act);
    EndMicrobatchGradients(stage);
  }
  pass_ops_.push_back(r.last[0]);

  // Pass inputs and outputs across stages: forward activations go to the next virtual stage,
  // gradients to the previous one. Megatron's p2p is blocking: the sender waits for the send.
  if (pass.kind == PassKind::kWeightGrad) return;
  const bool forward = pass.kind == PassKind::kForward;
  if (forward ? vs > 0 : vs < vs_count - 1) {
    needs_.emplace_back(InputKey(forward, vs, mb, m_), first_compute);
  }
  if (forward ? vs < vs_count - 1 : vs > 0) {
    const int64_t to_vs = forward ? vs + 1 : vs - 1;
    const int32_t send = Blocking(stage, SimStream::kPpSend, Category::kPp,
                                  forward ? "send activations" : "send gradients", costs_.p2p, mb,
                                  -1, costs_.p2p_bytes);
    provides_.emplace_back(InputKey(forward, to_vs, mb, m_), send);
    transfers_.push_back({send, static_cast<int32_t>(to_vs % pp), forward});
  }
}

Status StepBuilder::BuildRank(int32_t stage) {
  const std::vector<PipelinePass> order = PassOrder(par_.schedule, par_.pp, m_, v_, stage);
  ranks_[static_cast<size_t>(stage)].weights_left = ParamsPerGpu(job_, stage).trainable;
  // The pass that completes a chunk's weight gradients for the step (the last micro-batch's
  // backward, or W pass) starts that chunk's gradient buckets.
  const PassKind grads = split_ ? PassKind::kWeightGrad : PassKind::kBackward;
  std::vector<size_t> last_index(static_cast<size_t>(v_), 0);
  for (size_t i = 0; i < order.size(); ++i) {
    if (order[i].kind == grads) last_index[static_cast<size_t>(order[i].chunk)] = i;
  }
  for (size_t i = 0; i < order.size(); ++i) {
    Pass(stage, order[i], zero_ == 2 || i == last_index[static_cast<size_t>(order[i].chunk)]);
    if (!progress_->Report(++passes_built_)) return Cancelled();
    // One pass adds at most a chunk's layers' ops, so the overshoot is bounded.
    if (static_cast<int64_t>(engine_.op_count()) > kMaxSimulatedOps) {
      return Status::Invalid("event simulation: more than " + std::to_string(kMaxSimulatedOps) +
                             " simulated ops for one step, the limit (docs/JOB_SPEC.md, "
                             "Limits); lower training.global_batch_size or run without --event");
    }
  }
  Rank& r = ranks_[static_cast<size_t>(stage)];
  if (zero_ < 3 && sharded_dp_) FlushBucket(stage, true);
  const ShardParams stage_params = ParamsPerGpu(job_, stage);
  // The optimizer waits for every gradient and gather of this GPU.
  for (SimStream s : {SimStream::kDpReduce, SimStream::kDpGather}) {
    const int32_t last = r.last[static_cast<size_t>(s)];
    if (last >= 0) r.waits.push_back(last);
  }
  Compute(stage, "optimizer",
          OptimizerSeconds(costs_, job_, gpu_, rates_, OptimizerShardParams(job_, stage_params)),
          -1, -1, -1, 0, Category::kOptimizer);
  if (zero_ >= 1 && zero_ < 3 && sharded_dp_ && !gather_in_forward_) {
    // The updated weights' all-gather after the optimizer step (cost_model.cpp).
    Async(stage, SimStream::kDpGather, Category::kDp, "all-gather weights",
          WeightGatherSeconds(costs_, zero_, stage_params.DenseTrainable(),
                              stage_params.ExpertTrainable()),
          costs_.weight_gather_bytes_per_param * stage_params.trainable);
  }
  return Status::Ok();
}

Expected<EventSimResult> StepBuilder::Run(const EventSimOptions& options) {
  GPUPLAN_RETURN_IF_ERROR(CheckEventSimSize(job_));
  const int64_t pp = par_.pp;
  dense_layer_ = LayerParamsPerGpu(job_, false);
  {
    // The LM head's gradients are ready when backward starts on the last stage, the
    // embedding's when it ends on the first (with tied weights and pp > 1 the last stage keeps
    // its own copy, as ParamsPerGpu counts it).
    const ParameterCounts counts = CountParameters(job_.model);
    const double tp = static_cast<double>(par_.tp);
    const bool frozen = job_.training.lora.enabled;
    embedding_params_.dense = counts.embedding / tp;
    head_params_.dense = counts.output_head / tp +
                         (job_.model.tied_embeddings && pp > 1 ? counts.embedding / tp : 0.0);
    embedding_params_.trainable = frozen ? 0.0 : embedding_params_.dense;
    head_params_.trainable = frozen ? 0.0 : head_params_.dense;
  }
  if (job_.model.is_moe()) moe_layer_ = LayerParamsPerGpu(job_, true);
  {
    const ShardParams* layers[2] = {&dense_layer_, &moe_layer_};
    for (int k = 0; k < 2; ++k) {
      mlp_grads_[k] = LayerMlpParamsPerGpu(job_, k == 1);
      rest_grads_[k].dense = std::max(0.0, layers[k]->dense - mlp_grads_[k].dense);
      rest_grads_[k].expert = std::max(0.0, layers[k]->expert - mlp_grads_[k].expert);
      rest_grads_[k].trainable = rest_grads_[k].Total();
    }
  }
  layer_act_ = JobLayerActivations(job_);
  // Every stage's pass order holds each (micro-batch, chunk) once per pass kind.
  const int64_t passes = pp * m_ * v_ * (split_ ? 3 : 2);
  ProgressThrottle progress(options.progress, 2 * passes);
  if (!progress.Report(0)) return Cancelled();
  progress_ = &progress;
  ranks_.resize(static_cast<size_t>(pp));
  for (int32_t s = 0; s < pp; ++s) {
    Rank& r = ranks_[static_cast<size_t>(s)];
    r.compute = engine_.AddResource(s, ResourceKind::kCompute);
    r.scaleup = engine_.AddResource(s, ResourceKind::kLink);
    r.network = engine_.AddResource(s, ResourceKind::kLink);
    r.last.fill(-1);
  }
  for (int32_t s = 0; s < pp; ++s) GPUPLAN_RETURN_IF_ERROR(BuildRank(s));
  // Link each pass to the transfer that brings its input.
  std::sort(provides_.begin(), provides_.end());
  for (const auto& [key, op] : needs_) {
    const auto it =
        std::lower_bound(provides_.begin(), provides_.end(), std::make_pair(key, int32_t{-1}));
    if (it == provides_.end() || it->first != key) {
      return Status::Internal("event simulation: no pipeline transfer feeds op " +
                              std::to_string(op));
    }
    engine_.AddDependency(it->second, op);
  }
  if (options.record_timeline && static_cast<int64_t>(engine_.op_count()) > kMaxTimelineOps) {
    return Status::Invalid("event simulation: a timeline (trace or SVG) of " +
                           std::to_string(engine_.op_count()) + " ops exceeds the limit of " +
                           std::to_string(kMaxTimelineOps) +
                           " (docs/JOB_SPEC.md, Limits); lower training.global_batch_size or "
                           "simulate without a trace");
  }
  EngineProgress engine_progress(options.progress, &progress, passes);
  GPUPLAN_RETURN_IF_ERROR(engine_.Run(options.progress != nullptr ? &engine_progress : nullptr));

  EventSimResult res;
  res.simulated_gpus = pp;
  res.ops = static_cast<int64_t>(engine_.op_count());
  res.events = engine_.events();
  std::vector<double> rank_end(static_cast<size_t>(pp), 0.0);
  for (size_t i = 0; i < meta_.size(); ++i) {
    const int32_t id = static_cast<int32_t>(i);
    double& end = rank_end[static_cast<size_t>(meta_[i].rank)];
    end = std::max(end, engine_.end_s(id));
  }
  for (int32_t op : pass_ops_) res.pipeline_s = std::max(res.pipeline_s, engine_.end_s(op));
  res.critical_rank = std::max_element(rank_end.begin(), rank_end.end()) - rank_end.begin();
  res.step_time_s = rank_end[static_cast<size_t>(res.critical_rank)];

  // Breakdown of the critical GPU: sweep its op boundaries; each interval goes to the busy
  // category of highest priority (enum order), optimizer apart, idle = bubble.
  {
    std::vector<std::pair<double, int>> marks;  // (time, +/-(category+1))
    for (size_t i = 0; i < meta_.size(); ++i) {
      if (meta_[i].rank != res.critical_rank) continue;
      const int32_t id = static_cast<int32_t>(i);
      const int c = static_cast<int>(meta_[i].category) + 1;
      if (engine_.end_s(id) <= engine_.start_s(id)) continue;
      marks.emplace_back(engine_.start_s(id), c);
      marks.emplace_back(engine_.end_s(id), -c);
    }
    std::sort(marks.begin(), marks.end());
    std::array<int, kCategoryCount> busy{};
    std::array<double, kCategoryCount + 1> spent{};  // last slot: idle
    double t = 0;
    for (const auto& [time, mark] : marks) {
      int top = kCategoryCount;
      for (int c = 0; c < kCategoryCount; ++c) {
        if (busy[static_cast<size_t>(c)] > 0) {
          top = c;
          break;
        }
      }
      spent[static_cast<size_t>(top)] += time - t;
      t = time;
      busy[static_cast<size_t>(std::abs(mark) - 1)] += mark > 0 ? 1 : -1;
    }
    spent[kCategoryCount] += res.step_time_s - t;
    TimeBreakdown& bd = res.breakdown_s;
    bd.compute = spent[static_cast<size_t>(Category::kCompute)];
    bd.tp_comm = spent[static_cast<size_t>(Category::kTp)];
    bd.cp_comm = spent[static_cast<size_t>(Category::kCp)];
    bd.ep_comm = spent[static_cast<size_t>(Category::kEp)];
    bd.pp_comm = spent[static_cast<size_t>(Category::kPp)];
    bd.dp_comm = spent[static_cast<size_t>(Category::kDp)];
    bd.optimizer = spent[static_cast<size_t>(Category::kOptimizer)];
    bd.bubble = spent[kCategoryCount];
  }

  // Activation memory per GPU: + when a forward pass starts, - when its gradients are done.
  res.peak_activation_bytes.assign(static_cast<size_t>(pp), 0.0);
  res.microbatch_activation_bytes.assign(static_cast<size_t>(pp), 0.0);
  std::vector<std::vector<std::pair<double, double>>> curves(static_cast<size_t>(pp));
  for (int32_t s = 0; s < pp; ++s) {
    double per_mb = 0;
    for (int64_t c = 0; c < v_; ++c) per_mb += ChunkActivationBytes(job_, layer_act_, s, c);
    res.microbatch_activation_bytes[static_cast<size_t>(s)] = per_mb;
    auto& curve = curves[static_cast<size_t>(s)];
    for (const auto& [op, delta] : ranks_[static_cast<size_t>(s)].memory) {
      curve.emplace_back(delta > 0 ? engine_.start_s(op) : engine_.end_s(op), delta);
    }
    // At equal times frees go first: a pass that ends as the next begins does not add up.
    std::sort(curve.begin(), curve.end());
    double level = 0;
    for (auto& [time, delta] : curve) {
      level += delta;
      delta = level;
      res.peak_activation_bytes[static_cast<size_t>(s)] =
          std::max(res.peak_activation_bytes[static_cast<size_t>(s)], level);
    }
  }

  if (options.record_timeline) {
    Timeline& tl = res.timeline;
    const int64_t group = par_.tp * par_.cp * par_.dp;
    for (int32_t s = 0; s < pp; ++s) {
      TimelineRank r;
      r.stage = s;
      r.global_rank = s * group;
      r.represents = group;
      r.name = "stage " + std::to_string(s) + " (rank " + std::to_string(r.global_rank) + ")";
      tl.ranks.push_back(std::move(r));
    }
    // Zero-length ops (a chunk with no layers still marks its pass) are left out of the trace.
    tl.ops.reserve(meta_.size() + transfers_.size());
    std::vector<int32_t> index_of(meta_.size(), -1);
    for (size_t i = 0; i < meta_.size(); ++i) {
      const OpMeta& o = meta_[i];
      const int32_t id = static_cast<int32_t>(i);
      if (engine_.end_s(id) <= engine_.start_s(id)) continue;
      index_of[i] = static_cast<int32_t>(tl.ops.size());
      tl.ops.push_back({o.rank, o.stream, o.name, engine_.start_s(id), engine_.end_s(id),
                        o.microbatch, o.chunk, o.layer, o.bytes, o.flops});
    }
    for (const Transfer& t : transfers_) {
      const int32_t from = index_of[static_cast<size_t>(t.send)];
      if (from < 0) continue;
      TimelineOp recv = tl.ops[static_cast<size_t>(from)];
      recv.rank = t.to_rank;
      recv.stream = SimStream::kPpRecv;
      recv.name = t.forward ? "recv activations" : "recv gradients";
      tl.ops.push_back(recv);
      tl.flows.push_back({from, static_cast<int32_t>(tl.ops.size() - 1)});
    }
    for (int32_t s = 0; s < pp; ++s) {
      tl.activation_memory.push_back({s, 0.0, 0.0});
      for (const auto& [time, level] : curves[static_cast<size_t>(s)]) {
        tl.activation_memory.push_back({s, time, level});
      }
    }
  }
  return res;
}

}  // namespace

int64_t MinEventSimOps(const JobSpec& job) {
  // Validated jobs: micro-batches <= kMaxMicroBatchesPerStep, layers <= kMaxLayers, so the
  // product fits an int64_t.
  return 2 * MicrobatchesPerStep(job) * job.model.num_layers;
}

Status CheckEventSimSize(const JobSpec& job) {
  const int64_t ops = MinEventSimOps(job);
  if (ops <= kMaxSimulatedOps) return Status::Ok();
  return Status::Invalid(
      "training: field 'global_batch_size': the event simulation of " +
      std::to_string(MicrobatchesPerStep(job)) + " micro-batches x " +
      std::to_string(job.model.num_layers) + " layers needs at least " + std::to_string(ops) +
      " ops, above the limit of " + std::to_string(kMaxSimulatedOps) +
      " (docs/JOB_SPEC.md, Limits); lower the global batch or run without --event");
}

Expected<EventSimResult> SimulateStepEvents(const JobSpec& job, const StepCosts& costs,
                                            const GpuSpec& gpu, const DeviceRates& rates,
                                            const EventSimOptions& options) {
  StepBuilder builder(job, costs, gpu, rates);
  return builder.Run(options);
}

Expected<EventSimResult> SimulateStepEvents(const JobSpec& job, const GpuSpec& gpu,
                                            const NetworkSpec& net, const EventSimOptions& options,
                                            const MeasuredRates* measured) {
  const DeviceRates rates = CalibratedRates(gpu, job.training.precision, measured);
  return SimulateStepEvents(job, ComputeStepCosts(job, gpu, net, rates), gpu, rates, options);
}

StepResult WithEventStep(const StepResult& analytic, const EventSimResult& sim) {
  StepResult r = analytic;
  const double speed = analytic.step_time_s / sim.step_time_s;
  r.step_time_s = sim.step_time_s;
  r.breakdown_s = sim.breakdown_s;
  r.tokens_per_s *= speed;
  r.tokens_per_s_per_gpu *= speed;
  r.model_tflops_per_gpu *= speed;
  r.mfu *= speed;
  r.hfu *= speed;
  return r;
}

}  // namespace gpuplan

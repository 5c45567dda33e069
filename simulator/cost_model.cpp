#include "simulator/cost_model.h"

#include <algorithm>
#include <cmath>

#include "simulator/collective.h"
#include "simulator/flops.h"
#include "simulator/pipeline.h"
#include "simulator/shard.h"

namespace gpuplan {
namespace {

// Exposed part of a gradient reduction issued in buckets behind a backward pass of `window`
// seconds (PyTorch DDP, Li et al. 2020 Sec. 3.2.3; Megatron-LM --overlap-grad-reduce): `params`
// gradients become ready at a steady rate through the pass but for `late` of them (the
// embedding's, the last ready on the first stage), ready at its end. Each bucket of `bucket`
// parameters goes out once full, the rest at the end, and the late ones, one tensor, in a
// bucket of their own after it (neither stack splits a tensor across buckets), one after another
// on one stream; a bucket of p parameters takes seconds(p). The queue's end beyond the window is
// exposed, or, if longer, the slow-down of the window by kOverlapInterference for every second
// of communication beside it (as ExposedSeconds: the pair ends when the later of the two does).
// With no buckets (`bucket` 0) all of them go out at the end.
template <typename F>
double BucketQueueExposed(double params, double late, double bucket, double window, F seconds) {
  if (params <= 0) return 0.0;
  late = std::min(late, params);
  const double early = params - late;
  const double full = bucket > 0 ? std::floor(early / bucket) : 0.0;
  const double rest = early - full * bucket;
  const double tiny = 1e-6 * std::max(bucket, 1.0);
  const double at_end = (rest > tiny ? seconds(rest) : 0.0) + (late > tiny ? seconds(late) : 0.0);
  if (full < 1.0) return at_end;
  // Bucket k (1..full) is ready at window x k·bucket / early; the queue of full buckets ends at
  // the latest of ready(k) + (full - k + 1)·full_s, a line in k: k = 1 or k = full.
  const double full_s = seconds(bucket);
  const double end_full =
      std::max(window * bucket / early + full * full_s, window * full * bucket / early + full_s);
  const double end = std::max(end_full, window) + at_end;
  const double tail = std::max(0.0, end - window);
  const double overlapped = std::max(0.0, full * full_s + at_end - tail);
  return std::max(tail, kOverlapInterference * std::min(overlapped, window));
}

// One pipeline stage's time per micro-batch (forward + backward of all its layers and chunks).
struct StageTime {
  double compute = 0, tp = 0, cp = 0, ep = 0, fsdp = 0, wgrad = 0;
  double Total() const { return compute + tp + cp + ep + fsdp; }
};

}  // namespace

StepResult EvaluateStep(const JobSpec& job, const GpuSpec& gpu, const NetworkSpec& net,
                        const MeasuredRates* measured) {
  return EvaluateStep(job, gpu, net, CalibratedRates(gpu, job.training.precision, measured));
}

StepResult EvaluateStep(const JobSpec& job, const GpuSpec& gpu, const NetworkSpec& net,
                        const DeviceRates& rates) {
  const ModelSpec& m = job.model;
  const TrainingSpec& tr = job.training;
  const ParallelSpec& par = job.parallel;
  const StepCosts costs = ComputeStepCosts(job, gpu, net, rates);
  const LayerCosts& dense = costs.dense;
  const LayerCosts& moe = costs.moe;
  const int zero = par.ZeroStage();
  const bool sharded_dp = par.dp * par.cp > 1;
  const bool split_backward = par.schedule == Schedule::kZeroBubbleH1;

  // The embedding's parameters on the first stage (one tensor): the last gradient the backward
  // produces and the first weight the forward needs.
  auto late_params = [&](int64_t stage, const ShardParams& p) {
    const double embedding = stage == 0 && !tr.lora.enabled
                                 ? CountParameters(m).embedding / static_cast<double>(par.tp)
                                 : 0.0;
    return std::min(p.trainable, embedding);
  };
  // What the first forward waits for before any layer runs when the weights are gathered in
  // forward: the embedding's tensor and one bucket.
  auto edge_bucket = [&](int64_t stage, const ShardParams& p) {
    return std::min(p.trainable, costs.grad_bucket_params + late_params(stage, p));
  };
  // The exposed gradient reduction of `fraction` of `shard`'s trainable parameters in the
  // stack's buckets behind a backward of `window` seconds, `late` of them (the embedding's)
  // ready at its end (BucketQueueExposed); dense and expert parts of a bucket each reduce over
  // their own group.
  auto gradient_queue = [&](double params, double dense_share, double late, double window) {
    return BucketQueueExposed(params, late, costs.grad_bucket_params, window, [&](double p) {
      return GradReduceSeconds(costs, zero, p * dense_share, p * (1.0 - dense_share));
    });
  };
  // A collective issued in buckets behind computation `window`: all but the `edge` bucket (the
  // last issued, or the first needed) overlap it.
  auto bucketed = [](double comm, double edge, double window) {
    return ExposedSeconds(std::max(0.0, comm - edge), window) + edge;
  };
  // The backward window a stage's gradient buckets overlap; with a split backward (ZB-H1) only
  // its W pass.
  auto backward_window = [&](const StageLayerMix& mix) {
    return split_backward ? mix.dense * dense.wgrad + mix.moe * moe.wgrad
                          : mix.dense * dense.bwd + mix.moe * moe.bwd;
  };

  // FSDP / ZeRO-3: one layer's parameters per GPU, the unit it gathers and reduces (the same on
  // every stage); ZeRO-2 fills each model chunk's bucket queue with its layers' parameters.
  const bool fully_sharded = zero >= 3 && sharded_dp;
  const bool per_layer = zero >= 2 && sharded_dp;
  const ShardParams dense_layer = per_layer ? LayerParamsPerGpu(job, false) : ShardParams{};
  const ShardParams moe_layer = per_layer ? LayerParamsPerGpu(job, true) : ShardParams{};
  // A stage's parameters outside its transformer layers (embedding, LM head, final norm).
  auto outside_layers = [&](const ShardParams& shard, const StageLayerMix& mix) {
    ShardParams rest;
    rest.dense =
        std::max(0.0, shard.dense - mix.dense * dense_layer.dense - mix.moe * moe_layer.dense);
    rest.trainable = std::max(
        0.0, shard.trainable - mix.dense * dense_layer.trainable - mix.moe * moe_layer.trainable);
    return rest;
  };

  // Per micro-batch, per stage: layer kernels and exposed TP/CP/EP (and sharded-DP) communication.
  auto stage_time = [&](int64_t stage) {
    const StageLayerMix mix = StageLayerCounts(job, stage);
    auto sum = [&](double LayerCosts::*field) {
      return mix.dense * dense.*field + mix.moe * moe.*field;
    };
    StageTime st;
    st.compute = mix.dense * dense.Compute() + mix.moe * moe.Compute();
    st.wgrad = sum(&LayerCosts::wgrad);
    if (stage == 0) st.compute += costs.embed_fwd + costs.embed_bwd;
    if (stage == par.pp - 1) st.compute += costs.head_fwd + costs.head_bwd;
    st.tp = sum(&LayerCosts::tp_comm);
    if (par.cp > 1) {
      // The ring hides behind the attention kernels of every pass: forward, backward and a
      // recomputation's forward; without cp_overlap each transfer is waited for.
      const double forwards = 1.0 + RecomputedAttentionForwards(tr);
      const double attn_window = sum(&LayerCosts::fwd_attn) * (forwards + kFlashBackwardRatio);
      const double ring = sum(&LayerCosts::cp_comm);
      st.cp = par.cp_overlap ? ExposedSeconds(ring, attn_window) : ring;
    }
    st.ep = sum(&LayerCosts::ep_exposed);
    // FSDP / ZeRO-3: each micro-batch gathers the stage's weights for forward and again for
    // backward, a full recomputation's forward included (kFsdpGathersPerMicroBatch; but on a
    // stack that keeps a pipeline stage's weights gathered, below), and
    // reduce-scatters gradients (with HSDP also all-reduces them across the replicas); prefetching
    // hides them behind that micro-batch's computation except for the first layer's gather (Zhao et
    // al. 2023, PyTorch FSDP, Sec. 3.3); without dp_overlap all of it waits. Each layer is its own
    // unit with its own collectives, so the latency is paid per layer; the stage's other parameters
    // (embedding, LM head; dense) form one more unit.
    if (fully_sharded) {
      const ShardParams rest = outside_layers(ParamsPerGpu(job, stage), mix);
      const double gather = mix.dense * FsdpGatherSeconds(costs, dense_layer) +
                            mix.moe * FsdpGatherSeconds(costs, moe_layer) +
                            FsdpGatherSeconds(costs, rest);
      const double reduce = mix.dense * FsdpReduceSeconds(costs, dense_layer) +
                            mix.moe * FsdpReduceSeconds(costs, moe_layer) +
                            FsdpReduceSeconds(costs, rest);
      const ShardParams& first = mix.dense > 0 ? dense_layer : moe_layer;
      if (FsdpKeepsStageGathered(job)) {
        // A stage that keeps its weights gathered under pipelining (torchtitan) gathers them
        // once per step, prefetched behind its first micro-batch's forward, and reduce-scatters
        // the accumulated gradients once, after the step's last backward, when nothing is left
        // to hide them (torch.distributed.pipelining calls FSDP's post_backward by hand after
        // it). Spread over the step's micro-batches.
        const double forward = mix.dense * dense.Forward() + mix.moe * moe.Forward();
        const double exposed_gather =
            par.dp_overlap ? ExposedSeconds(gather, forward) + FsdpGatherSeconds(costs, first)
                           : gather;
        st.fsdp = (exposed_gather + reduce) / static_cast<double>(MicrobatchesPerStep(job));
      } else {
        const double all = kFsdpGathersPerMicroBatch * gather + reduce;
        st.fsdp = par.dp_overlap ? ExposedSeconds(all, st.compute) + FsdpGatherSeconds(costs, first)
                                 : all;
      }
    }
    // ZeRO-2: the gradients are sharded, so there is no full-size buffer to accumulate into and
    // every micro-batch's backward reduce-scatters its gradients (DeepSpeed stage_1_and_2.py
    // reduces each micro-batch when it partitions gradients, ZeRO-1 only at the accumulation
    // boundary; PyTorch FSDP SHARD_GRAD_OP and Megatron-FSDP optim_grads alike), in buckets
    // overlapped with that backward, the last bucket exposed: the backward ends by waiting for
    // its reductions (DeepSpeed synchronises its reduction stream in the backward epilogue).
    // With the interleaved schedule each model chunk's backward is its own pass, so each of the
    // vpp chunks exposes its last bucket and overlaps only its own backward (as event_sim.cpp
    // runs it).
    if (zero == 2 && sharded_dp) {
      const ShardParams shard = ParamsPerGpu(job, stage);
      const double v = par.schedule == Schedule::kInterleaved ? static_cast<double>(par.vpp) : 1.0;
      if (par.dp_overlap) {
        // Each chunk's queue holds its own layers' gradients; the stage's other parameters sit
        // where the backward meets them, as event_sim.cpp issues them: the LM head's (ready
        // first) in the chunk the backward starts with (the last), the embedding's (ready last)
        // in chunk 0 of the first stage. With ZeRO-2 per layer (GradBucketParams) a chunk's
        // layers are then whole buckets.
        const double late = late_params(stage, shard);
        const double extra = outside_layers(shard, mix).trainable;
        const int64_t chunks = static_cast<int64_t>(v);
        for (int64_t c = 0; c < chunks; ++c) {
          const StageLayerMix cm = v > 1.0 ? ChunkLayerCounts(job, stage, c) : mix;
          const double dense_params =
              cm.dense * dense_layer.DenseTrainable() + cm.moe * moe_layer.DenseTrainable();
          const double expert_params = cm.moe * moe_layer.ExpertTrainable();
          const double head = c == chunks - 1 ? std::max(0.0, extra - late) : 0.0;
          const double embedding = c == 0 ? late : 0.0;
          const double params = dense_params + expert_params + head + embedding;
          if (params <= 0) continue;
          st.fsdp += gradient_queue(params, (params - expert_params) / params, embedding,
                                    backward_window(cm));
        }
      } else {
        st.fsdp = v * GradReduceSeconds(costs, zero, shard.DenseTrainable() / v,
                                        shard.ExpertTrainable() / v);
      }
    }
    return st;
  };

  StageTime slowest;
  double max_stage = 0, sum_stages = 0, wgrad_sum = 0;
  for (int64_t stage = 0; stage < par.pp; ++stage) {
    const StageTime st = stage_time(stage);
    sum_stages += st.Total();
    wgrad_sum += st.wgrad;
    if (st.Total() > max_stage) {
      max_stage = st.Total();
      slowest = st;
    }
  }
  const int64_t micro = MicrobatchesPerStep(job);
  const double mm = static_cast<double>(micro);
  const double pp = static_cast<double>(par.pp);
  const PipelineTime pipe =
      PipelineStepTime(par.schedule, par.pp, micro, par.vpp, max_stage, sum_stages, wgrad_sum / pp);

  StepResult res;
  res.microbatches = micro;
  TimeBreakdown& bd = res.breakdown_s;
  bd.compute = mm * slowest.compute;
  bd.tp_comm = mm * slowest.tp;
  bd.cp_comm = mm * slowest.cp;
  bd.ep_comm = mm * slowest.ep;
  bd.dp_comm = mm * slowest.fsdp;
  bd.bubble = pipe.bubble_s;

  // PP: every micro-batch crosses each stage boundary once per model chunk forward and once
  // backward; blocking send/recv (Megatron's batched p2p) puts each hop on the critical path.
  if (par.pp > 1) {
    const double v = par.schedule == Schedule::kInterleaved ? static_cast<double>(par.vpp) : 1.0;
    bd.pp_comm = 2.0 * costs.p2p * (mm * v + pp - 1.0);
  }

  // DP synchronisation once per step (non-ZeRO-3): the gradients' all-reduce (ZeRO-0) or
  // reduce-scatter (ZeRO-1; ZeRO-2 reduced them per micro-batch above), overlapped in buckets
  // with the last micro-batch's backward when dp_overlap (PyTorch DDP, Li et al. 2020, Sec.
  // 3.2.3), and with ZeRO-1/2 the all-gather of the updated weights once the optimizer has
  // updated them. nanotron's ZeRO-1 has no backward hooks: it all-reduces the whole gradient
  // buffer after the last backward, then gathers the weights after the optimizer, both exposed
  // (costs.grads_all_reduced_after_backward).
  auto dp_sync = [&](int64_t stage, const ShardParams& params, const StageLayerMix& mix) {
    if (zero >= 3 || !sharded_dp) return 0.0;
    const double dense_params = params.DenseTrainable();
    const double expert_params = params.ExpertTrainable();
    // ZeRO-2 reduced its gradients per micro-batch (stage_time): only the weights are left.
    // Without overlap (no buckets) the reduction is one collective, exposed.
    const double gather = WeightGatherSeconds(costs, zero, dense_params, expert_params);
    if (!par.dp_overlap || costs.grads_all_reduced_after_backward) {
      const double reduce =
          zero == 2 ? 0.0 : GradReduceSeconds(costs, zero, dense_params, expert_params);
      return reduce + gather;
    }
    const double edge = edge_bucket(stage, params);
    const double reduce_exposed =
        zero == 2 ? 0.0
                  : gradient_queue(params.trainable, params.DenseShare(),
                                   late_params(stage, params), backward_window(mix));
    if (WeightGatherInForward(job)) {
      // Megatron-Core --overlap-param-gather: the gradients' reduce-scatter overlaps the last
      // backward as above; the weights' all-gather overlaps the next step's first forward,
      // bucket by bucket, and the first bucket (the embedding's, on the first stage) is waited
      // for before any layer runs. With the interleaved schedule the forward passes go model
      // chunk by model chunk, each chunk for a group of pp micro-batches before the next, and the
      // next chunk's gather is launched as the group starts the current one (Megatron-LM
      // schedules.py forward_backward_pipelining_with_interleaving, param_sync_func): the
      // gathers overlap that many forward passes.
      const double late = late_params(stage, params);
      const double gather_head = WeightGatherSeconds(costs, zero, late, 0) +
                                 WeightGatherSeconds(costs, zero, edge - late, 0);
      const double group = par.schedule == Schedule::kInterleaved
                               ? static_cast<double>(std::min<int64_t>(par.pp, micro))
                               : 1.0;
      const double forward = group * (mix.dense * dense.Forward() + mix.moe * moe.Forward());
      const double gathers = BucketedWeightGatherSeconds(costs, zero, dense_params, expert_params);
      return reduce_exposed + bucketed(gathers, gather_head, forward);
    }
    // Without it (nanotron's ZeroDistributedOptimizer.step, DeepSpeed's ZeRO-1/2
    // all_gather_dp_groups) the updated weights are all-gathered after the optimizer step has
    // updated them, with nothing left to overlap: exposed.
    return reduce_exposed + gather;
  };
  // Optimizer step over the rank's shard of the trainable parameters (OptimizerShardParams).
  auto optimizer = [&](const ShardParams& params) {
    return OptimizerSeconds(costs, job, gpu, rates, OptimizerShardParams(job, params));
  };
  // Every stage synchronises its own parameters after its own last backward, and the
  // optimizers run together: the step ends with the latest stage. In the pipeline's drain the
  // last micro-batch's backward reaches stage s before the stages below it, so stage s starts
  // its synchronisation that much earlier (its slack: the backward passes of stages 0..s-1, and
  // their hops, of one micro-batch; of one model chunk with the interleaved schedule); stage 0,
  // whose last bucket also holds the embedding's gradient, has none. A middle stage with the
  // layers of stage 0 or of the middle stage before it syncs no more, later: it cannot be the
  // latest, and is skipped (the even split's middle stages).
  const double chunks = par.schedule == Schedule::kInterleaved ? static_cast<double>(par.vpp) : 1.0;
  double slack = 0, latest = 0;
  StageLayerMix first, middle{-1, -1};
  auto same = [](const StageLayerMix& a, const StageLayerMix& b) {
    return a.dense == b.dense && a.moe == b.moe;
  };
  for (int64_t stage = 0; stage < par.pp; ++stage) {
    const StageLayerMix mix = StageLayerCounts(job, stage);
    if (stage == 0) first = mix;
    const bool end = stage == 0 || stage == par.pp - 1;
    if (end || !(same(mix, first) || same(mix, middle))) {
      const ShardParams params = ParamsPerGpu(job, stage);
      latest = std::max(latest, dp_sync(stage, params, mix) - slack);
      bd.optimizer = std::max(bd.optimizer, optimizer(params));
      if (!end) middle = mix;
    }
    slack += (backward_window(mix) + costs.p2p) / chunks;
  }
  bd.dp_comm += latest;

  res.step_time_s = bd.Total();
  const double tokens_step = static_cast<double>(tr.global_batch_size * tr.seq_len);
  const double gpus = static_cast<double>(job.cluster.num_gpus);
  res.tokens_per_s = tokens_step / res.step_time_s;
  res.tokens_per_s_per_gpu = res.tokens_per_s / gpus;
  res.model_flops_per_step =
      TrainingStepModelFlops(m, static_cast<double>(tr.seq_len),
                             static_cast<double>(tr.global_batch_size), tr.lora.enabled);
  double recompute_flops = 0;
  const double seqs = static_cast<double>(tr.global_batch_size);
  const double s = static_cast<double>(tr.seq_len);
  if (tr.recompute == Recompute::kFull) {
    recompute_flops = ModelForwardFlopsPerSequence(m, s) - LogitsForwardFlops(m, s);
  } else if (Recomputes(tr, kRecomputeCoreAttn)) {
    // The core attention's forward again, a fused kernel's too (step_costs.cpp); the norms and
    // activations other modules re-run are not FLOPs a hardware FLOP count includes.
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

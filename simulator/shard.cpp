#include "simulator/shard.h"

#include <algorithm>

#include "common/limits.h"

namespace gpuplan {

double LoraParamsPerLayer(const ModelSpec& m, const LoraSpec& lora) {
  if (!lora.enabled) return 0;
  const double h = static_cast<double>(m.hidden_size);
  const double q = static_cast<double>(m.num_attention_heads * m.HeadDim());
  const double kv = static_cast<double>(m.num_kv_heads * m.HeadDim());
  const double f = static_cast<double>(m.is_moe() ? m.ExpertFfn() : m.ffn_hidden_size);
  // Experts: one adapter per routed + shared expert on targeted MLP matrices.
  const double mlp_copies =
      m.is_moe() ? static_cast<double>(m.moe_num_experts + m.moe_shared_experts) : 1.0;
  double in_plus_out = 0;
  if (lora.targets & kLoraQ) in_plus_out += h + q;
  if (lora.targets & kLoraK) in_plus_out += h + kv;
  if (lora.targets & kLoraV) in_plus_out += h + kv;
  if (lora.targets & kLoraO) in_plus_out += q + h;
  double mlp = 0;
  if ((lora.targets & kLoraGate) && m.mlp == MlpKind::kSwiGlu) mlp += h + f;
  if (lora.targets & kLoraUp) mlp += h + f;
  if (lora.targets & kLoraDown) mlp += f + h;
  return static_cast<double>(lora.rank) * (in_plus_out + mlp * mlp_copies);
}

int64_t LayerSlotsPerChunk(const JobSpec& job) {
  const ParallelSpec& p = job.parallel;
  if (!p.stage_layers.empty()) return 0;
  const int64_t slots = job.model.num_layers + (p.embedding_slot ? 1 : 0) + (p.loss_slot ? 1 : 0) -
                        p.first_stage_layers - p.last_stage_layers;
  const int64_t stages =
      p.pp - (p.first_stage_layers > 0 ? 1 : 0) - (p.last_stage_layers > 0 ? 1 : 0);
  return stages > 0 ? slots / (stages * p.vpp) : 0;
}

int64_t ChunkLayers(const JobSpec& job, int64_t stage, int64_t chunk) {
  const ParallelSpec& p = job.parallel;
  if (!p.stage_layers.empty()) return p.stage_layers[static_cast<size_t>(stage)];
  if (stage == 0 && p.first_stage_layers > 0) return p.first_stage_layers / p.vpp;
  if (stage == p.pp - 1 && p.last_stage_layers > 0) return p.last_stage_layers / p.vpp;
  int64_t layers = LayerSlotsPerChunk(job);
  if (p.embedding_slot && stage == 0 && chunk == 0) --layers;
  if (p.loss_slot && stage == p.pp - 1 && chunk == p.vpp - 1) --layers;
  return layers;
}

int64_t StageLayers(const JobSpec& job, int64_t stage) {
  // The sum of ChunkLayers over the stage's vpp chunks, in closed form: the search calls this for
  // every stage of every layout it evaluates.
  const ParallelSpec& p = job.parallel;
  if (!p.stage_layers.empty()) return p.vpp * p.stage_layers[static_cast<size_t>(stage)];
  if (stage == 0 && p.first_stage_layers > 0) return p.vpp * (p.first_stage_layers / p.vpp);
  if (stage == p.pp - 1 && p.last_stage_layers > 0) return p.vpp * (p.last_stage_layers / p.vpp);
  int64_t layers = p.vpp * LayerSlotsPerChunk(job);
  if (p.embedding_slot && stage == 0) --layers;
  if (p.loss_slot && stage == p.pp - 1) --layers;
  return layers;
}

int64_t ChunkFirstLayer(const JobSpec& job, int64_t stage, int64_t chunk) {
  const ParallelSpec& p = job.parallel;
  if (!p.stage_layers.empty()) {
    int64_t first = 0;
    for (int64_t s = 0; s < stage; ++s) first += p.stage_layers[static_cast<size_t>(s)];
    return first;
  }
  const int64_t per_chunk = LayerSlotsPerChunk(job);
  if (p.first_stage_layers > 0 || p.last_stage_layers > 0) {
    // A round: one chunk of the first stage, of each middle stage and of the last stage.
    const int64_t first = ChunkLayers(job, 0, chunk);
    const int64_t round = first + (p.pp - 2) * per_chunk + ChunkLayers(job, p.pp - 1, chunk);
    return chunk * round + (stage > 0 ? first + (stage - 1) * per_chunk : 0);
  }
  const int64_t virtual_stage = chunk * p.pp + stage;
  const int64_t first_slot = virtual_stage * per_chunk;
  return p.embedding_slot && virtual_stage > 0 ? first_slot - 1 : first_slot;
}

std::optional<StageSplit> SuggestStageSplit(int64_t num_layers, int64_t pp) {
  if (pp < 2 || num_layers % pp == 0) return std::nullopt;
  const int64_t middle = (num_layers + pp - 1) / pp;
  const int64_t rest = num_layers - (pp - 2) * middle;
  if (rest < 2) return std::nullopt;
  return StageSplit{rest - rest / 2, middle, rest / 2};
}

CostBalancedSplit CostBalancedPlacement(const ModelSpec& m, int64_t pp) {
  const double h = static_cast<double>(m.hidden_size);
  // nanotron's estimate: d_qkv = hidden / heads, so the attention term is 4 x hidden^2 whatever
  // the KV heads; the MLP term is 3 x d_ff x hidden (SwiGLU).
  const double layer = 4.0 * h * h + 3.0 * static_cast<double>(m.ffn_hidden_size) * h;
  const double head = static_cast<double>(m.vocab_size) * h;
  const double total = static_cast<double>(m.num_layers) * layer + head;
  CostBalancedSplit split;
  split.layers.assign(static_cast<size_t>(pp), 0);
  split.head_in_layers = head / layer;
  int64_t rank = 0;
  double cumulative = 0;
  // One block: placed on `rank`; the rank moves on when the running cost exceeds the rank's
  // threshold, total * ((rank + 1) / pp) in nanotron's order of rounding (exact ties stay).
  // nanotron asserts rank < pp before placing the next block, which the thresholds guarantee.
  auto place = [&](double cost) {
    const int64_t placed = rank;
    cumulative += cost;
    const double threshold = total * (static_cast<double>(rank + 1) / static_cast<double>(pp));
    if (cumulative > threshold && rank + 1 < pp) ++rank;
    return placed;
  };
  place(0);  // token embedding
  for (int64_t i = 0; i < m.num_layers; ++i) ++split.layers[static_cast<size_t>(place(layer))];
  place(0);     // final norm
  place(head);  // LM head
  place(0);     // cast to fp32
  const int64_t loss_stage = place(0);
  // build_model: output_pp_rank = the rank the walk ended on.
  if (rank != loss_stage) split.empty_stage = rank;
  return split;
}

std::vector<int64_t> CostBalancedStageLayers(const ModelSpec& m, int64_t pp) {
  return CostBalancedPlacement(m, pp).layers;
}

std::string StageLayersText(const JobSpec& job) {
  std::string out;
  for (int64_t stage = 0; stage < job.parallel.pp; ++stage) {
    if (!out.empty()) out += '+';
    out += std::to_string(StageLayers(job, stage));
  }
  return out;
}

void ApplyStackPipelineSplit(JobSpec* job) {
  ParallelSpec& p = job->parallel;
  if (job->training.framework.pipeline_split != PipelineSplit::kCostBalanced || p.pp < 2 ||
      p.vpp != 1 || !p.stage_layers.empty() || p.first_stage_layers != 0 ||
      p.last_stage_layers != 0 || p.embedding_slot || p.loss_slot || p.pp > job->model.num_layers ||
      job->model.num_layers > kMaxLayers) {
    return;
  }
  p.stage_layers = CostBalancedStageLayers(job->model, p.pp);
}

StageLayerMix ChunkLayerCounts(const JobSpec& job, int64_t stage, int64_t chunk) {
  const ModelSpec& m = job.model;
  if (!m.is_moe()) return {static_cast<double>(ChunkLayers(job, stage, chunk)), 0.0};
  const int64_t begin = ChunkFirstLayer(job, stage, chunk);
  const int64_t end = begin + ChunkLayers(job, stage, chunk);
  const int64_t moe =
      m.is_moe() ? std::max<int64_t>(0, end - std::max(begin, m.moe_first_dense_layers)) : 0;
  return {static_cast<double>(end - begin - moe), static_cast<double>(moe)};
}

StageLayerMix StageLayerCounts(const JobSpec& job, int64_t stage) {
  if (!job.model.is_moe()) return {static_cast<double>(StageLayers(job, stage)), 0.0};
  StageLayerMix mix;
  for (int64_t chunk = 0; chunk < job.parallel.vpp; ++chunk) {
    const StageLayerMix c = ChunkLayerCounts(job, stage, chunk);
    mix.dense += c.dense;
    mix.moe += c.moe;
  }
  return mix;
}

namespace {

// A layer's MLP on one GPU: a dense MLP, or a MoE layer's router, shared and routed experts.
ShardParams MlpParams(const JobSpec& job, const ParameterCounts& c, bool moe_layer) {
  const ModelSpec& m = job.model;
  const double tp = static_cast<double>(job.parallel.tp);
  ShardParams s;
  if (moe_layer) {
    s.dense = c.router_per_layer + static_cast<double>(m.moe_shared_experts) * c.expert_mlp / tp;
    s.expert = static_cast<double>(m.moe_num_experts) * c.expert_mlp /
               static_cast<double>(job.parallel.ep * job.parallel.ExpertTp());
  } else {
    s.dense = c.dense_mlp_per_layer / tp;
  }
  s.trainable = s.Total();
  return s;
}

ShardParams LayerParams(const JobSpec& job, const ParameterCounts& c, bool moe_layer) {
  const ModelSpec& m = job.model;
  const double tp = static_cast<double>(job.parallel.tp);
  ShardParams s = MlpParams(job, c, moe_layer);
  s.dense += (c.attention_per_layer + c.norms_per_layer) / tp;
  s.trainable =
      job.training.lora.enabled ? LoraParamsPerLayer(m, job.training.lora) / tp : s.Total();
  return s;
}

}  // namespace

ShardParams LayerParamsPerGpu(const JobSpec& job, bool moe_layer) {
  return LayerParams(job, CountParameters(job.model), moe_layer);
}

ShardParams LayerMlpParamsPerGpu(const JobSpec& job, bool moe_layer) {
  return MlpParams(job, CountParameters(job.model), moe_layer);
}

ShardParams ParamsPerGpu(const JobSpec& job, int64_t stage) {
  const ModelSpec& m = job.model;
  const ParameterCounts c = CountParameters(m);
  const double tp = static_cast<double>(job.parallel.tp);
  const StageLayerMix mix = StageLayerCounts(job, stage);
  const ShardParams dense = LayerParams(job, c, false);
  const ShardParams moe = m.is_moe() ? LayerParams(job, c, true) : ShardParams{};
  ShardParams s;
  s.dense = mix.dense * dense.dense + mix.moe * moe.dense;
  s.expert = mix.moe * moe.expert;
  if (stage == 0) s.dense += c.embedding / tp;
  if (stage == job.parallel.pp - 1) {
    s.dense += c.output_head / tp;
    if (m.tied_embeddings && job.parallel.pp > 1) s.dense += c.embedding / tp;
  }
  s.trainable =
      job.training.lora.enabled ? mix.dense * dense.trainable + mix.moe * moe.trainable : s.Total();
  return s;
}

}  // namespace gpuplan

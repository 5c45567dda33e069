#include "simulator/shard.h"

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

ShardParams ParamsPerGpu(const JobSpec& job, StageKind stage) {
  const ModelSpec& m = job.model;
  const ParallelSpec& par = job.parallel;
  const ParameterCounts c = CountParameters(m);
  const double tp = static_cast<double>(par.tp);
  const double pp = static_cast<double>(par.pp);
  const double ep = static_cast<double>(par.ep);
  const double layers = static_cast<double>(m.num_layers) / pp;
  const double moe_fraction =
      m.num_layers > 0 ? static_cast<double>(m.MoeLayers()) / static_cast<double>(m.num_layers) : 0;
  const double dense_layers = layers * (1.0 - moe_fraction);
  const double moe_layers = layers * moe_fraction;

  ShardParams s;
  s.dense = layers * (c.attention_per_layer + c.norms_per_layer) / tp +
            dense_layers * c.dense_mlp_per_layer / tp +
            moe_layers * (c.router_per_layer +
                          static_cast<double>(m.moe_shared_experts) * c.expert_mlp / tp);
  s.expert = moe_layers * static_cast<double>(m.moe_num_experts) * c.expert_mlp / (ep * tp);
  const bool first = stage == StageKind::kFirst || stage == StageKind::kOnly;
  const bool last = stage == StageKind::kLast || stage == StageKind::kOnly;
  if (first) s.dense += c.embedding / tp;
  if (last) {
    s.dense += c.output_head / tp;
    if (m.tied_embeddings && par.pp > 1) s.dense += c.embedding / tp;
  }
  s.trainable = job.training.lora.enabled
                    ? layers * LoraParamsPerLayer(m, job.training.lora) / tp
                    : s.Total();
  return s;
}

}  // namespace gpuplan

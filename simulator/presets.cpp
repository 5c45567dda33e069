#include "simulator/presets.h"

#include <algorithm>
#include <cctype>

namespace gpuplan {
namespace {

// GPT-style decoder shared by the Megatron and MPT families: GELU, ffn 4h, MHA, tied embeddings.
ModelSpec GeluDecoder(const char* name, int64_t layers, int64_t hidden, int64_t heads,
                      int64_t vocab) {
  ModelSpec m;
  m.name = name;
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.ffn_hidden_size = 4 * hidden;
  m.num_attention_heads = heads;
  m.num_kv_heads = heads;
  m.vocab_size = vocab;
  m.mlp = MlpKind::kGelu;
  m.tied_embeddings = true;
  return m;
}

// Megatron GPT of Narayanan et al. 2021 Table 1: GELU, ffn 4h, MHA, vocab 51200 (GPT-2 BPE padded
// to a multiple of 1024), 2048 learned positions, biases, embedding tied to the output layer
// (Megatron's default); the model sizes in the table come from P = 12lh^2(1 + 13/12h +
// (V+s)/12lh), which CountParameters reproduces (plus the final LayerNorm).
ModelSpec MegatronGpt(const char* name, int64_t layers, int64_t hidden, int64_t heads) {
  ModelSpec m = GeluDecoder(name, layers, hidden, heads, 51200);
  m.max_position_embeddings_learned = 2048;
  return m;
}

// MPT as trained by llm-foundry's scripts/train/yamls/pretrain/mpt-*.yaml (d_model, n_heads,
// n_layers, expansion_ratio 4, vocab_size 50368) with the architecture of the released MPT
// checkpoints: no biases anywhere (no_bias: true, LayerNorm without bias), ALiBi instead of
// position embeddings, tied embeddings.
ModelSpec Mpt(const char* name, int64_t layers, int64_t hidden, int64_t heads) {
  ModelSpec m = GeluDecoder(name, layers, hidden, heads, 50368);
  m.linear_biases = false;
  return m;
}

// Llama-style decoder: SwiGLU, RMSNorm, RoPE, no biases, untied output head.
ModelSpec LlamaStyle(const char* name, int64_t layers, int64_t hidden, int64_t ffn, int64_t heads,
                     int64_t kv_heads, int64_t vocab) {
  ModelSpec m;
  m.name = name;
  m.num_layers = layers;
  m.hidden_size = hidden;
  m.ffn_hidden_size = ffn;
  m.num_attention_heads = heads;
  m.num_kv_heads = kv_heads;
  m.vocab_size = vocab;
  m.mlp = MlpKind::kSwiGlu;
  m.tied_embeddings = false;
  return m;
}

ModelSpec Mixtral8x7b() {
  ModelSpec m = LlamaStyle("Mixtral 8x7B", 32, 4096, 14336, 32, 8, 32000);
  m.moe_num_experts = 8;
  m.moe_top_k = 2;
  return m;
}

ModelSpec Mistral7b() {
  ModelSpec m = LlamaStyle("Mistral 7B", 32, 4096, 14336, 32, 8, 32000);
  m.attention_window = 4096;
  m.local_attention_layers = m.num_layers;
  return m;
}

ModelSpec Qwen2_7b() {
  ModelSpec m = LlamaStyle("Qwen2 7B", 28, 3584, 18944, 28, 4, 152064);
  m.qkv_bias = true;
  return m;
}

ModelSpec Gpt3_175b() {
  ModelSpec m = MegatronGpt("GPT-3 175B", 96, 12288, 96);
  m.vocab_size = 50257;  // the GPT-2 BPE vocabulary, unpadded
  return m;
}

ModelSpec Gpt2Xl() {
  ModelSpec m = MegatronGpt("GPT-2 XL", 48, 1600, 25);
  m.vocab_size = 50257;
  m.max_position_embeddings_learned = 1024;
  return m;
}

// DeepSeek-V3 (DeepSeek-AI 2024, arXiv:2412.19437 Sec. 4.2; HF config.json). Multi-head latent
// attention (MLA) is not representable exactly; see approximation_note and docs/MODELS.md.
ModelSpec DeepSeekV3() {
  ModelSpec m = LlamaStyle("DeepSeek-V3", 61, 7168, 18432, 128, 8, 129280);
  m.head_dim = 96;
  m.moe_num_experts = 256;
  m.moe_top_k = 8;
  m.moe_shared_experts = 1;
  m.moe_ffn_hidden_size = 2048;
  m.moe_first_dense_layers = 3;
  m.moe_router_groups = 8;  // node-limited routing: at most 4 nodes per token (Sec. 2.1.2)
  m.moe_router_group_topk = 4;
  m.approximation_note =
      "MLA approximated as GQA with 128 query heads, 8 KV heads, head_dim 96: the Q/K/V/O "
      "projections then hold h*96*(2*128 + 2*8) = 187,170,816 parameters per layer vs MLA's "
      "187,105,280 (q_a 7168x1536, q_b 1536x128*192, kv_a 7168x576, kv_b 512x128*256, o "
      "128*128x7168; +0.04%), so projection FLOPs and weight memory match; attention-score FLOPs "
      "(QK^T, AV) are 60% of MLA's (2*96 = 192 vs 192 + 128 = 320 per head); the q/kv LoRA "
      "RMSNorms (2048 per layer), the router bias and the multi-token-prediction module are "
      "left out";
  return m;
}

const char* const kNarayanan =
    "Narayanan et al. 2021, Efficient Large-Scale Language Model Training on GPU Clusters Using "
    "Megatron-LM (SC'21, arXiv:2104.04473), Table 1; ffn 4h, vocab 51200, seq 2048";
const char* const kLlama3 =
    "Llama Team 2024, The Llama 3 Herd of Models (arXiv:2407.21783), Table 3; "
    "meta-llama/Meta-Llama-3";
const char* const kLlama31 =
    "Llama Team 2024, The Llama 3 Herd of Models (arXiv:2407.21783), Table 3; "
    "meta-llama/Llama-3.1";
const char* const kLlama2 = "Touvron et al. 2023, Llama 2 (arXiv:2307.09288); meta-llama/Llama-2";
const char* const kMpt =
    "mosaicml/llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml (d_model, n_heads, n_layers, "
    "expansion_ratio 4, vocab 50368); no_bias and ALiBi as in the released mosaicml/mpt-7b "
    "config.json";

std::vector<ModelPreset> BuildPresets() {
  auto llama31 = [](ModelSpec m) {
    m.name.replace(0, 7, "Llama 3.1");
    return m;
  };
  const ModelSpec l3_8 = LlamaStyle("Llama 3 8B", 32, 4096, 14336, 32, 8, 128256);
  const ModelSpec l3_70 = LlamaStyle("Llama 3 70B", 80, 8192, 28672, 64, 8, 128256);
  const ModelSpec l3_405 = LlamaStyle("Llama 3 405B", 126, 16384, 53248, 128, 8, 128256);
  return {
      // The Megatron GPT family of the calibration runs.
      {"gpt-1.7b", kNarayanan, MegatronGpt("GPT 1.7B (Megatron)", 24, 2304, 24)},
      {"gpt-3.6b", kNarayanan, MegatronGpt("GPT 3.6B (Megatron)", 30, 3072, 32)},
      {"gpt-7.5b", kNarayanan, MegatronGpt("GPT 7.5B (Megatron)", 36, 4096, 32)},
      {"gpt-18.4b", kNarayanan, MegatronGpt("GPT 18.4B (Megatron)", 40, 6144, 48)},
      {"gpt-39.1b", kNarayanan, MegatronGpt("GPT 39.1B (Megatron)", 48, 8192, 64)},
      {"gpt-76.1b", kNarayanan, MegatronGpt("GPT 76.1B (Megatron)", 60, 10240, 80)},
      {"gpt-145.6b", kNarayanan, MegatronGpt("GPT 145.6B (Megatron)", 80, 12288, 96)},
      {"gpt-310.1b", kNarayanan, MegatronGpt("GPT 310.1B (Megatron)", 96, 16384, 128)},
      {"gpt-529.6b", kNarayanan, MegatronGpt("GPT 529.6B (Megatron)", 105, 20480, 128)},
      {"gpt-1t", kNarayanan, MegatronGpt("GPT 1008.0B (Megatron)", 128, 25600, 160)},
      {"gpt3-175b",
       "Brown et al. 2020, Language Models are Few-Shot Learners (arXiv:2005.14165), Table 2.1: "
       "96 layers, d_model 12288, 96 heads of 128, ffn 4h, n_ctx 2048 learned positions; vocab "
       "50257 (GPT-2 BPE, unpadded)",
       Gpt3_175b()},
      {"gpt2-xl",
       "Radford et al. 2019 (GPT-2); openai-community/gpt2-xl config.json: n_layer 48, n_embd "
       "1600, n_head 25, n_positions 1024, vocab 50257, tied",
       Gpt2Xl()},
      // Llama family.
      {"llama2-7b", kLlama2, LlamaStyle("Llama 2 7B", 32, 4096, 11008, 32, 32, 32000)},
      {"llama2-13b", kLlama2, LlamaStyle("Llama 2 13B", 40, 5120, 13824, 40, 40, 32000)},
      {"llama2-70b", kLlama2, LlamaStyle("Llama 2 70B", 80, 8192, 28672, 64, 8, 32000)},
      {"llama3-8b", kLlama3, l3_8},
      {"llama3-70b", kLlama3, l3_70},
      {"llama3-405b", kLlama3, l3_405},
      {"llama3.1-8b", kLlama31, llama31(l3_8)},
      {"llama3.1-70b", kLlama31, llama31(l3_70)},
      {"llama3.1-405b", kLlama31, llama31(l3_405)},
      {"mistral-7b",
       "Jiang et al. 2023, Mistral 7B (arXiv:2310.06825), Table 1 (window_size 4096, sliding "
       "window attention on every layer); mistralai/Mistral-7B-v0.1 config.json",
       Mistral7b()},
      {"mixtral-8x7b",
       "Jiang et al. 2024, Mixtral of Experts (arXiv:2401.04088), Table 1; "
       "mistralai/Mixtral-8x7B-v0.1 config.json: 8 experts, top-2",
       Mixtral8x7b()},
      {"qwen2-7b",
       "Qwen Team 2024, Qwen2 Technical Report (arXiv:2407.10671), Table 1; Qwen/Qwen2-7B "
       "config.json (QKV bias)",
       Qwen2_7b()},
      // MosaicML MPT of the llm-foundry benchmark runs.
      {"mpt-125m", kMpt, Mpt("MPT-125m", 12, 768, 12)},
      {"mpt-350m", kMpt, Mpt("MPT-350m", 24, 1024, 16)},
      {"mpt-760m", kMpt, Mpt("MPT-760m", 24, 1536, 12)},
      {"mpt-1b", kMpt, Mpt("MPT-1b", 24, 2048, 16)},
      {"mpt-3b", kMpt, Mpt("MPT-3b", 32, 2560, 20)},
      {"mpt-7b", kMpt, Mpt("MPT-7b", 32, 4096, 32)},
      {"mpt-13b", kMpt, Mpt("MPT-13b", 40, 5120, 40)},
      {"mpt-30b", kMpt, Mpt("MPT-30b", 48, 7168, 56)},
      {"mpt-70b", kMpt, Mpt("MPT-70b", 80, 8192, 64)},
      {"deepseek-v3",
       "DeepSeek-AI 2024, DeepSeek-V3 Technical Report (arXiv:2412.19437), Sec. 4.2; "
       "deepseek-ai/DeepSeek-V3 config.json (MLA approximated, see approximation_note)",
       DeepSeekV3()},
  };
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

const std::vector<ModelPreset>& ModelPresets() {
  static const std::vector<ModelPreset>* const kPresets =
      new std::vector<ModelPreset>(BuildPresets());
  return *kPresets;
}

Expected<ModelSpec> FindModelPreset(const std::string& id) {
  const std::string wanted = Lower(id);
  std::string known;
  for (const ModelPreset& p : ModelPresets()) {
    if (wanted == p.id) return p.spec;
    if (!known.empty()) known += ", ";
    known += p.id;
  }
  return Status::Invalid("unknown model preset '" + id + "' (known: " + known + ")");
}

}  // namespace gpuplan

// Hugging Face config.json reading: one real config per family, and malformed ones.
#include "simulator/hf_config.h"

#include <gtest/gtest.h>

#include <string>

#include "common/json_reader.h"
#include "simulator/presets.h"
#include "tests/model/contains.h"

namespace gpuplan {
namespace {

std::string Fixture(const std::string& name) {
  return std::string(GPUPLAN_TEST_DATA) + "/model/" + name;
}

ModelSpec Read(const std::string& name) {
  Expected<ModelSpec> m = ReadHfConfigFile(Fixture(name));
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : ModelSpec{};
}

TEST(HfConfig, Llama3_8b) {
  const ModelSpec m = Read("llama3-8b/config.json");
  EXPECT_EQ(m.name, "llama3-8b");  // no _name_or_path: the directory name
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.ffn_hidden_size, 14336);
  EXPECT_EQ(m.num_attention_heads, 32);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.vocab_size, 128256);
  EXPECT_EQ(m.mlp, MlpKind::kSwiGlu);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.is_moe());
  EXPECT_EQ(m.HeadDim(), 128);
  EXPECT_EQ(CountParameters(m).total, 8030261248.0);
}

TEST(HfConfig, Mistral7b) {
  const ModelSpec m = Read("mistral-7b-v0.1.json");
  EXPECT_EQ(m.name, "mistral-7b-v0.1");  // the file stem
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.ffn_hidden_size, 14336);
  EXPECT_EQ(m.vocab_size, 32000);
  EXPECT_EQ(CountParameters(m).total, 7241732096.0);
  // v0.1's 4,096-token sliding window on every layer.
  EXPECT_EQ(m.attention_window, 4096);
  EXPECT_EQ(m.local_attention_layers, 32);
}

TEST(HfConfig, Mixtral8x7b) {
  const ModelSpec m = Read("mixtral-8x7b-v0.1.json");
  EXPECT_EQ(m.moe_num_experts, 8);
  EXPECT_EQ(m.moe_top_k, 2);
  EXPECT_EQ(m.ExpertFfn(), 14336);
  EXPECT_EQ(m.moe_first_dense_layers, 0);
  const ModelSpec preset = *FindModelPreset("mixtral-8x7b");
  EXPECT_EQ(CountParameters(m).total, CountParameters(preset).total);
  EXPECT_EQ(CountParameters(m).active_per_token, CountParameters(preset).active_per_token);
}

TEST(HfConfig, Qwen2_7b) {
  const ModelSpec m = Read("qwen2-7b.json");
  EXPECT_EQ(m.num_layers, 28);
  EXPECT_EQ(m.hidden_size, 3584);
  EXPECT_EQ(m.ffn_hidden_size, 18944);
  EXPECT_EQ(m.num_attention_heads, 28);
  EXPECT_EQ(m.num_kv_heads, 4);
  EXPECT_EQ(m.vocab_size, 152064);
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_EQ(CountParameters(m).total, 7615616512.0);
  EXPECT_EQ(m.attention_window, 0);  // use_sliding_window false
}

TEST(HfConfig, Qwen2MoeSharedExpert) {
  const ModelSpec m = Read("qwen1.5-moe-a2.7b.json");
  EXPECT_EQ(m.moe_num_experts, 60);
  EXPECT_EQ(m.moe_top_k, 4);
  EXPECT_EQ(m.ExpertFfn(), 1408);
  EXPECT_EQ(m.moe_shared_experts, 4);  // 5632 / 1408
  const ParameterCounts c = CountParameters(m);
  EXPECT_NEAR(c.total / 1e9, 14.3, 0.1);
  EXPECT_NEAR(c.active_per_token / 1e9, 2.7, 0.1);
}

TEST(HfConfig, Gpt2) {
  const ModelSpec m = Read("gpt2.json");
  EXPECT_EQ(m.num_layers, 12);
  EXPECT_EQ(m.hidden_size, 768);
  EXPECT_EQ(m.ffn_hidden_size, 3072);  // n_inner absent => 4 * n_embd
  EXPECT_EQ(m.num_attention_heads, 12);
  EXPECT_EQ(m.num_kv_heads, 12);
  EXPECT_EQ(m.vocab_size, 50257);
  EXPECT_EQ(m.max_position_embeddings_learned, 1024);
  EXPECT_EQ(m.mlp, MlpKind::kGelu);
  EXPECT_TRUE(m.tied_embeddings);  // GPT-2 files carry no tie_word_embeddings: tied
  EXPECT_EQ(CountParameters(m).total, 124439808.0);  // HF gpt2
}

TEST(HfConfig, DeepSeekV3MlaApproximation) {
  const ModelSpec m = Read("deepseek-v3.json");
  EXPECT_EQ(m.num_layers, 61);
  EXPECT_EQ(m.moe_num_experts, 256);
  EXPECT_EQ(m.moe_top_k, 8);
  EXPECT_EQ(m.moe_shared_experts, 1);
  EXPECT_EQ(m.moe_first_dense_layers, 3);
  EXPECT_EQ(m.ExpertFfn(), 2048);
  EXPECT_EQ(m.ffn_hidden_size, 18432);
  EXPECT_FALSE(m.approximation_note.empty());
  const ModelSpec preset = *FindModelPreset("deepseek-v3");
  EXPECT_EQ(m.num_kv_heads, preset.num_kv_heads);
  EXPECT_EQ(m.HeadDim(), preset.HeadDim());
  EXPECT_NEAR(CountParameters(m).total / 1e9, 671, 10);
}

TEST(HfConfig, UnknownModelTypeWithKnownFieldsWorks) {
  const ModelSpec m = Read("custom_unknown_type.json");
  EXPECT_EQ(m.name, "acme/tiny-llama-like");  // _name_or_path
  EXPECT_EQ(m.mlp, MlpKind::kSwiGlu);         // hidden_act silu
  EXPECT_EQ(m.num_kv_heads, 4);
  EXPECT_TRUE(m.tied_embeddings);
}

TEST(HfConfig, KvHeadsDefaultToHeads) {
  const nlohmann::json j = {{"model_type", "llama"},     {"hidden_size", 512},
                            {"intermediate_size", 1024}, {"num_hidden_layers", 2},
                            {"num_attention_heads", 8},  {"num_key_value_heads", nullptr},
                            {"vocab_size", 1000}};
  Expected<ModelSpec> m = ModelFromHfConfig(j, "inline.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->num_kv_heads, 8);
}

TEST(HfConfig, GeluActivationOnUnknownFamilyIsTwoMatrixMlp) {
  const nlohmann::json j = {{"model_type", "gpt_neox"}, {"hidden_act", "gelu"},
                            {"hidden_size", 512},       {"intermediate_size", 2048},
                            {"num_hidden_layers", 2},   {"num_attention_heads", 8},
                            {"vocab_size", 1000}};
  Expected<ModelSpec> m = ModelFromHfConfig(j, "neox.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->mlp, MlpKind::kGelu);
}

TEST(HfConfig, MissingFieldNamesFileAndField) {
  Expected<ModelSpec> m = ReadHfConfigFile(Fixture("malformed_missing_layers.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "malformed_missing_layers.json"));
  EXPECT_TRUE(Contains(m.status().message(), "field 'num_hidden_layers'"));
  EXPECT_TRUE(Contains(m.status().message(), "missing"));
}

TEST(HfConfig, Gpt2MissingEmbd) {
  Expected<ModelSpec> m = ReadHfConfigFile(Fixture("malformed_gpt2_missing_embd.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "field 'n_embd'"));
}

TEST(HfConfig, NegativeHeads) {
  Expected<ModelSpec> m = ReadHfConfigFile(Fixture("malformed_negative_heads.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "field 'num_attention_heads'"));
  EXPECT_TRUE(Contains(m.status().message(), "-32"));
}

TEST(HfConfig, KvHeadsNotDividing) {
  Expected<ModelSpec> m = ReadHfConfigFile(Fixture("malformed_kv_heads.json"));
  ASSERT_FALSE(m.ok());
  // ValidateModel's message names the key the file has, not ModelSpec's field.
  EXPECT_TRUE(Contains(m.status().message(), "field 'num_key_value_heads'"))
      << m.status().message();
}

TEST(HfConfig, MalformedJsonNamesFile) {
  Expected<ModelSpec> m = ReadHfConfigFile(Fixture("malformed_syntax.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "malformed_syntax.json"));
  EXPECT_TRUE(Contains(m.status().message(), "malformed JSON"));
}

TEST(HfConfig, MissingFile) {
  Expected<ModelSpec> m = ReadHfConfigFile(Fixture("no-such-config.json"));
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "no-such-config.json"));
}

// Gemma's configuration classes tie the LM head by default and the hub files carry no
// tie_word_embeddings: HF google/gemma-2-9b has 9,241,705,984 parameters (the model card's
// safetensors total), of which Gemma 2's extra pre/post-feed-forward norms are 301,056 (two of
// 3,584 per layer) that ModelSpec does not represent.
TEST(HfConfig, Gemma2TiesTheHeadByDefault) {
  const ModelSpec m = Read("gemma2-9b.json");
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_EQ(m.mlp, MlpKind::kSwiGlu);  // gated whatever hidden_act says (GeGLU)
  EXPECT_EQ(m.HeadDim(), 256);
  EXPECT_NEAR(CountParameters(m).total, 9241705984.0, 9241705984.0 * 1e-4);
  // Gemma 2 alternates sliding-window (4,096 tokens) and global layers.
  EXPECT_EQ(m.attention_window, 4096);
  EXPECT_EQ(m.local_attention_layers, 21);
  EXPECT_FALSE(m.attention_chunked);
}

// A multimodal file keeps its language model under text_config, and Gemma3TextConfig's default
// vocabulary (262,208) fills the key the file leaves out.
TEST(HfConfig, MultimodalTextConfig) {
  const ModelSpec m = Read("gemma3-27b-it.json");
  EXPECT_EQ(m.name, "gemma3-27b-it");
  EXPECT_EQ(m.num_layers, 62);
  EXPECT_EQ(m.vocab_size, 262208);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_NEAR(CountParameters(m).total / 1e9, 27.01, 0.01);
  EXPECT_TRUE(Contains(m.approximation_note, "vision encoder is not counted"));
  // Gemma 3: a 1,024-token window on all but every sixth layer.
  EXPECT_EQ(m.attention_window, 1024);
  EXPECT_EQ(m.local_attention_layers, 62 - 10);
}

// Llama 4 Maverick (text): 128 routed experts plus one shared expert of intermediate_size in
// every second layer (interleave_moe_layer_step 2), dense layers of intermediate_size_mlp.
// Meta's model card: 400B total, 17B active.
TEST(HfConfig, Llama4InterleavedMoeLayers) {
  const ModelSpec m = Read("llama4-maverick-text.json");
  EXPECT_EQ(m.moe_num_experts, 128);
  EXPECT_EQ(m.moe_top_k, 1);
  EXPECT_EQ(m.moe_shared_experts, 1);
  EXPECT_EQ(m.ExpertFfn(), 8192);
  EXPECT_EQ(m.ffn_hidden_size, 16384);
  EXPECT_EQ(m.MoeLayers(), 24);
  EXPECT_EQ(m.moe_first_dense_layers, 24);
  const ParameterCounts c = CountParameters(m);
  EXPECT_NEAR(c.total / 1e9, 400.7, 0.1);
  EXPECT_NEAR(c.active_per_token / 1e9, 17.2, 0.1);
  EXPECT_TRUE(Contains(m.approximation_note, "24 of 48 layers have routed experts"));
  // Chunked attention of 8,192 tokens on three layers of four (every fourth is global).
  EXPECT_EQ(m.attention_window, 8192);
  EXPECT_TRUE(m.attention_chunked);
  EXPECT_EQ(m.local_attention_layers, 36);
}

// Qwen-MoE's decoder_sparse_step and mlp_only_layers decide which layers are sparse; the count
// is exact (layers 1, 3, 5, 7 of 8 are sparse at step 2; mlp_only_layers drops layer 3).
TEST(HfConfig, QwenMoeSparseStepCountsLayers) {
  nlohmann::json j = {
      {"model_type", "qwen2_moe"},    {"hidden_size", 512},     {"intermediate_size", 1024},
      {"moe_intermediate_size", 256}, {"num_hidden_layers", 8}, {"num_attention_heads", 8},
      {"vocab_size", 1000},           {"num_experts", 4},       {"num_experts_per_tok", 2},
      {"decoder_sparse_step", 2},     {"mlp_only_layers", {3}}, {"tie_word_embeddings", false}};
  Expected<ModelSpec> m = ModelFromHfConfig(j, "qwen.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->MoeLayers(), 3);
  j["decoder_sparse_step"] = 9;
  m = ModelFromHfConfig(j, "qwen.json");
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "field 'decoder_sparse_step'"))
      << m.status().message();
}

// Falcon-7B: multi-query attention, a 4h GELU MLP without biases, tied head: 6.92B.
TEST(HfConfig, FalconMultiQuery) {
  const ModelSpec m = Read("falcon-7b.json");
  EXPECT_EQ(m.num_kv_heads, 1);
  EXPECT_EQ(m.ffn_hidden_size, 4 * 4544);
  EXPECT_EQ(m.mlp, MlpKind::kGelu);
  EXPECT_FALSE(m.linear_biases);
  EXPECT_TRUE(m.tied_embeddings);
  EXPECT_NEAR(CountParameters(m).total / 1e9, 6.92, 0.01);
}

TEST(HfConfig, OptLearnedPositionsAndReluMlp) {
  const ModelSpec m = Read("opt-1.3b.json");
  EXPECT_EQ(m.ffn_hidden_size, 8192);  // ffn_dim
  EXPECT_EQ(m.num_kv_heads, 32);
  EXPECT_EQ(m.max_position_embeddings_learned, 2048);
  EXPECT_TRUE(m.linear_biases);
  EXPECT_TRUE(m.tied_embeddings);
  // HF facebook/opt-1.3b: 1,315,758,080 parameters, of which 2 x 2048 are the position table's
  // offset rows (OPTLearnedPositionalEmbedding), not counted.
  EXPECT_EQ(CountParameters(m).total, 1315758080.0 - 2 * 2048);
  nlohmann::json projected = ReadJsonFile(Fixture("opt-1.3b.json")).value();
  projected["word_embed_proj_dim"] = 512;
  const Expected<ModelSpec> refused = ModelFromHfConfig(projected, "opt-350m.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(Contains(refused.status().message(),
                       "field 'word_embed_proj_dim': 512 differs from hidden_size = 2048"))
      << refused.status().message();
}

TEST(HfConfig, GptBigCodeMultiQuery) {
  const ModelSpec m = Read("starcoder.json");
  EXPECT_EQ(m.name, "bigcode/starcoder");
  EXPECT_EQ(m.num_kv_heads, 1);  // multi_query
  EXPECT_EQ(m.max_position_embeddings_learned, 8192);
  EXPECT_TRUE(m.tied_embeddings);
  // StarCoder's 15.5B: 40 layers of MQA attention and a 4h GELU MLP with biases, 49,152 x 6,144
  // tied embedding, 8,192 learned positions.
  EXPECT_EQ(CountParameters(m).total, 15517456384.0);
}

// Layers that are not attention are refused, not counted as attention.
TEST(HfConfig, NonAttentionLayersAreRefused) {
  const nlohmann::json jamba = {{"model_type", "jamba"}, {"hidden_size", 4096}};
  Expected<ModelSpec> m = ModelFromHfConfig(jamba, "jamba.json");
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "jamba.json: field 'model_type': 'jamba'"));
  nlohmann::json hybrid = {{"model_type", "newhybrid"},
                           {"hidden_size", 512},
                           {"intermediate_size", 1024},
                           {"num_hidden_layers", 2},
                           {"num_attention_heads", 8},
                           {"vocab_size", 1000},
                           {"layer_types", {"full_attention", "linear_attention"}}};
  m = ModelFromHfConfig(hybrid, "hybrid.json");
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "field 'layer_types': entry 1 is 'linear_attention'"))
      << m.status().message();
}

// Expert keys this reader does not understand refuse the file instead of a dense count.
TEST(HfConfig, UnreadExpertKeysAreRefused) {
  const nlohmann::json ernie = {{"model_type", "ernie4_5_moe"}, {"hidden_size", 2560},
                                {"intermediate_size", 12288},   {"num_hidden_layers", 28},
                                {"num_attention_heads", 20},    {"vocab_size", 103424},
                                {"moe_num_experts", 64},        {"moe_k", 6}};
  Expected<ModelSpec> m = ModelFromHfConfig(ernie, "ernie.json");
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "field 'moe_num_experts'")) << m.status().message();
}

// MLA sizes are bounded before any arithmetic, and the error names the key.
TEST(HfConfig, MlaSizesAreBounded) {
  nlohmann::json j = {{"model_type", "deepseek_v3"}, {"hidden_size", 1024},
                      {"intermediate_size", 2048},   {"num_hidden_layers", 2},
                      {"num_attention_heads", 16},   {"vocab_size", 1000},
                      {"kv_lora_rank", 9e15},        {"qk_nope_head_dim", 128},
                      {"qk_rope_head_dim", 64},      {"v_head_dim", 128}};
  Expected<ModelSpec> m = ModelFromHfConfig(j, "mla.json");
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(Contains(m.status().message(), "field 'kv_lora_rank'")) << m.status().message();
}

// A model folder (a hub snapshot) is read through its config.json.
TEST(HfConfig, FolderReadsItsConfig) {
  Expected<ModelSpec> m = ReadHfConfigFile(Fixture("llama3-8b"));
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->name, "llama3-8b");
}

// An unknown family without tie_word_embeddings is read untied, and the note says so.
TEST(HfConfig, UnknownFamilyTieIsNoted) {
  const nlohmann::json j = {{"model_type", "acme"},      {"hidden_size", 512},
                            {"intermediate_size", 1024}, {"num_hidden_layers", 2},
                            {"num_attention_heads", 8},  {"vocab_size", 1000}};
  Expected<ModelSpec> m = ModelFromHfConfig(j, "acme.json");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_FALSE(m->tied_embeddings);
  EXPECT_TRUE(Contains(m->approximation_note, "no tie_word_embeddings"));
}

}  // namespace
}  // namespace gpuplan

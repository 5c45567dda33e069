// Hugging Face config.json reading: one real config per family, and malformed ones.
#include "simulator/hf_config.h"

#include <gtest/gtest.h>

#include <string>

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
  EXPECT_TRUE(Contains(m.status().message(), "field 'num_kv_heads'"));
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

}  // namespace
}  // namespace gpuplan

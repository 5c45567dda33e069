// Parameter counts of the presets against their published sizes, and ValidateModel.
#include "simulator/model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "simulator/presets.h"
#include "tests/model/contains.h"

namespace gpuplan {
namespace {

ModelSpec Preset(const std::string& id) {
  Expected<ModelSpec> m = FindModelPreset(id);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.ok() ? *m : ModelSpec{};
}

double Total(const std::string& id) { return CountParameters(Preset(id)).total; }
double Active(const std::string& id) { return CountParameters(Preset(id)).active_per_token; }

// |actual / expected - 1| <= tolerance.
void ExpectWithin(double actual, double expected, double tolerance, const std::string& what) {
  EXPECT_LE(std::fabs(actual / expected - 1.0), tolerance)
      << what << ": " << actual << " vs published " << expected;
}

TEST(CountParameters, Llama3MatchesHuggingFaceCountsExactly) {
  // Parameter counts of the released checkpoints (sum of tensor sizes in the safetensors index).
  EXPECT_EQ(Total("llama3-8b"), 8030261248.0);
  EXPECT_EQ(Total("llama3-70b"), 70553706496.0);
  EXPECT_EQ(Total("llama3-405b"), 405853388800.0);
  EXPECT_EQ(Total("llama3.1-8b"), Total("llama3-8b"));
  EXPECT_EQ(Total("llama3.1-70b"), Total("llama3-70b"));
  EXPECT_EQ(Total("llama3.1-405b"), Total("llama3-405b"));
  EXPECT_EQ(Active("llama3-8b"), Total("llama3-8b"));  // dense: everything is active
}

TEST(CountParameters, OtherSwiGluModelsMatchHuggingFaceCounts) {
  EXPECT_EQ(Total("llama2-7b"), 6738415616.0);
  EXPECT_EQ(Total("llama2-13b"), 13015864320.0);
  EXPECT_EQ(Total("llama2-70b"), 68976648192.0);
  EXPECT_EQ(Total("mistral-7b"), 7241732096.0);
  EXPECT_EQ(Total("qwen2-7b"), 7615616512.0);  // includes the Q/K/V biases
}

TEST(CountParameters, MixtralTotalAndActive) {
  EXPECT_EQ(Total("mixtral-8x7b"), 46702792704.0);
  ExpectWithin(Total("mixtral-8x7b"), 46.7e9, 0.005, "mixtral total");
  ExpectWithin(Active("mixtral-8x7b"), 12.9e9, 0.01, "mixtral active");
}

TEST(CountParameters, Gpt3AndGpt2) {
  ExpectWithin(Total("gpt3-175b"), 175e9, 0.01, "gpt3-175b");
  EXPECT_EQ(Total("gpt2-xl"), 1557611200.0);  // HF gpt2-xl
}

TEST(CountParameters, MegatronGptFamilyMatchesNarayananTable1) {
  const std::pair<const char*, double> table[] = {{"gpt-1.7b", 1.7e9},     {"gpt-3.6b", 3.6e9},
                                                  {"gpt-7.5b", 7.5e9},     {"gpt-18.4b", 18.4e9},
                                                  {"gpt-39.1b", 39.1e9},   {"gpt-76.1b", 76.1e9},
                                                  {"gpt-145.6b", 145.6e9}, {"gpt-310.1b", 310.1e9},
                                                  {"gpt-529.6b", 529.6e9}, {"gpt-1t", 1008.0e9}};
  for (const auto& [id, published] : table) {
    // The table rounds to 0.1B (the first row is 1.652B by the paper's own formula).
    EXPECT_NEAR(Total(id) / 1e9, published / 1e9, 0.051) << id;
  }
}

TEST(CountParameters, NarayananFormulaReproducedExactly) {
  // P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12lh)), plus the final LayerNorm 2h.
  const ModelSpec m = Preset("gpt-145.6b");
  const double l = 80, h = 12288, V = 51200, s = 2048;
  const double p = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  EXPECT_NEAR(CountParameters(m).total, p + 2 * h, 1.0);
}

TEST(CountParameters, MptFamily) {
  // Released MPT-7B (vocab 50432) has 6,649,286,656 parameters; with llm-foundry's 50368 it is
  // 64*4096 fewer.
  EXPECT_EQ(Total("mpt-7b"), 6649286656.0 - 64.0 * 4096.0);
  ExpectWithin(Total("mpt-30b"), 29.95e9, 0.005, "mpt-30b");
  ExpectWithin(Total("mpt-125m"), 125e6, 0.02, "mpt-125m");
  ExpectWithin(Total("mpt-350m"), 350e6, 0.02, "mpt-350m");
  ExpectWithin(Total("mpt-760m"), 760e6, 0.02, "mpt-760m");
  // 12 l h^2 + 2lh + h + V h (no biases, LayerNorm weight only, tied) for every size.
  for (const char* id : {"mpt-1b", "mpt-3b", "mpt-13b", "mpt-70b"}) {
    const ModelSpec m = Preset(id);
    const double l = static_cast<double>(m.num_layers), h = static_cast<double>(m.hidden_size);
    EXPECT_EQ(CountParameters(m).total, 12 * l * h * h + 2 * l * h + h + 50368 * h) << id;
  }
}

TEST(CountParameters, DeepSeekV3WithinAFewPercent) {
  ExpectWithin(Total("deepseek-v3"), 671e9, 0.02, "deepseek-v3 total");
  ExpectWithin(Active("deepseek-v3"), 37e9, 0.03, "deepseek-v3 active");
  EXPECT_FALSE(Preset("deepseek-v3").approximation_note.empty());
}

TEST(CountParameters, TermsAddUp) {
  const ModelSpec m = Preset("deepseek-v3");
  const ParameterCounts c = CountParameters(m);
  const double sum = 61 * (c.attention_per_layer + c.norms_per_layer) + 3 * c.dense_mlp_per_layer +
                     58 * (257 * c.expert_mlp + c.router_per_layer) + c.embedding + c.output_head +
                     c.final_norm;
  EXPECT_DOUBLE_EQ(c.total, sum);
  EXPECT_DOUBLE_EQ(c.expert_mlp, 3.0 * 7168 * 2048);
  EXPECT_DOUBLE_EQ(c.router_per_layer, 7168.0 * 256);
  EXPECT_DOUBLE_EQ(c.dense_mlp_per_layer, 3.0 * 7168 * 18432);
}

TEST(CountParameters, GeluBiasesAndTiedHead) {
  ModelSpec m;
  m.num_layers = 2;
  m.hidden_size = 8;
  m.ffn_hidden_size = 32;
  m.num_attention_heads = 2;
  m.num_kv_heads = 2;
  m.vocab_size = 10;
  m.mlp = MlpKind::kGelu;
  m.tied_embeddings = true;
  ParameterCounts c = CountParameters(m);
  EXPECT_DOUBLE_EQ(c.attention_per_layer, 4 * 64 + 4 * 8);  // 4h^2 + 4h
  EXPECT_DOUBLE_EQ(c.dense_mlp_per_layer, 2 * 8 * 32 + 32 + 8);
  EXPECT_DOUBLE_EQ(c.norms_per_layer, 4 * 8);
  EXPECT_DOUBLE_EQ(c.output_head, 0);
  m.linear_biases = false;
  c = CountParameters(m);
  EXPECT_DOUBLE_EQ(c.attention_per_layer, 4 * 64);
  EXPECT_DOUBLE_EQ(c.norms_per_layer, 2 * 8);
  m.mlp = MlpKind::kSwiGlu;
  m.linear_biases = true;  // ignored for SwiGLU
  m.tied_embeddings = false;
  c = CountParameters(m);
  EXPECT_DOUBLE_EQ(c.dense_mlp_per_layer, 3 * 8 * 32);
  EXPECT_DOUBLE_EQ(c.output_head, 80);
}

TEST(Presets, TableIsConsistent) {
  std::set<std::string> ids;
  for (const ModelPreset& p : ModelPresets()) {
    EXPECT_TRUE(ids.insert(p.id).second) << "duplicate id " << p.id;
    EXPECT_NE(std::string(p.source), "") << p.id;
    EXPECT_FALSE(p.spec.name.empty()) << p.id;
    const Status s = ValidateModel(p.spec, p.id);
    EXPECT_TRUE(s.ok()) << s.message();
  }
  for (const char* id :
       {"gpt-1.7b",   "gpt-3.6b",    "gpt-7.5b",    "gpt-18.4b",    "gpt-39.1b",     "gpt-76.1b",
        "gpt-145.6b", "gpt-310.1b",  "gpt-529.6b",  "gpt-1t",       "gpt3-175b",     "llama3-8b",
        "llama3-70b", "llama3-405b", "llama3.1-8b", "llama3.1-70b", "llama3.1-405b", "mixtral-8x7b",
        "mpt-7b",     "mpt-30b",     "mpt-70b",     "mpt-125m",     "mpt-350m",      "mpt-760m",
        "mpt-1b",     "mpt-3b",      "mpt-13b",     "deepseek-v3",  "llama2-7b",     "llama2-13b",
        "llama2-70b", "mistral-7b",  "qwen2-7b",    "gpt2-xl"}) {
    EXPECT_EQ(ids.count(id), 1u) << id;
  }
}

TEST(Presets, LookupIsCaseInsensitiveAndErrorsListIds) {
  EXPECT_TRUE(FindModelPreset("Llama3-70B").ok());
  Expected<ModelSpec> missing = FindModelPreset("llama9-1t");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(Contains(missing.status().message(), "llama9-1t"));
  EXPECT_TRUE(Contains(missing.status().message(), "llama3-8b"));
}

TEST(Presets, MatchCalibrationRunDimensions) {
  const ModelSpec mpt30 = Preset("mpt-30b");
  EXPECT_EQ(mpt30.num_layers, 48);
  EXPECT_EQ(mpt30.hidden_size, 7168);
  EXPECT_EQ(mpt30.num_attention_heads, 56);
  EXPECT_EQ(mpt30.vocab_size, 50368);
  const ModelSpec l405 = Preset("llama3-405b");
  EXPECT_EQ(l405.num_layers, 126);
  EXPECT_EQ(l405.ffn_hidden_size, 53248);
  EXPECT_EQ(l405.num_kv_heads, 8);
  EXPECT_EQ(l405.mlp, MlpKind::kSwiGlu);
  const ModelSpec ds = Preset("deepseek-v3");
  EXPECT_EQ(ds.MoeLayers(), 58);
  EXPECT_EQ(ds.DenseLayers(), 3);
  EXPECT_EQ(ds.ExpertFfn(), 2048);
}

ModelSpec Small() {
  ModelSpec m;
  m.num_layers = 4;
  m.hidden_size = 64;
  m.ffn_hidden_size = 256;
  m.num_attention_heads = 8;
  m.num_kv_heads = 8;
  m.vocab_size = 100;
  return m;
}

TEST(ValidateModel, AcceptsSmallModel) { EXPECT_TRUE(ValidateModel(Small(), "m").ok()); }

TEST(ValidateModel, KvHeadsMustDivideHeads) {
  ModelSpec m = Small();
  m.hidden_size = 8192;
  m.num_attention_heads = 64;
  m.num_kv_heads = 48;
  const Status s = ValidateModel(m, "job.json: model");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "job.json: model: field 'num_kv_heads': 48 does not divide num_attention_heads 64");
}

TEST(ValidateModel, HeadsMustDivideHiddenUnlessHeadDimSet) {
  ModelSpec m = Small();
  m.num_attention_heads = 6;
  m.num_kv_heads = 6;
  Status s = ValidateModel(m, "m");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "field 'num_attention_heads'"));
  m.head_dim = 16;
  EXPECT_TRUE(ValidateModel(m, "m").ok());
}

TEST(ValidateModel, NonPositiveDimensionsNameTheField) {
  for (int which = 0; which < 6; ++which) {
    ModelSpec m = Small();
    const char* field = nullptr;
    switch (which) {
      case 0:
        m.num_layers = 0;
        field = "num_layers";
        break;
      case 1:
        m.hidden_size = -3;
        field = "hidden_size";
        break;
      case 2:
        m.ffn_hidden_size = 0;
        field = "ffn_hidden_size";
        break;
      case 3:
        m.num_attention_heads = 0;
        field = "num_attention_heads";
        break;
      case 4:
        m.num_kv_heads = 0;
        field = "num_kv_heads";
        break;
      default:
        m.vocab_size = 0;
        field = "vocab_size";
        break;
    }
    const Status s = ValidateModel(m, "m");
    ASSERT_FALSE(s.ok()) << field;
    EXPECT_TRUE(Contains(s.message(), std::string("field '") + field + "'"));
  }
}

TEST(ValidateModel, MoeFields) {
  ModelSpec m = Small();
  m.moe_num_experts = 8;
  m.moe_top_k = 9;
  Status s = ValidateModel(m, "m");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "field 'moe_top_k'"));
  m.moe_top_k = 2;
  EXPECT_TRUE(ValidateModel(m, "m").ok());
  m.moe_first_dense_layers = 4;
  s = ValidateModel(m, "m");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "field 'moe_first_dense_layers'"));
  ModelSpec dense = Small();
  dense.moe_top_k = 2;
  s = ValidateModel(dense, "m");
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(Contains(s.message(), "field 'moe_top_k'"));
}

}  // namespace
}  // namespace gpuplan

// vTrain's ground-truth CSVs as runs (simulator/vtrain_runs.h): both headers, CRLF line ends,
// what each line becomes, and errors that name the file, the line and the column.
#include "simulator/vtrain_runs.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/builtin_db.h"

namespace gpuplan {
namespace {

constexpr const char* kMultiHeader =
    "Parameters (billion),# GPUs,global batch,micro batch,hidden size,attention heads,# layers,"
    "sequence length,tensor parallelism,data parallelism,pipeline parallelism,iteration time "
    "(ms)\r\n";
constexpr const char* kSingleHeader =
    "# GPUs,global batch,micro batch,hidden size,attention heads,# layers,sequence length,tensor "
    "parallelism,data parallelism,pipeline parallelism,iteration time (ms)\r\n";

TEST(VtrainRuns, MultiNodeLineIsAGptRunOnVtrainsCluster) {
  const std::string text = std::string(kMultiHeader) +
                           "3.6,64,512,8,3072,32,30,2048,1,64,1,3566.5\r\n"
                           "175,512,1536,2,12288,96,96,2048,4,8,16,54255.9\r\n";
  Expected<std::vector<PublishedRun>> runs = ParseVtrainRuns(text, "m.csv", BuiltinDb());
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 2u);
  const PublishedRun& r = (*runs)[1];
  EXPECT_EQ(r.id, "vtrain_175B_tp4_pp16_dp8_mb2_line3");
  EXPECT_EQ(r.source, "vTrain multi-node");
  EXPECT_EQ(r.job.model.name, "GPT 175B (vTrain)");
  EXPECT_EQ(r.job.model.num_layers, 96);
  EXPECT_EQ(r.job.model.ffn_hidden_size, 4 * 12288);
  EXPECT_EQ(r.job.model.vocab_size, 50257);
  EXPECT_EQ(r.job.model.mlp, MlpKind::kGelu);
  EXPECT_TRUE(r.job.model.tied_embeddings);
  EXPECT_EQ(r.job.cluster.gpu, kVtrainGpuId);
  EXPECT_EQ(r.job.cluster.inter_node, kVtrainNetworkId);
  EXPECT_EQ(r.job.cluster.gpus_per_node, 8);
  EXPECT_EQ(r.job.training.framework.id, kVtrainFrameworkId);
  EXPECT_EQ(r.job.training.precision, Precision::kFp16);
  EXPECT_EQ(r.job.training.recompute, Recompute::kFull);
  EXPECT_EQ(r.job.training.attention, AttentionImpl::kUnfused);
  EXPECT_EQ(r.job.parallel.tp, 4);
  EXPECT_EQ(r.job.parallel.pp, 16);
  EXPECT_EQ(r.job.parallel.dp, 8);
  EXPECT_EQ(r.job.parallel.zero_stage, 1);
  EXPECT_FALSE(r.job.parallel.dp_overlap);
  // 1536 sequences x 2048 tokens in 54.2559 s on 512 GPUs.
  EXPECT_DOUBLE_EQ(r.measured_tokens_per_s_per_gpu, 1536.0 * 2048 / 54.2559 / 512);
}

TEST(VtrainRuns, SingleNodeModelsAreNamedByTheirDimensions) {
  const std::string text = std::string(kSingleHeader) + "2,16,8,1024,16,24,1024,1,1,2,372.160408";
  Expected<std::vector<PublishedRun>> runs = ParseVtrainRuns(text, "s.csv", BuiltinDb());
  ASSERT_TRUE(runs.ok()) << runs.status().message();
  ASSERT_EQ(runs->size(), 1u);
  EXPECT_EQ((*runs)[0].id, "vtrain_h1024_l24_b16_tp1_pp2_dp1_mb8_line2");
  EXPECT_EQ((*runs)[0].source, "vTrain single-node");
  EXPECT_EQ((*runs)[0].job.model.name, "GPT h1024 x 24 (vTrain)");
}

TEST(VtrainRuns, ErrorsNameTheFileLineAndColumn) {
  const HardwareDb& db = BuiltinDb();
  auto error = [&](const std::string& text) {
    Expected<std::vector<PublishedRun>> runs = ParseVtrainRuns(text, "v.csv", db);
    return runs.ok() ? std::string("accepted") : runs.status().message();
  };
  EXPECT_EQ(error(std::string(kSingleHeader) + "2,16,8,1024,16,24,1024,1,1,2,-3\r\n"),
            "v.csv: line 2: column 'iteration time (ms)': must be a positive number up to "
            "86400000, got '-3'");
  // A step of 1e-300 ms gave tokens/s that made the errors NaN.
  EXPECT_EQ(error(std::string(kSingleHeader) + "2,16,8,1024,16,24,1024,1,1,2,1e-300\r\n"),
            "v.csv: line 2: column 'iteration time (ms)': must be at least 0.001 (a microsecond), "
            "got '1e-300'");
  EXPECT_EQ(error(std::string(kSingleHeader) + "2,16,x,1024,16,24,1024,1,1,2,9\r\n"),
            "v.csv: line 2: column 'micro batch': must be a positive integer, got 'x'");
  EXPECT_EQ(error(std::string(kSingleHeader) + "2,16,8,4000000000000000000,16,24,1024,1,1,2,9"),
            "v.csv: line 2: column 'hidden size': is too large, got '4000000000000000000'");
  EXPECT_EQ(error("# GPUs,global batch\r\n2,16\r\n"),
            "v.csv: line 1: header lacks column 'micro batch'");
  EXPECT_EQ(error(std::string(kSingleHeader) + "2,16,8\r\n"),
            "v.csv: line 2: 3 fields, the header has 11");
  EXPECT_EQ(error(kSingleHeader), "v.csv: no runs after the header");
  // tp x dp x pp must be the GPU count: ValidateJob's message, after the line.
  const std::string wrong = error(std::string(kSingleHeader) + "4,16,8,1024,16,24,1024,1,1,2,9");
  EXPECT_TRUE(wrong.starts_with("v.csv: line 2: ")) << wrong;
  EXPECT_NE(wrong.find("4"), std::string::npos) << wrong;
}

}  // namespace
}  // namespace gpuplan

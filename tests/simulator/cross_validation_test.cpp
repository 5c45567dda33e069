// Leave-one-source-out cross-validation (simulator/cross_validation.h): the refit recovers the
// constants that generated a set of runs, and it needs two sources to hold one out.
#include "simulator/cross_validation.h"

#include <gtest/gtest.h>

#include "simulator/cost_model.h"
#include "tests/parse_job.h"

namespace gpuplan {
namespace {

// A 7B dense model on 8 H100 at `seq_len` tokens: the share of attention grows with the sequence,
// so runs at two lengths tell the GEMM fraction from the attention efficiency.
PublishedRun TestRun(const std::string& id, const std::string& source, int seq_len) {
  PublishedRun run;
  run.id = id;
  run.source = source;
  run.job = ParseTestJob({{"model", "llama2-7b"},
                          {"cluster", {{"gpu", "h100-sxm5-80gb"}, {"num_gpus", 8}}},
                          {"training",
                           {{"seq_len", seq_len},
                            {"global_batch_size", 64},
                            {"micro_batch_size", 1},
                            {"recompute", "full"}}},
                          {"parallelism", {{"tp", 1}, {"dp", 8}, {"zero_stage", 3}}}});
  run.gpu = BuiltinDb().FindGpu(run.job.cluster.gpu);
  run.net = BuiltinDb().FindNetwork(run.job.cluster.inter_node);
  return run;
}

TEST(CrossValidation, EveryFoldRecoversTheConstantsThatGeneratedTheRuns) {
  const RateCalibration truth{0.70, 0.55};
  std::vector<PublishedRun> runs = {TestRun("a-short", "A", 2048), TestRun("a-long", "A", 16384),
                                    TestRun("b-short", "B", 4096), TestRun("b-long", "B", 32768)};
  for (PublishedRun& run : runs) {
    run.measured_tokens_per_s_per_gpu =
        EvaluateStep(run.job, *run.gpu, *run.net,
                     DatasheetRates(*run.gpu, run.job.training.precision, truth))
            .tokens_per_s_per_gpu;
  }
  Expected<CrossValidationReport> cv = CrossValidatePublishedRuns(runs);
  ASSERT_TRUE(cv.ok()) << cv.status().message();
  EXPECT_EQ(cv->grid_points, 51 * 61);
  ASSERT_EQ(cv->folds.size(), 2u);
  for (const CrossValidationFold& fold : cv->folds) {
    EXPECT_NEAR(fold.fitted.sustained_gemm_fraction, 0.70, 1e-9) << fold.source;
    EXPECT_NEAR(fold.fitted.fused_attention_relative_efficiency, 0.55, 1e-9) << fold.source;
    EXPECT_EQ(fold.cross_validated.runs, 2);
    EXPECT_LT(fold.cross_validated.max_abs_error, 1e-9) << fold.source;
    // The shipped constants (0.80 / 0.40) do not generate these runs.
    EXPECT_GT(fold.in_sample.mape, 0.01) << fold.source;
  }
  EXPECT_NEAR(cv->fitted_on_all.sustained_gemm_fraction, 0.70, 1e-9);
  ASSERT_EQ(cv->runs.size(), 4u);
  EXPECT_EQ(cv->runs[2].id, "b-short");
  EXPECT_NEAR(cv->runs[2].predicted, cv->runs[2].measured, 1e-6 * cv->runs[2].measured);
}

TEST(CrossValidation, NeedsTwoSourcesToHoldOneOut) {
  Expected<CrossValidationReport> cv =
      CrossValidatePublishedRuns({TestRun("a-short", "A", 2048), TestRun("a-long", "A", 16384)});
  ASSERT_FALSE(cv.ok());
  EXPECT_NE(cv.status().message().find("at least two sources, got 1"), std::string::npos)
      << cv.status().message();
}

}  // namespace
}  // namespace gpuplan

// Leave-one-model-out cross-validation of the layout sweep's stack constants
// (simulator/sweep_cross_validation.h): each fold recovers the constants that generated the
// measurements, and a refit needs two models and a row for every constant.
#include "simulator/sweep_cross_validation.h"

#include <gtest/gtest.h>

#include "simulator/cost_model.h"
#include "simulator/job_spec_json.h"
#include "simulator/layout_sweep.h"
#include "tests/builtin_db.h"

namespace gpuplan {
namespace {

std::vector<SweepRow> ShippedSweep() {
  Expected<std::vector<SweepRow>> rows =
      ReadLayoutSweepFile(BuiltinCalibrationDir() + "/ultrascale_sweep.csv", BuiltinDb());
  EXPECT_TRUE(rows.ok()) << rows.status().message();
  return rows.ok() ? *rows : std::vector<SweepRow>{};
}

// The sweep's rows that ran and gpuplan expresses, "measured" as the model predicts them with
// `constants` (seconds, in SweepConstantRules() order) and the shipped ones left on the rows.
std::vector<SweepRow> GeneratedBy(const SweepConstants& constants) {
  std::vector<SweepRow> rows;
  for (SweepRow row : ShippedSweep()) {
    if (!row.ran || !ValidateJob(row.job, BuiltinDb()).ok()) continue;
    JobSpec job = row.job;
    for (size_t i = 0; i < constants.size(); ++i) {
      job.training.framework.*(SweepConstantRules()[i].seconds) = constants[i];
    }
    row.measured_tokens_per_s_per_gpu =
        EvaluateStep(job, *BuiltinDb().FindGpu(job.cluster.gpu),
                     *BuiltinDb().FindNetwork(job.cluster.inter_node))
            .tokens_per_s_per_gpu;
    rows.push_back(row);
  }
  return rows;
}

TEST(SweepCrossValidation, EveryFoldRecoversTheConstantsThatGeneratedTheRows) {
  // Grid points other than the shipped ones, so that a fold that kept the rows' own values
  // would fail, and each high enough to decide most of its rows: a host floor below a layer's
  // GPU and communication time changes nothing, and a median over rows it does not reach cannot
  // see it (at 3 ms the 8B's rows alone fit 0).
  const SweepConstants truth = {5.5e-3, 1.0e-3, 1.25e-3};
  const std::vector<SweepRow> rows = GeneratedBy(truth);
  Expected<SweepCrossValidationReport> cv = CrossValidateSweepByModel(rows, BuiltinDb());
  ASSERT_TRUE(cv.ok()) << cv.status().message();
  ASSERT_EQ(cv->folds.size(), 2u);
  EXPECT_EQ(cv->folds[0].model, "1B");
  EXPECT_EQ(cv->folds[1].model, "8B");
  for (size_t i = 0; i < truth.size(); ++i) {
    EXPECT_NEAR(cv->fitted_on_all[i], truth[i], 1e-12) << SweepConstantRules()[i].name;
    for (const SweepFold& fold : cv->folds) {
      EXPECT_NEAR(fold.fitted[i], truth[i], 1e-12)
          << fold.model << " " << SweepConstantRules()[i].name;
    }
  }
  EXPECT_EQ(cv->rows, static_cast<int>(rows.size()));
  EXPECT_EQ(cv->folds[0].rows + cv->folds[1].rows, cv->rows);
  EXPECT_NEAR(cv->cross_validated_median_abs_error, 0, 1e-9);
  // The shipped constants (4.5 / 0.75 / 1.75 ms) are not the ones that generated the rows.
  EXPECT_GT(cv->in_sample_median_abs_error, 0.01);
}

TEST(SweepCrossValidation, NeedsTwoModelsAndARowForEveryConstant) {
  std::vector<SweepRow> one_model;
  for (const SweepRow& row : ShippedSweep()) {
    if (row.model == "1B") one_model.push_back(row);
  }
  Expected<SweepCrossValidationReport> cv = CrossValidateSweepByModel(one_model, BuiltinDb());
  ASSERT_FALSE(cv.ok());
  EXPECT_EQ(cv.status().message(),
            "leave-one-model-out needs rows that ran from at least two models, got 1");

  // The 8B without its TP 16-32 rows: the fold that holds the 1B out has nothing to fit the
  // cross-node TP cost on.
  std::vector<SweepRow> no_8b_tp16;
  for (const SweepRow& row : ShippedSweep()) {
    if (row.model == "8B" && row.job.parallel.tp >= 16) continue;
    no_8b_tp16.push_back(row);
  }
  cv = CrossValidateSweepByModel(no_8b_tp16, BuiltinDb());
  ASSERT_FALSE(cv.ok());
  EXPECT_EQ(cv.status().message(),
            "fold without 1B: no row to fit tp_ms_per_inter_node_hop on (pp 1, tp 16-32, 2-16 "
            "nodes)");
}

}  // namespace
}  // namespace gpuplan

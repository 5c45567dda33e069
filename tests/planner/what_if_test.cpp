// The what-if evaluation (planner/what_if.h): a hand-fixed plan is timed, counted and priced
// exactly as the planner does it, and its data-parallel scaling follows the job's rules.
#include "planner/what_if.h"

#include <gtest/gtest.h>

#include <cmath>

#include "planner/economics.h"
#include "planner/planner.h"
#include "simulator/cost_model.h"
#include "simulator/job_spec_json.h"
#include "simulator/presets.h"
#include "tests/builtin_db.h"

namespace gpuplan {
namespace {

// Llama 3 8B on 16 H100 in two DGX nodes: TP2 DP8, ZeRO-1, 4096-token sequences.
JobSpec Llama8bJob() {
  JobSpec job;
  job.model = FindModelPreset("llama3-8b").value();
  job.cluster = {"h100-sxm5-80gb", 16, 8, "ib-ndr-400"};
  job.training.seq_len = 4096;
  job.training.global_batch_size = 256;
  job.training.micro_batch_size = 1;
  job.parallel.tp = 2;
  job.parallel.dp = 8;
  job.parallel.zero_stage = 1;
  return job;
}

PlanRequest Work(double tokens) {
  PlanRequest req;
  req.train_tokens = tokens;
  req.reliability = BuiltinDb().reliability();
  return req;
}

TEST(WhatIfTest, CountsStepsAndPricesWithTheCheapestServingOffering) {
  const HardwareDb& db = BuiltinDb();
  const JobSpec job = Llama8bJob();
  ASSERT_TRUE(ValidateJob(job, db).ok()) << ValidateJob(job, db).message();
  const PlanRequest req = Work(100e9);
  const Plan plan = EvaluateFixedPlan(req, db, job, "dgx-h100");

  const StepResult step =
      EvaluateStep(job, *db.FindGpu(job.cluster.gpu), *db.FindNetwork(job.cluster.inter_node));
  EXPECT_DOUBLE_EQ(plan.step.step_time_s, step.step_time_s);
  // ceil(100e9 / (256 x 4096)) = 95368 steps.
  EXPECT_EQ(plan.econ.steps, 95368);
  EXPECT_DOUBLE_EQ(plan.econ.tokens, 95368.0 * 256 * 4096);
  EXPECT_DOUBLE_EQ(plan.econ.compute_time_s, 95368 * step.step_time_s);

  const PriceOption cheapest =
      CheapestServing(PriceOptionsFor(req, db, job.cluster.gpu, "dgx-h100"), 16, req.price_kind);
  ASSERT_GT(cheapest.usd_per_gpu_hour, 0);
  EXPECT_EQ(plan.econ.provider, cheapest.provider);
  EXPECT_DOUBLE_EQ(plan.econ.usd_per_gpu_hour, cheapest.usd_per_gpu_hour);
  EXPECT_GE(plan.econ.expected_wall_s, plan.econ.compute_time_s);
  EXPECT_NEAR(plan.econ.expected_cost_usd,
              plan.econ.expected_wall_s / 3600.0 * static_cast<double>(plan.econ.billed_gpus) *
                  cheapest.usd_per_gpu_hour,
              1e-6);
}

TEST(WhatIfTest, PriceOverrideAndProviderFilter) {
  const HardwareDb& db = BuiltinDb();
  PlanRequest req = Work(10e9);
  req.price_overrides["h100-sxm5-80gb"] = 1.25;
  Plan plan = EvaluateFixedPlan(req, db, Llama8bJob(), "dgx-h100");
  EXPECT_EQ(plan.econ.provider, "override");
  EXPECT_DOUBLE_EQ(plan.econ.usd_per_gpu_hour, 1.25);

  req.price_overrides.clear();
  req.providers = {"no-such-provider"};
  plan = EvaluateFixedPlan(req, db, Llama8bJob(), "dgx-h100");
  EXPECT_FALSE(IsPriced(plan));
  EXPECT_EQ(plan.econ.expected_cost_usd, 0);
  EXPECT_GT(plan.econ.expected_wall_s, 0);
}

TEST(WhatIfTest, TrainStepsTakePrecedenceOverTokens) {
  PlanRequest req = Work(1e12);
  req.train_steps = 1000;
  const Plan plan = EvaluateFixedPlan(req, BuiltinDb(), Llama8bJob(), "dgx-h100");
  EXPECT_EQ(plan.econ.steps, 1000);
  EXPECT_DOUBLE_EQ(plan.econ.tokens, 1000.0 * 256 * 4096);
}

TEST(WhatIfTest, DataParallelScalingKeepsTheLayoutAndTheJobRules) {
  const HardwareDb& db = BuiltinDb();
  JobSpec job = Llama8bJob();
  job.parallel.dp = 6;  // 12 GPUs: not a power of two, still a row
  job.cluster.num_gpus = 12;
  job.training.global_batch_size = 192;
  job.cluster.gpus_per_node = 8;
  ASSERT_FALSE(ValidateJob(job, db).ok()) << "12 GPUs are not whole 8-GPU nodes";
  job.cluster.num_gpus = 16;
  job.parallel.dp = 8;
  const std::vector<ScalingRow> rows = DataParallelScaling(Work(100e9), db, job, "dgx-h100", 512);
  // TP2 x DP 1..256 = 2..512 GPUs; 192 sequences divide into DP 1..64 only.
  std::vector<int64_t> gpus;
  for (const ScalingRow& row : rows) gpus.push_back(row.gpus);
  EXPECT_EQ(gpus, (std::vector<int64_t>{2, 4, 8, 16, 32, 64, 128}));
  for (const ScalingRow& row : rows) {
    EXPECT_EQ(row.plan.job.parallel.tp, 2);
    EXPECT_EQ(row.plan.job.parallel.dp * 2, row.gpus);
    EXPECT_EQ(row.plan.job.cluster.gpus_per_node, std::min<int64_t>(8, row.gpus));
    EXPECT_TRUE(ValidateJob(row.plan.job, db).ok());
    EXPECT_EQ(row.feasible, row.plan.step.memory.fits);
  }
  const ScalingRow* first = nullptr;
  for (const ScalingRow& row : rows) {
    if (!row.feasible) continue;
    if (first == nullptr) {
      first = &row;
      EXPECT_DOUBLE_EQ(row.speedup, 1.0);
      EXPECT_DOUBLE_EQ(row.scaling_efficiency, 1.0);
      continue;
    }
    EXPECT_NEAR(row.speedup, first->plan.econ.expected_wall_s / row.plan.econ.expected_wall_s,
                1e-12);
    EXPECT_GT(row.speedup, 1.0);
    EXPECT_LT(row.scaling_efficiency, 1.05) << row.gpus;
  }
  ASSERT_NE(first, nullptr);
}

TEST(WhatIfTest, ScalingIncludesTheJobsOwnReplicaCount) {
  const HardwareDb& db = BuiltinDb();
  JobSpec job = Llama8bJob();
  job.cluster.num_gpus = 48;  // 6 nodes of 8: TP2 DP24
  job.parallel.dp = 24;
  job.training.global_batch_size = 384;
  ASSERT_TRUE(ValidateJob(job, db).ok()) << ValidateJob(job, db).message();
  const std::vector<ScalingRow> rows = DataParallelScaling(Work(100e9), db, job, "dgx-h100", 64);
  std::vector<int64_t> gpus;
  for (const ScalingRow& row : rows) gpus.push_back(row.gpus);
  EXPECT_EQ(gpus, (std::vector<int64_t>{2, 4, 8, 16, 32, 48, 64}));
}

TEST(WhatIfTest, HybridShardingScalesItsReplicas) {
  // TP2 DP8 ZeRO-3 sharded over 4 DP ranks (one node), 2 replicas: more GPUs add replicas of
  // that shard group; fewer than one group shard over all of DP.
  const HardwareDb& db = BuiltinDb();
  JobSpec job = Llama8bJob();
  job.parallel.zero_stage = 3;
  job.parallel.dp_replicate = 2;
  ASSERT_TRUE(ValidateJob(job, db).ok()) << ValidateJob(job, db).message();
  const std::vector<ScalingRow> rows = DataParallelScaling(Work(100e9), db, job, "dgx-h100", 64);
  ASSERT_EQ(rows.size(), 6u);  // 2 .. 64 GPUs
  for (const ScalingRow& row : rows) {
    const ParallelSpec& p = row.plan.job.parallel;
    EXPECT_EQ(p.dp_replicate, p.dp >= 4 ? p.dp / 4 : 1) << row.gpus;
  }
}

class CancellingSink : public ProgressSink {
 public:
  void Update(int64_t, int64_t) override {}
  bool Cancelled() const override { return true; }
};

TEST(WhatIfTest, ACancelledSearchIsReportedAsCancelled) {
  PlanRequest req = Work(20e9);
  req.model = FindModelPreset("llama3-8b").value();
  req.seq_len = 2048;
  req.global_batch_sizes = {512};
  req.gpus = {"h100-sxm5-80gb"};
  req.max_gpus = 64;
  req.threads = 2;
  CancellingSink sink;
  const Expected<PlanResult> r = MakePlan(req, BuiltinDb(), &sink);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().kind(), ErrorKind::kCancelled);
}

}  // namespace
}  // namespace gpuplan

// Reference tests for the reliability economics (planner/reliability.h): golden numbers from
// Daly 2006 and the Llama 3 405B training run.
#include "planner/reliability.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "hardware-db/hardware_db.h"
#include "planner/economics.h"
#include "simulator/presets.h"

namespace gpuplan {
namespace {

constexpr double kMinute = 60, kHour = 3600;

TEST(Reliability, DalyOptimumMatchesThePapersFigures) {
  // Daly 2006, Figs. 3-5: delta = 5 min, M = 24 h / 6 h / 15 min -> 117 / 57 / 9.1 min.
  EXPECT_NEAR(OptimalCheckpointIntervalSeconds(5 * kMinute, 24 * kHour) / kMinute, 117, 0.5);
  EXPECT_NEAR(OptimalCheckpointIntervalSeconds(5 * kMinute, 6 * kHour) / kMinute, 57, 0.5);
  EXPECT_NEAR(OptimalCheckpointIntervalSeconds(5 * kMinute, 15 * kMinute) / kMinute, 9.1, 0.05);
}

TEST(Reliability, DalyReducesToYoungForCheapCheckpoints) {
  const double delta = 1, mtbf = 1e7;
  EXPECT_NEAR(OptimalCheckpointIntervalSeconds(delta, mtbf), std::sqrt(2 * delta * mtbf),
              0.01 * std::sqrt(2 * delta * mtbf));
  // delta >= 2M: checkpoint once per MTBF.
  EXPECT_DOUBLE_EQ(OptimalCheckpointIntervalSeconds(100, 40), 40);
}

TEST(Reliability, ExpectedWallTime) {
  const double inf = std::numeric_limits<double>::infinity();
  // No failures: the work plus one checkpoint per interval.
  EXPECT_DOUBLE_EQ(ExpectedWallSeconds(1000, 100, 5, 60, inf), 1000 + 10 * 5);
  // Failures only add time, and more of it the more often they come.
  const double rare = ExpectedWallSeconds(1000, 100, 5, 60, 1e6);
  const double often = ExpectedWallSeconds(1000, 100, 5, 60, 1e3);
  EXPECT_GT(rare, 1050);
  EXPECT_GT(often, rare);
  // First order: each segment (tau + delta) pays, per failure, R plus half a segment of rework.
  const double m = 1e6, tau = 100, delta = 5, r = 60;
  const double first_order = 10 * (tau + delta) * (1 + (r + (tau + delta) / 2) / m);
  EXPECT_NEAR(rare, first_order, 1e-3 * first_order);
}

TEST(Reliability, CheckpointBytes) {
  JobSpec job;
  job.model = FindModelPreset("gpt3-175b").value();
  job.training.precision = Precision::kBf16;
  const double params = 174.6e9;
  EXPECT_NEAR(CheckpointBytes(job) / 14.0, params, 0.01 * params);  // 2 + 4 + 4 + 4 bytes
  job.training.lora = {true, 16, kLoraAttention, BaseWeights::kSame};
  EXPECT_LT(CheckpointBytes(job), 1e-3 * 14.0 * params);  // adapters only
}

TEST(Reliability, Llama3RunReproducesItsReportedGoodput) {
  // 16 384 H100 GPUs at the built-in per-GPU rate: the job's mean time to interrupt is the
  // paper's 3.1 h (Llama 3 paper Sec. 3.3.4: 419 unexpected interruptions in 54 days), and
  // with the sourced checkpoint bandwidth and restart time the effective training time is the
  // reported ">90%".
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  JobSpec job;
  job.model = FindModelPreset("llama3-405b").value();
  ReliabilityInputs in;
  in.solve_s = 54 * 24 * kHour * 0.9;
  in.step_s = 10;
  in.checkpoint_bytes = CheckpointBytes(job);
  in.num_gpus = 16384;
  in.num_nodes = 2048;
  in.instances = 2048;
  const ReliabilityOutcome out = EvaluateReliability(in, db->reliability());
  EXPECT_NEAR(out.mtbf_s / kHour, 3.09, 0.05);
  EXPECT_GT(out.goodput, 0.90);
  EXPECT_LT(out.goodput, 0.99);
  EXPECT_NEAR(std::fmod(out.checkpoint_interval_s, in.step_s), 0, 1e-6);  // whole steps
  EXPECT_NEAR(out.expected_interruptions, out.expected_wall_s / out.mtbf_s, 1e-9);
}

// Every host writes its share of the checkpoint: 256 GB200 on 4 NVL72 racks of 64 GPUs are 64
// trays of 4 GPUs (gpus_per_host), not 4 nodes, so the write takes 16 times less than if each
// rack wrote through one host.
TEST(Reliability, RackScaleCheckpointsAreWrittenByEveryTray) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok()) << db.status().message();
  PlanRequest req;
  req.reliability = db->reliability();
  Plan plan;
  plan.job.model = FindModelPreset("llama3-405b").value();
  plan.job.cluster = {"gb200", 256, 64, "ib-ndr-400"};
  plan.step.step_time_s = 10;
  plan.econ.compute_time_s = 1e6;
  const PriceOption price{"x", "y", PriceKind::kOnDemand, 10, 4, 0};
  PricePlan(req, price, &plan);
  const double rack_hosts = plan.econ.checkpoint_write_s;
  plan.gpus_per_host = db->FindNode("gb200-nvl72")->tray_gpus;
  PricePlan(req, price, &plan);
  EXPECT_NEAR(rack_hosts / plan.econ.checkpoint_write_s, 16.0, 1e-9);
  EXPECT_NEAR(
      plan.econ.checkpoint_write_s,
      CheckpointBytes(plan.job) / (64 * req.reliability.checkpoint_write_bytes_per_s_per_node),
      1e-9);
}

TEST(Reliability, SpotPreemptionsShortenTheMtbf) {
  Expected<HardwareDb> db = LoadHardwareDb({});
  ASSERT_TRUE(db.ok());
  ReliabilityInputs in;
  in.solve_s = 100 * kHour;
  in.step_s = 5;
  in.checkpoint_bytes = 1e11;
  in.num_gpus = 64;
  in.num_nodes = 8;
  in.instances = 8;
  const ReliabilityOutcome on_demand = EvaluateReliability(in, db->reliability());
  in.spot = true;
  in.spot_preemptions_per_instance_hour = db->reliability().SpotPreemptionsPerInstanceHour("aws");
  const ReliabilityOutcome spot = EvaluateReliability(in, db->reliability());
  EXPECT_LT(spot.mtbf_s, on_demand.mtbf_s);
  EXPECT_GT(spot.expected_wall_s, on_demand.expected_wall_s);
}

}  // namespace
}  // namespace gpuplan
